"""Request handlers: validate params with the protocol's models, call a service, serialize.

Each is a plain function of plain inputs, so it can be called without a
process; `server.py` only registers them.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

from memory_recall.protocol import methods
from memory_recall.protocol.limits import REFINED_LIMIT
from memory_recall.protocol.messages import (
    CatalogCountersStatus,
    ConsolidateParams,
    ContextParams,
    ExplainParams,
    ExtractParams,
    FeedbackParams,
    ForgetParams,
    HistoryParams,
    ListParams,
    ObserveParams,
    PhaseNotification,
    ProposalParams,
    ProposalsParams,
    ProposalsResult,
    RecallParams,
    RecallTelemetry,
    RejectResult,
    RememberParams,
    RestoreParams,
    RootStatus,
    RuntimeStatus,
    SearchParams,
    SkippedFileStatus,
    StaleMemory,
    StatusResult,
    TreeParams,
    UndoParams,
    UpdateParams,
)
from memory_recall.server.daemon.adapter import MemoryProtocol
from memory_recall.server.daemon.background import FRESH_WAIT_S
from memory_recall.server.daemon.extracting import ExtractionService
from memory_recall.server.daemon.networking import NetworkSide
from memory_recall.server.daemon.organising import (
    OrganiseSide,
    consolidate_wire,
    context_wire,
    tree_wire,
)
from memory_recall.server.daemon.reflecting import ReflectionSide
from memory_recall.server.daemon.searching import SearchSide
from memory_recall.server.daemon.session import CatalogSession
from memory_recall.server.daemon.suggesting import SuggestionSide
from memory_recall.server.daemon.writing import (
    WriteSide,
    history_wire,
    list_wire,
    proposal_wire,
    result_wire,
    wire_error,
)
from memory_recall.server.explain import Delivered, ExplainRequest
from memory_recall.server.explain import explain as explain_memory
from memory_recall.server.pacing import foreground
from memory_recall.server.ranking.registry import ranker_named
from memory_recall.server.recall import RecallRequest, RecallService
from memory_recall.server.search import SearchError
from memory_recall.server.store import inventory
from memory_recall.server.store.errors import WriteError
from memory_recall.server.store.writer import ForgetRequest, RememberRequest, UpdateRequest
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams

log = logging.getLogger("memory_recall")


def validate(model: type[BaseModel], params: Any) -> Any:
    """Params as `model`, or -32602 with a message naming each bad field."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams(
            f"invalid params: expected an object, got {type(params).__name__}"
        )
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "params"
            problems.append(f"{field}: {err['msg']}")
        raise JsonRpcInvalidParams("invalid params: " + "; ".join(problems)) from None


class WireNotifier:
    """Sends one recall's notifications to the client (a `RecallListener`)."""

    def __init__(
        self,
        protocol: MemoryProtocol,
        write: WriteSide | None = None,
        suggestions: SuggestionSide | None = None,
    ) -> None:
        self._protocol = protocol
        self._write = write
        self._suggestions = suggestions

    def fast_result(self, note: PhaseNotification) -> None:
        self._protocol.notify(methods.FAST_RESULT, note.wire())
        self._answered(note)
        self._count(note)

    def refined_result(self, note: PhaseNotification) -> None:
        self._protocol.notify(methods.REFINED_RESULT, note.wire())
        self._answered(note)
        self._count(note)

    def _answered(self, note: PhaseNotification) -> None:
        # The host has its first result: suggestions held back for it may go.
        if self._suggestions is not None:
            self._suggestions.recall_answered(note.request_id)

    def _count(self, note: PhaseNotification) -> None:
        if self._write is not None:
            for doc in note.docs:
                self._write.count_delivery(doc.path, doc.relative_path)

    def telemetry(self, event: RecallTelemetry) -> None:
        self._protocol.notify(methods.TELEMETRY, event.wire())


