"""The writer: remember, update, forget, restore, undo (docs/writing.md).

One service for every caller — the daemon's handlers, the CLI, and later
extraction and consolidation — that takes an operation and returns
`{operations, skipped}`. Each operation is decided (`_plan_*`, on the caller's
thread: it reads the warm catalog), carried out (`Committer.commit`, which may
run in a worker thread: lock, journal, files, MEMORY.md) and applied back to
the catalog (so the next recall sees it, and the watcher's echo is ignored).

Decisions, in docs/writing.md's order for a new memory: metadata by rules when not
given (metadata.py) → the quality gate (gate.py) → conflict detection against
the same root (the best lexical matches of the new text and every memory with
the same title, judged by conflicts.py): `duplicate` refreshes the old file's
`updated` date, `update` rewrites it (newer wins; the old text stays in the
journal; other memories the new fact also replaces are archived and listed in
`supersedes`), `independent` creates `<root>/<slug>.md`.

Team roots (docs/writing.md) are written only when asked for by name (`scope:
"team"`, or a path inside one); an extracted memory for a team root is only
ever proposed.

Forget, restore and undo are planned in reversal.py, the new file's text in
edits.py; this module runs them all.

One job past 400 lines: every operation goes through the same plan → commit →
apply engine here, and `remember`'s conflict handling (duplicate, update,
create, proposals) decides which plan that is; split, each half would need
the other's internals.
"""

from __future__ import annotations

import asyncio
import datetime
import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.documents import (
    MEMORY_TYPES,
    MemoryDocument,
    content_hash,
)
from memory_recall.server.facts.judgement import MemoryText as FactText
from memory_recall.server.facts.judgement import judge as judge_facts
from memory_recall.server.facts.newer import MAYBE_SUPERSEDES_KEY
from memory_recall.server.facts.rewrite import rewrite
from memory_recall.server.facts.tiers import Question, Tier, settle_all
from memory_recall.server.pacing import paced
from memory_recall.server.ranking.registry import RankerSpec
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.roots import MemoryRoot, Scope, posix_relative
from memory_recall.server.store import reversal
from memory_recall.server.store.commit import Committed, Committer, OwnWrites, Plan, PlannedChange
from memory_recall.server.store.conflicts import (
    ALSO_REPLACED_SIMILARITY,
    MAYBE_SUPERSEDES,
    PRECEDENCE,
    MemoryText,
    Verdict,
    judge,
    of_judgement,
    says_all_of,
    title_key,
    told_apart,
)
from memory_recall.server.store.edits import archive_changes, parse_file, set_flags
from memory_recall.server.store.errors import InvalidWrite, WriteFailed
from memory_recall.server.store.files import (
    read_or_none,
    resolve_target,
    root_key,
    shown_path,
    slugify,
)
from memory_recall.server.store.gate import MemoryDraft, check
from memory_recall.server.store.index_file import IndexEntry, IndexReport
from memory_recall.server.store.journal import Change, Journal, new_batch_id
from memory_recall.server.store.memory_file import MemoryFile
from memory_recall.server.store.metadata import derive
from memory_recall.server.store.renames import rename_changes, renamed_slug
from memory_recall.server.store.requests import (
    Action,
    ForgetRequest,
    OperationEntry,
    RememberRequest,
    SkippedEntry,
    UpdateRequest,
    WriteResult,
    WriteSettings,
)
from memory_recall.server.store.secrets import redact
from memory_recall.server.store.state import StateStore

# (type, title, description, body, declared category) → a topic-tree slug. The
# organisation layer provides it (the store sits below it and cannot import it).
Categorizer = Callable[[str, str, str, str, "str | None"], str]

# Lexical matches judged per new memory, besides those with an equal title: the
# memory a new one repeats or updates shares its words, so it ranks near the top;
# each judged pair costs a few milliseconds on first sight.
CONFLICT_CANDIDATES = 5
MAX_ATTEMPTS = 3  # plans made again when another process changed the root meanwhile
# Memories an unsure new one is linked to (`related`, `maybeSupersedes`): the closest few.
LINKED_AT_MOST = 3

log = logging.getLogger("memory_recall")


def _merge(results: Sequence[WriteResult]) -> WriteResult:
    """The results of a batch's operations, as one answer."""
    merged = WriteResult()
    for result in results:
        merged.operations += result.operations
        merged.skipped += result.skipped
        merged.indexes += result.indexes
    return merged


def _partial(targets: Sequence[str], failed: int, exc: WriteFailed) -> WriteFailed:
    """A batch undo that stopped part way: what was undone, what was not, and why."""
    if failed == 0:
        return exc
    done = ", ".join(targets[:failed])
    left = ", ".join(targets[failed:])
    return WriteFailed(f"undid {done}; {left} not undone: {exc}")


