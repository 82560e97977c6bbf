"""MemoryCatalog: the warm, parsed set of memory documents under configured roots.

Files are parsed once, when scanned or when the watcher reports a change;
recalls read an immutable `CorpusView`, rebuilt lazily after a change. A
change is read from disk by `read_change` (no catalog state is touched, so it
can run off the event loop) and applied by `apply_change` in steps, so that a
root of 20,000 files coming back never holds the daemon for seconds.

Past 400 lines, and one job: scanning, reading a change and applying it all
keep the same structures in step (documents, skipped files, file stats, input
order, index), and only this class may touch them; writing their snapshot from
another thread (`save_snapshot`) relies on every change bumping the version first.
"""

from __future__ import annotations

import os
import threading
import time
from bisect import bisect_left
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from memory_recall.server.catalog.cold_build import Job, read_in_workers
from memory_recall.server.catalog.snapshot_cache import (
    CachedCatalog,
    FileRecord,
    SnapshotCache,
    return_freed_memory,
)
from memory_recall.server.documents import (
    InvalidMemory,
    MemoryDocument,
    UnreadableMemory,
    is_memory_file_name,
    load_document,
    missing_file,
)
from memory_recall.server.ranking.bm25f.index import Bm25Index
from memory_recall.server.ranking.postings import TermIndex
from memory_recall.server.ranking.view import CorpusView, input_order_key
from memory_recall.server.roots import MemoryRoot


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(frozen=True)
class FileRead:
    """One file as read from disk, not yet applied: a document or why it is not one."""

    key: str
    document: MemoryDocument | None = None
    reason: str | None = None  # skipped with this reason
    stats: tuple[int, int] | None = None  # (size, mtime_ns) to remember for the snapshot
    vanished: bool = False  # deleted between listing and reading: nothing to report


@dataclass
class PathChange:
    """What one changed path is on disk now, read by `read_change`.

    `kind`: `tree` (a directory: everything under it not in `files` is gone),
    `file`, `gone` (nothing there any more), `unreadable` (cannot be looked
    at: `reason`), or `ignored` (outside every root, hidden, not a memory name).
    """

    path: Path
    kind: str
    files: list[FileRead] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)  # directories the walk could not enter
    reason: str | None = None
    # The catalog's clock when the read began: a path applied since (the daemon's
    # own write, on the event loop) is newer than what was read, and is kept.
    read_at: int = 0


@dataclass
class CatalogCounters:
    scans: int = 0
    upserts: int = 0
    removals: int = 0
    skipped_updates: int = 0