async def recall(
    params: Any,
    *,
    protocol: MemoryProtocol,
    service: RecallService,
    session: CatalogSession,
    write: WriteSide | None = None,
    extraction: ExtractionService | None = None,
    suggestions: SuggestionSide | None = None,
    **_others: Any,
) -> dict[str, Any]:
    """`memory/recall` (SPEC §4–5)."""
    recall_params = validate(RecallParams, params)
    request = RecallRequest(
        request_id=_request_id(protocol),
        query=recall_params.query,
        token=recall_params.token,
        recent_tools=recall_params.recent_tools,
        exclude_paths=recall_params.exclude_paths,
        limit=recall_params.limit or REFINED_LIMIT,
    )
    if suggestions is not None:  # no suggestion until this recall's first result is out
        suggestions.recall_started(request.request_id)
    try:
        with foreground():  # background threads wait (server.pacing)
            result = await service.recall(
                request, session.view, WireNotifier(protocol, write, suggestions)
            )
    finally:
        if suggestions is not None:
            suggestions.recall_answered(request.request_id)
    return result.wire()


def _request_id(protocol: MemoryProtocol) -> str | int:
    """The JSON-RPC id of the running request (0 is an id like any other)."""
    msg_id = protocol.current_request_id()
    return "" if msg_id is None else msg_id


async def status(
    _params: Any,
    *,
    protocol: MemoryProtocol,
    service: RecallService,
    session: CatalogSession,
    write: WriteSide | None = None,
    extraction: ExtractionService | None = None,
    suggestions: SuggestionSide | None = None,
    network: NetworkSide | None = None,
    reflection: ReflectionSide | None = None,
    organise: OrganiseSide | None = None,
) -> dict[str, Any]:
    """`memory/status`: roots, counts, skipped files, index, watcher, counters, write side,
    usage per category, stale memories, the network."""
    catalog = session.catalog
    # What the catalog holds at this moment (a change may be applied while the figures
    # below are awaited).
    counts = catalog.count_by_root()
    documents = len(catalog)
    skipped = [SkippedFileStatus(path=s.path, reason=s.reason) for s in catalog.skipped]
    usage = stale = None
    # Figures worked out in a thread are waited for a moment, unless the memories are
    # changing: they would be out of date at once, and the status is asked for now.
    wait_s = 0.0 if session.changing else FRESH_WAIT_S
    if session.ready.is_set() and organise is not None and reflection is not None:
        snapshot = catalog.snapshot()
        if write is not None:
            write.flush()  # the recalls and deliveries counted since the last batch
        usage, found = await asyncio.gather(
            reflection.status_usage(
                snapshot.version,
                snapshot.documents,
                lambda d: organise.organiser.topics.place(d).path.slug,
                wait_s,
            ),
            reflection.status_stale(
                snapshot.version,
                snapshot.documents,
                lambda docs: [(d.path, s.reason) for d, s in organise.organiser.stale(docs)],
                wait_s,
            ),
        )
        if found is not None:
            stale = [StaleMemory(path=path, reason=reason) for path, reason in found]
    return StatusResult(
        protocol_version=methods.PROTOCOL_VERSION,
        ready=session.ready.is_set(),
        roots=[
            RootStatus(path=str(r.path), scope=r.scope.wire, exists=_is_dir(r.path), documents=n)
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
            pending_requests=protocol.pending_request_count(),
            exclusion_sets=len(service.active),
        ),
        write=await write.status(wait_s) if write is not None and session.ready.is_set() else None,
        extract=extraction.counters if extraction is not None else None,
        semantic=service.semantic.status(len(catalog)) if service.semantic is not None else None,
        usage=usage,
        stale=stale,
        network=network.status() if network is not None else None,
    ).wire()


# -- reflection and explanation (SPEC §11–12) ---------------------------------------------


def feedback(params: Any, *, reflection: ReflectionSide) -> dict[str, Any]:
    """`memory/feedback`: which delivered memories the host's model used."""
    return reflection.feedback(validate(FeedbackParams, params)).wire()


