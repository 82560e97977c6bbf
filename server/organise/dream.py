"""Consolidation carried out (docs/organisation.md "dream"): a plan of one root executed through the
writer as ONE journal operation, under a lock no two daemons share, by hand or on its own.

- `to_store_plan` turns a `ConsolidationPlan` (consolidate.py: what to merge, supersede,
  archive) into the writer's `Plan` of file changes: merged bodies and `supersedes`
  written into the kept memories (front matter kept line for line, `updated` set),
  every other member moved to `<root>/.archive/`. The writer's commit does the rest:
  the root's write lock, a re-read of every file (one changed since the decision
  fails the operation: "changed on disk"), the journal, atomic files, MEMORY.md
  rebuilt within its cap. One `memory/undo` of the operation puts every file back.
- `Dreamer.run` plans (off the event loop: it can take seconds at 10k memories) and
  executes, under the root's *consolidation* lock, taken without waiting: a second
  daemon (another editor window) that wants to consolidate the same root is told
  it is busy, and an automatic run simply skips.
- `due` says when an automatic consolidation is due (`organise.autoConsolidate`):
  at least 24 h after the last consolidation of the root and at least 5 writes
  after it, read from the shared journal (so every daemon of the user agrees); the
  daemon asks only when it has been idle for a while.

A consolidation that finds nothing to change is still journaled (an operation with
no change): it is what "the last consolidation" is measured from.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace

from memory_recall.server.documents import INDEX_FILE_NAME, MemoryDocument
from memory_recall.server.facts.newer import MAYBE_SUPERSEDES_KEY
from memory_recall.server.organise.consolidate import ConsolidationPlan
from memory_recall.server.organise.organiser import Organiser
from memory_recall.server.organise.prose import ProseMerger
from memory_recall.server.organise.retention import edited_ms
from memory_recall.server.roots import Scope
from memory_recall.server.store.commit import Plan, PlannedChange
from memory_recall.server.store.conflicts import MAYBE_SUPERSEDES
from memory_recall.server.store.edits import archive_changes, parse_file
from memory_recall.server.store.errors import WriteFailed
from memory_recall.server.store.files import RootLock, read_or_none, root_key
from memory_recall.server.store.index_file import (
    IndexEntry,
    IndexReport,
    file_changed_ms,
    index_path,
    plan_index,
)
from memory_recall.server.store.journal import Change, new_batch_id
from memory_recall.server.store.requests import WriteResult
from memory_recall.server.store.state import StateStore
from memory_recall.server.store.writer import MemoryWriter

KIND = "consolidate"  # the journal's operation kind
AUTO_AFTER_MS = 24 * 3600 * 1000  # docs/organisation.md: at least 24 h after the last consolidation
AUTO_AFTER_WRITES = 5  # … and at least 5 writes after it
WRITE_KINDS = ("remember", "update", "forget", "restore", "undo")
MAX_PLANS = 3  # plans made again when the memories changed while one was carried out


class PlanChanged(Exception):
    """A memory the plan was made on changed before it was carried out: plan again."""


class Busy(WriteFailed):
    """Another process (or request) is consolidating this root right now."""


@dataclass(frozen=True)
class Run:
    """One root's consolidation: the plan, and what the writer did (None for a dry run)."""

    index: int
    plan: ConsolidationPlan
    result: WriteResult | None = None

    @property
    def operation(self) -> str | None:
        if self.result is None or not self.result.operations:
            return None
        return self.result.operations[0].operation


def _rel(doc: MemoryDocument) -> str:
    return doc.relative_path.replace("\\", "/")


