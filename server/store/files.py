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
  Every file access goes through confined.py: no symlink followed, no FIFO
  or device opened, nothing outside the root.
- `RootLock`: the cross-process lock of one root (filelock), a hidden file in
  the root, so that every process writing it takes turns (docs/safety.md).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import stat
import threading
import unicodedata
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import regex
from filelock import FileLock, Timeout
from memory_recall.server.documents import INDEX_FILE_NAME
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store import confined
from memory_recall.server.store.errors import InvalidWrite, WriteFailed

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
    for part in regex.split(r"[/\\]", path):
        if len(part.encode("utf-8", "surrogatepass")) > confined.MAX_NAME_BYTES:
            raise InvalidWrite(
                field,
                f"a name in the path is longer than {confined.MAX_NAME_BYTES} bytes"
                " (no file system here can hold it)",
            )
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
    # The path itself is not echoed: a token pasted into `path` must not come back.
    if missing:
        raise InvalidWrite(field, f"no memory at that relative path in any root ({where})")
    raise InvalidWrite(field, f"the path is not inside a memory root ({where})")


# How much of a path a message may show: enough to recognise it.
SHOWN_PATH_CHARS = 200


def shown_path(path: str) -> str:
    """A path as an error message may show it: a credential in it redacted (a token pasted
    into `path` is never echoed), control characters escaped, cut to a readable length."""
    from memory_recall.server.store.secrets import redact

    text = redact(path)
    text = "".join(c if c.isprintable() else f"\\u{ord(c):04x}" for c in text)
    return text if len(text) <= SHOWN_PATH_CHARS else text[: SHOWN_PATH_CHARS - 1] + "…"


def _check_name(relative: str, field: str, archived: bool) -> None:
    parts = relative.split("/")
    if not relative.endswith(".md"):
        raise InvalidWrite(field, "the path is not a memory file (*.md)")
    if parts[-1] == INDEX_FILE_NAME:
        raise InvalidWrite(field, f"{INDEX_FILE_NAME} is the root's index, not a memory")
    hidden = [p for p in parts if p.startswith(".")]
    if archived and parts[0] == ARCHIVE_DIR:
        hidden = hidden[1:]
    if hidden:
        raise InvalidWrite(field, f"{shown_path(relative)} is hidden: not a memory")


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


def read_or_none(path: Path, *, root: Path | None = None) -> bytes | None:
    """A regular file's bytes, or None when there is none. Never a symlink's target, never
    a FIFO or device (refused at once, not waited on): see confined.py. With `root`, every
    folder from the root to the file is checked too."""
    base = root if root is not None else path.parent
    return confined.read(base, _relative(path, base))


