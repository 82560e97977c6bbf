"""Carrying out a planned write: lock, check, journal, change the files, keep MEMORY.md.

`Committer.commit(plan)` does docs/writing.md's sequence for one operation, under the
root's cross-process lock:

1. settle what a killed process left pending (journal.py's `recover` rules);
2. if another process changed this root since the plan was made, hand the
   changed paths back (`Committed.stale`): the caller refreshes its catalog and
   plans again, so a decision is never made on an old view;
3. re-read every file the plan changes: one that differs from what the
   decision was made on fails the operation ("changed on disk");
4. journal the operation (content before and after) as pending;
5. change the files atomically (files.py), undoing the earlier ones if a
   later one fails (disk full: the old files stay);
6. rewrite MEMORY.md within its cap, mark the operation applied, count the
   write in the statistics, record links.

It runs off the event loop (a thread in the daemon): it never touches the
catalog; `Committed` says what changed, and the writer applies that.

One job past 400 lines: carrying out an operation and settling one a killed
process left pending are the same steps under the same lock, read by the same
journal rules; apart, each would have to re-derive what the other wrote.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memory_recall.server.documents import InvalidMemory, content_hash
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.confined import check_folder, is_regular
from memory_recall.server.store.conflicts import MAYBE_SUPERSEDES
from memory_recall.server.store.errors import ChangedOnDisk, WriteError, WriteFailed
from memory_recall.server.store.files import (
    ARCHIVE_DIR,
    RootLock,
    delete_checked,
    free_name,
    read_or_none,
    remove_stray,
    root_key,
    temp_name,
    write_atomic,
)
from memory_recall.server.store.index_file import (
    DEFAULT_INDEX_CAP,
    Amended,
    IndexEntry,
    IndexReport,
    file_changed_ms,
    index_path,
    index_target,
    plan_index,
)
from memory_recall.server.store.journal import (
    APPLIED,
    DISCARDED,
    FAILED,
    INTERRUPTED,
    Change,
    Journal,
    OperationRecord,
    new_operation_id,
)
from memory_recall.server.store.memory_file import MemoryFile
from memory_recall.server.store.state import StateStore, now_ms

log = logging.getLogger("memory_recall.store")

# How many memories left out of MEMORY.md a result names (the count is always exact).
OMITTED_SHOWN = 20


@dataclass
class PlannedChange:
    """A journal change, and what it means for the index and the statistics."""

    change: Change
    # A new file: its name is chosen under the lock, `<folder>/<slug>.md`.
    new_in: str | None = None
    slug: str | None = None
    # The memory's index line after the change; None when it leaves the root's memories.
    entry: IndexEntry | None = None
    stats: str | None = None  # "created" | "updated" | None
    moved_from: str | None = None  # statistics follow a move (archive, restore)

    @property
    def path(self) -> str:
        return self.change.path


@dataclass
class Plan:
    """One operation, decided: what to change in one root and what to answer."""

    root_index: int
    root: MemoryRoot
    kind: str  # remember | update | forget | restore | undo
    trigger: str
    changes: list[PlannedChange]
    # The memories of the root as the plan's view knew them (for MEMORY.md).
    entries: dict[str, IndexEntry] = field(default_factory=dict)
    links: list[tuple[str, str, str]] = field(default_factory=list)  # (source, target, kind)
    # What to answer: (index of the change whose path it is, action, title, reason).
    answers: list[tuple[int, str, str, str | None]] = field(default_factory=list)
    undoes: str | None = None
    redoes: str | None = None  # undoing an undo: the operation it had undone counts again
    note: str | None = None
    batch: str | None = None  # the journal's batch: operations of one request, undone together
    purge: list[str] = field(default_factory=list)  # hard deletes: forget these paths' content
    # False when the decision did not read the catalog (an explicit path): then
    # another process's change elsewhere in the root does not make it stale.
    uses_view: bool = True
    seen_seq: int = 0  # the newest operation of this root the view knew
    operation_id: str = field(default_factory=new_operation_id)
    # Set when the plan writes MEMORY.md itself, as one of its journaled changes (a
    # consolidation rebuilds it; an undo of one puts it back byte for byte): the commit
    # does not maintain the index again after the files, and reports this instead.
    index: IndexReport | None = None


@dataclass
class Committed:
    """What a commit did; `stale` set instead when the plan must be made again."""

    plan: Plan
    record: OperationRecord | None = None
    index: IndexReport | None = None
    stale: list[str] = field(default_factory=list)
    foreign: list[str] = field(default_factory=list)  # paths others changed: refresh them
    recovered: list[str] = field(default_factory=list)  # paths a recovery changed
    newest_seq: int = 0
    written: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # abs path → stat


@dataclass
class OwnWrites:
    """Files this process just wrote, with their stat, so the watcher can tell its own
    echo from someone else's change (no second re-read, no loop)."""

    _stats: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    limit: int = 10_000
    # Told of every path written (from the writer's thread): the shared daemon passes each
    # write on to the other workspaces' catalogs that read the same root (docs/hooks.md).
    listeners: list[Callable[[str], None]] = field(default_factory=list)

    def add(self, path: str, stat: tuple[int, int, int]) -> None:
        if len(self._stats) >= self.limit:
            self._stats.pop(next(iter(self._stats)))
        self._stats[path] = stat
        for listener in self.listeners:
            listener(path)

    def is_own(self, path: str) -> bool:
        """Whether `path` is exactly as this process left it (then forgotten: one echo)."""
        expected = self._stats.get(path)
        if expected is None:
            return False
        self._stats.pop(path, None)
        return _stat(Path(path)) == expected

    def filter(self, paths: set[str]) -> set[str]:
        """The changed paths that are not this process's own writes."""
        return {p for p in paths if not self.is_own(p)}