def to_store_plan(
    writer: MemoryWriter,
    index: int,
    plan: ConsolidationPlan,
    docs: dict[str, MemoryDocument],
    *,
    trigger: str,
    today: str,
    now_ms: float | None = None,
) -> Plan:
    """The file changes of `plan`, as one writer operation (see the module docstring)."""
    catalog = writer.catalog
    for path in plan.touched:
        current = catalog.get(path)
        if current is None or current.content_hash != docs[path].content_hash:
            raise PlanChanged(path)
    now_ms = time.time() * 1000 if now_ms is None else now_ms
    store = writer.new_plan(index, KIND, trigger)
    store.note = _summary(plan)
    archived = {a.path for a in plan.archives}
    rendered: dict[str, bytes] = {}
    for rewrite in plan.rewrites:
        doc = docs[rewrite.path]
        rel = _rel(doc)
        data = writer.current(index, doc)
        memory = parse_file(data, writer.roots[index].path / rel)
        if rewrite.body is not None:
            memory.set_body(rewrite.body)
        if rewrite.supersedes:
            kept = [*memory.get_list("supersedes"), *rewrite.supersedes]
            memory.set("supersedes", list(dict.fromkeys(kept)))
        memory.set("updated", today)
        after = memory.render().encode()
        rendered[rewrite.path] = after
        if rewrite.path in archived:
            continue  # merged, then over the capacity: archived with its merged text below
        title = memory.get("name") or doc.title
        action = "merged" if rewrite.merged_from else "updated"
        description, corrects = memory.get("description") or "", memory.get_list(MAYBE_SUPERSEDES)
        entry = IndexEntry(rel, title, description, False, float("inf"), tuple(corrects))
        store.changes.append(
            PlannedChange(Change(rel, action, data, after, title), entry=entry, stats="updated")
        )
        reason = rewrite.reason or ", ".join(f"supersedes {p}" for p in rewrite.supersedes)
        store.answers.append((len(store.changes) - 1, action, title, reason))
        for source in rewrite.merged_from:
            store.links.append((rel, _rel(docs[source]), "merged"))
        for old in rewrite.supersedes:
            store.links.append((rel, old, "supersedes"))
    for item in plan.archives:
        doc = docs[item.path]
        rel = _rel(doc)
        data = writer.current(index, doc)
        moves = archive_changes(rel, data, doc.title)
        if item.path in rendered:  # the archive keeps the merged text; undo restores `data`
            moves[0].change.after = rendered[item.path]
        store.changes += moves
        into = f" → {_rel(docs[item.into])}" if item.into and item.into in docs else ""
        store.answers.append(
            (len(store.changes) - 1, "archived", doc.title, f"{item.cause}{into}: {item.reason}")
        )
    if not store.changes:
        store.answers.append((-1, "unchanged", "consolidation", "nothing to change"))
        return store
    _rebuild_index(writer, index, store, docs, archived, now_ms)
    return store


def _rebuild_index(
    writer: MemoryWriter,
    index: int,
    store: Plan,
    docs: dict[str, MemoryDocument],
    archived: set[str],
    now_ms: float,
) -> None:
    """MEMORY.md rebuilt for what remains, within its cap, journaled with the operation.

    Every memory competes for a line, not only the ones this operation wrote: pinned
    memories first, then the most recently edited (front-matter dates, as retention
    reads them). The user's own lines stay where they are. Journaled as a change of
    its own, so that undoing the consolidation puts MEMORY.md back byte for byte.
    """
    root = writer.roots[index]
    entries: dict[str, IndexEntry] = {}
    for doc in writer.catalog.snapshot().documents:
        if doc.root_index == index and doc.path not in archived:
            rel = _rel(doc)
            entries[rel] = IndexEntry(
                rel, doc.title, doc.description, doc.flag("pinned"), edited_ms(doc),
                doc.paths_of(MAYBE_SUPERSEDES_KEY),
            )  # fmt: skip
    for planned in store.changes:
        entry = planned.entry
        if entry is not None:  # rewritten: its new title, edited now
            pinned = planned.path in entries and entries[planned.path].pinned
            entries[planned.path] = replace(entry, pinned=pinned, changed_ms=now_ms)
    gone = frozenset(_rel(docs[p]) for p in archived)
    where = index_path(root.path)
    before = read_or_none(where, root=root.path)
    planned_index = plan_index(
        (before or b"").decode("utf-8", "replace"),
        entries,
        exists=lambda rel: rel not in gone and (root.path / rel).is_file(),
        changed_ms=file_changed_ms(root.path),
        gone=gone,
        cap=writer.settings.index_cap,
    )
    after = planned_index.text.encode()
    store.index = IndexReport(
        str(where),
        planned_index.text.count("\n"),
        writer.settings.index_cap,
        planned_index.listed,
        planned_index.omitted,
        planned_index.omitted_count,
        changed=after != before,
    )
    if after != (before or b""):
        action = "updated" if before is not None else "created"
        store.changes.append(PlannedChange(Change(INDEX_FILE_NAME, action, before, after)))


