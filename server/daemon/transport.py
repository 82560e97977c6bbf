"""The wire: `Content-Length` framing over stdio and the JSON-RPC envelope.

pygls' own loop answers nothing to a body that is not JSON, or to an array,
so framing and envelope checks are ours: every malformed message gets the
right error and the daemon keeps serving. `classify` is pure (bytes in, a
verdict out) so the fuzz tests can call it directly; `dispatch` acts on it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
from dataclasses import dataclass
from typing import Any, BinaryIO

from cattrs import transform_error
from cattrs.errors import BaseValidationError
from lsprotocol import types
from memory_recall.protocol import methods
from memory_recall.server.daemon.adapter import MemoryProtocol
from pygls.exceptions import JsonRpcException

log = logging.getLogger("memory_recall")

# The largest message body read. A recall is at most a 32,768-character query
# (≤ 128 KiB in UTF-8) plus tool names and excluded paths; 4 MiB leaves room
# for thousands of excluded paths without letting one message exhaust memory.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
MAX_HEADER_LINE_BYTES = 8 * 1024

# Requests whose result only a requester can receive: sent as notifications,
# running them would only spend a selector call.
REQUEST_ONLY_METHODS = frozenset({methods.RECALL, methods.STATUS})


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


Verdict = Reply | Ignore | Deliver


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
    msg_id = data.get("id")
    id_ok = (
        "id" not in data
        or (isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool))
        or msg_id is None
    )
    if not id_ok:
        msg_id = None  # never echo an id that is not one
    has_id = "id" in data
    method = data.get("method")
    problem = None
    if data.get("jsonrpc") != "2.0":
        problem = "'jsonrpc' must be \"2.0\""
    elif not id_ok:
        problem = "'id' must be a string, a number or null"
    elif "method" in data:
        if not isinstance(method, str):
            problem = "'method' must be a string"
        elif "params" in data and not isinstance(data["params"], (dict, list)):
            if has_id:
                return Reply(
                    msg_id,
                    methods.INVALID_PARAMS,
                    "invalid params: 'params' must be an object or an array",
                )
            return Ignore()
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
        log.exception("failed to handle a message")
        if getattr(message, "method", None) and msg_id is not None:
            protocol.send_error(msg_id, methods.INTERNAL_ERROR, "internal error")


# -- framing ---------------------------------------------------------------------


class StdoutWriter:
    """pygls' writer interface over a binary stream, flushed per message."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def write(self, data: bytes) -> None:
        self._stream.write(data)
        self._stream.flush()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._stream.flush()


class _ThreadReader:
    """Fallback when stdin is not a pipe asyncio can watch (a file, a tty)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    async def readline(self) -> bytes:
        return await asyncio.to_thread(self._stream.readline, MAX_HEADER_LINE_BYTES)

    async def readexactly(self, n: int) -> bytes:
        data = await asyncio.to_thread(self._stream.read, n)
        if len(data) < n:
            raise asyncio.IncompleteReadError(data, n)
        return data


async def open_reader(stdin: BinaryIO) -> Any:
    """An asyncio reader of stdin, or a thread-backed one where asyncio cannot watch it."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_HEADER_LINE_BYTES, loop=loop)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (ValueError, OSError):
        return _ThreadReader(stdin)
    return reader


_CONTENT_LENGTH = re.compile(rb"content-length:\s*(\d+)", re.IGNORECASE)


async def read_frames(reader: Any, protocol: MemoryProtocol) -> None:
    """Read `Content-Length` frames until EOF, answering every malformed one."""
    while True:
        length: int | None = None
        while True:  # headers, up to the blank line
            try:
                line = await reader.readline()
            except (ValueError, asyncio.LimitOverrunError):
                log.warning("dropped a header line longer than %d bytes", MAX_HEADER_LINE_BYTES)
                continue
            if not line:
                return  # EOF: the client is gone
            if line in (b"\r\n", b"\n"):
                if length is not None:
                    break
                continue  # a blank line with no header before it: resynchronize
            match = _CONTENT_LENGTH.search(line)
            if match:
                length = int(match.group(1))
        if length > MAX_MESSAGE_BYTES:
            await _discard(reader, length)
            protocol.send_error(
                None,
                methods.INVALID_REQUEST,
                f"message of {length} bytes is over the {MAX_MESSAGE_BYTES}-byte limit",
            )
            continue
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            return
        try:
            dispatch(body, protocol)
        except Exception:  # a reader that dies leaves the daemon deaf: log and go on
            log.exception("failed to dispatch a message")


async def _discard(reader: Any, length: int) -> None:
    remaining = length
    while remaining:
        chunk = min(remaining, 1 << 16)
        try:
            await reader.readexactly(chunk)
        except asyncio.IncompleteReadError:
            return
        remaining -= chunk
