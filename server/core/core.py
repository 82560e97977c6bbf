"""The composition root: one `MemoryCore` holds every service, built once from options.

Every face adapts the same core (docs/design.md, "One core, many faces"): the LSP
daemon (`server/lsp/`), the MCP server (`server/mcp/`), the command line
(`server/cli/`) and the host hooks. A face passes what only it has — a way to
the host's own model (`HostModel`, for selector kind `client` and
`memory/complete`), a way to push notifications (`memory/suggestion`), a way to
show a fault to the user — and gets every capability: the warm catalog and its
watcher, recall with the memory network and the semantic channel, the write
side, organisation, search, suggestions, reflection and extraction.

Nothing here ranks, writes or gates. One job, the core: it builds the services in
dependency order, owns their lifetime (`start`, `stop`) and is the one entry point
of every request a face serves (`recall`, `status`, `remember`, `search`, …): a
face validates its input into the protocol's params, calls the method, and puts
the protocol's result on its own wire. Refusals are the errors `core/errors.py`
classifies. It is past 500 lines for that reason alone: one short entry point per
request; what each does lives in its own service (`core/writing.py`, `recall/`, …).
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from memory_recall.protocol import methods
from memory_recall.protocol.limits import LIST_PAGE_LIMIT, REFINED_LIMIT
from memory_recall.protocol.messages import (
    CatalogCountersStatus,
    ConsolidateParams,
    ContextParams,
    ExplainParams,
    ExplainResult,
    ExtractParams,
    FeedbackParams,
    FeedbackResult,
    ForgetParams,
    HistoryResult,
    InitializationOptions,
    ListParams,
    ListResult,
    ObserveParams,
    PhaseNotification,
    ProposalParams,
    ProposalsParams,
    ProposalsResult,
    RecallParams,
    RecallResult,
    RecallTelemetry,
    RejectResult,
    RememberParams,
    RootStatus,
    RuntimeStatus,
    SearchParams,
    SearchResult,
    SkippedFileStatus,
    StaleMemory,
    StatusResult,
    SuggestionStatus,
    TreeParams,
    UpdateParams,
    WriteResult,
)
from memory_recall.server import pacing
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.core import heap
from memory_recall.server.core.background import FRESH_WAIT_S
from memory_recall.server.core.errors import InvalidRequest, RequestFailed
from memory_recall.server.core.extracting import ExtractionService
from memory_recall.server.core.networking import NetworkSide
from memory_recall.server.core.options import (
    build_completer,
    build_selector,
    build_semantic,
    choose_ranker,
    choose_roots,
    completer_problem,
    host_problem,
    selector_timeout_s,
)
from memory_recall.server.core.organising import (
    OrganiseSide,
    consolidate_wire,
    context_wire,
    tree_wire,
)
from memory_recall.server.core.reflecting import ReflectionSide
from memory_recall.server.core.rehearsal import prepare_index
from memory_recall.server.core.searching import SearchSide
from memory_recall.server.core.session import CatalogSession, TaskRegistry
from memory_recall.server.core.suggesting import Notify, SuggestionSide
from memory_recall.server.core.syncing import SyncSide
from memory_recall.server.core.writing import (
    WriteSide,
    forget_request,
    history_wire,
    list_wire,
    proposal_wire,
    remember_request,
    result_wire,
    update_request,
)
from memory_recall.server.facts.newer import read_ahead
from memory_recall.server.models import HostModel
from memory_recall.server.organise.dream import CHECK_EVERY_S
from memory_recall.server.ranking.registry import RankerSpec, ranker_named
from memory_recall.server.recall.explain import Delivered, ExplainRequest
from memory_recall.server.recall.explain import explain as explain_memory
from memory_recall.server.recall.service import (
    RecallListener,
    RecallRequest,
    RecallService,
    model_deadline_s,
)
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store import inventory

log = logging.getLogger("memory_recall")

# The write side's rules are compiled once recalls have been quiet this long.
WARM_UP_AFTER_QUIET_S = 1.0
# The memory network's build and the read-ahead start once recalls have been quiet this
# long after `ready` (a host's first recall comes right then, and would share the
# interpreter with them: docs/ranking.md, "Ready means ready"), or this long after it
# at the latest (a host that recalls without pause does not keep them from starting).
START_AFTER_QUIET_S = 0.3
START_AFTER_AT_MOST_S = 1.0


# The memories delivered last that a start reads ahead (~3.5 ms each at 4,000 characters).
READ_AHEAD_DELIVERED = 128

FaultSink = Callable[[str], None]


def _no_notify(method: str, params: Any) -> None:
    return None


class MemoryCore:
    """Every service of the memory system over one set of roots.

    Build it anywhere (no event loop needed); `start` it inside the event loop that
    will serve it, `stop` it on the way out. `problems` holds what was wrong with
    the options, in sentences the face shows the user once.
    """

    def __init__(
        self,
        options: InitializationOptions,
        workspace: str | None,
        *,
        problems: list[str] | None = None,
        host: HostModel | None = None,
        notify: Notify | None = None,
        on_fault: FaultSink | None = None,
        selector_ceiling_s: float | None = None,
    ) -> None:
        self.problems = list(problems or [])
        self.options = options
        self.workspace = workspace
        self._note(host_problem(options, host))
        self.roots: list[MemoryRoot] = choose_roots(options, workspace)
        ranker, problem = choose_ranker(options.ranker)
        self._note(problem)
        self.ranker: RankerSpec = ranker
        self.tasks = TaskRegistry()

        catalog = MemoryCatalog(self.roots, ranker.index_kind)
        self.write = WriteSide.open(catalog, ranker, options.write)
        deadline_s = model_deadline_s(selector_ceiling_s, selector_timeout_s(options.selector))
        # Extraction and consolidation's merges ask the selector's model (or the host's,
        # memory/complete) within the selector's deadline.
        completer = build_completer(options, host)
        self._note(completer_problem(options))
        self.network = NetworkSide(catalog, self.write.state)
        self.reflection = ReflectionSide(self.write, self.network, self.tasks.spawn)
        self.organise = OrganiseSide(
            self.roots, workspace, options, self.write, completer, deadline_s,
            usage=self.reflection.usage,
        )  # fmt: skip
        self.semantic: Any = None
        if options.embeddings is not None:
            self.semantic, problem = build_semantic(options.embeddings, self.write.state)
            self._note(problem)
        # Sync through git (docs/sync.md): due after every write and every change on disk.
        self.syncing = SyncSide(
            self.roots,
            self.write.state,
            options.sync,
            index_cap=self.write.writer.settings.index_cap,
        )
        self.write.writer.own_writes.listeners.append(self.syncing.wrote)
        self.session = CatalogSession(
            catalog,
            self.tasks,
            on_fault=on_fault,
            # The watcher's echo of the core's own writes is not a change to re-read.
            ignore=self.write.writer.own_writes.filter,
            on_changed=self._files_changed,
            prepare=functools.partial(prepare_index, ranker=ranker),
        )
        self.recall_service = RecallService(
            build_selector(options.selector, host),
            ranker,
            ceiling_s=selector_ceiling_s,
            timeout_s=selector_timeout_s(options.selector),
            staleness=self.organise.staleness.for_recall,
            network=self.network.current,
            record=self.reflection.record,
            semantic=self.semantic,
        )
        topics = self.organise.organiser.topics
        self.searching = SearchSide(
            ranker, topics=topics, staleness=self.organise.staleness, network=self.network.graph
        )
        self.suggestions = SuggestionSide(
            self.session, self.tasks, notify or _no_notify,
            staleness=self.organise.staleness, topics=topics,
        )  # fmt: skip
        self.extraction = ExtractionService(completer, deadline_s, workspace)
        # Unsure conflicts go to the vectors, then the model (docs/writing.md, "Tiers").
        embed = self.semantic.endpoint.embed if self.semantic is not None else None
        self.write.use_tiers(completer, deadline_s, embed)

    def _files_changed(self) -> None:
        """The watcher applied a batch of changes made outside the core."""
        if self.semantic is not None:
            self.semantic.changed.set()
        self.syncing.wrote()

    def _note(self, problem: str | None) -> None:
        if problem:
            self.problems.append(problem)

    @property
    def catalog(self) -> MemoryCatalog:
        return self.session.catalog

    @property
    def model(self) -> str | None:
        """The model channel in words, or None without one."""
        selector = self.options.selector
        if selector.kind == "client":
            return "the host's model"
        if selector.kind != "http":
            return None
        return f"{selector.model or 'the default model'} at {selector.url}"

    # -- lifetime ------------------------------------------------------------------------------

    def start(self) -> None:
        """Index and watch the roots, then build the network, embed, warm the writer, count
        deliveries, consolidate when due and keep the long-lived objects out of the collector's
        way — all in the background of the running loop."""
        pacing.requests_first()
        self.tasks.spawn(self._build_network(), "network")
        if self.semantic is not None:
            self.tasks.spawn(self.semantic.run(self.session.view), "embeddings")
        self.tasks.spawn(self.write.flush_periodically(), "delivery-statistics")
        self.tasks.spawn(self._warm_writer(), "writer-warm-up")
        self.tasks.spawn(self._read_delivered_ahead(), "read-ahead")
        if self.organise.auto is not None:
            self.tasks.spawn(self._consolidate_when_idle(), "auto-consolidation")
        if self.options.watch:  # a daemon, not one command: it follows the remotes too
            self.tasks.spawn(self.syncing.run(self.session.ready), "sync")
        self.tasks.spawn(heap.keep_settled(self.session.ready), "heap")
        self.session.start(watch=self.options.watch)

    async def stop(self) -> None:
        """Cancel the background, stop watching, write the last statistics."""
        self.tasks.cancel_all()
        self.session.stop()
        self.write.flush()  # the last deliveries counted, before the process ends
        if self.semantic is not None:
            await self.semantic.aclose()

    def touch(self) -> None:
        """A request arrived: the host is active (automatic consolidation waits)."""
        self.organise.touch()

    async def ready(self) -> None:
        """The first index exists and the memory network is built (the command line's
        one-shot use: answers as complete as the daemon's)."""
        await self.session.ready.wait()
        await self.network.ensure_built()

    # -- background ------------------------------------------------------------------------

    async def _build_network(self) -> None:
        await self.session.ready.wait()
        await self.session.snapshot_done.wait()
        await pacing.until_quiet(START_AFTER_QUIET_S, START_AFTER_AT_MOST_S)
        # Hundreds of thousands of long-lived sets and entries at 10,000 memories: built
        # with the collector paused, frozen once recalls are quiet (core/heap.py).
        with heap.collector_paused():
            await self.network.ensure_built()
            ms = await heap.freeze_young_when_quiet()
        log.debug("the memory network's objects frozen in %.0f ms", ms)

    async def _warm_writer(self) -> None:
        """Compile the write side's rules ahead of the first `remember` — once recalls
        have been quiet for a moment: a pattern's compilation is one C call that keeps
        the interpreter lock for tens of milliseconds, which a recall would wait out."""
        await self.session.ready.wait()
        await pacing.until_quiet(WARM_UP_AFTER_QUIET_S)
        await asyncio.to_thread(self.write.writer.warm_up)

    async def _read_delivered_ahead(self) -> None:
        """Read, once the memories are indexed, what newer wins will read of the memories
        delivered last (facts/newer.py, `read_ahead`): a session's first recalls mostly
        deliver them again, and reading a fast phase's two memories is most of its time
        when the process has not read them yet (docs/performance.md). In a worker thread,
        paced: recalls go first."""
        await self.session.ready.wait()
        await pacing.until_quiet(START_AFTER_QUIET_S, START_AFTER_AT_MOST_S)
        docs = await asyncio.to_thread(self.write.delivered_last, READ_AHEAD_DELIVERED)
        await asyncio.to_thread(read_ahead, docs)

    async def _consolidate_when_idle(self) -> None:
        """`organise.autoConsolidate`: every minute, consolidate what is due if idle."""
        await self.session.ready.wait()
        while True:
            await asyncio.sleep(CHECK_EVERY_S)
            try:
                await self.organise.auto_tick()
            except Exception as exc:  # a failed run is logged; the next tick tries again
                log.warning("automatic consolidation failed: %s", exc)

    # -- the read side -------------------------------------------------------------------------

    async def recall(
        self,
        params: RecallParams,
        request_id: str | int,
        listener: RecallListener,
        *,
        fast_without_model: bool = False,
    ) -> RecallResult:
        """One recall; `listener` hears its phases as they happen (the face sends them on).
        `fast_without_model`: a fast phase even without a selector (the host hooks)."""
        request = RecallRequest(
            request_id=request_id,
            query=params.query,
            token=params.token,
            recent_tools=params.recent_tools,
            exclude_paths=params.exclude_paths,
            limit=params.limit or REFINED_LIMIT,
            fast_without_model=fast_without_model,
        )
        self.touch()
        # No suggestion until this recall's first result is out.
        self.suggestions.recall_started(request_id)
        try:
            with pacing.foreground():  # background threads wait
                return await self.recall_service.recall(
                    request, self.session.view, _Delivered(self, listener)
                )
        finally:
            self.suggestions.recall_answered(request_id)

    async def search(self, params: SearchParams) -> SearchResult:
        """`memory/search`: shallow, deep, explore or get. Raises `SearchError`."""
        self.touch()
        view = await self.session.view()
        if params.mode in ("deep", "explore"):
            await self.network.ensure_built()
        return await self.searching.search(view, params)

    async def explain(
        self, params: ExplainParams, *, fast_without_model: bool = False
    ) -> ExplainResult:
        """Why a memory was or was not delivered, for a recall named by its token (or
        request id) or for a query. `fast_without_model`: explain a query as a host that
        gets a fast phase without a model does (the agents' hooks; `memory-recall
        explain`, beside `memory-recall recall`, which prints that phase too)."""
        self.touch()
        trace = self.reflection.trace(params.token) if params.token is not None else None
        if params.token is not None and trace is None and params.query is None:
            raise InvalidRequest(
                f"token: no recent recall has the token {params.token!r}; pass query"
            )
        if trace is None and params.query is None:
            raise InvalidRequest("give token (a recent recall) or query")
        ranker = self.ranker
        if params.ranker is not None:
            found = ranker_named(params.ranker)
            if found is None:
                raise InvalidRequest(f"ranker: unknown ranker {params.ranker!r}")
            ranker = found
        view = await self.session.view()
        with_selector = self.recall_service.selector is not None or fast_without_model
        if trace is not None:
            request = ExplainRequest(
                path=params.path,
                query=trace.query,
                recent_tools=trace.recent_tools,
                exclude_paths=trace.exclude_paths,
                with_selector=with_selector,
                delivered=Delivered(
                    trace.fast, trace.refined, trace.refined_strategy, trace.failure
                ),
            )
        else:
            assert params.query is not None
            request = ExplainRequest(
                path=params.path,
                query=params.query,
                recent_tools=params.recent_tools,
                with_selector=with_selector,
            )
        checker = self.organise.staleness.for_recall()
        return explain_memory(
            view,
            request,
            ranker,
            network=self.network.current(),
            stale_of=lambda doc: checker([doc]).get(doc.path),
            via=trace.via if trace is not None else None,
        )

    def feedback(self, params: FeedbackParams) -> FeedbackResult:
        """Which delivered memories the host's model used."""
        self.touch()
        return self.reflection.feedback(params)

    def observe(self, params: ObserveParams) -> None:
        """What the agent is doing; a match may bring `memory/suggestion` (through `notify`)."""
        self.suggestions.observe(params)

    async def status(self, pending_requests: int = 0) -> StatusResult:
        """Roots, counts, skipped files, index, watcher, counters, the write side, usage per
        category, stale memories, the network."""
        self.touch()
        session, catalog, service = self.session, self.catalog, self.recall_service
        # What the catalog holds at this moment (a change may be applied while the figures
        # below are awaited).
        counts = catalog.count_by_root()
        documents = len(catalog)
        skipped = [SkippedFileStatus(path=s.path, reason=s.reason) for s in catalog.skipped]
        usage = stale = None
        # Figures worked out in a thread are waited for a moment, unless the memories are
        # changing: they would be out of date at once, and the status is asked for now.
        wait_s = 0.0 if session.changing else FRESH_WAIT_S
        ready = session.ready.is_set()
        if ready:
            snapshot = catalog.snapshot()
            self.write.flush()  # the recalls and deliveries counted since the last batch
            topics, organiser = self.organise.organiser.topics, self.organise.organiser
            usage, found = await asyncio.gather(
                self.reflection.status_usage(
                    snapshot.version,
                    snapshot.documents,
                    lambda d: topics.place(d).path.slug,
                    wait_s,
                ),
                self.reflection.status_stale(
                    snapshot.version,
                    snapshot.documents,
                    lambda docs: [(d.path, s.reason) for d, s in organiser.stale(docs)],
                    wait_s,
                ),
            )
            if found is not None:
                stale = [StaleMemory(path=path, reason=reason) for path, reason in found]
        return StatusResult(
            protocol_version=methods.PROTOCOL_VERSION,
            ready=ready,
            roots=[
                RootStatus(
                    path=str(r.path), scope=r.scope.wire, exists=_is_dir(r.path), documents=n
                )
                for r, n in zip(catalog.roots, counts, strict=True)
            ],
            documents=documents,
            skipped=skipped,
            index_build_ms=catalog.build_ms,
            ranker=service.ranker.name,
            selector=service.selector_kind,  # type: ignore[arg-type]
            watcher=session.watcher_state,
            recall=service.counters,
            catalog=CatalogCountersStatus(**vars(catalog.counters)),
            faults=session.current_faults(),
            runtime=RuntimeStatus(
                tasks=len(asyncio.all_tasks()),
                pending_requests=pending_requests,
                exclusion_sets=len(service.active),
            ),
            write=await self.write.status(wait_s) if ready else None,
            extract=self.extraction.counters,
            semantic=self.semantic.status(len(catalog)) if self.semantic is not None else None,
            usage=usage,
            stale=stale,
            network=self.network.status(),
            suggestions=SuggestionStatus(**vars(self.suggestions.counters)),
            sync=await asyncio.to_thread(self.syncing.status) if self.write.state else None,
        )

    # -- organisation ----------------------------------------------------------------------

    async def tree(self, params: TreeParams) -> dict[str, Any]:
        """The topic tree with counts and members."""
        self.touch()
        view = await self.session.view()
        organiser = self.organise.organiser
        # Placing thousands of memories the first time takes a while: off the event loop.
        found = await asyncio.to_thread(organiser.tree, view.documents, params.scope)
        return tree_wire(found, view.documents, organiser)

    async def context(self, params: ContextParams) -> dict[str, Any]:
        """The always-loaded memories within the budget; what did not fit."""
        self.touch()
        view = await self.session.view()
        return context_wire(self.organise.organiser.context(view.documents, params.budget_chars))

    async def consolidate(self, params: ConsolidateParams) -> dict[str, Any]:
        """Plan each root in scope and (unless `dryRun`) carry the plan out, one journal
        operation per root."""
        self.touch()
        await self.session.ready.wait()
        dreamer = self.organise.dreamer
        if dreamer is None:
            raise RequestFailed("consolidation needs the write side")
        runs = await dreamer.run_all_async(params.scope, dry_run=params.dry_run)
        return consolidate_wire(runs, dreamer.writer.roots, params.dry_run)

    # -- the write side --------------------------------------------------------------------

    async def _write(self, kind: str, request: object) -> WriteResult:
        self.touch()
        await self.session.ready.wait()  # decisions are made on the warm catalog
        return result_wire(await self.write.writer.run_async(kind, request))

    # `trigger` names the face in the journal (`explicit` for a host's request, `cli`).

    async def remember(self, params: RememberParams, trigger: str = "explicit") -> WriteResult:
        """The user's "remember this": gated, conflict-checked, written."""
        return await self._write("remember", remember_request(params, trigger))

    async def update(self, params: UpdateParams, trigger: str = "explicit") -> WriteResult:
        """Edit one memory; refused when it changed since `ifMatch`."""
        return await self._write("update", update_request(params, trigger))

    async def forget(self, params: ForgetParams, trigger: str = "explicit") -> WriteResult:
        """Archive (or, `hard`, delete) one memory."""
        return await self._write("forget", forget_request(params, trigger))

    # An agent's writes (the MCP face; the hooks later): force, always and team wait for
    # the user as proposals (docs/safety.md). `origin` names the face in the proposal.

    async def remember_from_agent(self, params: RememberParams, origin: str) -> WriteResult:
        """An agent's "remember this": written at once, or proposed to the user."""
        self.touch()
        await self.session.ready.wait()
        request = remember_request(params, origin)
        return result_wire(await self.write.remember_from_agent(request, origin))

    async def forget_from_agent(
        self, params: ForgetParams, origin: str, *, scope: str, title: str
    ) -> WriteResult:
        """An agent's forget: archived at once, unless a team memory or a delete for good
        (then the user confirms)."""
        self.touch()
        await self.session.ready.wait()
        request = forget_request(params, origin)
        return result_wire(
            await self.write.forget_from_agent(
                request, origin, team=scope == "team", scope=scope, title=title
            )
        )

    async def proposals(self, params: ProposalsParams) -> ProposalsResult:
        """The writes agents proposed that wait for the user (`all`: decided ones too)."""
        found = await asyncio.to_thread(self.write.list_proposals, everything=params.all)
        return ProposalsResult(proposals=[proposal_wire(p) for p in found])

    async def confirm(self, params: ProposalParams) -> WriteResult:
        """The user's yes: the proposal runs as their own request, journaled, undoable."""
        self.touch()
        await self.session.ready.wait()
        return result_wire(await self.write.confirm(params.id))

    async def reject(self, params: ProposalParams) -> RejectResult:
        """The user's no: nothing is written."""
        proposal = await asyncio.to_thread(self.write.reject, params.id)
        return RejectResult(proposal=proposal_wire(proposal))

    async def restore(self, path: str) -> WriteResult:
        """Bring an archived memory back."""
        return await self._write("restore", path)

    async def undo(self, operation: str) -> WriteResult:
        """Put back every file one operation touched."""
        return await self._write("undo", operation)

    async def history(self, path: str) -> HistoryResult:
        """A memory's versions from the journal."""
        self.touch()
        await self.session.ready.wait()
        entries = await asyncio.to_thread(inventory.memory_history, self.write.writer, path)
        return history_wire(path, entries)

    async def list_memories(self, params: ListParams) -> ListResult:
        """A page of the memories with their categories and statistics (`nextCursor`
        names the next one)."""
        self.touch()
        try:
            after = inventory.position_of(params.cursor) if params.cursor is not None else None
        except ValueError as exc:
            raise InvalidRequest(f"cursor: {exc}") from None
        snapshot = await self.session.view()
        page = await asyncio.to_thread(
            inventory.list_memories,
            self.write.writer,
            snapshot,
            scope=params.scope,
            category=params.category,
            after=after,
            limit=params.limit or LIST_PAGE_LIMIT,
        )
        return list_wire(page)

    async def extract(self, params: ExtractParams) -> dict[str, Any]:
        """Extraction through the same gate, conflicts and writer."""
        self.touch()
        return await self.extraction.extract(params, self.write, self.session)


class _Delivered:
    """A recall's listener around the face's: counts what each phase delivered, and lets
    suggestions held back for the recall go once its first result is out."""

    def __init__(self, core: MemoryCore, face: RecallListener) -> None:
        self._core = core
        self._face = face

    def fast_result(self, note: PhaseNotification) -> None:
        self._face.fast_result(note)
        self._delivered(note)

    def refined_result(self, note: PhaseNotification) -> None:
        self._face.refined_result(note)
        self._delivered(note)

    def telemetry(self, event: RecallTelemetry) -> None:
        self._face.telemetry(event)

    def _delivered(self, note: PhaseNotification) -> None:
        self._core.suggestions.recall_answered(note.request_id)
        for doc in note.docs:
            self._core.write.count_delivery(doc.path, doc.relative_path)


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # unreachable (permissions) or not a path (a NUL)
        return False