def _relative(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        raise InvalidWrite("path", f"{path} is not inside {root}") from None


def os_failure(exc: OSError, path: Path) -> WriteFailed:
    """An OSError as a failure a user can act on."""
    return confined._os_failure(exc, path)


def write_atomic(
    target: Path,
    data: bytes,
    *,
    expected: bytes | None,
    temp: str,
    durable: bool = True,
    root: Path | None = None,
) -> None:
    """Replace `target` with `data` atomically, if it still holds `expected` (None: absent).

    `temp` is the name of the hidden temp file beside it. A crash at any point
    leaves the old file or the new one, and at most the temp file, which the
    scanner never reads and recovery removes. `durable=False` skips the folder
    fsync: after a power loss the rename may be undone (the old file, whole) —
    for derived files such as MEMORY.md, rewritten at the next change. With `root`,
    no folder between the root and the target may be a symlink (confined.py).
    """
    base = root if root is not None else target.parent
    confined.write_atomic(
        base, _relative(target, base), data, expected=expected, temp=temp, durable=durable
    )


def delete_checked(target: Path, *, expected: bytes, root: Path | None = None) -> None:
    """Remove `target` if it still holds `expected`."""
    base = root if root is not None else target.parent
    confined.delete(base, _relative(target, base), expected=expected)


def remove_stray(path: Path, *, root: Path | None = None) -> bool:
    """Remove a temp file a crashed write left; whether there was one."""
    base = root if root is not None else path.parent
    try:
        relative = _relative(path, base)
    except InvalidWrite:
        return False
    return confined.remove_temp(base, relative)


# -- the cross-process lock -----------------------------------------------------------------


def root_key(root: MemoryRoot) -> str:
    """A root as the state store and the lock know it: its real path, so that two
    spellings of one folder share a lock and a history."""
    try:
        return os.path.realpath(root.path)
    except (OSError, ValueError):  # a NUL or an over-long name: such a root is never read
        return os.path.abspath(root.path)


# The root's write lock: a hidden file in the root itself, so that every process writing
# the root shares it whatever its state directory (two daemons with different
# MEMORY_RECALL_STATE_DIR once lost updates: each locked a file of its own).
ROOT_LOCK_NAME = ".memory-recall.lock"


class RootLock:
    """A cross-process lock (filelock), shared by every process of this user.

    `RootLock.of_root(path)` is a root's write lock, kept in the root (a hidden
    file the scanner never reads); `RootLock(lock_dir, key)` is any other lock
    kept in the state directory (one consolidation at a time). In one process a
    thread lock is taken first, so two threads never meet on the file lock.
    """

    _registry: ClassVar[dict[str, tuple[threading.Lock, FileLock]]] = {}
    _registry_lock: ClassVar[threading.Lock] = threading.Lock()

    def __init__(
        self,
        lock_dir: Path,
        key: str,
        timeout_s: float = LOCK_TIMEOUT_S,
        *,
        name: str | None = None,
    ) -> None:
        self.key = key
        self.timeout_s = timeout_s
        self.lock_dir = lock_dir
        self.name = name or hashlib.sha256(key.encode()).hexdigest()[:24] + ".lock"
        self.in_root = name is not None
        self.path = str(lock_dir / self.name)

    @classmethod
    def of_root(cls, root: Path, timeout_s: float = LOCK_TIMEOUT_S) -> RootLock:
        """The write lock of the memory root at `root`."""
        return cls(root, str(root), timeout_s, name=ROOT_LOCK_NAME)

    def _locks(self) -> tuple[threading.Lock, FileLock]:
        with RootLock._registry_lock:
            found = RootLock._registry.get(self.path)
            if found is None:
                if self.in_root:
                    # The lock file must be a regular file of the root: never a symlink
                    # (opening it could touch the file it points at) nor a FIFO.
                    with confined.folder(self.lock_dir, "", create=True):
                        pass
                    self._check_lock_file()
                else:
                    self.lock_dir.mkdir(parents=True, exist_ok=True)
                found = (threading.Lock(), FileLock(self.path, thread_local=False))
                RootLock._registry[self.path] = found
            elif self.in_root:
                self._check_lock_file()
            return found

    def _check_lock_file(self) -> None:
        try:
            mode = os.lstat(self.path).st_mode
        except FileNotFoundError:
            return
        except OSError as exc:
            raise WriteFailed(f"cannot take the write lock of {self.key}: {exc}") from None
        if not stat.S_ISREG(mode):
            raise confined.NotConfined(
                f"{self.path} (the root's write lock) is not a regular file; remove it."
                " Nothing was written."
            )

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        try:
            thread_lock, file_lock = self._locks()
        except OSError as exc:
            raise self._failure(exc) from None
        if not thread_lock.acquire(timeout=self.timeout_s):
            raise WriteFailed(self._busy())
        try:
            try:
                file_lock.acquire(timeout=self.timeout_s)
            except Timeout:
                raise WriteFailed(self._busy()) from None
            except OSError as exc:
                raise self._failure(exc) from None
            try:
                yield
            finally:
                file_lock.release()
        finally:
            thread_lock.release()

    def _failure(self, exc: OSError) -> WriteFailed:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return WriteFailed(
                f"{self.lock_dir} is read-only ({exc.strerror}): the write lock cannot be"
                " taken; nothing was written"
            )
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return WriteFailed(
                f"disk full taking the write lock of {self.key}; nothing was written"
            )
        return WriteFailed(f"cannot take the write lock of {self.key}: {exc.strerror or exc}")

    def _busy(self) -> str:
        return (
            f"another memory-recall process has held the write lock of {self.key} for"
            f" over {self.timeout_s:.0f} s; nothing was written"
        )