def _stat(path: Path) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_size, st.st_mtime_ns, st.st_ino)


class Committer:
    """Carries out plans on disk, one root lock at a time."""

    def __init__(
        self,
        state: StateStore,
        *,
        index_cap: int = DEFAULT_INDEX_CAP,
        own_writes: OwnWrites | None = None,
        fault: Callable[[str], None] | None = None,
    ) -> None:
        self.state = state
        self.journal = Journal(state)
        self.index_cap = index_cap
        self.own_writes = own_writes or OwnWrites()
        # Test hook: called with a step name ("journaled", "file:N") to inject faults.
        self._fault = fault or (lambda _step: None)

    def lock(self, root: MemoryRoot) -> RootLock:
        # In the root itself: every process writing this root shares it, whatever its
        # state directory (docs/safety.md).
        return RootLock.of_root(root.path)

    # -- one operation --------------------------------------------------------------------

    def commit(self, plan: Plan) -> Committed:
        root = plan.root
        root_id = self.state.root_id(root_key(root))
        with self.lock(root).held():
            recovered = self.recover(root)
            newest, changed = self.journal.changed_since(root_id, plan.seen_seq)
            touched = {pc.path for pc in plan.changes}
            if changed and (plan.uses_view or touched & set(changed)):
                return Committed(plan, stale=changed, recovered=recovered, newest_seq=newest)
            for position, planned in enumerate(plan.changes):
                if planned.slug is not None:
                    check_folder(root.path, planned.new_in or "")  # no symlinked .archive
                    folder = root.path / (planned.new_in or "")
                    name = free_name(folder, planned.slug)
                    planned.change.path = f"{planned.new_in}/{name}" if planned.new_in else name
                    if planned.entry is not None:
                        planned.entry = _moved(planned.entry, planned.change.path)
                planned.change.temp = temp_name(
                    Path(planned.path).name, f"{plan.operation_id[3:]}-{position}"
                )
                current = read_or_none(root.path / planned.path, root=root.path)
                if current != planned.change.before:
                    raise ChangedOnDisk(str(root.path / planned.path))
            record = self.journal.begin(
                root_id,
                plan.kind,
                plan.trigger,
                [p.change for p in plan.changes],
                operation_id=plan.operation_id,
                undoes=plan.undoes,
                note=plan.note,
                batch=plan.batch,
            )
            self._fault("journaled")
            self._apply_files(plan, record)
            if plan.index is not None and not recovered:
                report = plan.index
            else:
                report = self._maintain_index(plan, recovered)
            when = now_ms()
            with self.state.transaction() as tx:
                self.journal.finish(record.seq, APPLIED, tx=tx, result=_summary(plan, report))
                for planned in plan.changes:
                    if planned.moved_from is not None:
                        StateStore.move_stats(tx, root_id, planned.moved_from, planned.path)
                    if planned.stats is not None:
                        StateStore.record_write(
                            tx, root_id, planned.path, when, created=planned.stats == "created"
                        )
                for source, target, kind in plan.links:
                    # An empty source is the plan's first change: a file named only now.
                    source = source or plan.changes[0].path
                    StateStore.add_link(tx, root_id, source, target, kind, record.seq, when)
                for path in plan.purge:
                    Journal.forget_content(tx, root_id, path)
                if plan.redoes:
                    Journal.mark_undone(tx, plan.redoes, None)
                if plan.undoes:
                    Journal.mark_undone(tx, plan.undoes, plan.operation_id)
                    tx.execute(
                        "DELETE FROM links WHERE operation_seq ="
                        " (SELECT seq FROM operations WHERE id = ?)",
                        (plan.undoes,),
                    )
            written = {}
            for planned in plan.changes:
                written_path = root.path / planned.path
                stat = _stat(written_path)
                if stat is not None:
                    written[str(written_path)] = stat
                    self.own_writes.add(str(written_path), stat)
            final = self.journal.get(plan.operation_id)
        return Committed(
            plan,
            record=final,
            index=report,
            foreign=changed,
            recovered=recovered,
            newest_seq=max(newest, record.seq),
            written=written,
        )

    def _apply_files(self, plan: Plan, record: OperationRecord) -> None:
        done: list[PlannedChange] = []
        try:
            for number, planned in enumerate(plan.changes):
                if planned.change.before == planned.change.after:
                    continue  # a duplicate already dated today: nothing to write
                self._fault(f"file:{number}")
                self._change(plan.root, planned.change)
                done.append(planned)
        except (WriteError, OSError) as exc:
            for planned in reversed(done):  # put the earlier files back
                try:
                    self._change(plan.root, _inverse(planned.change))
                except WriteError:
                    log.error("could not put %s back after a failed write", planned.path)
            self.journal.finish(record.seq, FAILED, result={"error": str(exc)})
            if isinstance(exc, WriteError):
                raise
            raise WriteFailed(f"could not write {plan.root.path}: {exc}") from None

    @staticmethod
    def _change(root: MemoryRoot, change: Change) -> None:
        target = root.path / change.path
        if change.after is None:
            if change.before is not None:
                delete_checked(target, expected=change.before, root=root.path)
                if change.path.startswith(ARCHIVE_DIR + "/"):
                    _prune_empty_folders(target.parent, root.path)
        else:
            temp = change.temp or temp_name(target.name, new_operation_id()[3:])
            write_atomic(target, change.after, expected=change.before, temp=temp, root=root.path)

    # -- MEMORY.md -----------------------------------------------------------------------

    def _maintain_index(self, plan: Plan, recovered: list[str]) -> IndexReport:
        """Rewrite the root's MEMORY.md for this operation; a failure is reported, not raised
        (the memories are written; the index catches up at the next change)."""
        # Not a copy (a root may hold 100,000): the writer patches its view, whose entries
        # these are, only once the commit has returned, under the lock that serialises its
        # operations.
        entries = Amended(plan.entries)
        for path in recovered:  # files a recovery just settled: as they are now
            found = _entry_of(plan.root, path)
            if found is not None:
                entries[path] = found
            else:
                entries.pop(path, None)
        gone: set[str] = set()
        for planned in plan.changes:
            if planned.path.startswith(ARCHIVE_DIR + "/"):
                continue
            if planned.entry is not None:
                entries[planned.path] = planned.entry
            elif planned.change.after is None:
                entries.pop(planned.path, None)
                gone.add(planned.path)
        fresh = [p.path for p in plan.changes if p.entry is not None] + recovered
        return self.maintain_index(plan.root, entries, frozenset(gone), fresh)

    def maintain_index(
        self,
        root: MemoryRoot,
        entries: Mapping[str, IndexEntry],
        gone: frozenset[str] = frozenset(),
        fresh: list[str] | None = None,
    ) -> IndexReport:
        path = index_path(root.path)
        report = IndexReport(str(path), 0, self.index_cap, 0)
        text = ""
        for _attempt in range(3):
            try:
                text = ""
                current = read_or_none(path, root=root.path)
                text = current.decode("utf-8", "replace") if current is not None else ""
                planned = plan_index(
                    text,
                    entries,
                    exists=lambda rel: is_regular(root.path, rel),
                    changed_ms=file_changed_ms(root.path),
                    gone=gone,
                    cap=self.index_cap,
                    fresh=fresh,
                )
                new_text = planned.text
                if new_text != text:
                    # One fixed temp name, under the lock: what a killed write left
                    # of it is removed here, no journal needed.
                    temp = temp_name(path.name, "writing")
                    remove_stray(path.with_name(temp), root=root.path)
                    write_atomic(
                        path, new_text.encode(), expected=current, temp=temp, durable=False,
                        root=root.path,
                    )  # fmt: skip
                    report.changed = True
                # Counted only once written: a failed write reports what is on disk.
                report.lines = new_text.count("\n")
                report.listed = planned.listed
                report.omitted = planned.omitted
                report.omitted_count = planned.omitted_count
                return report
            except ChangedOnDisk:
                continue  # the user saved MEMORY.md meanwhile: read it again
            except WriteError as exc:
                report.problem = f"MEMORY.md not updated: {exc}"
                report.lines = text.count("\n")
                report.listed = sum(1 for line in text.splitlines() if index_target(line))
                log.warning("MEMORY.md not updated: %s", exc)
                return report
        return report

    # -- what a killed process left ----------------------------------------------------------

    def recover(self, root: MemoryRoot) -> list[str]:
        """Settle the root's pending operations (call under its lock); the paths changed."""
        root_id = self.state.root_id(root_key(root))
        changed: list[str] = []
        for record in self.journal.pending(root_id):
            states = []
            for change in record.changes:
                target = root.path / change.path
                if change.temp:
                    remove_stray(target.with_name(change.temp), root=root.path)
                try:
                    current = read_or_none(target, root=root.path)
                except WriteError:
                    current = b""  # not a regular file now: someone else's, left alone
                now = None if current is None else content_hash(current)
                if now == change.after_hash:
                    states.append("after")
                elif now == change.before_hash:
                    states.append("before")
                else:
                    states.append("foreign")
            state, note = self._settle(root, record, states)
            changed.extend(c.path for c in record.changes)
            log.warning("recovered operation %s (%s): %s", record.id, record.kind, note)
            self.journal.finish(record.seq, state, result={"recovered": note})
        if changed:
            with contextlib.suppress(WriteError):
                self.maintain_index(root, {}, frozenset())
        return changed

    def _settle(
        self, root: MemoryRoot, record: OperationRecord, states: list[str]
    ) -> tuple[str, str]:
        if "foreign" in states:
            return INTERRUPTED, "a file was changed by someone else since; left as it is"
        if all(s == "after" for s in states):
            return APPLIED, "every file was already written"
        if all(s == "before" for s in states):
            return DISCARDED, "no file had been written; nothing happened"
        for change, state in zip(record.changes, states, strict=True):
            if state == "after":
                continue
            if change.after_hash is not None and change.after is None:
                return INTERRUPTED, "the rest cannot be replayed (content not kept)"
            try:
                before = read_or_none(root.path / change.path, root=root.path)
                self._change(root, Change(change.path, change.action, before, change.after))
            except WriteError as exc:
                return INTERRUPTED, f"could not replay the rest: {exc}"
        return APPLIED, "replayed the files the process had not written yet"