@dataclass
class MemoryCatalog:
    """Documents of every configured root, keyed by path, kept warm in memory.

    Besides the documents it keeps, incrementally, what a snapshot and a recall
    need so that neither costs a sort or a scan per change: the input order
    and the index — of the kind its ranker reads (`index_kind`: the default
    ranker's, bm25f's), and only that one.
    """

    roots: Sequence[MemoryRoot]
    index_kind: type[TermIndex] = Bm25Index
    _docs: dict[str, MemoryDocument] = field(default_factory=dict)
    _skipped: dict[str, str] = field(default_factory=dict)
    _snapshot: CorpusView | None = None
    _version: int = 0
    _index: TermIndex = field(init=False)
    _input_docs: list[MemoryDocument] = field(default_factory=list)  # by input_order_key
    # (size, mtime_ns) of each file as it was just before it was read: what a
    # snapshot cache entry is checked against.
    _file_stats: dict[str, tuple[int, int]] = field(default_factory=dict)
    build_ms: float | None = None
    cache_report: str | None = None  # what the last scan made of its snapshot cache
    cache_fault: str | None = None  # why the snapshot could not be written, if it could not
    # The snapshot cache a scan left to `save_snapshot` (`scan(save=False)`), if any.
    unsaved: SnapshotCache | None = None
    _saving: threading.Lock = field(default_factory=threading.Lock)
    # When each path was last applied (a tick of `_clock`), while a change read off
    # the event loop may be older than it.
    _clock: int = 0
    _applied_at: dict[str, int] = field(default_factory=dict)
    counters: CatalogCounters = field(default_factory=CatalogCounters)
    # Paths put or dropped since the last `drain_changes` (what the memory network
    # follows incrementally); a scan replaces everything, so it is counted instead.
    _changed_paths: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._index = self.index_kind(tiebreak=input_order_key)

    # -- reading -------------------------------------------------------------

    def snapshot(self) -> CorpusView:
        if self._snapshot is None:
            self._snapshot = CorpusView(
                tuple(self._input_docs),
                self._index.by_recency(),
                self._version,
                self._index,
                self._index.version,
            )
        return self._snapshot

    def __len__(self) -> int:
        return len(self._docs)

    def get(self, path: str) -> MemoryDocument | None:
        return self._docs.get(path)

    @property
    def skipped(self) -> list[SkippedFile]:
        return [
            SkippedFile(display_path(p), display_path(r)) for p, r in sorted(self._skipped.items())
        ]

    def count_by_root(self) -> list[int]:
        counts = [0] * len(self.roots)
        # list() copies in one step, so a status request may ask while a scan
        # runs in another thread.
        for doc in list(self._docs.values()):
            counts[doc.root_index] += 1
        return counts

    def index_stats(self) -> dict[str, int]:
        return self._index.stats()

    # -- changing ------------------------------------------------------------

    def scan(self, cache: SnapshotCache | None = None, *, save: bool = True) -> None:
        """Rebuild everything from disk, reusing what a snapshot cache still vouches for.

        With a cache, a file whose size and mtime match its snapshot entry is
        not read again, and the snapshot's index is patched rather than
        rebuilt. The snapshot is rewritten when anything differed: here, or with
        `save=False` later, by `save_snapshot` (the daemon's, after `ready`).
        """
        started = time.perf_counter()
        self._changing()
        cached = cache.load(input_order_key, self.index_kind) if cache else None
        self.cache_report = cache.last_problem if cache else None
        self._docs.clear()
        self._skipped.clear()
        self._file_stats.clear()
        self._changed_paths.clear()
        reused: set[str] = set()
        pending: list[Job] = []  # files to read: (root index, path, inside the root)
        for index, root in enumerate(self.roots):
            for entry in self._walk_entries(index, root, root.path):
                if cached and self._reuse(entry, cached):
                    reused.add(entry.path)
                    continue
                pending.append((index, entry.path, not entry.is_symlink()))
        # A cold start (nothing reused) of a large tree reads and indexes in worker
        # processes, one per core.
        built = None
        if not reused:
            built = read_in_workers(
                self.roots, pending, read_file, self.index_kind, input_order_key
            )
        if built is not None:
            reads, self._index = built
            for read in reads:
                self._apply_read(read, indexed=False)
            self._sort_input_order()
        else:
            for index, path, inside in pending:
                self._load(index, self.roots[index], Path(path), indexed=False, inside=inside)
            if cached and len(reused) * 4 >= len(self._docs) * 3:
                self._patch_index(cached.index, reused)
            else:
                self._reindex()
        changed = cached is None or len(reused) != len(cached.files)
        # The bitmaps of the longest posting lists, ahead: the first recalls
        # after a start then cost what the rest do.
        self._index.warm()
        self._changed()
        self.counters.scans += 1
        self.unsaved = cache if cache and changed else None
        if self.unsaved and save:
            self.save_snapshot()
        return_freed_memory()
        self.build_ms = (time.perf_counter() - started) * 1000
        if cache and not self.cache_report:
            reread = len(self._docs) + len(self._skipped) - len(reused)
            self.cache_report = f"snapshot reused for {len(reused)} files, {reread} read again"

    def save_snapshot(self) -> bool:
        """Write the snapshot the last scan left unwritten (`unsaved`): the current
        documents, skipped files and index. From a worker thread it may run while changes
        are applied: a change during the write (seen by the catalog's version, or as a
        collection changing under the reading) leaves the old file and answers False, to be
        tried again. True once there is nothing left to write; a cache that cannot be
        written (a full disk, a read-only or missing home) says why in `cache_fault`."""
        with self._saving:  # one writer at a time (a command's exit, the session's task)
            return self._save_snapshot()

    def _save_snapshot(self) -> bool:
        cache = self.unsaved
        if cache is None:
            return True
        version = self._version
        try:
            files: dict[str, FileRecord] = {}
            for path, (size, mtime_ns) in self._file_stats.items():
                doc = self._docs.get(path)
                skipped = self._skipped.get(path)
                if doc is not None or skipped is not None:
                    files[path] = FileRecord(size, mtime_ns, doc, skipped)
            written = cache.save(files, self._index, lambda: self._version == version)
        except Exception as exc:
            if self._version != version:
                return False  # read while it changed: a dict changed size, a term left
            if not isinstance(exc, OSError | ValueError):
                raise
            self.cache_fault = (
                f"the snapshot cache {display_path(str(cache.path))} cannot be written "
                f"({_os_reason(exc) if isinstance(exc, OSError) else exc}); "
                "running without it (restarts re-read every file)"
            )
            written = True  # not to be tried again
        if written:
            self.unsaved = None
        return written

    def refresh(self, path: str | os.PathLike[str]) -> None:
        """Bring one path in line with the disk, whatever happened to it.

        The watcher's change kinds are unreliable (atomic saves, renames), so
        the rule is: exists → (re)load it, or rescan it if it is a directory;
        missing → drop it and everything that was under it.
        """
        change = self.read_change(path)
        for _ in self.apply_change(change):
            pass
        self._touch([str(change.path), *(read.key for read in change.files)])

    def _touch(self, keys: Iterable[str]) -> None:
        """Remember that these paths were just applied from outside `apply_change`
        (a write of the daemon's own, on the event loop)."""
        self._clock += 1
        for key in keys:
            self._applied_at[key] = self._clock

    def read_change(self, path: str | os.PathLike[str]) -> PathChange:
        """What `path` is on disk now. Reads files but changes nothing: safe in a thread."""
        p = self._absolute(path)
        read_at = self._clock
        located = self.locate(p)
        if located is None:
            return PathChange(p, "ignored")
        index, root, p = located
        if p != root.path and _hidden(p, root.path):
            return PathChange(p, "ignored")  # nothing hidden is ever scanned (.archive/, .git/)
        change = self._read_path(index, root, p)
        change.read_at = read_at
        return change

    def _read_path(self, index: int, root: MemoryRoot, p: Path) -> PathChange:
        try:
            is_dir = p.is_dir()
            present = is_dir or p.exists() or p.is_symlink()
        except (OSError, ValueError) as exc:
            return PathChange(p, "unreadable", reason=_unreadable(exc))
        bad_name = _undecodable(p, root.path)
        if bad_name:
            return PathChange(p, "unreadable" if present else "gone", reason=bad_name)
        if is_dir:
            change = PathChange(p, "tree")
            for entry in self._walk_entries(index, root, p, change.skipped):
                change.files.append(self._read(root, Path(entry.path), index))
            return change
        if not present:
            return PathChange(p, "gone")
        if not is_memory_file_name(p.name) or _hidden(p, root.path):
            return PathChange(p, "ignored")
        return PathChange(p, "file", files=[self._read(root, p, index)])

    def apply_change(self, change: PathChange) -> Iterator[None]:
        """Apply what `read_change` found, yielding between steps (each leaves the
        catalog consistent, so a recall or a write may run in between). A path the
        daemon wrote since the change was read keeps what the write put there."""
        p, key = change.path, str(change.path)
        read = {f.key for f in change.files} | set(change.skipped)

        def keep(path: str) -> bool:
            return path in read or self._newer(change, path)

        self._forget_old_touches(change.read_at)
        if change.kind == "file":
            if not self._newer(change, key):
                self.counters.upserts += 1
                self._apply_read(change.files[0])
                self._changed()
        elif change.kind == "tree":
            self._skipped.pop(key, None)  # the directory itself reads again
            yield from self._remove_under(p, keep=keep)
            for done, file in enumerate(change.files, 1):
                if not self._newer(change, file.key):
                    self._apply_read(file)
                if done % _STEP == 0:
                    self._changed()
                    yield
            self._skipped.update(change.skipped)
            self._changed()
        elif change.kind == "unreadable":
            yield from self._remove_under(p, keep=keep)
            self._remove(p)
            assert change.reason is not None
            self._skipped[display_path(key)] = change.reason
            self._changed()
        elif change.kind == "gone" and not self._newer(change, key):
            if key in self._docs or key in self._skipped:
                self._remove(p)  # a file that was read: nothing can be under it
            else:
                yield from self._remove_under(p, keep=keep)
                self._remove(p)
                self._skipped.pop(display_path(key), None)
            self._changed()

    def _newer(self, change: PathChange, key: str) -> bool:
        """Whether `key` was applied (by a write of the daemon) after `change` was read."""
        return self._applied_at.get(key, 0) > change.read_at

    def _forget_old_touches(self, tick: int) -> None:
        """Drop what no change in flight can predate (changes are applied in order)."""
        if len(self._applied_at) > _STEP * 16:
            self._applied_at = {k: at for k, at in self._applied_at.items() if at > tick}

    def root_problems(self) -> list[str]:
        """Roots that exist but cannot be read, each with the reason, in words."""
        problems = []
        for root in self.roots:
            reason = self._skipped.get(display_path(str(root.path)))
            if reason:
                problems.append(
                    f"memory root {display_path(str(root.path))} cannot be read: {reason}"
                )
        return problems

    def upsert(self, path: str | os.PathLike[str]) -> MemoryDocument | None:
        """(Re)load one file; returns the document, or None when it is not a memory."""
        located = self.locate(path)
        if located is None:
            return None
        index, root, p = located
        if not is_memory_file_name(p.name) or _hidden(p, root.path):
            return None
        self.counters.upserts += 1
        doc = self._apply_read(self._read(root, p, index))
        self._touch([str(p)])
        self._changed()
        return doc

    def remove(self, path: str | os.PathLike[str]) -> bool:
        self._touch([str(self._absolute(path))])
        return self._remove(path)

    def _remove(self, path: str | os.PathLike[str]) -> bool:
        key = str(self._absolute(path))
        removed = self._drop([key]) == 1  # (first: it says the catalog is changing)
        self._skipped.pop(key, None)
        self._file_stats.pop(key, None)
        if removed:
            self.counters.removals += 1
            self._changed()
        return removed

    # -- helpers -------------------------------------------------------------

    @staticmethod
    def _absolute(path: str | os.PathLike[str]) -> Path:
        return Path(os.path.abspath(path))

    def locate(self, path: str | os.PathLike[str]) -> tuple[int, MemoryRoot, Path] | None:
        """The root a path belongs to: the innermost configured one that contains it (a
        team root inside the project root owns its files), the first of equal ones."""
        p = self._absolute(path)
        found: tuple[int, MemoryRoot, Path] | None = None
        for index, root in enumerate(self.roots):
            if (p == root.path or root.path in p.parents) and (
                found is None or len(root.path.parts) > len(found[1].path.parts)
            ):
                found = index, root, p
        return found

    def _nested_roots(self, index: int) -> frozenset[Path]:
        """The other roots strictly inside root `index`: its walk leaves them to themselves."""
        outer = self.roots[index].path
        return frozenset(r.path for r in self.roots if outer in r.path.parents)

    def _changing(self) -> None:
        """Before documents, their file records or the index change: a snapshot being
        written from another thread (`save_snapshot`) is then known to be of no one
        state, and is not kept."""
        self._version += 1

    def _changed(self) -> None:
        self._version += 1
        self._snapshot = None

    def drain_changes(self) -> tuple[int, set[str]]:
        """The number of scans so far and the paths put or dropped since the last call
        (a follower rebuilds when the scan count moved, else re-reads these paths)."""
        changed, self._changed_paths = self._changed_paths, set()
        return self.counters.scans, changed

    def _put(self, doc: MemoryDocument) -> None:
        """Add or replace one document in the input order and the index."""
        self._drop([doc.path])  # (first: it says the catalog is changing)
        self._docs[doc.path] = doc
        self._changed_paths.add(doc.path)
        at = bisect_left(self._input_docs, input_order_key(doc), key=input_order_key)
        self._input_docs.insert(at, doc)
        self._index.add(doc)

    def _drop(self, paths: Sequence[str]) -> int:
        """Remove documents from the catalog, its input order and its index."""
        self._changing()
        dropped = 0
        for path in paths:
            doc = self._docs.pop(path, None)
            if doc is None:
                continue
            dropped += 1
            self._changed_paths.add(path)
            at = bisect_left(self._input_docs, input_order_key(doc), key=input_order_key)
            del self._input_docs[at]
        if dropped:
            self._index.remove_many(paths)
        return dropped

    def _reindex(self) -> None:
        """Input order and index from scratch: one sort and one bulk build."""
        self._index = self.index_kind.of(self._sort_input_order(), tiebreak=input_order_key)

    def _sort_input_order(self) -> list[MemoryDocument]:
        self._input_docs = sorted(self._docs.values(), key=input_order_key)
        return self._input_docs

    def _patch_index(self, index: TermIndex, reused: set[str]) -> None:
        """Adopt a snapshot's index: drop what changed on disk, add what was read again."""
        index.remove_many([path for path in index.paths() if path not in reused])
        for doc in self._sort_input_order():
            if doc.path not in reused:
                index.add(doc)
        self._index = index

    def _reuse(self, entry: os.DirEntry[str], cached: CachedCatalog) -> bool:
        """Take a file's snapshot entry when the file is still exactly what was read."""
        record = cached.files.get(entry.path)
        if record is None or entry.is_symlink():  # a link's target may have moved: read it
            return False
        try:
            st = entry.stat()
        except OSError:
            return False
        if (st.st_size, st.st_mtime_ns) != (record.size, record.mtime_ns):
            return False
        if record.document is not None:
            self._docs[entry.path] = record.document
        elif record.skipped is not None:
            self._skipped[entry.path] = record.skipped
        self._file_stats[entry.path] = (record.size, record.mtime_ns)
        return True

    def _remove_under(
        self, directory: Path, *, keep: Callable[[str], bool] | None = None
    ) -> Iterator[None]:
        """Drop what was under `directory` unless `keep(path)`, in steps (`keep` is asked
        again at each step: a write between steps is kept)."""
        prefix = str(directory) + os.sep
        owner = self.locate(directory)

        def gone(path: str) -> bool:
            if not path.startswith(prefix) or (keep and keep(path)):
                return False
            # A root nested inside this directory's root keeps its own files.
            located = self.locate(path)
            return owner is None or located is None or located[0] == owner[0]

        self._changing()
        for key in [k for k in self._skipped if gone(k)]:
            del self._skipped[key]
            self._file_stats.pop(key, None)
        candidates = [k for k in self._docs if gone(k)]
        for start in range(0, len(candidates), _STEP):
            batch = [k for k in candidates[start : start + _STEP] if gone(k)]
            self._changing()
            for key in batch:
                self._file_stats.pop(key, None)
            self.counters.removals += self._drop(batch)
            self._changed()
            if start + _STEP < len(candidates):
                yield

    def _load(
        self,
        index: int,
        root: MemoryRoot,
        path: Path,
        *,
        indexed: bool = True,
        inside: bool = False,
    ) -> MemoryDocument | None:
        """Read one file into the catalog (or into the skipped list).

        `indexed=False` (bulk scans) leaves the input order and the index to
        `_reindex`. `inside=True` says the walk found a file that is not a
        symlink in a directory inside the root: there is nothing to resolve.
        """
        return self._apply_read(self._read(root, path, index, inside=inside), indexed=indexed)

    def _read(self, root: MemoryRoot, path: Path, index: int, *, inside: bool = False) -> FileRead:
        return read_file(root, path, index, inside)

    def _apply_read(self, read: FileRead, *, indexed: bool = True) -> MemoryDocument | None:
        self._changing()
        key = read.key
        self._file_stats.pop(key, None)
        if read.document is None:
            if indexed:
                self._drop([key])
            else:
                self._docs.pop(key, None)
            if read.vanished:
                self._skipped.pop(key, None)
                return None
            assert read.reason is not None
            self._skipped[key] = read.reason
            if read.stats is not None:
                self._file_stats[key] = read.stats
            self.counters.skipped_updates += 1
            return None
        self._skipped.pop(key, None)
        assert read.stats is not None
        self._file_stats[key] = read.stats
        if indexed:
            self._put(read.document)
        else:
            self._docs[key] = read.document
        return read.document

    def _walk(self, index: int, root: MemoryRoot, start: Path) -> Iterator[Path]:
        """Memory files under `start`, recursively, symlink loops and hidden entries skipped."""
        for entry in self._walk_entries(index, root, start):
            yield Path(entry.path)

    def _walk_entries(
        self,
        index: int,
        root: MemoryRoot,
        start: Path,
        skipped: dict[str, str] | None = None,
    ) -> Iterator[os.DirEntry[str]]:
        """Memory files under `start`; what cannot be entered goes to `skipped` (by
        default the catalog's own list) with its reason, never an exception."""
        skipped = self._skipped if skipped is None else skipped
        try:
            root_real = os.path.realpath(root.path)
        except (OSError, ValueError) as exc:
            skipped[display_path(str(start))] = _unreadable(exc)
            return
        seen: set[str] = set()
        nested = self._nested_roots(index)
        stack = [start]
        while stack:
            directory = stack.pop()
            try:
                real = os.path.realpath(directory)
                is_link = directory.is_symlink()
            except (OSError, ValueError) as exc:
                skipped[display_path(str(directory))] = _unreadable(exc)
                continue
            if is_link and directory != root.path and _inside(real, root_real):
                # An alias of a directory that is walked under its own name: walking it
                # too would list its memories twice, or only once depending on the order.
                continue
            if real in seen:
                continue
            seen.add(real)
            leaves = is_link and not _inside(real, root_real)
            if leaves and not root.follow_symlinks_outside:
                skipped[str(directory)] = f"symlinked directory points outside the root (to {real})"
                continue
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except FileNotFoundError:
                continue
            except (OSError, ValueError) as exc:
                skipped[display_path(str(directory))] = _unreadable(exc)
                continue
            subdirs = []
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    is_dir = entry.is_dir()  # follows symlinks
                except OSError:
                    is_dir = False
                if not is_dir and not is_memory_file_name(entry.name):
                    continue
                if not _is_text(entry.name):
                    # Not UTF-8: it cannot travel in JSON, nor through the watcher.
                    skipped[display_path(entry.path)] = BAD_NAME_REASON
                    continue
                if is_dir:
                    if Path(entry.path) not in nested:  # another root's own files
                        subdirs.append(Path(entry.path))
                else:
                    yield entry
            stack.extend(reversed(subdirs))


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def read_file(root: MemoryRoot, path: Path, index: int, inside: bool = False) -> FileRead:
    """One file of root `index` read and parsed; touches no catalog (a worker process
    of a cold start runs it too). `inside`: found by the walk, not a symlink."""
    key = str(path)
    st: os.stat_result | None = None
    try:
        outside = None if inside else _leaves_root(path, root)
        if outside and not root.follow_symlinks_outside:
            raise InvalidMemory(f"symlink points outside the root (to {outside})")
        try:
            st = os.stat(path)
        except FileNotFoundError as exc:
            raise missing_file(path) from exc
        doc = load_document(path, root=root.path, scope=root.scope, root_index=index, st=st)
    except (InvalidMemory, OSError) as exc:
        if isinstance(exc, InvalidMemory) and str(exc).startswith("file vanished"):
            return FileRead(key, vanished=True)
        if isinstance(exc, UnreadableMemory):  # a fact of the moment: not remembered
            return FileRead(key, reason=str(exc))
        if isinstance(exc, InvalidMemory):  # the content is the reason: remembered
            stats = (st.st_size, st.st_mtime_ns) if st is not None else None
            return FileRead(key, reason=str(exc), stats=stats)
        return FileRead(key, reason=_os_reason(exc))
    return FileRead(key, document=doc, stats=(st.st_size, st.st_mtime_ns))


def _leaves_root(path: Path, root: MemoryRoot) -> str | None:
    """Where a path really points when that is outside its root, else None."""
    real = os.path.realpath(path)
    if _inside(real, os.path.realpath(root.path)):
        return None
    return real


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)


# Steps of a change applied on the event loop: one step of documents costs a
# few milliseconds, so a large directory lets recalls and status run between.
_STEP = 256
BAD_NAME_REASON = "file name is not valid UTF-8 (rename it to read it)"


def display_path(path: str) -> str:
    """A path as text that can go anywhere (JSON, logs): undecodable bytes as `\\xNN`."""
    if _is_text(path):
        return path
    return os.fsencode(path).decode("utf-8", "backslashreplace")


def _is_text(name: str) -> bool:
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _undecodable(path: Path, root: Path) -> str | None:
    return None if _is_text(str(path.relative_to(root))) else BAD_NAME_REASON


def _unreadable(exc: Exception) -> str:
    if isinstance(exc, OSError):
        return _os_reason(exc)
    return f"not a usable path ({exc})"  # e.g. an embedded NUL character


def _os_reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or str(exc)
