"""What the write side can tell without changing anything: `list`, `history`, index status.

- `list_memories`: the catalog's memories with what their front matter says
  beyond docs/memory-files.md (category, pinned, always, dates) and their statistics. A
  category that is not declared is inferred once per version of the file and
  kept in the state store.
- `memory_history`: a memory's versions, from the journal (its archive path
  included once forgotten).
- `index_status`: for each root, what its MEMORY.md holds and what does not fit.
"""

from __future__ import annotations

import bisect
import contextlib
import json
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.view import CorpusView, input_order_key
from memory_recall.server.roots import posix_relative
from memory_recall.server.store.confined import is_regular
from memory_recall.server.store.errors import InvalidWrite, WriteError, WriteFailed
from memory_recall.server.store.files import ARCHIVE_DIR, read_or_none, resolve_target, root_key
from memory_recall.server.store.index_file import (
    IndexReport,
    file_changed_ms,
    index_path,
    plan_index,
)
from memory_recall.server.store.journal import Journal
from memory_recall.server.store.memory_file import MemoryFile
from memory_recall.server.store.renames import renamed_pair
from memory_recall.server.store.state import MemoryStats
from memory_recall.server.store.writer import MemoryWriter


@dataclass(frozen=True)
class ListedMemory:
    path: str
    relative_path: str
    scope: str
    type: str
    title: str
    description: str
    category: str | None
    pinned: bool
    always: bool
    created: str | None
    updated: str | None
    expires: str | None
    content_hash: str
    mtime_ms: float
    stats: MemoryStats = field(default_factory=MemoryStats)


def _in_category(slug: str | None, wanted: str | None) -> bool:
    if wanted is None:
        return True
    if slug is None:
        return False
    wanted = wanted.strip().strip("/")
    return slug == wanted or slug.startswith(wanted + "/")


Position = tuple[int, int, float, str]  # a memory's place in input order (input_order_key)


@dataclass
class Page:
    """Memories of one page, and where the next page starts (None: this is the last)."""

    memories: list[ListedMemory]
    after: Position | None


def cursor_of(position: Position) -> str:
    """A position as memory/list's `nextCursor` (JSON: clients pass it back as it is)."""
    return json.dumps(list(position), ensure_ascii=False, separators=(",", ":"))


def position_of(cursor: str) -> Position:
    """The position a `cursor` names; ValueError when it is not one memory/list gave."""
    try:
        rank, root, mtime, path = json.loads(cursor)
    except (ValueError, TypeError, RecursionError):
        raise ValueError("not a cursor that memory/list gave") from None
    if not (
        type(rank) is int
        and type(root) is int
        and type(mtime) in (int, float)
        and isinstance(path, str)
    ):
        raise ValueError("not a cursor that memory/list gave")
    return rank, root, float(mtime), path


def list_memories(
    writer: MemoryWriter,
    snapshot: CorpusView,
    *,
    scope: str | None = None,
    category: str | None = None,
    after: Position | None = None,
    limit: int | None = None,
) -> Page:
    """The memories of `snapshot` (of one scope, under one category) in input order: those
    placed after `after`, at most `limit` of them.

    Reads each listed file's front matter, so a page costs what it lists; safe off the
    event loop (the snapshot is immutable). A page starts after a position, not an
    offset: a memory written or removed between two pages moves no other one.
    """
    state = writer.state
    stats: dict[str, dict[str, MemoryStats]] = {}
    categories: dict[str, dict[str, tuple[str, str]]] = {}
    learned: dict[str, dict[str, tuple[str, str]]] = {}
    out: list[ListedMemory] = []
    out_docs: list[MemoryDocument] = []
    documents = snapshot.documents
    start = 0 if after is None else bisect.bisect_right(documents, after, key=input_order_key)
    next_after: Position | None = None
    for doc in documents[start:]:
        if limit is not None and len(out) >= limit:
            next_after = input_order_key(out_docs[-1])
            break
        if scope is not None and doc.scope.value != scope:
            continue
        root = writer.roots[doc.root_index]
        key = root_key(root)
        rel = posix_relative(doc.relative_path)
        if state is not None and key not in stats:
            stats[key] = state.stats(key)
            categories[key] = state.cached_categories(key)
        data = _listed_bytes(Path(doc.path))
        if data is None:
            continue  # removed since the snapshot
        try:
            memory = MemoryFile.parse(data.decode("utf-8", "replace"))
        except ValueError:
            continue
        slug = None
        if writer.categorize is not None:
            declared = memory.get("category")
            cached = categories.get(key, {}).get(rel)
            if declared:
                slug = writer.categorize(doc.type, doc.title, doc.description, doc.body, declared)
            elif cached and cached[0] == doc.content_hash:
                slug = cached[1]
            else:
                slug = writer.categorize(doc.type, doc.title, doc.description, doc.body, None)
                learned.setdefault(key, {})[rel] = (doc.content_hash, slug)
        if not _in_category(slug, category):
            continue
        out_docs.append(doc)
        out.append(
            ListedMemory(
                path=doc.path,
                relative_path=doc.relative_path,
                scope=doc.scope.value,
                type=doc.type,
                title=doc.title,
                description=doc.description,
                category=slug,
                pinned=memory.get_bool("pinned"),
                always=memory.get_bool("always"),
                created=memory.get("created"),
                updated=memory.get("updated"),
                expires=memory.get("expires"),
                content_hash=doc.content_hash,
                mtime_ms=doc.mtime_ms,
                stats=stats.get(key, {}).get(rel, MemoryStats()),
            )
        )
    if state is not None:
        for key, found in learned.items():
            # A busy store only costs the next list the inference again.
            with contextlib.suppress(WriteFailed):
                state.cache_categories(key, found)
    return Page(out, next_after)


