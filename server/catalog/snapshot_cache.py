"""A persistent snapshot of the parsed catalog and its index.

Every editor window starts a daemon; re-reading and re-indexing a large memory
tree each time would cost seconds. The snapshot lets a restarted daemon stat
each file instead: an entry is reused only when the file's path, size and
mtime (in nanoseconds) are what they were when it was parsed; anything else is
re-read, and files no longer on disk are dropped.

The file is never trusted blindly. It starts with a header that names the
format, a fingerprint of the configured roots and of the code that produced
its contents (Python, Unicode tables, our own parsing, tokenizing and indexing
modules), and a checksum of the payload. A file that is missing, truncated,
corrupt, or written by another version is reported and ignored, and the next
save replaces it. Writes go to a temporary file renamed over the old one, so a
crash mid-write leaves the previous snapshot or none.

The payload is a pickle, because it loads several times faster than any text
format for this shape of data. Loading a pickle runs code chosen by whoever
wrote the file; this one lives in the user's own data directory, written by
this program, so it carries the same trust as the program's own files.
"""

from __future__ import annotations

import contextlib
import ctypes
import hashlib
import json
import os
import pickle
import struct
import sys
import tempfile
import time
import unicodedata
import zlib
from array import array
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, BinaryIO

import regex
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.pacing import paced
from memory_recall.server.ranking.bm25f.index import Bm25Index
from memory_recall.server.ranking.postings import TermIndex
from memory_recall.server.roots import MemoryRoot, Scope, user_data_dir

# Bump when the payload's layout changes (8: content hashes, team scope, the index's
# kind, coded bodies, extra front-matter keys; 9: the index's cached bitmaps; 10: a
# trigram's words by place, not by name; 11: the length classes and their bitmaps; 12:
# bm25f's folded terms beside the exact ones, and its exact form's special casing; 13:
# the index's words with their field counts, and the documents' normal titles and
# descriptions, saved instead of worked out again).
FORMAT_VERSION = 13
_MAGIC = b"memory-recall snapshot\n"
_HEADER = struct.Struct("<I32sQI")  # format version, fingerprint, payload length, crc32
_CHUNK = 1 << 20
# Modules whose code decides what a cached document or index contains: any
# change to them makes older snapshots unusable.
_PRODUCERS = (
    "documents.py",
    "tokens.py",
    "roots.py",
    "catalog/catalog.py",
    "ranking/postings.py",
    "ranking/index.py",
    "ranking/bm25f/terms.py",
    "ranking/bm25f/index.py",
    "ranking/bm25f/tokens.py",
    "ranking/bm25f/folding.py",
    "ranking/view.py",
    "catalog/snapshot_cache.py",
)


@dataclass(frozen=True)
class FileRecord:
    """What one file was when it was read: a document, or the reason it is not one."""

    size: int
    mtime_ns: int
    document: MemoryDocument | None = None
    skipped: str | None = None


@dataclass
class CachedCatalog:
    files: dict[str, FileRecord]
    index: TermIndex


CACHE_DIR_ENV = "MEMORY_RECALL_CACHE_DIR"  # where snapshots go; "off" disables them
FORGET_AFTER_S = 30 * 24 * 3600  # snapshots of roots no daemon has opened for a month
# A temporary file of this snapshot untouched this long is a write that never finished
# (another daemon of the same roots may be writing its own right now: only old ones go).
UNFINISHED_AFTER_S = 3600
# The temporary files `save` is writing in this process. A face that leaves without
# waiting for its writer thread (os._exit once the host has gone, mid-write) removes them
# first (`discard_unfinished`): else each start cut short leaves a snapshot's bytes (550
# MB at 100,000 memories) until a later save, an hour on, prunes them.
_WRITING: set[str] = set()


def discard_unfinished() -> None:
    """Remove the temporary files of snapshots this process is still writing: it is
    about to exit without waiting for them (their writes then fail, replacing nothing)."""
    for temp in list(_WRITING):
        with contextlib.suppress(OSError):
            os.unlink(temp)


def snapshot_cache(
    roots: Sequence[MemoryRoot], kind: type[TermIndex] = Bm25Index
) -> SnapshotCache | None:
    """The daemon's cache for these roots and this kind of index:
    `$MEMORY_RECALL_CACHE_DIR`, else the user data dir."""

    configured = os.environ.get(CACHE_DIR_ENV)
    if configured == "off":
        return None
    cache_dir = Path(configured) if configured else user_data_dir() / "cache"
    return SnapshotCache(default_cache_path(roots, cache_dir, kind), roots)


def default_cache_path(
    roots: Sequence[MemoryRoot], cache_dir: Path, kind: type[TermIndex] = Bm25Index
) -> Path:
    """One snapshot per set of roots and kind of index, under `cache_dir` (the user data
    dir's cache/): two windows with different rankers do not overwrite each other's."""
    return cache_dir / f"catalog-{_roots_key(roots)[:16]}-{kind.KIND}.snapshot"