def _joined(targets: Sequence[str], run: Callable[[str], WriteResult]) -> WriteResult:
    results = []
    for n, operation in enumerate(targets):
        try:
            results.append(run(operation))
        except WriteFailed as exc:
            raise _partial(targets, n, exc) from exc
    return _merge(results)


class _ViewChanged(Exception):
    """The catalog was behind the disk for a file a decision needs: plan again."""


# A remember's new memory, gated, with the index and root it goes to; or the refusal.
_Draft = tuple[int, MemoryRoot, MemoryText] | WriteResult


@dataclass(frozen=True)
class _Candidates:
    """A remember's conflict candidates, as found in `snapshot`, and the rules' verdict on
    each (by path and content hash: a verdict is the two texts', whatever the catalog)."""

    index: int
    snapshot: CorpusView
    docs: list[MemoryDocument]
    verdicts: dict[tuple[str, str], Verdict] = field(default_factory=dict)

    def current(self, catalog: MemoryCatalog) -> bool:
        """Whether nothing changed since: the catalog's version, and its live index's."""
        live = self.snapshot.live_index
        return catalog.snapshot().version == self.snapshot.version and (
            live is None or live.version == self.snapshot.live_index_version
        )


@dataclass
class _RootView:
    """The memories of one root as the writer needs them, rebuilt only where docs changed."""

    docs: dict[str, MemoryDocument] = field(default_factory=dict)  # by path inside the root
    entries: dict[str, IndexEntry] = field(default_factory=dict)
    title_keys: dict[str, str] = field(default_factory=dict)
    # The other way round: each title key's paths (a remember looks its title up).
    titled: dict[str, set[str]] = field(default_factory=dict)
    version: int = -1

    def patch(self, rel: str, doc: MemoryDocument | None) -> None:
        """The writer's own change to one file, without walking the whole root again."""
        self._untitle(rel)
        if doc is None:
            self.docs.pop(rel, None)
            self.entries.pop(rel, None)
            return
        self.docs[rel] = doc
        self.entries[rel] = _entry(rel, doc)
        self.title(rel, title_key(doc.title))

    def title(self, rel: str, key: str) -> None:
        self.title_keys[rel] = key
        self.titled.setdefault(key, set()).add(rel)

    def same_title(self, key: str) -> list[MemoryDocument]:
        """The memories whose title has this key, by path."""
        return [self.docs[rel] for rel in sorted(self.titled.get(key, ()))]

    def _untitle(self, rel: str) -> None:
        key = self.title_keys.pop(rel, None)
        if key is None:
            return
        paths = self.titled[key]
        paths.discard(rel)
        if not paths:
            del self.titled[key]


def _entry(rel: str, doc: MemoryDocument) -> IndexEntry:
    corrects = doc.paths_of(MAYBE_SUPERSEDES_KEY)
    return IndexEntry(rel, doc.title, doc.description, False, doc.mtime_ms, corrects)


def _confirmed(verdict: Verdict) -> bool:
    return verdict.judgement is not None and verdict.judgement.confirmed


def _plain(memory: MemoryText) -> FactText:
    return FactText(memory.title, memory.description, memory.body, memory.type)


def _clean(value: str) -> str:
    return " ".join(value.split())


def _today() -> str:
    return datetime.date.today().isoformat()