@dataclass(frozen=True)
class HistoryEntry:
    operation: str
    kind: str
    trigger: str
    time_ms: int
    action: str
    path: str
    title: str | None
    before_hash: str | None
    after_hash: str | None
    before: str | None  # None: absent, or not kept (a hard delete, a credential)
    after: str | None
    kept: bool
    undone_by: str | None
    undoes: str | None
    note: str | None


def memory_history(writer: MemoryWriter, path: str) -> list[HistoryEntry]:
    """Every applied change to the memory at `path`, oldest first."""
    if writer.journal is None:
        writer._committer()  # raises: the state store is off
    assert writer.journal is not None
    try:
        index, rel = resolve_target(writer.roots, path, archived=True)
    except InvalidWrite:
        # A memory forgotten, or renamed by hand, is asked for by the path it had: the
        # journal still knows it there.
        journaled = _journaled(writer, path)
        if journaled is None:
            raise
        index, rel = journaled
    root = writer.roots[index]
    root_id = writer.state_root_id(root)
    paths = _earlier_names(writer.journal, root_id, rel)
    # Its archived copies, found through the forget operations that made them.
    for record in writer.journal.history(root_id, paths):
        if record.kind == "forget":
            paths += [c.path for c in record.changes if c.path.startswith(ARCHIVE_DIR + "/")]
    entries = []
    for record in writer.journal.history(root_id, list(dict.fromkeys(paths))):
        changes = [c for c in record.changes if c.path in paths]
        # A rename is one version: the new file's, with the old file's content before it.
        pair = renamed_pair(changes)
        for change in changes:
            was = change
            if pair is not None:
                if change is pair[0]:
                    continue
                was = pair[0] if change is pair[1] else change
            entries.append(
                HistoryEntry(
                    operation=record.id,
                    kind=record.kind,
                    trigger=record.trigger,
                    time_ms=record.finished_ms or record.started_ms,
                    action=change.action,
                    path=str(root.path / change.path),
                    title=change.title,
                    before_hash=was.before_hash,
                    after_hash=change.after_hash,
                    before=_text(was.before),
                    after=_text(change.after),
                    kept=change.kept and was.kept,
                    undone_by=record.undone_by,
                    undoes=record.undoes,
                    note=record.note,
                )
            )
    return entries


# How many renames back a memory's history is followed (each is one update).
_RENAMES_FOLLOWED = 100


def _earlier_names(journal: Journal, root_id: int, rel: str) -> list[str]:
    """`rel` and the names the memory had before an update renamed it (store/renames.py):
    each rename journals the new file's creation and the old one's removal together."""
    names = [rel]
    while len(names) <= _RENAMES_FOLLOWED:
        earlier = None
        for record in journal.history(root_id, [names[-1]]):
            pair = renamed_pair(record.changes)
            if pair is not None and pair[1].path == names[-1]:
                earlier = pair[0].path
        if earlier is None or earlier in names:
            break
        names.append(earlier)
    return names


def _journaled(writer: MemoryWriter, path: str) -> tuple[int, str] | None:
    """The first root whose journal holds changes to the relative `path` (no file there
    now), as `resolve_target` answers; None for any other path."""
    assert writer.journal is not None
    rel = path.replace("\\", "/").strip("/")
    if os.path.isabs(path) or not rel or ".." in rel.split("/"):
        return None
    for index, root in enumerate(writer.roots):
        if writer.journal.history(writer.state_root_id(root), [rel]):
            return index, rel
    return None


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


_STATUS_CACHE: dict[tuple[str, int, int, int], IndexReport] = {}


def index_mtime_ns(root: Path) -> int:
    """When a root's MEMORY.md last changed (0: none, or not readable)."""
    try:
        return os.stat(index_path(root)).st_mtime_ns
    except (OSError, ValueError):  # missing, unreadable, or a root with a NUL in its path
        return 0


def index_status(writer: MemoryWriter) -> list[IndexReport]:
    """Each existing root's MEMORY.md as the next change would leave it: lines, what is left out."""
    reports = []
    cap = writer.settings.index_cap
    version = writer.catalog.snapshot().version
    for number, root in enumerate(writer.roots):
        if not root.path.is_dir():
            continue
        path = index_path(root.path)
        key = (str(root.path), version, index_mtime_ns(root.path), cap)
        if key not in _STATUS_CACHE:
            try:
                data = read_or_none(path, root=root.path)
            except WriteError as exc:  # a symlink, a FIFO: never read, said so
                _STATUS_CACHE[key] = IndexReport(str(path), 0, cap, 0, problem=str(exc))
                reports.append(_STATUS_CACHE[key])
                continue
            text = data.decode("utf-8", "replace") if data is not None else ""
            entries = writer._root_view(number).entries
            planned = plan_index(
                text,
                entries,
                exists=lambda rel, r=root: is_regular(r.path, rel),  # type: ignore[misc]
                changed_ms=file_changed_ms(root.path),
                cap=cap,
            )
            if len(_STATUS_CACHE) > 64:
                _STATUS_CACHE.clear()
            _STATUS_CACHE[key] = IndexReport(
                str(path),
                planned.text.count("\n"),
                cap,
                planned.listed,
                planned.omitted,
                planned.omitted_count,
                planned.text != text,
            )
        reports.append(_STATUS_CACHE[key])
    return reports


def _listed_bytes(path: Path) -> bytes | None:
    """A listed memory's bytes as the catalog read them: a symlink inside the root is
    followed (the catalog allows it), a FIFO or device is never opened."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return None
        return path.read_bytes()
    except (OSError, ValueError):
        return None