def _roots_key(roots: Sequence[MemoryRoot]) -> str:
    described = [[str(r.path), r.scope.value, r.follow_symlinks_outside] for r in roots]
    return hashlib.sha256(json.dumps(described).encode()).hexdigest()


def fingerprint(roots: Sequence[MemoryRoot]) -> bytes:
    """The roots and the code a snapshot's contents depend on."""
    digest = hashlib.sha256()
    digest.update(_roots_key(roots).encode())
    digest.update(f"{sys.version_info[:2]} {unicodedata.unidata_version}".encode())
    digest.update(regex.__version__.encode())
    here = Path(__file__).parent.parent  # the server package
    for name in _PRODUCERS:
        digest.update((here / name).read_bytes())
    return digest.digest()


class SnapshotCache:
    """Reads and writes the snapshot file of one set of roots."""

    def __init__(self, path: str | os.PathLike[str], roots: Sequence[MemoryRoot]) -> None:
        self.path = Path(path)
        self.roots = roots
        self.last_problem: str | None = None  # why the last load found nothing usable

    def load(
        self, tiebreak: Callable[[MemoryDocument], Any], kind: type[TermIndex] = Bm25Index
    ) -> CachedCatalog | None:
        """The cached catalog, or None (and `last_problem`) when there is none to trust.

        `tiebreak` is the one the index was built with (the catalog's input order);
        `kind` the index the snapshot must hold.
        """
        self.last_problem = None
        try:
            with self.path.open("rb") as f:
                self._check(f)
                files: dict[str, FileRecord] = {}
                while (chunk := pickle.load(f)) != _END_OF_FILES:
                    files.update(_files_from_columns(chunk))
                index = kind.from_parts(iter(lambda: pickle.load(f), _END), tiebreak)
            documents = {p: r.document for p, r in files.items() if r.document is not None}
            index.relink(documents)
            return CachedCatalog(files, index)
        except FileNotFoundError:
            self.last_problem = "no snapshot yet"
        except Exception as exc:  # a damaged file can fail in many ways; never crash on it
            self.last_problem = f"unusable snapshot ({type(exc).__name__}: {exc}): rebuilding"
        return None

    def save(
        self,
        files: dict[str, FileRecord],
        index: TermIndex,
        current: Callable[[], bool] | None = None,
    ) -> bool:
        """Write atomically: a temporary file in the same directory, then a rename.

        The payload is streamed (no second copy of it in memory); the header,
        which needs its length and checksum, is filled in last. From a worker thread
        it is written a part at a time, requests first (`paced`); `current` says, once
        it is written, whether the catalog is still the one it was read from: if not,
        nothing is replaced and the answer is False.
        """
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(prefix=self.path.name, suffix=".tmp", dir=self.path.parent)
        _WRITING.add(temp)
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(_MAGIC)
                out.write(bytes(_HEADER.size))
                payload = _ChecksummedWriter(out)
                # One pickle per chunk: each has its own memo, which would
                # otherwise grow with every object written.
                parts = chain(_file_chunks(files), [_END_OF_FILES], index.parts(), [_END])
                for part in paced(parts):  # made one at a time, as they are written
                    pickle.dump(part, payload, protocol=pickle.HIGHEST_PROTOCOL)
                out.seek(len(_MAGIC))
                out.write(
                    _HEADER.pack(FORMAT_VERSION, fingerprint(self.roots), payload.size, payload.crc)
                )
            if current is not None and not current():
                os.unlink(temp)
                return False
            os.replace(temp, self.path)
            self._forget_old_snapshots()
            return True
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
        finally:
            _WRITING.discard(temp)

    def _forget_old_snapshots(self) -> None:
        """Every set of roots (every temporary test tree) leaves a file: prune stale ones,
        and this snapshot's own unfinished writes (a daemon that exited while writing)."""
        cutoff = time.time() - FORGET_AFTER_S
        unfinished = time.time() - UNFINISHED_AFTER_S
        for other in self.path.parent.glob("catalog-*.snapshot*"):
            with contextlib.suppress(OSError):
                if other == self.path:
                    continue
                mtime = other.stat().st_mtime
                mine = other.name.startswith(self.path.name) and other.suffix == ".tmp"
                if mtime < cutoff or (mine and mtime < unfinished):
                    other.unlink()

    def _check(self, f: BinaryIO) -> None:
        """Validate magic, header and checksum, leaving `f` at the payload's start."""
        if f.read(len(_MAGIC)) != _MAGIC:
            raise ValueError("not a snapshot file")
        header = f.read(_HEADER.size)
        if len(header) != _HEADER.size:
            raise ValueError("truncated header")
        version, stamp, length, crc = _HEADER.unpack(header)
        if version != FORMAT_VERSION:
            raise ValueError(f"format {version}, expected {FORMAT_VERSION}")
        if stamp != fingerprint(self.roots):
            raise ValueError("written for other roots or by another version")
        start = f.tell()
        seen, actual = 0, 0
        while chunk := f.read(_CHUNK):
            seen += len(chunk)
            actual = zlib.crc32(chunk, actual)
        if seen != length:
            raise ValueError(f"payload is {seen} bytes, expected {length}")
        if actual != crc:
            raise ValueError("checksum mismatch")
        f.seek(start)


