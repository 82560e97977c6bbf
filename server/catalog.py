"""MemoryCatalog: the warm, parsed set of memory documents under configured roots.

Files are parsed once, when scanned or when the watcher reports a change;
recalls read an immutable `CatalogSnapshot`, rebuilt lazily after a change.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from server.documents import (
    InvalidMemory,
    MemoryDocument,
    Scope,
    is_memory_file_name,
    load_document,
)


@dataclass(frozen=True)
class MemoryRoot:
    """A directory of memories. `path` is kept as configured (absolute, unresolved)."""

    path: Path
    scope: Scope
    follow_symlinks_outside: bool = False

    @classmethod
    def of(cls, path: str | os.PathLike[str], scope: Scope | str, **kw: bool) -> MemoryRoot:
        return cls(Path(os.path.abspath(os.path.expanduser(path))), Scope(scope), **kw)


@dataclass(frozen=True)
class SkippedFile:
    path: str
    reason: str


def input_order_key(doc: MemoryDocument) -> tuple[int, int, float, str]:
    """SPEC §2 tie order: project before user, then root order, mtime descending, path."""
    return (doc.scope.rank, doc.root_index, -doc.mtime_ms, doc.path)


@dataclass(frozen=True)
class CatalogSnapshot:
    """An immutable view of the catalog that one recall works on."""

    documents: tuple[MemoryDocument, ...]  # input order
    by_recency: tuple[MemoryDocument, ...]  # mtime descending, then input order
    version: int = 0

    @classmethod
    def of(cls, documents: Iterable[MemoryDocument], version: int = 0) -> CatalogSnapshot:
        ordered = tuple(sorted(documents, key=input_order_key))
        by_recency = tuple(sorted(ordered, key=lambda d: -d.mtime_ms))
        return cls(ordered, by_recency, version)

    def __len__(self) -> int:
        return len(self.documents)


@dataclass
class CatalogCounters:
    scans: int = 0
    upserts: int = 0
    removals: int = 0
    skipped_updates: int = 0


@dataclass
class MemoryCatalog:
    """Documents of every configured root, keyed by path, kept warm in memory."""

    roots: Sequence[MemoryRoot]
    _docs: dict[str, MemoryDocument] = field(default_factory=dict)
    _skipped: dict[str, str] = field(default_factory=dict)
    _snapshot: CatalogSnapshot | None = None
    _version: int = 0
    build_ms: float | None = None
    counters: CatalogCounters = field(default_factory=CatalogCounters)

    # -- reading -------------------------------------------------------------

    def snapshot(self) -> CatalogSnapshot:
        if self._snapshot is None:
            self._snapshot = CatalogSnapshot.of(self._docs.values(), self._version)
        return self._snapshot

    def __len__(self) -> int:
        return len(self._docs)

    def get(self, path: str) -> MemoryDocument | None:
        return self._docs.get(path)

    @property
    def skipped(self) -> list[SkippedFile]:
        return [SkippedFile(p, r) for p, r in sorted(self._skipped.items())]

    def count_by_root(self) -> list[int]:
        counts = [0] * len(self.roots)
        for doc in self._docs.values():
            counts[doc.root_index] += 1
        return counts

    # -- changing ------------------------------------------------------------

    def scan(self) -> None:
        """Rebuild everything from disk."""
        started = time.perf_counter()
        self._docs.clear()
        self._skipped.clear()
        for index, root in enumerate(self.roots):
            for path in self._walk(index, root, root.path):
                self._load(index, root, path)
        self._changed()
        self.counters.scans += 1
        self.build_ms = (time.perf_counter() - started) * 1000

    def refresh(self, path: str | os.PathLike[str]) -> None:
        """Bring one path in line with the disk, whatever happened to it.

        The watcher's change kinds are unreliable (atomic saves, renames), so
        the rule is: exists → (re)load it, or rescan it if it is a directory;
        missing → drop it and everything that was under it.
        """
        located = self.locate(path)
        if located is None:
            return
        index, root, p = located
        if p.is_dir():
            self._remove_under(p, keep_existing=True)
            for file in self._walk(index, root, p):
                self._load(index, root, file)
            self._changed()
        elif p.exists() or p.is_symlink():
            self.upsert(p)
        else:
            self._remove_under(p, keep_existing=False)
            self.remove(p)

    def upsert(self, path: str | os.PathLike[str]) -> MemoryDocument | None:
        """(Re)load one file; returns the document, or None when it is not a memory."""
        located = self.locate(path)
        if located is None:
            return None
        index, root, p = located
        if not is_memory_file_name(p.name) or _hidden(p, root.path):
            return None
        self.counters.upserts += 1
        doc = self._load(index, root, p)
        self._changed()
        return doc

    def remove(self, path: str | os.PathLike[str]) -> bool:
        key = str(self._absolute(path))
        removed = self._docs.pop(key, None) is not None
        self._skipped.pop(key, None)
        if removed:
            self.counters.removals += 1
            self._changed()
        return removed

    # -- helpers -------------------------------------------------------------

    @staticmethod
    def _absolute(path: str | os.PathLike[str]) -> Path:
        return Path(os.path.abspath(path))

    def locate(self, path: str | os.PathLike[str]) -> tuple[int, MemoryRoot, Path] | None:
        """The root a path belongs to (the first configured one that contains it)."""
        p = self._absolute(path)
        for index, root in enumerate(self.roots):
            if p == root.path or root.path in p.parents:
                return index, root, p
        return None

    def _changed(self) -> None:
        self._version += 1
        self._snapshot = None

    def _remove_under(self, directory: Path, *, keep_existing: bool) -> None:
        prefix = str(directory) + os.sep
        for store in (self._docs, self._skipped):
            for key in [k for k in store if k.startswith(prefix)]:
                if keep_existing and os.path.isfile(key):
                    continue
                del store[key]
                if store is self._docs:
                    self.counters.removals += 1

    def _load(self, index: int, root: MemoryRoot, path: Path) -> MemoryDocument | None:
        key = str(path)
        try:
            outside = _leaves_root(path, root)
            if outside and not root.follow_symlinks_outside:
                raise InvalidMemory(f"symlink points outside the root (to {outside})")
            doc = load_document(path, root=root.path, scope=root.scope, root_index=index)
        except (InvalidMemory, OSError) as exc:
            self._docs.pop(key, None)
            if isinstance(exc, InvalidMemory) and str(exc).startswith("file vanished"):
                self._skipped.pop(key, None)
                return None
            self._skipped[key] = str(exc) if isinstance(exc, InvalidMemory) else _os_reason(exc)
            self.counters.skipped_updates += 1
            return None
        self._skipped.pop(key, None)
        self._docs[key] = doc
        return doc

    def _walk(self, index: int, root: MemoryRoot, start: Path) -> Iterator[Path]:
        """Memory files under `start`, recursively, symlink loops and hidden entries skipped."""
        root_real = os.path.realpath(root.path)
        seen: set[str] = set()
        stack = [start]
        while stack:
            directory = stack.pop()
            real = os.path.realpath(directory)
            if real in seen:
                continue
            seen.add(real)
            leaves = directory.is_symlink() and not _inside(real, root_real)
            if leaves and not root.follow_symlinks_outside:
                self._skipped[str(directory)] = (
                    f"symlinked directory points outside the root (to {real})"
                )
                continue
            try:
                entries = sorted(os.scandir(directory), key=lambda e: e.name)
            except FileNotFoundError:
                continue
            except OSError as exc:
                self._skipped[str(directory)] = _os_reason(exc)
                continue
            subdirs = []
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                try:
                    is_dir = entry.is_dir()  # follows symlinks
                except OSError:
                    is_dir = False
                if is_dir:
                    subdirs.append(Path(entry.path))
                elif is_memory_file_name(entry.name):
                    yield Path(entry.path)
            stack.extend(reversed(subdirs))


def _inside(real: str, root_real: str) -> bool:
    return real == root_real or real.startswith(root_real.rstrip(os.sep) + os.sep)


def _leaves_root(path: Path, root: MemoryRoot) -> str | None:
    """Where a path really points when that is outside its root, else None."""
    real = os.path.realpath(path)
    if _inside(real, os.path.realpath(root.path)):
        return None
    return real


def _hidden(path: Path, root: Path) -> bool:
    return any(part.startswith(".") for part in path.relative_to(root).parts)


def _os_reason(exc: OSError) -> str:
    if isinstance(exc, PermissionError):
        return "permission denied"
    return exc.strerror or str(exc)