async def explain(
    params: Any,
    *,
    service: RecallService,
    session: CatalogSession,
    network: NetworkSide,
    reflection: ReflectionSide,
    organise: OrganiseSide,
) -> dict[str, Any]:
    """`memory/explain`: why a memory was or was not delivered, for a recall named by its
    token (or request id) or for a query."""
    p = validate(ExplainParams, params)
    trace = reflection.trace(p.token) if p.token is not None else None
    if p.token is not None and trace is None and p.query is None:
        raise JsonRpcInvalidParams(
            f"invalid params: token: no recent recall has the token {p.token!r}; pass query"
        )
    if trace is None and p.query is None:
        raise JsonRpcInvalidParams("invalid params: give token (a recent recall) or query")
    ranker = service.ranker
    if p.ranker is not None:
        found = ranker_named(p.ranker)
        if found is None:
            raise JsonRpcInvalidParams(f"invalid params: ranker: unknown ranker {p.ranker!r}")
        ranker = found
    view = await session.view()
    if trace is not None:
        request = ExplainRequest(
            path=p.path,
            query=trace.query,
            recent_tools=trace.recent_tools,
            exclude_paths=trace.exclude_paths,
            with_selector=service.selector is not None,
            delivered=Delivered(trace.fast, trace.refined, trace.refined_strategy, trace.failure),
        )
    else:
        assert p.query is not None
        request = ExplainRequest(
            path=p.path,
            query=p.query,
            recent_tools=p.recent_tools,
            with_selector=service.selector is not None,
        )
    checker = organise.staleness.for_recall()

    def stale_of(doc: Any) -> str | None:
        return checker([doc]).get(doc.path)

    result = explain_memory(
        view,
        request,
        ranker,
        network=network.current(),
        stale_of=stale_of,
        via=trace.via if trace is not None else None,
    )
    return result.wire()


# -- organisation (SPEC §10) ------------------------------------------------------------


async def tree(params: Any, *, session: CatalogSession, organise: OrganiseSide) -> dict[str, Any]:
    """`memory/tree`: the topic tree with counts and members."""
    tree_params = validate(TreeParams, params)
    view = await session.view()
    # Placing thousands of memories the first time takes a while: off the event loop.
    found = await asyncio.to_thread(organise.organiser.tree, view.documents, tree_params.scope)
    return tree_wire(found, view.documents, organise.organiser)


async def context(
    params: Any, *, session: CatalogSession, organise: OrganiseSide
) -> dict[str, Any]:
    """`memory/context`: the always-loaded memories within the budget; what did not fit."""
    context_params = validate(ContextParams, params)
    view = await session.view()
    return context_wire(organise.organiser.context(view.documents, context_params.budget_chars))


async def consolidate(
    params: Any, *, session: CatalogSession, organise: OrganiseSide
) -> dict[str, Any]:
    """`memory/consolidate`: plan each root in scope and (unless `dryRun`) carry the plan out
    as one journal operation per root."""
    consolidate_params = validate(ConsolidateParams, params)
    await session.ready.wait()
    dreamer = organise.dreamer
    if dreamer is None:
        raise JsonRpcException("consolidation needs the write side", code=methods.REQUEST_FAILED)
    try:
        runs = await dreamer.run_all_async(
            consolidate_params.scope, dry_run=consolidate_params.dry_run
        )
    except WriteError as exc:
        raise wire_error(exc) from None
    return consolidate_wire(runs, dreamer.writer.roots, consolidate_params.dry_run)


def _is_dir(path: Path) -> bool:
    try:
        return path.is_dir()
    except (OSError, ValueError):  # unreachable (permissions) or not a path (a NUL)
        return False


# -- search and suggestions (SPEC §11–12) ------------------------------------------------


async def search(params: Any, *, session: CatalogSession, searching: SearchSide) -> Any:
    """`memory/search`: shallow, deep, explore or get, for a host's memory tool."""
    search_params = validate(SearchParams, params)
    view = await session.view()
    try:
        result = await searching.search(view, search_params)
    except SearchError as exc:
        if exc.kind == "invalid":
            raise JsonRpcInvalidParams(f"invalid params: {exc}") from None
        raise JsonRpcException(str(exc), code=methods.REQUEST_FAILED) from None
    return result.wire()


def observe(params: Any, *, suggestions: SuggestionSide) -> None:
    """`memory/observe` (a notification): matched in the background; a match may bring
    `memory/suggestion`. Bad params are logged: a notification has no answer."""
    try:
        observed = validate(ObserveParams, params)
    except JsonRpcInvalidParams as exc:
        log.warning("memory/observe ignored: %s", exc)
        return
    suggestions.observe(observed)


# -- the write side (SPEC §8) ------------------------------------------------------------


async def _write(write: WriteSide, session: CatalogSession, kind: str, request: object) -> Any:
    await session.ready.wait()  # decisions are made on the warm catalog
    try:
        result = await write.writer.run_async(kind, request)
    except WriteError as exc:
        raise wire_error(exc) from None
    return result_wire(result).wire()