def return_freed_memory() -> None:
    """Give memory freed after a scan (and the save made with it) back to the system.

    glibc keeps freed heap for reuse; a daemon lives for hours, so the tens of
    MB a scan's file texts passed through would stay in its RSS. (Not after a save
    beside the requests: trimming holds the allocator's lock, and a recall allocating
    meanwhile waited 13 ms at 100,000 memories; its parts are small and reused.)
    """
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)


class _ChecksummedWriter:
    """A write-only file that counts and checksums what passes through it."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.size = 0
        self.crc = 0

    def write(self, data: bytes) -> int:
        view = memoryview(data)
        self.size += len(view)
        self.crc = zlib.crc32(view, self.crc)
        return self.out.write(view)


# Documents travel as the plain arguments they were made from, in chunks of a
# few thousand files, one column per field (a joined string or an array: a
# handful of objects for the pickler to track, not a million); their derived
# fields are recomputed on load, so a snapshot never carries stale ones. The
# index refers to documents by path and is re-linked to the rebuilt objects.

_SEP = "\x00"  # no path or memory holds one: files with NUL bytes are skipped
_CHUNK_FILES = 100  # files per pickled chunk: bounds what a save holds (and pickles in one call)
_END_OF_FILES = "end of files"
_END = "end"


def _file_chunks(files: dict[str, FileRecord]) -> Iterator[dict[str, Any]]:
    items = list(files.items())
    for start in range(0, len(items), _CHUNK_FILES):
        yield _columns_from_files(dict(items[start : start + _CHUNK_FILES]))


def _split(joined: str, count: int) -> list[str]:
    return joined.split(_SEP) if count else []


# A document's scope as one byte: its position here.
_SCOPES = (Scope.PROJECT, Scope.USER, Scope.TEAM)


def _columns_from_files(files: dict[str, FileRecord]) -> dict[str, Any]:
    docs = [r.document for r in files.values() if r.document is not None]
    reasons = [r.skipped or "" for r in files.values() if r.document is None]
    return {
        "paths": _SEP.join(files),
        "sizes": array("q", (r.size for r in files.values())),
        "mtimes": array("q", (r.mtime_ns for r in files.values())),
        "is_document": bytes(r.document is not None for r in files.values()),
        "skipped": _SEP.join(reasons),
        "relative_path": _SEP.join(d.relative_path for d in docs),
        "scope": bytes(_SCOPES.index(d.scope) for d in docs),
        "type": _SEP.join(d.type for d in docs),
        "title": _SEP.join(d.title for d in docs),
        "description": _SEP.join(d.description for d in docs),
        "norm_title": _SEP.join(d.norm_title for d in docs),
        "norm_description": _SEP.join(d.norm_description for d in docs),
        "body": _SEP.join(d.body for d in docs),
        "content_hash": _SEP.join(d.content_hash for d in docs),
        "mtime_ms": array("d", (d.mtime_ms for d in docs)),
        "root_index": array("I", (d.root_index for d in docs)),
        # Mostly the one shared empty tuple, which pickle writes once.
        "extra": [d.extra for d in docs],
    }


def _files_from_columns(columns: dict[str, Any]) -> dict[str, FileRecord]:
    sizes, mtimes, is_document = columns["sizes"], columns["mtimes"], columns["is_document"]
    paths = _split(columns["paths"], len(sizes))
    count = sum(is_document)
    text = {
        name: _split(columns[name], count)
        for name in (
            "relative_path", "type", "title", "description", "body", "content_hash",
            "norm_title", "norm_description",
        )
    }  # fmt: skip
    skipped = iter(_split(columns["skipped"], len(sizes) - count))
    scopes = _SCOPES
    files = {}
    at = 0
    for path, size, mtime_ns, has_doc in zip(paths, sizes, mtimes, is_document, strict=True):
        if not has_doc:
            files[path] = FileRecord(size, mtime_ns, None, next(skipped))
            continue
        doc = MemoryDocument.restored(
            path,
            text["relative_path"][at],
            scopes[columns["scope"][at]],
            text["type"][at],  # type: ignore[arg-type]
            text["title"][at],
            text["description"][at],
            text["body"][at],
            columns["mtime_ms"][at],
            columns["root_index"][at],
            text["content_hash"][at],
            columns["extra"][at],
            text["norm_title"][at],
            text["norm_description"][at],
        )
        files[path] = FileRecord(size, mtime_ns, doc, None)
        at += 1
    return files
