"""Request handlers of the LSP face: validate params, call the core, serialize.

Each is a plain function of plain inputs (the params and the `MemoryCore`), so it
can be called without a process; `server.py` only registers them. A refusal of
the core becomes the JSON-RPC error its kind calls for (`wire_error`).
"""

from __future__ import annotations

import logging
from typing import Any

from memory_recall.protocol import methods
from memory_recall.protocol.messages import (
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
    RecallParams,
    RecallTelemetry,
    RememberParams,
    RestoreParams,
    SearchParams,
    TreeParams,
    UndoParams,
    UpdateParams,
)
from memory_recall.server.core.core import MemoryCore
from memory_recall.server.core.errors import refusal
from memory_recall.server.lsp.adapter import MemoryProtocol
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


def wire_error(exc: Exception) -> Exception:
    """A refusal of the core as its JSON-RPC error: -32602 for a wrong request, -32803 for
    one that could not be served. Anything else is a bug and stays what it is (-32603)."""
    found = refusal(exc)
    if found is None:
        return exc
    kind, message = found
    if kind == "invalid":
        return JsonRpcInvalidParams(f"invalid params: {message}")
    return JsonRpcException(message, code=methods.REQUEST_FAILED)


async def _served(call: Any) -> Any:
    """The awaited result of a core call, its refusals as JSON-RPC errors."""
    try:
        return await call
    except Exception as exc:
        error = wire_error(exc)
        if error is exc:
            raise
        raise error from None


class WireNotifier:
    """Sends one recall's notifications to the client (a `RecallListener`)."""

    def __init__(self, protocol: MemoryProtocol) -> None:
        self._protocol = protocol

    def fast_result(self, note: PhaseNotification) -> None:
        self._protocol.notify(methods.FAST_RESULT, note.wire())

    def refined_result(self, note: PhaseNotification) -> None:
        self._protocol.notify(methods.REFINED_RESULT, note.wire())

    def telemetry(self, event: RecallTelemetry) -> None:
        self._protocol.notify(methods.TELEMETRY, event.wire())


# -- the read side ---------------------------------------------------------------------------


async def recall(params: Any, core: MemoryCore, protocol: MemoryProtocol) -> dict[str, Any]:
    """`memory/recall`: the two-phase delivery (docs/recall.md)."""
    recall_params = validate(RecallParams, params)
    msg_id = protocol.current_request_id()  # 0 is an id like any other
    request_id = "" if msg_id is None else msg_id
    result = await core.recall(recall_params, request_id, WireNotifier(protocol))
    return result.wire()


async def status(_params: Any, core: MemoryCore, protocol: MemoryProtocol) -> dict[str, Any]:
    """`memory/status`: roots, counts, skipped files, index, watcher, counters, write side,
    usage per category, stale memories, the network."""
    result = await core.status(pending_requests=protocol.pending_request_count())
    return result.wire()


async def search(params: Any, core: MemoryCore) -> Any:
    """`memory/search`: shallow, deep, explore or get, for a host's memory tool."""
    result = await _served(core.search(validate(SearchParams, params)))
    return result.wire()


async def explain(params: Any, core: MemoryCore) -> Any:
    """`memory/explain`: why a memory was or was not delivered."""
    return (await _served(core.explain(validate(ExplainParams, params)))).wire()


def feedback(params: Any, core: MemoryCore) -> dict[str, Any]:
    """`memory/feedback`: which delivered memories the host's model used."""
    return core.feedback(validate(FeedbackParams, params)).wire()


def observe(params: Any, core: MemoryCore) -> None:
    """`memory/observe` (a notification): matched in the background; a match may bring
    `memory/suggestion`. Bad params are logged: a notification has no answer."""
    try:
        observed = validate(ObserveParams, params)
    except JsonRpcInvalidParams as exc:
        log.warning("memory/observe ignored: %s", exc)
        return
    core.observe(observed)


# -- organisation ----------------------------------------------------------------------------


async def tree(params: Any, core: MemoryCore) -> Any:
    """`memory/tree`: the topic tree with counts and members."""
    return await core.tree(validate(TreeParams, params))


async def context(params: Any, core: MemoryCore) -> Any:
    """`memory/context`: the always-loaded memories within the budget."""
    return await core.context(validate(ContextParams, params))


async def consolidate(params: Any, core: MemoryCore) -> Any:
    """`memory/consolidate`: merge, settle and prune each root in scope, one operation each."""
    return await _served(core.consolidate(validate(ConsolidateParams, params)))


# -- the write side --------------------------------------------------------------------------


async def remember(params: Any, core: MemoryCore) -> Any:
    """`memory/remember`: the user's "remember this", gated, conflict-checked, written."""
    return (await _served(core.remember(validate(RememberParams, params)))).wire()


async def update(params: Any, core: MemoryCore) -> Any:
    """`memory/update`: edit one memory, refused when it changed since `ifMatch`."""
    return (await _served(core.update(validate(UpdateParams, params)))).wire()


async def forget(params: Any, core: MemoryCore) -> Any:
    """`memory/forget`: archive (or, `hard`, delete) one memory."""
    return (await _served(core.forget(validate(ForgetParams, params)))).wire()


async def restore(params: Any, core: MemoryCore) -> Any:
    """`memory/restore`: bring an archived memory back."""
    return (await _served(core.restore(validate(RestoreParams, params).path))).wire()


async def undo(params: Any, core: MemoryCore) -> Any:
    """`memory/undo`: put back every file one operation touched."""
    return (await _served(core.undo(validate(UndoParams, params).operation))).wire()


async def history(params: Any, core: MemoryCore) -> Any:
    """`memory/history`: a memory's versions from the journal."""
    return (await _served(core.history(validate(HistoryParams, params).path))).wire()


async def list_memories(params: Any, core: MemoryCore) -> Any:
    """`memory/list`: the memories with their categories and statistics."""
    return (await _served(core.list_memories(validate(ListParams, params)))).wire()


async def extract(params: Any, core: MemoryCore) -> Any:
    """`memory/extract`: extraction through the same gate, conflicts and writer."""
    return await _served(core.extract(validate(ExtractParams, params)))


# -- proposals: an agent's force, always and team writes (docs/safety.md) --------------------


async def proposals(params: Any, core: MemoryCore) -> Any:
    """`memory/proposals`: the writes agents proposed that wait for the user."""
    return (await _served(core.proposals(validate(ProposalsParams, params)))).wire()


async def confirm(params: Any, core: MemoryCore) -> Any:
    """`memory/confirm`: the user's yes; the proposal is written as their own request."""
    return (await _served(core.confirm(validate(ProposalParams, params)))).wire()


async def reject(params: Any, core: MemoryCore) -> Any:
    """`memory/reject`: the user's no; nothing is written."""
    return (await _served(core.reject(validate(ProposalParams, params)))).wire()