def _summary(plan: ConsolidationPlan) -> str:
    return (
        f"{len(plan.archived('merged'))} merged, {len(plan.archived('superseded'))} superseded,"
        f" {len(plan.archived('covered'))} covered, {len(plan.archived('capacity'))} over"
        f" capacity; {len(plan.notices)} reported"
    )


def _today() -> str:
    return datetime.date.today().isoformat()


class Dreamer:
    """Consolidation of the session's roots through its writer."""

    def __init__(
        self,
        writer: MemoryWriter,
        organiser: Organiser,
        *,
        today: Callable[[], str] = _today,
        prose: ProseMerger | None = None,
    ) -> None:
        self.writer = writer
        self.organiser = organiser
        self.today = today
        self.prose = prose  # the model that rewords merges (daemon only; a dry run never asks)

    def indexes(self, scope: str | None) -> list[int]:
        return [
            i
            for i, root in enumerate(self.writer.roots)
            if scope is None or root.scope.value == scope
        ]

    def reports_only(self, index: int) -> bool:
        """A team root is only reported on (docs/writing.md): planned, never carried out, so not
        even its MEMORY.md is rewritten behind the team's back."""
        root = self.writer.roots[index]
        return root.scope is Scope.TEAM or root.read_only

    def _docs(self, index: int) -> list[MemoryDocument]:
        return [d for d in self.writer.catalog.snapshot().documents if d.root_index == index]

    @contextlib.contextmanager
    def _exclusive(self, index: int) -> Iterator[None]:
        """The root's consolidation lock, or Busy at once; no lock without a state store
        (then the writer refuses the operation itself)."""
        state = self.writer.state
        if state is None:
            yield
            return
        root = self.writer.roots[index]
        lock = RootLock(state.lock_dir, f"consolidate {root_key(root)}", timeout_s=0)
        with contextlib.ExitStack() as stack:
            try:
                stack.enter_context(lock.held())
            except WriteFailed:
                message = f"another process is consolidating {root.path}; try again later"
                raise Busy(message) from None
            yield

    def _converter(
        self,
        index: int,
        plan: ConsolidationPlan,
        docs: Sequence[MemoryDocument],
        trigger: str,
        batch: str | None,
    ) -> Callable[[], Plan | WriteResult]:
        by_path = {d.path: d for d in docs}
        today = self.today()

        def convert() -> Plan:
            store = to_store_plan(self.writer, index, plan, by_path, trigger=trigger, today=today)
            store.batch = batch
            return store

        return convert

    def run_all(
        self, scope: str | None, *, dry_run: bool = False, trigger: str = "explicit"
    ) -> list[Run]:
        """Every root in scope, one after the other; the roots' operations are one batch,
        so one undo of any of them puts every root back."""
        indexes = self.indexes(scope)
        batch = new_batch_id() if len(indexes) > 1 and not dry_run else None
        return [self.run(i, dry_run=dry_run, trigger=trigger, batch=batch) for i in indexes]

    async def run_all_async(self, scope: str | None, *, dry_run: bool = False) -> list[Run]:
        """`run_all` for the daemon."""
        indexes = self.indexes(scope)
        batch = new_batch_id() if len(indexes) > 1 and not dry_run else None
        return [await self.run_async(i, dry_run=dry_run, batch=batch) for i in indexes]

    def run(
        self,
        index: int,
        *,
        dry_run: bool = False,
        trigger: str = "explicit",
        batch: str | None = None,
    ) -> Run:
        """Plan one root and (unless a dry run or a team root) carry the plan out;
        synchronous (CLI)."""
        if dry_run or self.reports_only(index):
            docs = self._docs(index)
            return Run(index, self.organiser.plan_for(index, docs))
        with self._exclusive(index):
            for _attempt in range(MAX_PLANS):
                docs = self._docs(index)
                plan = self.organiser.plan_for(index, docs)
                try:
                    converter = self._converter(index, plan, docs, trigger, batch)
                    result = self.writer.run_plan(converter)
                except PlanChanged:
                    continue
                return Run(index, plan, result)
        raise WriteFailed("the memories kept changing while the consolidation was planned")

    async def run_async(
        self,
        index: int,
        *,
        dry_run: bool = False,
        trigger: str = "explicit",
        batch: str | None = None,
    ) -> Run:
        """`run` for the daemon: planned in a worker thread, written through the writer's
        async path (recalls and other requests keep being answered meanwhile)."""
        if dry_run or self.reports_only(index):
            docs = self._docs(index)
            return Run(index, await asyncio.to_thread(self.organiser.plan_for, index, docs))
        with self._exclusive(index):
            for _attempt in range(MAX_PLANS):
                docs = self._docs(index)
                plan = await asyncio.to_thread(self.organiser.plan_for, index, docs)
                if self.prose is not None:
                    plan = await self.prose.merge(plan, {d.path: d for d in docs})
                try:
                    converter = self._converter(index, plan, docs, trigger, batch)
                    result = await self.writer.run_plan_async(converter)
                except PlanChanged:
                    continue
                return Run(index, plan, result)
        raise WriteFailed("the memories kept changing while the consolidation was planned")


