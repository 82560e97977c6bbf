"""Selector kind `client`: the host runs its own model via `memory/select`."""

from __future__ import annotations

import asyncio

from memory_recall.protocol.messages import SelectCandidate, SelectParams, SelectResult
from memory_recall.protocol.methods import SELECT
from memory_recall.server.models import CancelRequest, SelectionRequest, SelectorError, SendRequest


class ClientSelector:
    kind = "client"

    def __init__(self, send_request: SendRequest, cancel_request: CancelRequest) -> None:
        self._send = send_request
        self._cancel = cancel_request

    async def select(self, request: SelectionRequest) -> list[str]:
        params = SelectParams(
            query=request.query,
            candidates=[
                SelectCandidate(
                    path=d.path,
                    type=d.type,
                    mtime_ms=d.mtime_ms,
                    description=d.description,
                    similarity=request.similarity.get(d.path),
                    via=request.via.get(d.path),
                )
                for d in request.candidates
            ],
            limit=request.limit,
            recent_tools=request.recent_tools,
        )
        wire = params.wire()
        for candidate in wire["candidates"]:  # type: ignore[attr-defined]
            if candidate.get("similarity") is None:  # the v1 shape unless the channel is on
                del candidate["similarity"]
            if candidate.get("via") is None:  # v1 hosts see v1 candidates
                del candidate["via"]
        msg_id, future = self._send(SELECT, wire)
        try:
            reply = await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            # The recall was cancelled or timed out: the host may stop its model.
            self._cancel(msg_id)
            raise
        except ValueError as exc:  # a reply that is not a JSON-RPC response
            raise SelectorError(str(exc)) from exc
        except Exception as exc:  # an error response from the host
            raise SelectorError(f"client declined: {_error_message(exc)}") from exc
        try:
            return SelectResult.model_validate(reply).selected
        except Exception as exc:
            raise SelectorError(
                f"malformed answer: expected {{selected: [path…]}}, got {_short(reply)}"
            ) from exc


def _error_message(exc: BaseException) -> str:
    return str(getattr(exc, "message", None) or exc) or type(exc).__name__


def _short(value: object, limit: int = 120) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
