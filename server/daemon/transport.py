"""The wire: `Content-Length` framing over stdio and the JSON-RPC envelope.

pygls' own loop answers nothing to a body that is not JSON, or to an array,
so framing and envelope checks are ours: every malformed message gets the
right error and the daemon keeps serving. `classify` is pure (bytes in, a
verdict out) so the fuzz tests can call it directly; `dispatch` acts on it.
`FrameReader` cuts the byte stream into bodies; a header it cannot use is
answered at once and reading resumes at the next `Content-Length` header.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import stat
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
        if isinstance(data.get(key), str) and not _is_text(data[key]):
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
            if not _is_text(item):
                return path
        elif isinstance(item, dict):
            for key, inner in item.items():
                if not _is_text(key):
                    return f"{path} (a key)"
                stack.append((inner, f"{path}.{key}"))
        elif isinstance(item, list):
            stack.extend((inner, f"{path}[{i}]") for i, inner in enumerate(item))
    return None


def _is_text(value: str) -> bool:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


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
    """Reads stdin in a thread where asyncio cannot watch it (a file, /dev/null)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    async def read(self, n: int) -> bytes:
        read1 = getattr(self._stream, "read1", self._stream.read)
        return await asyncio.to_thread(read1, n)


async def open_reader(stdin: BinaryIO) -> Any:
    """An asyncio reader of stdin where asyncio can watch it (a pipe, a socket, a
    terminal), else a thread-backed one: `/dev/null` or a file cannot be polled."""
    loop = asyncio.get_running_loop()
    try:
        mode = os.fstat(stdin.fileno()).st_mode
        pollable = stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(stdin.fileno())
    except (OSError, ValueError, AttributeError):
        pollable = False
    if not pollable:
        return _ThreadReader(stdin)
    reader = asyncio.StreamReader(limit=MAX_HEADER_LINE_BYTES, loop=loop)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (ValueError, OSError):
        return _ThreadReader(stdin)
    return reader


@dataclass(frozen=True)
class FramingError:
    """A header block that cannot be used: answered at once (to `id` when it could be read)."""

    id: str | int | None
    message: str


# `Content-Length` as a header name of its own: not `X-Content-Length`, and
# found where a short body ran into the next frame's header (`…}Content-Length`).
_HEADER_NAME = rb"(?<![A-Za-z0-9_-])content-length[ \t]*:"
_LENGTH_HEADER = re.compile(_HEADER_NAME + rb"[ \t]*([^\r\n]*)", re.IGNORECASE)
# Where to resume after a frame that could not be used: a length header, glued
# to whatever the dropped bytes ended with (but not `X-Content-Length`).
_NEXT_HEADER = re.compile(rb"(?<!-)content-length[ \t]*:[ \t]*\d", re.IGNORECASE)
# The id of a message too large to read, when it opens the body as clients write it.
_LEADING_ID = re.compile(
    rb'\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,18}|"(?:[^"\\\x00-\x1f]|\\.){0,256}")\s*[,}]'
)
_KEEP_WHEN_SEEKING = 64  # a header split across two reads is still found
_MAX_LENGTH_DIGITS = 12  # more digits than that is over any limit (and int() would refuse some)
_READ_CHUNK = 1 << 16
_RESTART = object()  # a header line too long to read ran into the next frame's header
_DROPPED = object()  # a header line too long to read, dropped


