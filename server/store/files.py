"""Memory files on disk: where a write may go, new file names, atomic changes, the root lock.

- `resolve_target`: a path the host names, checked to lie inside a configured
  root (no `..`, no symlink leaving the root, no symlinked file, no hidden or
  index file), as (root index, path inside the root).
- `slugify` / `free_name`: new files are `<root>/<slug>.md` (docs/writing.md).
- `write_atomic` / `delete_checked`: docs/writing.md's atomic write — a hidden temp
  file in the same folder, fsync, a re-read of the target right before the
  rename (a file that differs from what the decision was made on is never
  overwritten), rename (or a hard link for a new file, which cannot clobber
  one made meanwhile), fsync of the folder.
- `RootLock`: the cross-process lock of one root (filelock), so that two
  daemons serving the same root take turns.
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import regex
from filelock import FileLock, Timeout
from memory_recall.server.documents import INDEX_FILE_NAME
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.errors import ChangedOnDisk, InvalidWrite, WriteFailed

ARCHIVE_DIR = ".archive"  # docs/writing.md: hidden, so never scanned or recalled
MAX_SLUG_CHARS = 60  # docs/writing.md
TEMP_SUFFIX = ".tmp"
# A second daemon waits this long for a root's lock before giving up: far
# longer than any write takes, short enough that a host is not left hanging.
LOCK_TIMEOUT_S = 10.0
# Names Windows will not create, whatever the extension.
_RESERVED = frozenset(
    ["con", "prn", "aux", "nul", "memory"]
    + [f"com{i}" for i in range(1, 10)]
    + [f"lpt{i}" for i in range(1, 10)]
)


# -- where a write may go ----------------------------------------------------------


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def resolve_target(
    roots: Sequence[MemoryRoot],
    path: str,
    *,
    field: str = "path",
    archived: bool = False,
) -> tuple[int, str]:
    """The root a memory path lies in and the path inside it (`/`-separated).

    `path` is absolute (a document's identity) or relative to the only root
    that has such a file. `archived=True` accepts paths under `<root>/.archive/`.
    Raises InvalidWrite naming `field` for anything a write must not touch.
    """
    if not path.strip():
        raise InvalidWrite(field, "empty path")
    if "\x00" in path:
        raise InvalidWrite(field, "the path contains a NUL character")
    candidates = [Path(path)] if os.path.isabs(path) else [r.path / path for r in roots]
    missing = False  # a relative path that would lie inside a root, where no file is
    for candidate in candidates:
        absolute = Path(os.path.abspath(candidate))  # folds `..` lexically
        for index, root in enumerate(roots):
            if absolute == root.path or root.path not in absolute.parents:
                continue
            if not os.path.isabs(path) and not absolute.exists():
                missing = True
                break  # a relative path: only a root that has the file
            relative = absolute.relative_to(root.path).as_posix()
            if root.read_only:
                raise InvalidWrite(
                    field, f"{relative} is in {root.path}, a read-only root: change it there"
                )
            _check_name(relative, field, archived)
            _check_real(root, absolute, field)
            return index, relative
    where = ", ".join(str(r.path) for r in roots) or "(no roots configured)"
    if missing:
        raise InvalidWrite(field, f"no memory {path} in any root ({where})")
    raise InvalidWrite(field, f"{path} is not inside a memory root ({where})")


def _check_name(relative: str, field: str, archived: bool) -> None:
    parts = relative.split("/")
    if not relative.endswith(".md"):
        raise InvalidWrite(field, f"{relative} is not a memory file (*.md)")
    if parts[-1] == INDEX_FILE_NAME:
        raise InvalidWrite(field, f"{INDEX_FILE_NAME} is the root's index, not a memory")
    hidden = [p for p in parts if p.startswith(".")]
    if archived and parts[0] == ARCHIVE_DIR:
        hidden = hidden[1:]
    if hidden:
        raise InvalidWrite(field, f"{relative} is hidden ({hidden[0]}): not a memory")


def _check_real(root: MemoryRoot, absolute: Path, field: str) -> None:
    """The folder the file is in must really be inside the root, and the file no symlink."""
    root_real = os.path.realpath(root.path)
    parent_real = os.path.realpath(absolute.parent)
    if not _inside(parent_real, root_real):
        raise InvalidWrite(
            field, f"{absolute} leaves its root through a symlink (to {parent_real})"
        )
    if absolute.is_symlink():
        raise InvalidWrite(field, f"{absolute} is a symlink; the daemon writes only regular files")


# -- new file names -------------------------------------------------------------------

_SEPARATORS = regex.compile(r"[^\p{L}\p{M}\p{N}]+")


def slugify(title: str) -> str:
    """A file name from a title: letters of any script and digits kept, the rest `-`.

    At most MAX_SLUG_CHARS characters, cut at a `-` where one is near the end.
    """
    text = unicodedata.normalize("NFKC", title).lower()
    slug = _SEPARATORS.sub("-", text).strip("-")
    if len(slug) > MAX_SLUG_CHARS:
        cut = slug[:MAX_SLUG_CHARS]
        dash = cut.rfind("-")
        slug = (cut[:dash] if dash >= MAX_SLUG_CHARS // 2 else cut).strip("-")
    return slug or "memory"


def free_name(directory: Path, slug: str) -> str:
    """`slug.md`, else `slug-2.md`, `slug-3.md` … — the first name not taken.

    Names are compared without case (macOS and Windows folders ignore it), and
    `memory` is taken by the index file `MEMORY.md`.
    """
    try:
        taken = {name.lower() for name in os.listdir(directory)}
    except FileNotFoundError:
        taken = set()
    for number in range(1, 100_000):
        suffix = "" if number == 1 else f"-{number}"
        base = slug[: MAX_SLUG_CHARS - len(suffix)].rstrip("-") + suffix
        if base.lower() in _RESERVED:
            continue
        if f"{base}.md".lower() not in taken:
            return f"{base}.md"
    raise WriteFailed(f"no free file name for {slug!r} in {directory}")


# -- atomic changes ------------------------------------------------------------------------


def temp_name(target_name: str, tag: str) -> str:
    """The hidden temp file a write to `target_name` goes through (the journal records it):
    hidden and not `*.md`, so neither the scanner nor the watcher's consumers read it."""
    return f".{target_name}.{tag}{TEMP_SUFFIX}"


def read_or_none(path: Path) -> bytes | None:
    """A file's bytes, or None when there is no file."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        raise WriteFailed(f"{path} is a folder, not a memory file") from None
    except OSError as exc:
        raise os_failure(exc, path) from None


def fsync_dir(directory: Path) -> None:
    """Make a rename or an unlink in `directory` durable (POSIX; a no-op where folders
    cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a folder; the rename itself is atomic
    finally:
        os.close(fd)


def os_failure(exc: OSError, path: Path) -> WriteFailed:
    """An OSError as a failure a user can act on."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return WriteFailed(f"disk full writing {path} ({exc.strerror}); the old file is intact")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return WriteFailed(f"{path.parent} is read-only ({exc.strerror}); nothing was written")
    if exc.errno == errno.EFBIG:
        return WriteFailed(f"file too large for {path} ({exc.strerror}); the old file is intact")
    return WriteFailed(f"could not write {path}: {exc.strerror or exc}")


def _check_unchanged(target: Path, expected: bytes | None) -> None:
    if read_or_none(target) != expected:
        raise ChangedOnDisk(str(target))


def write_atomic(
    target: Path, data: bytes, *, expected: bytes | None, temp: str, durable: bool = True
) -> None:
    """Replace `target` with `data` atomically, if it still holds `expected` (None: absent).

    `temp` is the name of the hidden temp file beside it. A crash at any point
    leaves the old file or the new one, and at most the temp file, which the
    scanner never reads and recovery removes. `durable=False` skips the folder
    fsync: after a power loss the rename may be undone (the old file, whole) —
    for derived files such as MEMORY.md, rewritten at the next change.
    """
    temp_file = target.with_name(temp)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(temp_file, "xb") as out:
            out.write(data)
            out.flush()
            os.fsync(out.fileno())
        _check_unchanged(target, expected)  # the re-read right before the rename
        if expected is None:
            try:
                os.link(temp_file, target)  # fails if a file appeared meanwhile
            except FileExistsError:
                raise ChangedOnDisk(str(target)) from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                    raise
                os.replace(temp_file, target)  # no hard links here: the check above must do
        else:
            os.replace(temp_file, target)
        if durable:
            fsync_dir(target.parent)
    except OSError as exc:
        raise os_failure(exc, target) from None
    finally:
        with contextlib.suppress(OSError):
            os.unlink(temp_file)


def delete_checked(target: Path, *, expected: bytes) -> None:
    """Remove `target` if it still holds `expected`."""
    _check_unchanged(target, expected)
    try:
        os.unlink(target)
    except FileNotFoundError:
        raise ChangedOnDisk(str(target)) from None
    except OSError as exc:
        raise os_failure(exc, target) from None
    fsync_dir(target.parent)


def remove_stray(path: Path) -> bool:
    """Remove a temp file a crashed write left; whether there was one."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        return False
    except OSError:
        return False
    return True


# -- the cross-process lock -----------------------------------------------------------------


def root_key(root: MemoryRoot) -> str:
    """A root as the state store and the lock know it: its real path, so that two
    spellings of one folder share a lock and a history."""
    try:
        return os.path.realpath(root.path)
    except (OSError, ValueError):  # a NUL or an over-long name: such a root is never read
        return os.path.abspath(root.path)


class RootLock:
    """The write lock of one root, shared by every process of this user.

    Lock files live in the state directory, not in the root (a team root is
    committed to git; a read-only root cannot hold one). In one process a
    thread lock is taken first, so two threads never meet on the file lock.
    """

    _registry: ClassVar[dict[str, tuple[threading.Lock, FileLock]]] = {}
    _registry_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(self, lock_dir: Path, key: str, timeout_s: float = LOCK_TIMEOUT_S) -> None:
        self.key = key
        self.timeout_s = timeout_s
        name = hashlib.sha256(key.encode()).hexdigest()[:24] + ".lock"
        path = str(lock_dir / name)
        with RootLock._registry_lock:
            if path not in RootLock._registry:
                lock_dir.mkdir(parents=True, exist_ok=True)
                RootLock._registry[path] = (threading.Lock(), FileLock(path, thread_local=False))
            self._thread_lock, self._file_lock = RootLock._registry[path]

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        if not self._thread_lock.acquire(timeout=self.timeout_s):
            raise WriteFailed(self._busy())
        try:
            try:
                self._file_lock.acquire(timeout=self.timeout_s)
            except Timeout:
                raise WriteFailed(self._busy()) from None
            except OSError as exc:
                raise WriteFailed(f"cannot take the write lock of {self.key}: {exc}") from None
            try:
                yield
            finally:
                self._file_lock.release()
        finally:
            self._thread_lock.release()

    def _busy(self) -> str:
        return (
            f"another memory-recall process has held the write lock of {self.key} for"
            f" over {self.timeout_s:.0f} s; nothing was written"
        )