class MemoryWriter:
    """Every change the daemon makes to memory files."""

    def __init__(
        self,
        catalog: MemoryCatalog,
        state: StateStore | None,
        *,
        ranker: RankerSpec,
        categorize: Categorizer | None = None,
        settings: WriteSettings | None = None,
        today: Callable[[], str] = _today,
        own_writes: OwnWrites | None = None,
        fault: Callable[[str], None] | None = None,
        state_problem: str | None = None,
    ) -> None:
        self.catalog = catalog
        self.state = state
        self.ranker = ranker
        self.categorize = categorize
        self.settings = settings or WriteSettings()
        self.today = today
        self.own_writes = own_writes or OwnWrites()
        self.state_problem = state_problem
        self.committer = (
            Committer(
                state,
                index_cap=self.settings.index_cap,
                own_writes=self.own_writes,
                fault=fault,
            )
            if state is not None
            else None
        )
        self.journal = Journal(state) if state is not None else None
        self._seen: dict[str, int] = {}
        self._baseline = self.journal.last_seq() if self.journal else 0
        self._views: dict[int, _RootView] = {}
        # The tiers above the rules for unsure pairs (facts/tiers.py), set by the daemon
        # when an embeddings endpoint or a model is configured; only `run_async` asks them.
        self.tiers: list[Tier] = []
        self._async_lock: asyncio.Lock | None = None
        self._sync_lock = threading.Lock()
        self.last_index: dict[str, IndexReport] = {}  # by root path, for memory/status

    @property
    def roots(self) -> Sequence[MemoryRoot]:
        return self.catalog.roots

    def warm_up(self) -> None:
        """Load the rules' word lists and patterns now (a quarter of a second), so that the
        first `remember` of a session is as fast as the rest. Safe in a worker thread."""
        warm_up_rules(self.categorize)

    # -- running operations --------------------------------------------------------------------

    def remember(self, request: RememberRequest) -> WriteResult:
        return self._run(lambda: self._plan_remember(request))

    def update(self, request: UpdateRequest) -> WriteResult:
        return self._run(lambda: self._plan_update(request))

    def forget(self, request: ForgetRequest) -> WriteResult:
        return self._run(lambda: reversal.plan_forget(self, request))

    def restore(self, path: str, trigger: str = "explicit") -> WriteResult:
        return self._run(lambda: reversal.plan_restore(self, path, trigger))

    def undo(self, operation: str) -> WriteResult:
        """One operation put back, or its whole batch (reversal.undo_targets), each root's
        part an undo operation of its own in one new batch (undoing that redoes them all)."""
        targets = reversal.undo_targets(self, operation)
        batch = new_batch_id() if len(targets) > 1 else None
        return _joined(targets, lambda op: self._run(lambda: reversal.plan_undo(self, op, batch)))

    def _undo_planner(self, operation: str, batch: str | None) -> Callable[[], Plan]:
        return lambda: reversal.plan_undo(self, operation, batch)

    async def undo_async(self, operation: str) -> WriteResult:
        targets = reversal.undo_targets(self, operation)
        batch = new_batch_id() if len(targets) > 1 else None
        results = []
        for n, op in enumerate(targets):
            try:
                results.append(await self.run_plan_async(self._undo_planner(op, batch)))
            except WriteFailed as exc:
                raise _partial(targets, n, exc) from exc
        return _merge(results)

    async def run_async(self, kind: str, request: object) -> WriteResult:
        """The same operations for the daemon: decided on the event loop (which owns the
        catalog), carried out in a worker thread (locks and fsync never block recalls)."""
        if kind == "remember":
            return await self._remember_async(request)  # type: ignore[arg-type]
        planners: dict[str, Callable[[], Plan | WriteResult]] = {
            "update": lambda: self._plan_update(request),  # type: ignore[arg-type]
            "forget": lambda: reversal.plan_forget(self, request),  # type: ignore[arg-type]
            "restore": lambda: reversal.plan_restore(self, str(request)),
        }
        if kind == "undo":
            return await self.undo_async(str(request))
        return await self.run_plan_async(planners[kind])

    async def _remember_async(self, request: RememberRequest) -> WriteResult:
        """A remember drafted and gated once, in a worker thread (the gate's secret and
        injection checks are a few milliseconds, up to 12 of the event loop's for a long
        text), its candidates found and read there too, the pairs the rules are unsure of
        settled by the tiers, then planned and committed."""
        draft = await asyncio.to_thread(self._draft, request)
        ahead = await self._read_ahead(draft)
        settled = await self._settle(draft, ahead)
        return await self.run_plan_async(
            lambda: self._plan_remember(request, settled, ahead, draft)
        )

    def run_plan(self, planner: Callable[[], Plan | WriteResult]) -> WriteResult:
        """An operation planned elsewhere (consolidation) through the same engine: `planner`
        builds the Plan from the current catalog and is called again when another process
        changed the root meanwhile; it may answer a WriteResult instead (nothing to do)."""
        return self._run(planner)

    async def run_plan_async(self, planner: Callable[[], Plan | WriteResult]) -> WriteResult:
        """`run_plan` for the daemon: planned on the event loop, committed in a worker thread."""
        if self._async_lock is None:
            self._async_lock = asyncio.Lock()
        async with self._async_lock:
            for attempt in range(MAX_ATTEMPTS):
                plan = self._attempt(planner, attempt)
                if isinstance(plan, WriteResult):
                    return plan
                committer = self._committer()
                committed = await asyncio.to_thread(committer.commit, plan)
                if committed.stale:
                    self._catch_up(committed)
                    continue
                return self._finish(committed)
        raise WriteFailed("the root kept changing while the write was decided; try again")

    def _run(self, planner: Callable[[], Plan | WriteResult]) -> WriteResult:
        with self._sync_lock:
            for attempt in range(MAX_ATTEMPTS):
                plan = self._attempt(planner, attempt)
                if isinstance(plan, WriteResult):
                    return plan
                committed = self._committer().commit(plan)
                if committed.stale:
                    self._catch_up(committed)
                    continue
                return self._finish(committed)
        raise WriteFailed("the root kept changing while the write was decided; try again")

    def _attempt(
        self, planner: Callable[[], Plan | WriteResult], attempt: int
    ) -> Plan | WriteResult:
        try:
            plan = planner()
        except _ViewChanged:
            plan = planner()  # the catalog has just been refreshed for that file
        if isinstance(plan, Plan) and attempt == MAX_ATTEMPTS - 1:
            plan.uses_view = False  # last try: the re-read of each file decides
        return plan

    def require_journal(self) -> Journal:
        """The journal, or the refusal a write without one gets."""
        self._committer()  # raises: the state store is off or unusable
        assert self.journal is not None
        return self.journal

    def _committer(self) -> Committer:
        if self.committer is None:
            reason = self.state_problem or "the state store is off (MEMORY_RECALL_STATE_DIR=off)"
            raise WriteFailed(f"writes need the journal, and {reason}; nothing was written")
        return self.committer

    def _catch_up(self, committed: Committed) -> None:
        """Another process changed the root: read those files before deciding again."""
        root = committed.plan.root
        for path in dict.fromkeys([*committed.stale, *committed.recovered]):
            self.catalog.refresh(root.path / path)
        self._seen[root_key(root)] = committed.newest_seq

    def _finish(self, committed: Committed) -> WriteResult:
        plan = committed.plan
        root = plan.root
        for path in dict.fromkeys([*committed.foreign, *committed.recovered]):
            self.catalog.refresh(root.path / path)
        view = self._views.get(plan.root_index)
        current = view is not None and view.version == self.catalog.snapshot().version
        for planned in plan.changes:
            target = root.path / planned.path
            if planned.change.after is None:
                self.catalog.remove(target)
            else:
                doc = self.catalog.get(str(target))
                if doc is None or doc.content_hash != planned.change.after_hash:
                    self.catalog.upsert(target)
            if current and view is not None:
                view.patch(planned.path, self.catalog.get(str(target)))
        if current and view is not None and not committed.foreign and not committed.recovered:
            view.version = self.catalog.snapshot().version  # nothing else moved: still exact
        self._seen[root_key(root)] = committed.newest_seq
        operation = committed.record.id if committed.record else plan.operation_id
        result = WriteResult(indexes=[committed.index] if committed.index else [])
        if committed.index:
            self.last_index[str(root.path)] = committed.index
        for change_index, action, title, reason in plan.answers:
            path = plan.changes[change_index].path if change_index >= 0 else ""
            result.operations.append(
                OperationEntry(
                    operation,
                    cast(Action, action),
                    str(root.path / path),
                    root.scope.value,
                    title,
                    reason,
                )
            )
        return result

    # -- where a write goes --------------------------------------------------------------------

    def _seen_seq(self, root: MemoryRoot) -> int:
        return self._seen.get(root_key(root), self._baseline)

    def _root_for_scope(self, scope: str | None, memory_type: str) -> tuple[int, MemoryRoot]:
        if scope is not None:
            wanted = Scope(scope)
        else:
            # Who the memory is about decides: the person's preferences follow them
            # across projects; everything else belongs to the project. Never team.
            wanted = Scope.USER if memory_type == "user" else Scope.PROJECT
        for index, root in enumerate(self.roots):
            if root.scope is wanted and not root.read_only:
                return index, root
        if scope is not None:
            raise InvalidWrite("scope", f"no writable {scope} root is configured")
        for index, root in enumerate(self.roots):
            if root.scope is not Scope.TEAM and not root.read_only:
                return index, root
        raise InvalidWrite("scope", "no project or user root is configured to write into")

    def new_plan(self, index: int, kind: str, trigger: str, *, uses_view: bool = True) -> Plan:
        """An empty plan of one root (for consolidation and for taking writes back): the
        root's index lines and the newest operation its view knew, as every write starts.
        `uses_view`: the plan decides on the catalog's view of the root (see `run_plan`)."""
        root = self.roots[index]
        plan = Plan(index, root, kind, trigger, [], uses_view=uses_view)
        plan.entries = self._root_view(index).entries
        plan.seen_seq = self._seen_seq(root)
        return plan

    def current(self, index: int, doc: MemoryDocument) -> bytes:
        """The bytes on disk of a memory the catalog holds; the catalog is refreshed and the
        planner called again when they are not the version it holds (see `run_plan`)."""
        return self._current(self.roots[index], posix_relative(doc.relative_path), doc)

    def _root_view(self, index: int) -> _RootView:
        """The root's memories from the current catalog snapshot, reusing unchanged docs."""
        snapshot = self.catalog.snapshot()
        cached = self._views.get(index) or _RootView()
        if cached.version == snapshot.version:
            return cached
        view = _RootView(version=snapshot.version)
        # Paced when memory/status works it out in a thread beside the recalls.
        for doc in paced(snapshot.documents):
            if doc.root_index != index:
                continue
            rel = posix_relative(doc.relative_path)
            old = cached.docs.get(rel)
            view.docs[rel] = doc
            if old is doc:
                view.entries[rel] = cached.entries[rel]
                view.title(rel, cached.title_keys[rel])
            else:
                view.entries[rel] = _entry(rel, doc)
                view.title(rel, title_key(doc.title))
        self._views[index] = view
        return view

    def _current(self, root: MemoryRoot, rel: str, doc: MemoryDocument | None) -> bytes:
        """A memory file's bytes; when the catalog held another version, refresh it and
        plan again (a decision is made on what is on disk)."""
        data = read_or_none(root.path / rel, root=root.path)
        if data is None:
            if doc is not None:
                self.catalog.refresh(root.path / rel)
                raise _ViewChanged
            raise InvalidWrite("path", f"no memory {shown_path(rel)} in {root.path}")
        if doc is not None and doc.content_hash and content_hash(data) != doc.content_hash:
            self.catalog.refresh(root.path / rel)
            raise _ViewChanged
        return data

    # -- remember ------------------------------------------------------------------------------

    def _draft(self, request: RememberRequest) -> _Draft:
        """The new memory of a remember, its metadata derived and gated, and its root."""
        text = request.text.strip()
        derived = derive(text)
        memory_type = request.type or derived.type
        if memory_type not in MEMORY_TYPES:
            raise InvalidWrite("type", f"unknown type {memory_type!r}")
        index, root = self._root_for_scope(request.scope, memory_type)
        title = _clean(request.title) if request.title is not None else derived.title
        description = (
            _clean(request.description) if request.description is not None else derived.description
        )
        rejection = check(
            MemoryDraft(title, description, text),
            origin=request.origin,
            force=request.force,
            limits=self.settings.limits,
        )
        if rejection is not None:
            return WriteResult(
                skipped=[SkippedEntry(rejection.rule, rejection.message, redact(title) or None)]
            )
        return index, root, MemoryText(title, description, text, memory_type)

    async def _settle(
        self, draft: _Draft, ahead: _Candidates | None
    ) -> dict[tuple[str, str], Verdict]:
        """The pairs of a remember the rules are unsure of, put to the tiers above them
        (facts/tiers.py: vectors, a model), validated; by (path, content hash)."""
        if not self.tiers:
            return {}
        if isinstance(draft, WriteResult):
            return {}  # refused by the gate: nothing of it leaves the process
        index, _root, new = draft
        judged = self._judge(index, new, self._root_view(index), None, self._found(ahead, index))
        unsure = [(doc, v) for doc, v in judged if v.links and v.judgement is not None]
        questions = [
            Question(f"p{n}", _plain(new), _plain(MemoryText.of(doc)), v.judgement)
            for n, (doc, v) in enumerate(unsure)
            if v.judgement is not None
        ]
        settled = await settle_all(self.tiers, questions)
        return {
            (doc.path, doc.content_hash): of_judgement(settled[q.id])
            for q, (doc, _v) in zip(questions, unsure, strict=True)
            if q.id in settled
        }

    async def _read_ahead(self, draft: _Draft) -> _Candidates | None:
        """The conflict candidates of a remember, found and judged in a worker thread
        (docs/performance.md, "Writes in milliseconds"): ranking the new memory's whole
        text against the index, reading the candidates' statements and comparing them
        are most of a remember, and on the event loop they held every recall behind them
        (a short Japanese note against long ones: 50 ms). The plan, made on the event
        loop, takes these candidates and verdicts only if the catalog has not changed
        since (its version, and the live index's), else finds and judges them again."""
        if isinstance(draft, WriteResult):
            return None  # refused by the gate: the plan says so
        index, _root, new = draft
        snapshot = self.catalog.snapshot()
        view = self._root_view(index)

        def find_and_judge() -> _Candidates:
            docs = self._candidates(index, new, view, snapshot)
            # Read statement by statement (paced: a recall in flight goes first).
            verdicts = {
                (doc.path, doc.content_hash): judge(new, MemoryText.of(doc)) for doc in docs
            }
            return _Candidates(index, snapshot, docs, verdicts)

        try:
            return await asyncio.to_thread(find_and_judge)
        except Exception as exc:  # the catalog moved under the search: the plan searches
            log.debug("conflict candidates found again on the event loop: %r", exc, exc_info=exc)
            return None

    def _found(self, ahead: _Candidates | None, index: int) -> _Candidates | None:
        """The candidates found ahead, while the catalog is still the one they were found in."""
        if ahead is not None and ahead.index == index and ahead.current(self.catalog):
            return ahead
        return None

    def _plan_remember(
        self,
        request: RememberRequest,
        settled: dict[tuple[str, str], Verdict] | None = None,
        ahead: _Candidates | None = None,
        draft: _Draft | None = None,
    ) -> Plan | WriteResult:
        if draft is None:
            draft = self._draft(request)
        if isinstance(draft, WriteResult):
            return draft
        index, root, new = draft
        view = self._root_view(index)
        judged = self._judge(index, new, view, settled or {}, self._found(ahead, index))
        propose = not request.apply or (request.origin == "extract" and root.scope is Scope.TEAM)
        plan = Plan(index, root, "remember", request.trigger, [], uses_view=True)
        plan.entries = view.entries
        plan.seen_seq = self._seen_seq(root)
        # The zero-loss rule (docs/writing.md): only a sure verdict acts on a file.
        judged = told_apart(new.title, judged)
        winner = judged[0] if judged and judged[0][1].acts else None
        if winner is not None and winner[1].kind == "duplicate":
            self._plan_duplicate(plan, winner[0], winner[1])
        elif winner is not None:
            # Other memories of the same fact, stated the old way: put away too, so that
            # the old fact is not recalled beside the new one. Only clear cases, and only
            # a memory the new one says all of: one that says more ("… Builds run on
            # Fridays.") stays, linked as perhaps corrected (archived, what else it said
            # was out of recall).
            others = [
                (doc, verdict)
                for doc, verdict in judged[1:]
                if verdict.kind == "update"
                and verdict.acts
                and verdict.similarity >= ALSO_REPLACED_SIMILARITY
            ]
            whole: list[MemoryDocument] = []
            kept: list[MemoryDocument] = []
            for doc, verdict in others:
                (whole if says_all_of(new, MemoryText.of(doc), verdict) else kept).append(doc)
            # And memories the new one perhaps corrects besides ("Deploys now go through
            # Buildkite. The staging database is now db-stg-5." updates the deploy note;
            # the staging database's note leans to an update): linked from the updated
            # memory as perhaps corrected, as a created one would be, so recall marks them.
            leaning = [
                doc for doc, verdict in judged[1:] if verdict.links and verdict.kind == "update"
            ]
            kept += leaning[: max(0, LINKED_AT_MOST - len(kept))]
            self._plan_rewrite(plan, request, new, winner[0], winner[1], whole, kept)
        else:
            unsure = [(doc, verdict) for doc, verdict in judged if verdict.links]
            self._plan_create(plan, request, new, unsure[:LINKED_AT_MOST])
        if propose:
            return self._proposal(plan)
        return plan

    def _judge(
        self,
        index: int,
        new: MemoryText,
        view: _RootView,
        settled: dict[tuple[str, str], Verdict] | None = None,
        ahead: _Candidates | None = None,
    ) -> list[tuple[MemoryDocument, Verdict]]:
        """The root's candidates for the new memory (or those found and judged `ahead`
        for this very catalog), judged, the most telling first; `settled`: the tiers'
        verdicts, which go before the rules'."""
        candidates = ahead.docs if ahead is not None else self._candidates(index, new, view)
        known = {**(ahead.verdicts if ahead is not None else {}), **(settled or {})}
        judged = [
            (doc, known.get((doc.path, doc.content_hash)) or judge(new, MemoryText.of(doc)))
            for doc in candidates
        ]
        judged.sort(
            key=lambda item: (not item[1].acts, PRECEDENCE[item[1].kind], -item[1].similarity)
        )
        return judged

    def _candidates(
        self, index: int, new: MemoryText, view: _RootView, snapshot: CorpusView | None = None
    ) -> list[MemoryDocument]:
        """The memories of root `index` a new memory may conflict with: the ranker's best
        matches in `snapshot` (by default the catalog's now), and every memory of the same
        title."""
        snapshot = snapshot if snapshot is not None else self.catalog.snapshot()
        query = f"{new.title}\n{new.description}\n{new.body}"
        tokens = self.ranker.tokenize(query)
        candidates: dict[str, MemoryDocument] = {}
        if tokens:
            # Not silenced (`Bm25Ranker.candidates`): a correction's new value is in no memory.
            find = getattr(self.ranker.rank, "candidates", self.ranker.rank)
            for scored in find(
                snapshot, tokens, lambda d: d.root_index == index, CONFLICT_CANDIDATES
            ):
                candidates[scored.document.path] = scored.document
        for doc in view.same_title(title_key(new.title)):
            candidates.setdefault(doc.path, doc)
        return list(candidates.values())

    def _plan_duplicate(self, plan: Plan, doc: MemoryDocument, verdict: Verdict) -> None:
        rel = posix_relative(doc.relative_path)
        data = self._current(plan.root, rel, doc)
        memory = parse_file(data, plan.root.path / rel)
        reason = f"duplicate of {rel}: {verdict.reason}"
        if memory.get("updated") != self.today():
            memory.set("updated", self.today())
            after = memory.render().encode()
            plan.changes.append(
                PlannedChange(Change(rel, "unchanged", data, after, doc.title), entry=None)
            )
            plan.answers.append((0, "unchanged", doc.title, reason))
        else:
            plan.changes.append(PlannedChange(Change(rel, "unchanged", data, data, doc.title)))
            plan.answers.append((0, "unchanged", doc.title, reason))

    def _plan_rewrite(
        self,
        plan: Plan,
        request: RememberRequest,
        new: MemoryText,
        doc: MemoryDocument,
        verdict: Verdict,
        others: list[MemoryDocument],
        kept: Sequence[MemoryDocument] = (),
    ) -> None:
        """Rewrite `doc` with the new fact, archive `others` (the same fact stated the old
        way, nothing more) and link `kept` (the same fact and more, or a memory the rules
        lean to an update of) as perhaps corrected."""
        rel = posix_relative(doc.relative_path)
        data = self._current(plan.root, rel, doc)
        memory = parse_file(data, plan.root.path / rel)
        # An update changes the fact, not the memory: only the statements that state the
        # changed slot are rewritten (facts/rewrite.py, docs/writing.md).
        old = FactText(memory.get("name") or doc.title, memory.get("description") or "",
                       memory.body, memory.get("type") or doc.type)  # fmt: skip
        judgement = verdict.judgement
        if judgement is None or old.body.strip() != doc.body.strip():
            judgement = judge_facts(FactText(new.title, new.description, new.body), old)
        next_version = rewrite(
            old,
            judgement,
            title=_clean(request.title) if request.title is not None else None,
            description=_clean(request.description) if request.description is not None else None,
        )
        title, description = next_version.title, next_version.description
        memory_type = request.type or memory.get("type") or new.type
        memory.set("name", title)
        memory.set("description", description)
        memory.set("type", memory_type)
        self._set_category(
            memory, memory_type, title, description, next_version.body, request.category
        )
        memory.set("updated", self.today())
        set_flags(memory, request.pinned, request.always)
        replaced: list[str] = []
        moves: list[PlannedChange] = []
        for other in others:
            other_rel = posix_relative(other.relative_path)
            other_data = self._current(plan.root, other_rel, other)
            other_file = parse_file(other_data, plan.root.path / other_rel)
            if other_file.get_bool("pinned"):
                continue  # a pinned memory is never put away by the daemon
            replaced.append(other_rel)
            moves += archive_changes(other_rel, other_data, other.title)
        if replaced:
            supersedes = [*memory.get_list("supersedes"), *replaced]
            memory.set("supersedes", list(dict.fromkeys(supersedes)))
        perhaps = [posix_relative(other.relative_path) for other in kept]
        if perhaps:
            maybe = [*memory.get_list(MAYBE_SUPERSEDES), *perhaps]
            memory.set(MAYBE_SUPERSEDES, list(dict.fromkeys(maybe)))
        memory.set_body(next_version.body)
        after = memory.render().encode()
        corrects = tuple(memory.get_list(MAYBE_SUPERSEDES))
        entry = IndexEntry(rel, title, description, bool(request.pinned), float("inf"), corrects)
        # The name follows the title where it said the old value (store/renames.py).
        slug = renamed_slug(rel, old.title, title, self._root_view(plan.root_index).docs.values())
        if slug is None:
            change = Change(rel, "updated", data, after, title)
            plan.changes.append(PlannedChange(change, entry=entry, stats="updated"))
            source, reason = rel, f"updates {rel}: {verdict.reason}"
        else:  # "": the first change's path, the new name chosen under the lock
            plan.changes += rename_changes(rel, data, after, title, slug, entry)
            source, reason = "", f"updates {rel}, renamed after its new title: {verdict.reason}"
        plan.answers.append((0, "updated", title, reason))
        plan.links.append((source, rel, "supersedes"))
        for other_rel in replaced:
            plan.links.append((source, other_rel, "supersedes"))
        for other_rel in perhaps:
            plan.links.append((source, other_rel, "maybe-supersedes"))
        for planned in moves:
            plan.changes.append(planned)
            if planned.change.after is None:  # the original's removal answers for it
                plan.answers.append(
                    (len(plan.changes) - 1, "archived", planned.change.title or "",
                     f"superseded by {rel}")
                )  # fmt: skip

    def _plan_create(
        self,
        plan: Plan,
        request: RememberRequest,
        new: MemoryText,
        unsure: Sequence[tuple[MemoryDocument, Verdict]] = (),
    ) -> None:
        memory = MemoryFile.new({"name": new.title, "description": new.description}, new.body)
        memory.set("type", new.type)
        self._set_category(memory, new.type, new.title, new.description, new.body, request.category)
        memory.set("created", self.today())
        memory.set("updated", self.today())
        set_flags(memory, request.pinned or None, request.always or None)
        # Unsure of a duplicate or an update: both memories stay, linked, and consolidation
        # decides later (docs/writing.md, "When the rules are unsure").
        related = [posix_relative(doc.relative_path) for doc, _ in unsure]
        updates = [(doc, v) for doc, v in unsure if v.kind == "update"]
        confirmed = [posix_relative(d.relative_path) for d, v in updates if _confirmed(v)]
        maybe = [posix_relative(d.relative_path) for d, v in updates if not _confirmed(v)]
        for key, targets, kind in (
            ("related", related, "related"),
            (MAYBE_SUPERSEDES, maybe, "maybe-supersedes"),
            ("supersedes", confirmed, "supersedes"),  # a model confirmed it: still kept
        ):
            if targets:
                memory.set(key, targets)
                plan.links += [("", target, kind) for target in targets]
        after = memory.render().encode()
        pinned, corrects = bool(request.pinned), tuple(maybe)
        entry = IndexEntry("", new.title, new.description, pinned, float("inf"), corrects)
        plan.changes.append(
            PlannedChange(
                Change("", "created", None, after, new.title),
                new_in="",
                slug=slugify(new.title),
                entry=entry,
                stats="created",
            )
        )
        reason = None
        if unsure:
            doc, verdict = unsure[0]
            reason = (
                f"kept beside {posix_relative(doc.relative_path)}, linked: perhaps"
                f" {'a duplicate' if verdict.kind == 'duplicate' else 'an update'}"
                f" ({verdict.reason})"
            )
        plan.answers.append((0, "created", new.title, reason))

    def _proposal(self, plan: Plan) -> WriteResult:
        result = WriteResult()
        for change_index, _action, title, reason in plan.answers:
            planned = plan.changes[change_index]
            path = planned.path or f"{slugify(planned.slug or title)}.md"
            result.operations.append(
                OperationEntry(
                    plan.operation_id, "proposed", str(plan.root.path / path),
                    plan.root.scope.value, title, reason,
                )
            )  # fmt: skip
        return result

    def _set_category(
        self,
        memory: MemoryFile,
        memory_type: str,
        title: str,
        description: str,
        body: str,
        declared: str | None,
    ) -> None:
        if self.categorize is None:
            return
        if declared is None and memory.get("category"):
            return  # the file's own category stands
        memory.set("category", self.categorize(memory_type, title, description, body, declared))

    # -- update --------------------------------------------------------------------------------

    def _plan_update(self, request: UpdateRequest) -> Plan | WriteResult:
        index, rel = resolve_target(self.roots, request.path)
        root = self.roots[index]
        data = read_or_none(root.path / rel, root=root.path)
        if data is None:
            raise InvalidWrite("path", f"no memory {shown_path(rel)} in {root.path}")
        if request.if_match is not None and content_hash(data) != request.if_match:
            raise WriteFailed(
                f"changed on disk: {root.path / rel} is not the version the host saw"
                " (ifMatch differs); nothing was written. Read it again and repeat."
            )
        memory = parse_file(data, root.path / rel)
        current_title = memory.get("name") or memory.get("title") or memory.get("type") or ""
        title = _clean(request.title) if request.title is not None else current_title
        description = (
            _clean(request.description)
            if request.description is not None
            else memory.get("description") or ""
        )
        memory_type = request.type or memory.get("type") or "project"
        body = request.body.strip() if request.body is not None else memory.body
        rejection = check(
            MemoryDraft(title, description, body),
            origin="update",
            force=request.force,
            limits=self.settings.limits,
        )
        if rejection is not None:
            return WriteResult(
                skipped=[SkippedEntry(rejection.rule, rejection.message, redact(title) or None)]
            )
        if request.title is not None:
            memory.set("name", title)
        if request.description is not None:
            memory.set("description", description)
        if request.type is not None:
            memory.set("type", memory_type)
        if request.body is not None:
            memory.set_body(body)
        set_flags(memory, request.pinned, request.always)
        self._set_category(memory, memory_type, title, description, body, None)
        plan = Plan(index, root, "update", request.trigger, [], uses_view=False)
        plan.seen_seq = self._seen_seq(root)
        plan.entries = self._root_view(index).entries
        if memory.render().encode() == data:
            plan.changes.append(PlannedChange(Change(rel, "unchanged", data, data, title)))
            plan.answers.append((0, "unchanged", title, "nothing to change"))
            return plan
        memory.set("updated", self.today())
        entry = IndexEntry(rel, title, description, bool(request.pinned), float("inf"))
        after = memory.render().encode()
        plan.changes.append(
            PlannedChange(Change(rel, "updated", data, after, title), entry=entry, stats="updated")
        )
        plan.answers.append((0, "updated", title, None))
        return plan

    def state_root_id(self, root: MemoryRoot) -> int:
        assert self.state is not None
        return self.state.root_id(root_key(root))


def warm_up_rules(categorize: Categorizer | None = None) -> None:
    """Load the write side's word lists and compile its patterns (metadata, the gate,
    conflicts; the topic tree's through `categorize`): done once per process."""
    text = "Never deploy on Fridays; the release train (v2.3) leaves Tuesday 2025-06-03."
    derived = derive(text)
    check(MemoryDraft(derived.title, derived.description, text), origin="remember")
    new = MemoryText(derived.title, derived.description, text, derived.type)
    judge(new, MemoryText("Deploys", "", "Deploy on Fridays until 15:00.", "project"))
    if categorize is not None:
        categorize(derived.type, derived.title, derived.description, text, None)