class FrameReader:
    """LSP frames from a byte stream, never stuck behind a header it cannot use.

    A header block without a usable `Content-Length` (missing, negative, not a
    number, over the message limit) is answered at once and reading resumes
    at the next `Content-Length` header: a client that got one frame wrong
    loses that frame only. A length larger than the bytes sent still waits for
    them, as LSP framing must.
    """

    def __init__(self, source: Any) -> None:
        self._source = source  # `async read(n) -> bytes`, b"" at EOF
        self._buf = bytearray()
        self._eof = False
        self._seeking = False

    async def next(self) -> bytes | FramingError | None:
        """The next body, a framing error to answer, or None at EOF."""
        if self._seeking:
            self._seeking = False
            if not await self._seek():
                return None
        value: bytes | None = None
        seen = False
        while True:  # headers, up to the blank line
            line = await self._line()
            if line is None:
                return None
            if line is _RESTART:
                value, seen = None, False
                continue
            if line is _DROPPED:
                continue
            assert isinstance(line, bytes)
            if not line.strip(b"\r\n"):
                if seen:
                    break
                continue  # a blank line with no header before it: resynchronize
            seen = True
            match = _LENGTH_HEADER.search(line)
            if match:
                value = match.group(1).strip()
        if value is None:
            self._seeking = True
            return FramingError(None, "invalid request: a frame header without Content-Length")
        if not value.isdigit():
            self._seeking = True
            shown = value[:40].decode("ascii", "replace")
            return FramingError(
                None, f"invalid request: Content-Length {shown!r} is not a byte count"
            )
        if len(value) > _MAX_LENGTH_DIGITS or int(value) > MAX_MESSAGE_BYTES:
            self._seeking = True
            size = value.decode() if len(value) <= 40 else f"a {len(value)}-digit number of"
            return FramingError(
                self._leading_id(),
                f"invalid request: message of {size} bytes is over the "
                f"{MAX_MESSAGE_BYTES}-byte limit",
            )
        return await self._exactly(int(value))

    # -- the buffer ---------------------------------------------------------------

    async def _fill(self) -> bool:
        if self._eof:
            return False
        data = await self._source.read(_READ_CHUNK)
        if not data:
            self._eof = True
            return False
        self._buf += data
        return True

    async def _line(self) -> bytes | object | None:
        """One header line with its end; None at EOF; `_DROPPED` for a line too long,
        `_RESTART` when the next frame's header was found inside it."""
        searched = 0
        while True:
            end = self._buf.find(b"\n", searched)
            if 0 <= end < MAX_HEADER_LINE_BYTES:
                line = bytes(self._buf[: end + 1])
                del self._buf[: end + 1]
                return line
            if end >= 0 or len(self._buf) >= MAX_HEADER_LINE_BYTES:
                log.warning("dropped a header line longer than %d bytes", MAX_HEADER_LINE_BYTES)
                return await self._skip_long_line()
            searched = len(self._buf)
            if not await self._fill():
                if not self._buf:
                    return None
                line = bytes(self._buf)  # the last line, unterminated
                self._buf.clear()
                return line

    async def _skip_long_line(self) -> object | None:
        """Drop a line too long to be a header, up to its end or a header inside it."""
        while True:
            end = self._buf.find(b"\n")
            stop = end if end >= 0 else len(self._buf)
            header = _NEXT_HEADER.search(self._buf, 1, stop)
            if header:
                del self._buf[: header.start()]
                return _RESTART
            if end >= 0:
                del self._buf[: end + 1]
                return _DROPPED
            del self._buf[: max(0, len(self._buf) - _KEEP_WHEN_SEEKING)]
            if not await self._fill():
                return None

    async def _seek(self) -> bool:
        """Drop bytes up to the next `Content-Length` header; False at EOF."""
        while True:
            header = _NEXT_HEADER.search(self._buf)
            if header:
                del self._buf[: header.start()]
                return True
            del self._buf[: max(0, len(self._buf) - _KEEP_WHEN_SEEKING)]
            if not await self._fill():
                return False

    async def _exactly(self, n: int) -> bytes | None:
        while len(self._buf) < n:
            if not await self._fill():
                return None  # EOF inside a body: the client is gone
        body = bytes(self._buf[:n])
        del self._buf[:n]
        return body

    def _leading_id(self) -> str | int | None:
        """The id of the message whose body starts the buffer, when it opens with one."""
        match = _LEADING_ID.match(self._buf, 0, 1024)
        if not match:
            return None
        with contextlib.suppress(ValueError):
            value = json.loads(match.group(1))
            if isinstance(value, int) or (isinstance(value, str) and _is_text(value)):
                return value
        return None


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
