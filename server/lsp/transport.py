"""The wire: `Content-Length` framing over stdio and the JSON-RPC envelope.

pygls' own loop answers nothing to a body that is not JSON, or to an array,
so framing and envelope checks are ours: every malformed message gets the
right error and the daemon keeps serving. `classify` is pure (bytes in, a
verdict out) so the fuzz tests can call it directly; `dispatch` acts on it.
The framing itself (bytes → bodies, resynchronising after a bad header) is
`framing.py`; `read_frames` answers what it returns.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from dataclasses import dataclass
from typing import Any

from cattrs import transform_error
from cattrs.errors import BaseValidationError
from lsprotocol import types
from memory_recall.protocol import methods
from memory_recall.protocol.framing import FrameReader, FramingError, is_text
from memory_recall.server.lsp.adapter import MemoryProtocol
from pygls.exceptions import JsonRpcException

log = logging.getLogger("memory_recall")

# Requests sent as notifications are not run: their result reaches no one, and a
# write (forget, consolidate) must not happen without an answer saying what it did.
REQUEST_ONLY_METHODS = methods.REQUESTS


# -- the envelope: a pure classifier -------------------------------------------


@dataclass(frozen=True)
class Reply:
    """Answer at once with this error; nothing reaches a handler."""

    id: str | int | None
    code: int
    message: str


@dataclass(frozen=True)
class Ignore:
    """Nothing to answer (no id to answer to); say why in the log when it matters."""

    warning: str | None = None


@dataclass(frozen=True)
class Deliver:
    """A well-formed message for pygls. `deferred` lets a just-started recall reach
    its first await before a cancel for it is handled."""

    data: dict[str, Any]
    id: str | int | None
    deferred: bool = False


@dataclass(frozen=True)
class Exit:
    """`exit`: the process ends whatever came with it (LSP), after `reply` if any."""

    reply: Reply | None = None


@dataclass(frozen=True)
class BadResponse:
    """A reply-shaped message that is not a valid response.

    When `id` is one of our own requests in flight, that request fails at
    once with `reason` (the host's reply is malformed: waiting longer cannot
    fix it); otherwise the message is treated as `otherwise` says.
    """

    id: str | int
    reason: str
    otherwise: Reply | Ignore


Verdict = Reply | Ignore | Deliver | Exit | BadResponse

# A JSON escape that can decode to half of a surrogate pair: only bodies that
# contain one can hold a lone surrogate, which is not Unicode text.
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def classify(body: bytes) -> Verdict:
    """What to do with one message body, by JSON-RPC 2.0 and LSP rules alone."""
    try:
        text = body.decode("utf-8")  # strictly: json.loads(bytes) would also take UTF-16/32
    except UnicodeDecodeError as exc:
        return Reply(
            None,
            methods.PARSE_ERROR,
            f"parse error: body is not UTF-8 (byte {exc.start}: {exc.reason})",
        )
    try:
        data = json.loads(text)
    except ValueError as exc:
        return Reply(None, methods.PARSE_ERROR, f"parse error: body is not JSON ({exc})")
    except RecursionError:
        return Reply(None, methods.PARSE_ERROR, "parse error: JSON nested too deeply")
    if isinstance(data, list):
        return Reply(
            None,
            methods.INVALID_REQUEST,
            "invalid request: batches are not supported (LSP has no batches)",
        )
    if not isinstance(data, dict):
        return Reply(
            None,
            methods.INVALID_REQUEST,
            f"invalid request: expected an object, got {type(data).__name__}",
        )
    if data.get("params", ...) is None:
        # JSON-RPC allows only omission, but several client libraries send
        # `"params": null` for methods without parameters: the same thing.
        data = {key: value for key, value in data.items() if key != "params"}
    msg_id = data.get("id")
    id_ok = (
        "id" not in data
        or (isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool))
        or msg_id is None
    )
    unicode_problem = _SURROGATE_ESCAPE.search(text) and _lone_surrogate(data)
    if unicode_problem == "id":
        id_ok = False
    if not id_ok:
        msg_id = None  # never echo an id that is not one
    has_id = "id" in data
    method = data.get("method")
    if method == types.EXIT:
        reply = None
        if has_id:
            reply = Reply(
                msg_id,
                methods.INVALID_REQUEST,
                "invalid request: 'exit' is a notification and must not carry an 'id'; exiting",
            )
        return Exit(reply)
    if "method" not in data and has_id and id_ok and msg_id is not None:
        bad = _bad_response(data, unicode_problem)
        if bad is not None:
            return bad
    problem = None
    if data.get("jsonrpc") != "2.0":
        problem = "'jsonrpc' must be \"2.0\""
    elif not id_ok:
        problem = (
            "'id' is not valid Unicode (a lone surrogate)"
            if unicode_problem == "id"
            else "'id' must be a string, a number or null"
        )
    elif "method" in data:
        if not isinstance(method, str):
            problem = "'method' must be a string"
        elif unicode_problem == "method":
            problem = "'method' is not valid Unicode (a lone surrogate)"
        elif "params" in data and not isinstance(data["params"], (dict, list)):
            if has_id:
                return Reply(
                    msg_id,
                    methods.INVALID_PARAMS,
                    "invalid params: 'params' must be an object or an array",
                )
            return Ignore()
        elif unicode_problem:
            message = f"invalid params: {unicode_problem} is not valid Unicode (a lone surrogate)"
            if has_id:
                return Reply(msg_id, methods.INVALID_PARAMS, message)
            return Ignore(f"ignored {method}: {message}")
    elif not has_id or ("result" not in data and "error" not in data):
        problem = "neither a request, a notification nor a response"
    if problem:
        return Reply(msg_id, methods.INVALID_REQUEST, f"invalid request: {problem}")
    if "method" not in data and "error" in data and not isinstance(data["error"], dict):
        return Ignore()  # a malformed error reply to one of our requests: nothing to answer
    if has_id and _is_lsp_notification(method):
        # JSON-RPC owes every id a response; a notification has no result to give.
        return Reply(
            msg_id,
            methods.INVALID_REQUEST,
            f"invalid request: {method!r} is a notification and must not carry an 'id'",
        )
    if not has_id and method in REQUEST_ONLY_METHODS:
        return Ignore(f"ignored {method} sent as a notification: it is a request, add an id")
    if method == types.CANCEL_REQUEST:
        if not _is_cancel_target(data.get("params")):
            problem = "invalid params: id: expected the string or integer id of a request"
            if has_id:
                return Reply(msg_id, methods.INVALID_PARAMS, problem)
            return Ignore(f"ignored a $/cancelRequest: {problem}")
        return Deliver(data, msg_id, deferred=True)
    return Deliver(data, msg_id)


def _bad_response(data: dict[str, Any], unicode_problem: str | None) -> BadResponse | None:
    """Why a reply-shaped message (an id, no method) is not a valid response, if it is not."""
    msg_id = data["id"]
    error = data.get("error")
    reason = None
    if data.get("jsonrpc") != "2.0":
        reason = "'jsonrpc' is not \"2.0\""
    elif "result" not in data and "error" not in data:
        reason = "neither 'result' nor 'error'"
    elif "error" in data and not isinstance(error, dict):
        reason = "'error' is not an object"
    elif isinstance(error, dict) and (
        not isinstance(error.get("code"), int) or isinstance(error.get("code"), bool)
    ):
        reason = "the error has no integer 'code'"
    elif isinstance(error, dict) and not isinstance(error.get("message"), str):
        reason = "the error has no 'message' text"
    elif unicode_problem:
        reason = f"{unicode_problem} is not valid Unicode (a lone surrogate)"
    if reason is None:
        return None
    otherwise: Reply | Ignore = Ignore()
    if data.get("jsonrpc") != "2.0":
        otherwise = Reply(
            msg_id, methods.INVALID_REQUEST, "invalid request: 'jsonrpc' must be \"2.0\""
        )
    elif "result" not in data and "error" not in data:
        otherwise = Reply(
            msg_id,
            methods.INVALID_REQUEST,
            "invalid request: neither a request, a notification nor a response",
        )
    return BadResponse(msg_id, f"malformed reply: {reason}", otherwise)


def _lone_surrogate(data: dict[str, Any]) -> str | None:
    """Where the message holds a string that is not Unicode text: `id`, `method`, or a path."""
    for key in ("id", "method"):
        if isinstance(data.get(key), str) and not is_text(data[key]):
            return key
    for key in ("params", "result", "error"):
        if key in data:
            where = _find_surrogate(data[key], key)
            if where:
                return where
    return None


def _find_surrogate(value: Any, where: str) -> str | None:
    stack = [(value, where)]
    while stack:
        item, path = stack.pop()
        if isinstance(item, str):
            if not is_text(item):
                return path
        elif isinstance(item, dict):
            for key, inner in item.items():
                if not is_text(key):
                    return f"{path} (a key)"
                stack.append((inner, f"{path}.{key}"))
        elif isinstance(item, list):
            stack.extend((inner, f"{path}[{i}]") for i, inner in enumerate(item))
    return None


def _is_lsp_notification(method: Any) -> bool:
    entry = types.METHOD_TO_TYPES.get(method) if isinstance(method, str) else None
    return entry is not None and entry[1] is None  # no result type: a notification


def _is_cancel_target(params: Any) -> bool:
    target = params.get("id") if isinstance(params, dict) else None
    return isinstance(target, (str, int)) and not isinstance(target, bool)


# -- acting on the verdict ---------------------------------------------------------


def dispatch(body: bytes, protocol: MemoryProtocol) -> None:
    """Classify one body and answer it, or hand it to pygls."""
    verdict = classify(body)
    if isinstance(verdict, BadResponse):
        if protocol.fail_request(verdict.id, verdict.reason):
            log.warning(
                "the host's reply to request %r was malformed: %s", verdict.id, verdict.reason
            )
            return
        verdict = verdict.otherwise
    if isinstance(verdict, Exit):
        if verdict.reply:
            protocol.send_error(verdict.reply.id, verdict.reply.code, verdict.reply.message)
        protocol.exit_now()
        return
    if isinstance(verdict, Reply):
        protocol.send_error(verdict.id, verdict.code, verdict.message)
        return
    if isinstance(verdict, Ignore):
        if verdict.warning:
            log.warning("%s", verdict.warning)
        return
    data = verdict.data
    try:
        message = protocol.structure_message(data)
    except JsonRpcException as exc:
        if "method" in data and "id" in data:
            cause = exc.__cause__
            if isinstance(cause, BaseValidationError):  # name the fields, e.g. `@ $.params.value`
                detail = "; ".join(transform_error(cause))
            else:
                detail = str(cause or exc).splitlines()[0]
            protocol.send_error(verdict.id, methods.INVALID_PARAMS, f"invalid params: {detail}")
        return
    if verdict.deferred:
        asyncio.get_running_loop().call_soon(_handle, protocol, message, verdict.id)
        return
    _handle(protocol, message, verdict.id)


def _handle(protocol: MemoryProtocol, message: Any, msg_id: Any) -> None:
    try:
        protocol.handle_message(message)
    except Exception:
        log.error(
            "failed to handle a message (a bug: please report it)",
            exc_info=log.isEnabledFor(logging.DEBUG),
        )
        if getattr(message, "method", None) and msg_id is not None:
            protocol.send_error(msg_id, methods.INTERNAL_ERROR, "internal error")


# -- reading frames ----------------------------------------------------------------


async def read_frames(reader: Any, protocol: MemoryProtocol) -> None:
    """Read `Content-Length` frames until EOF, answering every malformed one."""
    frames = FrameReader(reader)
    while True:
        frame = await frames.next()
        if frame is None:
            return  # EOF: the client is gone
        if isinstance(frame, FramingError):
            if frame.id is not None and protocol.fail_request(frame.id, frame.message):
                continue  # it was the host's reply to our request: that request fails
            protocol.send_error(frame.id, methods.INVALID_REQUEST, frame.message)
            continue
        try:
            dispatch(frame, protocol)
        except Exception:  # a reader that dies leaves the daemon deaf: log and go on
            log.error(
                "failed to dispatch a message (a bug: please report it)",
                exc_info=log.isEnabledFor(logging.DEBUG),
            )