async def extract(
    params: Any, *, write: WriteSide, session: CatalogSession, extraction: ExtractionService
) -> Any:
    """`memory/extract` (SPEC §9): extraction through the same gate, conflicts and writer."""
    return await extraction.extract(validate(ExtractParams, params), write, session)


async def remember(params: Any, *, write: WriteSide, session: CatalogSession) -> Any:
    """`memory/remember`: the user's "remember this", gated, conflict-checked, written."""
    p = validate(RememberParams, params)
    request = RememberRequest(
        text=p.text,
        scope=p.scope,
        type=p.type,
        title=p.title,
        description=p.description,
        pinned=p.pinned,
        always=p.always,
        force=p.force,
        category=p.category,
    )
    return await _write(write, session, "remember", request)


async def update(params: Any, *, write: WriteSide, session: CatalogSession) -> Any:
    """`memory/update`: edit one memory, refused when it changed since `ifMatch`."""
    p = validate(UpdateParams, params)
    request = UpdateRequest(
        path=p.path,
        if_match=p.if_match,
        title=p.title,
        description=p.description,
        type=p.type,
        body=p.body,
        pinned=p.pinned,
        always=p.always,
        force=p.force,
    )
    return await _write(write, session, "update", request)


async def forget(params: Any, *, write: WriteSide, session: CatalogSession) -> Any:
    """`memory/forget`: archive (or, `hard`, delete) one memory."""
    p = validate(ForgetParams, params)
    return await _write(
        write, session, "forget", ForgetRequest(path=p.path, reason=p.reason, hard=p.hard)
    )


async def restore(params: Any, *, write: WriteSide, session: CatalogSession) -> Any:
    """`memory/restore`: bring an archived memory back."""
    return await _write(write, session, "restore", validate(RestoreParams, params).path)


async def undo(params: Any, *, write: WriteSide, session: CatalogSession) -> Any:
    """`memory/undo`: put back every file one operation touched."""
    return await _write(write, session, "undo", validate(UndoParams, params).operation)


async def history(params: Any, *, write: WriteSide, session: CatalogSession) -> Any:
    """`memory/history`: a memory's versions from the journal."""
    path = validate(HistoryParams, params).path
    await session.ready.wait()
    try:
        entries = await asyncio.to_thread(inventory.memory_history, write.writer, path)
    except WriteError as exc:
        raise wire_error(exc) from None
    return history_wire(path, entries).wire()


async def list_memories(params: Any, *, write: WriteSide, session: CatalogSession) -> Any:
    """`memory/list`: the memories with their categories and statistics."""
    p = validate(ListParams, params)
    snapshot = await session.view()
    memories = await asyncio.to_thread(
        inventory.list_memories, write.writer, snapshot, scope=p.scope, category=p.category
    )
    return list_wire(memories).wire()


# -- proposals: an agent's force, always and team writes (docs/safety.md) --------------------


async def proposals(params: Any, *, write: WriteSide, session: CatalogSession) -> Any:
    """`memory/proposals`: the writes agents proposed that wait for the user."""
    p = validate(ProposalsParams, params)
    try:
        found = await asyncio.to_thread(write.list_proposals, everything=p.all)
    except WriteError as exc:
        raise wire_error(exc) from None
    return ProposalsResult(proposals=[proposal_wire(x) for x in found]).wire()


async def confirm(params: Any, *, write: WriteSide, session: CatalogSession) -> Any:
    """`memory/confirm`: the user's yes; the proposal is written as their own request."""
    proposal_id = validate(ProposalParams, params).id
    await session.ready.wait()
    try:
        result = await write.confirm(proposal_id)
    except WriteError as exc:
        raise wire_error(exc) from None
    return result_wire(result).wire()


async def reject(params: Any, *, write: WriteSide, session: CatalogSession) -> Any:
    """`memory/reject`: the user's no; nothing is written."""
    proposal_id = validate(ProposalParams, params).id
    try:
        proposal = await asyncio.to_thread(write.reject, proposal_id)
    except WriteError as exc:
        raise wire_error(exc) from None
    return RejectResult(proposal=proposal_wire(proposal)).wire()