# -- when an automatic consolidation is due ----------------------------------------------------


@dataclass(frozen=True)
class Due:
    due: bool
    last_ms: int | None  # when the root was last consolidated (None: never)
    writes: int  # writes since then

    def __str__(self) -> str:
        when = "never" if self.last_ms is None else f"at {self.last_ms}"
        return f"last consolidated {when}, {self.writes} writes since"


def due(state: StateStore, key: str, now_ms: int) -> Due:
    """Whether a root (by its state key) is due for an automatic consolidation."""
    root_id = state.root_id(key)
    rows = state.query(
        "SELECT MAX(started_ms) FROM operations WHERE root_id = ? AND kind = ?"
        " AND state = 'applied'",
        (root_id, KIND),
    )
    last = rows[0][0] if rows and rows[0][0] is not None else None
    kinds = ",".join("?" * len(WRITE_KINDS))
    writes = state.query(
        f"SELECT COUNT(*) FROM operations WHERE root_id = ? AND state = 'applied'"
        f" AND kind IN ({kinds}) AND started_ms > ?",
        (root_id, *WRITE_KINDS, last or 0),
    )[0][0]
    ready = writes >= AUTO_AFTER_WRITES and (last is None or now_ms - last >= AUTO_AFTER_MS)
    return Due(ready, last, int(writes))


IDLE_S = 120.0  # no request for this long: the host is idle, a consolidation may run
CHECK_EVERY_S = 60.0  # how often the daemon asks


class AutoConsolidation:
    """`organise.autoConsolidate`: consolidate the writable roots that are due, when idle.

    The daemon calls `tick` every CHECK_EVERY_S with the time of the last request
    it answered; team roots are never consolidated on their own (docs/writing.md).
    """

    def __init__(
        self,
        dreamer: Dreamer,
        *,
        idle_s: float = IDLE_S,
        clock: Callable[[], float] = time.monotonic,
        wall_ms: Callable[[], int] = lambda: int(time.time() * 1000),
    ) -> None:
        self.dreamer = dreamer
        self.idle_s = idle_s
        self.clock = clock
        self.wall_ms = wall_ms

    async def tick(self, last_activity: float) -> list[Run]:
        """Consolidate what is due now; the runs made (a busy root is skipped, not waited for)."""
        state = self.dreamer.writer.state
        if state is None or self.clock() - last_activity < self.idle_s:
            return []
        runs = []
        for index, root in enumerate(self.dreamer.writer.roots):
            if root.scope.value == "team" or root.read_only:
                continue
            now = self.wall_ms()
            found = await asyncio.to_thread(due, state, root_key(root), now)
            if not found.due:
                continue
            try:
                runs.append(await self.dreamer.run_async(index, trigger="auto"))
            except Busy:
                continue  # another daemon is at it; its operation resets the clock
        return runs