def _prune_empty_folders(folder: Path, root: Path) -> None:
    """Archive folders a restore or an undo left empty go too, up to and with `.archive/`
    itself: an undone operation leaves the root as it found it."""
    while folder != root and folder.is_relative_to(root / ARCHIVE_DIR):
        try:
            folder.rmdir()  # only when empty
        except OSError:
            return
        folder = folder.parent


def _entry_of(root: MemoryRoot, path: str) -> IndexEntry | None:
    """The index line of the memory file at `path` as it is on disk, None when it is none."""
    if path.startswith(ARCHIVE_DIR + "/"):
        return None
    try:
        data = read_or_none(root.path / path, root=root.path)
        if data is None:
            return None
        memory = MemoryFile.parse(data.decode("utf-8"))
    except (OSError, WriteError, UnicodeDecodeError, InvalidMemory):
        return None
    title = memory.get("name") or memory.get("title") or memory.get("type") or Path(path).stem
    corrects = tuple(memory.get_list(MAYBE_SUPERSEDES))
    return IndexEntry(path, title, memory.get("description") or "", False, float("inf"), corrects)


def _inverse(change: Change) -> Change:
    return Change(change.path, change.action, change.after, change.before)


def _moved(entry: IndexEntry, path: str) -> IndexEntry:
    return replace(entry, path=path)


def _summary(plan: Plan, report: IndexReport) -> dict[str, Any]:
    return {
        "changes": [{"path": p.path, "action": p.change.action} for p in plan.changes],
        "index": {"lines": report.lines, "omitted": report.omitted_count},
    }
