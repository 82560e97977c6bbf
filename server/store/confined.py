"""A memory root's files, reached without ever following a symlink or opening a non-file.

Everything the writer reads or writes inside a root goes through here (design:
docs/safety.md, "Files are what they claim"). A path inside the root is walked
one folder at a time from the root's own folder, each step opened with
`O_NOFOLLOW | O_DIRECTORY` relative to the one before (`dir_fd`), so a folder
that is a symlink (`.archive -> ~/elsewhere`) stops the walk instead of leading
out of the root, and nothing can swap a folder for a symlink between a check
and its use. The last component is opened the same way with `O_NONBLOCK`, and
must be a regular file (`S_ISREG`): a FIFO or a device named `MEMORY.md` is
refused at once instead of hanging the daemon, a symlink named `MEMORY.md` is
refused instead of being read (and copied into a regular file).

The configured root itself may be a symlink (the user chose it). Where the
platform has no `dir_fd` (Windows), each component is checked with `lstat`
before use instead.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

from memory_recall.server.store.errors import ChangedOnDisk, WriteFailed

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_BINARY = getattr(os, "O_BINARY", 0)
# Every call this module makes relative to a folder's descriptor (openat, mkdirat,
# linkat, renameat, unlinkat): where one is missing, the lstat walk is used.
_DIR_FD = {os.open, os.mkdir, os.link, os.rename, os.unlink, os.stat} <= os.supports_dir_fd
# The longest name one folder entry may have on the file systems we meet (ext4, APFS,
# NTFS in UTF-16 units; bytes are the strictest measure).
MAX_NAME_BYTES = 255


class NotConfined(WriteFailed):
    """A path inside a root that is not what it claims: a symlink, a FIFO, a device, a
    file where a folder should be. Nothing was read or written through it."""


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def _refuse(where: Path, what: str) -> NotConfined:
    return NotConfined(
        f"{where} is {what}; the daemon reads and writes only regular files and folders"
        " inside the memory root, never through a symlink. Nothing was written."
    )


def _parts(relative: str) -> list[str]:
    parts = [p for p in relative.replace(os.sep, "/").split("/") if p not in ("", ".")]
    if any(p == ".." for p in parts):
        raise NotConfined(f"{relative} leaves the memory root (..)")
    return parts


@contextlib.contextmanager
def folder(root: Path, relative: str, *, create: bool = False) -> Iterator[int | None]:
    """A descriptor of the folder `relative` (`/`-separated, "" for the root itself) inside
    `root`, every component a real folder. `create` makes missing ones (and the root).
    Yields None when a component is missing and not created. Without `dir_fd` support it
    yields -1 after checking each component with lstat (the caller then uses paths)."""
    parts = _parts(relative)
    if create:
        try:
            root.mkdir(parents=True, exist_ok=True)
        except FileExistsError:
            raise _refuse(root, "not a folder") from None
        except OSError as exc:
            raise WriteFailed(f"cannot make the memory root {root}: {exc.strerror}") from None
    if not _DIR_FD:
        yield _check_by_lstat(root, parts, create)
        return
    try:
        fd = os.open(root, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    except FileNotFoundError:
        yield None
        return
    except OSError as exc:
        raise WriteFailed(f"cannot open the memory root {root}: {exc.strerror}") from None
    try:
        here = root
        for part in parts:
            here = here / part
            try:
                child = os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    yield None
                    return
                try:
                    os.mkdir(part, dir_fd=fd)
                except FileExistsError:
                    pass  # made meanwhile: opened (and checked) below
                except OSError as exc:
                    raise WriteFailed(f"cannot make {here}: {exc.strerror}") from None
                child = _open_folder(part, fd, here)
            except OSError as exc:
                raise _not_a_folder(part, fd, here, exc) from None
            os.close(fd)
            fd = child
        yield fd
    finally:
        os.close(fd)


def _open_folder(part: str, fd: int, here: Path) -> int:
    try:
        return os.open(part, os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC, dir_fd=fd)
    except OSError as exc:
        raise _not_a_folder(part, fd, here, exc) from None


def _not_a_folder(part: str, fd: int, here: Path, exc: OSError) -> WriteFailed:
    if exc.errno in (errno.ELOOP, errno.ENOTDIR, errno.EMLINK):
        try:
            mode = os.stat(part, dir_fd=fd, follow_symlinks=False).st_mode
        except OSError:
            mode = 0
        return _refuse(here, _kind(mode) if mode else "not a folder")
    if exc.errno == errno.ENAMETOOLONG:
        return NotConfined(f"{here}: a name is longer than {MAX_NAME_BYTES} bytes")
    return WriteFailed(f"cannot open {here}: {exc.strerror}")


def _check_by_lstat(root: Path, parts: list[str], create: bool) -> int | None:
    here = root
    for part in parts:
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            if not create:
                return None
            os.mkdir(here)
            continue
        if not stat.S_ISDIR(mode):
            raise _refuse(here, _kind(mode))
    return -1


def _path_in(root: Path, relative: str) -> tuple[str, str, Path]:
    parts = _parts(relative)
    if not parts:
        raise NotConfined(f"{root}: no file named")
    return "/".join(parts[:-1]), parts[-1], root.joinpath(*parts)


def read(root: Path, relative: str) -> bytes | None:
    """The bytes of the regular file `relative` inside `root`, None when there is none.
    NotConfined for a symlink, FIFO, device or folder anywhere on the way."""
    parent, name, where = _path_in(root, relative)
    with folder(root, parent) as fd:
        if fd is None:
            return None
        return _read_at(name, fd, where)


def _read_at(name: str, fd: int, where: Path) -> bytes | None:
    flags = os.O_RDONLY | _NOFOLLOW | _NONBLOCK | _CLOEXEC | _BINARY
    try:
        if fd >= 0:
            handle = os.open(name, flags, dir_fd=fd)
        else:
            mode = os.lstat(where).st_mode
            if not stat.S_ISREG(mode):
                raise _refuse(where, _kind(mode))
            handle = os.open(where, flags)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.EMLINK):
            raise _refuse(where, "a symlink") from None
        if exc.errno == errno.ENXIO:  # a FIFO or socket nobody serves
            raise _refuse(where, "a FIFO") from None
        raise _os_failure(exc, where) from None
    try:
        mode = os.fstat(handle).st_mode
        if not stat.S_ISREG(mode):
            raise _refuse(where, _kind(mode))
        chunks = []
        while chunk := os.read(handle, 1 << 20):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError as exc:
        raise _os_failure(exc, where) from None
    finally:
        os.close(handle)


def is_regular(root: Path, relative: str) -> bool:
    """Whether `relative` is a regular file inside `root` (no symlink on the way)."""
    try:
        parent, name, where = _path_in(root, relative)
        with folder(root, parent) as fd:
            if fd is None:
                return False
            if fd < 0:
                return stat.S_ISREG(os.lstat(where).st_mode)
            return stat.S_ISREG(os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode)
    except (OSError, WriteFailed, ValueError):
        return False


def check_folder(root: Path, relative: str) -> None:
    """Raise NotConfined when a component of the folder `relative` is not a real folder
    (missing ones are fine: a write makes them)."""
    with folder(root, relative):
        pass


def write_atomic(
    root: Path,
    relative: str,
    data: bytes,
    *,
    expected: bytes | None,
    temp: str,
    durable: bool = True,
) -> None:
    """Replace `relative` inside `root` with `data`, if it still holds `expected` (None:
    absent): a hidden temp file beside it, fsync, the re-read, then rename (or a hard link
    for a new file, which cannot clobber one made meanwhile), fsync of the folder. The
    folders on the way are made as needed and none may be a symlink."""
    parent, name, where = _path_in(root, relative)
    with folder(root, parent, create=True) as fd:
        assert fd is not None
        at = fd if fd >= 0 else None
        temp_where = where.with_name(temp)
        created = False
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC | _BINARY
            handle = (
                os.open(temp, flags, 0o666, dir_fd=at) if at is not None
                else os.open(temp_where, flags, 0o666)
            )  # fmt: skip
            created = True
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(handle, view) :]
                os.fsync(handle)
            finally:
                os.close(handle)
            current = _read_at(name, fd, where)  # the re-read right before the rename
            if current != expected:
                raise ChangedOnDisk(str(where))
            if expected is None:
                try:
                    _link(temp, name, at, temp_where, where)
                except FileExistsError:
                    raise ChangedOnDisk(str(where)) from None
                except OSError as exc:
                    if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EXDEV, errno.EMLINK):
                        raise
                    _rename(temp, name, at, temp_where, where)  # no hard links here
            else:
                _rename(temp, name, at, temp_where, where)
            if durable:
                _fsync_folder(at, where.parent)
        except OSError as exc:
            raise _os_failure(exc, where) from None
        finally:
            if created:
                with contextlib.suppress(OSError):
                    if at is not None:
                        os.unlink(temp, dir_fd=at)
                    else:
                        os.unlink(temp_where)


def delete(root: Path, relative: str, *, expected: bytes) -> None:
    """Remove the regular file `relative` inside `root` if it still holds `expected`."""
    parent, name, where = _path_in(root, relative)
    with folder(root, parent) as fd:
        if fd is None:
            raise ChangedOnDisk(str(where))
        if _read_at(name, fd, where) != expected:
            raise ChangedOnDisk(str(where))
        at = fd if fd >= 0 else None
        try:
            if at is not None:
                os.unlink(name, dir_fd=at)
            else:
                os.unlink(where)
        except FileNotFoundError:
            raise ChangedOnDisk(str(where)) from None
        except OSError as exc:
            raise _os_failure(exc, where) from None
        _fsync_folder(at, where.parent)


def remove_temp(root: Path, relative: str) -> bool:
    """Remove a hidden temp file a killed write left (never through a symlink)."""
    try:
        parent, name, where = _path_in(root, relative)
        with folder(root, parent) as fd:
            if fd is None:
                return False
            if fd >= 0:
                os.unlink(name, dir_fd=fd)
            else:
                os.unlink(where)
    except (OSError, WriteFailed):
        return False
    return True


def _link(src: str, dst: str, at: int | None, src_path: Path, dst_path: Path) -> None:
    if at is not None:
        os.link(src, dst, src_dir_fd=at, dst_dir_fd=at, follow_symlinks=False)
    else:
        os.link(src_path, dst_path)


def _rename(src: str, dst: str, at: int | None, src_path: Path, dst_path: Path) -> None:
    if at is not None:
        os.replace(src, dst, src_dir_fd=at, dst_dir_fd=at)
    else:
        os.replace(src_path, dst_path)


def _fsync_folder(at: int | None, where: Path) -> None:
    """Make a rename or an unlink durable (POSIX; a no-op where folders cannot be synced)."""
    try:
        if at is not None:
            os.fsync(at)
            return
        fd = os.open(where, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _os_failure(exc: OSError, path: Path) -> WriteFailed:
    """An OSError as a failure a user can act on."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return WriteFailed(f"disk full writing {path} ({exc.strerror}); the old file is intact")
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return WriteFailed(f"{path.parent} is read-only ({exc.strerror}); nothing was written")
    if exc.errno == errno.EFBIG:
        return WriteFailed(f"file too large for {path} ({exc.strerror}); the old file is intact")
    if exc.errno == errno.ENAMETOOLONG:
        return NotConfined(f"{path}: a name is longer than {MAX_NAME_BYTES} bytes")
    if exc.errno == errno.EISDIR:
        return _refuse(path, "a folder")
    return WriteFailed(f"could not write {path}: {exc.strerror or exc}")
