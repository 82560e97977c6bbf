"""Every use of pygls internals, in one place, each with the behaviour it works around.

pygls 2.1 gives us the LSP lifecycle, request/notification plumbing and
cancellation. What protocol v1 needs beyond that lives here and nowhere else:

- custom params arrive as namedtuples built with `rename=True`, which mangles
  keys: a converter keeps our own methods' params and results as plain dicts;
- a late reply to a server→client request we gave up on raises
  InvalidStateError (pygls issue 621): replies to abandoned ids are dropped;
- `initialize` advertises document sync by default and no protocol version;
- requests before `initialize`, a second `initialize`, and requests after
  `shutdown` are answered with the right error instead of being run;
- expected client errors (-32602 …) are answered without a logged traceback,
  and our own bugs (-32603) without a traceback on the wire (it goes to the
  log at DEBUG);
- pygls keeps the client's requests and ours in one id table, so a client id
  equal to one of ours would cross them: our requests to the client have a
  table of their own;
- the private members the daemon reads (`msg_id`, `_request_futures`,
  `_shutdown`, `_send_data`) are exposed as small public methods.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from concurrent.futures import Future
from typing import Any, Protocol

import attrs
from lsprotocol import types
from memory_recall.protocol import limits, methods
from pygls.exceptions import JsonRpcException, JsonRpcInternalError, JsonRpcInvalidParams
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)

log = logging.getLogger("memory_recall")

# Ids of server→client requests we gave up on, remembered so that a late
# reply is dropped quietly; a host that never replies cannot grow this.
MAX_ABANDONED_IDS = 1024


def _plain_params(obj: dict[str, Any], cls: type) -> Any:
    """Keep params/results of our own methods as plain dicts (pygls would build
    namedtuples with `rename=True`, silently mangling keys).

    Members JSON-RPC does not define are ignored, as lsprotocol's types ignore them.
    """
    known = attrs.fields_dict(cls)
    fields = {key: value for key, value in obj.items() if key in known}
    fields.setdefault("result" if cls is JsonRPCResponseMessage else "params", None)
    return cls(**fields)


def make_converter() -> Any:
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, _plain_params)
    return converter


class SessionHost(Protocol):
    """What the protocol needs of the server that owns it."""

    initialized_at_protocol: bool

    def request_exit(self, code: int) -> None: ...


class MemoryProtocol(LanguageServerProtocol):
    """pygls' LSP protocol with the behaviour protocol v1 needs."""

    _server: Any  # a SessionHost; pygls types it as its LanguageServer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._abandoned: dict[Any, None] = {}  # insertion-ordered, bounded
        # Our requests to the client, by id: apart from pygls' `_request_futures`,
        # which holds the client's requests (for their cancellation).
        self._outgoing: dict[Any, Future[Any]] = {}
        # `shutdown` arrived (its handler may still run): LSP's exit code is 0 from here.
        self._shutdown_received = False
        # The ids of the client's requests, for `answered` (pruned to those in flight).
        self._from_client: set[Any] = set()

    @property
    def host(self) -> SessionHost:
        host: SessionHost = self._server
        return host

    # -- public face of pygls internals ---------------------------------------

    def current_request_id(self) -> str | int | None:
        """The JSON-RPC id of the request whose handler is running."""
        msg_id: str | int | None = self.msg_id
        return msg_id

    async def answered(self, timeout_s: float, besides: Any = None) -> None:
        """Wait, at most `timeout_s`, for the client's requests still running (but the
        one `besides`) to be answered: a `shutdown` or an `exit` sent right behind a
        request must not swallow its reply."""
        # pygls keeps its own requests to the client in the same table: only the
        # client's are waited for (an unanswered progress request never ends).
        running = [
            asyncio.wrap_future(f) if isinstance(f, Future) else f
            for msg_id, f in list(self._request_futures.items())
            if msg_id != besides and msg_id in self._from_client
        ]
        if running:
            await asyncio.wait(running, timeout=timeout_s)
            await asyncio.sleep(0)  # the replies' own callbacks run first

    def pending_request_count(self) -> int:
        """Server→client requests still waiting for a reply."""
        return len(self._outgoing)

    def is_shut_down(self) -> bool:
        return bool(self._shutdown)

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        """Answer `msg_id` (None when it could not be read) with a JSON-RPC error."""
        self._send_data(
            {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
        )

    def abandon_request(self, msg_id: Any) -> None:
        """Forget a server→client request whose answer no longer matters."""
        self._outgoing.pop(msg_id, None)
        self._abandoned[msg_id] = None
        while len(self._abandoned) > MAX_ABANDONED_IDS:
            self._abandoned.pop(next(iter(self._abandoned)))

    def fail_request(self, msg_id: Any, reason: str) -> bool:
        """Fail our request `msg_id` at once (its reply was malformed); False if not ours."""
        future = self._outgoing.pop(msg_id, None)
        if future is None:
            return False
        if not future.done():
            future.set_exception(MalformedReply(reason))
        return True

    def exit_now(self) -> None:
        """`exit`: code 0 when `shutdown` was received before it, 1 otherwise (LSP)."""
        self.host.request_exit(0 if self._shutdown or self._shutdown_received else 1)

    def send_request(
        self,
        method: str,
        params: Any | None = None,
        callback: Any = None,
        msg_id: Any = None,
    ) -> Future[Any]:
        """Send a request to the client; its reply resolves the returned future."""
        if msg_id is None:
            msg_id = str(uuid.uuid4())
        future: Future[Any] = Future()
        if callback is not None:
            future.add_done_callback(lambda f: callback(f.result()))
        self._outgoing[msg_id] = future
        self._send_data(
            JsonRPCRequestMessage(id=msg_id, method=method, params=params, jsonrpc="2.0")
        )
        return future

    def structure_message(self, data: dict[str, Any]) -> Any:
        """pygls' structuring without its ERROR log and traceback: a message that
        does not fit its method's types is the client's mistake, answered -32602."""
        if "id" in data and "error" in data:
            cls: Any = types.ResponseErrorMessage
        elif "id" in data and "method" in data:
            cls = self.get_message_type(data["method"]) or JsonRPCRequestMessage
        elif "id" in data:
            cls = JsonRPCResponseMessage
        else:
            cls = self.get_message_type(data.get("method", "")) or JsonRPCNotification
        try:
            return self._converter.structure(data, cls)
        except Exception as exc:
            log.debug("could not structure a %s message", data.get("method"), exc_info=True)
            raise JsonRpcInvalidParams() from exc

    # -- lifecycle ----------------------------------------------------------------

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        result = yield from super().lsp_initialize(params)
        # pygls advertises document sync by default; the daemon reads no documents.
        result.capabilities.text_document_sync = None
        result.capabilities.experimental = {
            "memory": {
                "protocolVersion": methods.PROTOCOL_VERSION,
                "fastLimit": limits.FAST_LIMIT,
                "refinedLimit": limits.REFINED_LIMIT,
                "maxQueryChars": limits.MAX_QUERY_CHARS,
            }
        }
        self.host.initialized_at_protocol = True
        return result

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Any:
        self.exit_now()
        yield from ()

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        is_request = method is not None and hasattr(message, "id")
        if not self.host.initialized_at_protocol and method not in (
            types.INITIALIZE,
            types.EXIT,
        ):
            if is_request:
                self.send_error(
                    message.id,
                    methods.SERVER_NOT_INITIALIZED,
                    f"server not initialized: 'initialize' must come before {method!r}",
                )
            return
        if method == types.INITIALIZE and self.host.initialized_at_protocol:
            # A second `initialize` would silently replace the roots and selector.
            if is_request:
                self.send_error(
                    message.id,
                    methods.INVALID_REQUEST,
                    "invalid request: 'initialize' may only be sent once per session",
                )
            return
        if is_request and isinstance(message.id, (int, str)):
            if len(self._from_client) >= 1024:
                self._from_client &= self._request_futures.keys()
            self._from_client.add(message.id)
        if method == types.SHUTDOWN and is_request:
            self._shutdown_received = True
        if self._shutdown and is_request and method != types.EXIT:
            self.send_error(
                message.id, methods.INVALID_REQUEST, f"server is shutting down: {method!r} refused"
            )
            return
        super().handle_message(message)

    # -- pygls behaviour we work around -------------------------------------------

    def _handle_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        # A late reply to a request we already abandoned (cancelled recall,
        # selector timeout) is expected: drop it quietly.
        if msg_id in self._abandoned:
            del self._abandoned[msg_id]
            return
        future = self._outgoing.pop(msg_id, None)
        if future is None:
            log.warning("ignored a reply to %r: no request of ours has that id", msg_id)
            return
        if future.done():
            return
        if error is not None:
            future.set_exception(JsonRpcException.from_error(error))
        else:
            future.set_result(result)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # A cancel that crosses the answer on the wire is normal, not a warning.
        if msg_id in self._request_futures:
            super()._handle_cancel_notification(msg_id)

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        exc = None if future.cancelled() else future.exception()
        if isinstance(exc, JsonRpcException):
            # Expected client errors (-32602 …): answered, no traceback in the log.
            self._request_futures.pop(msg_id, None)
            self._send_response(msg_id, error=exc.to_response_error())
            return
        if exc is not None:
            # Our bug: one line in the log, the traceback at DEBUG, none on the wire.
            self._request_futures.pop(msg_id, None)
            log.error(
                "internal error answering request %r: %s: %s", msg_id, type(exc).__name__, exc
            )
            log.debug("traceback of the internal error", exc_info=exc)
            error = JsonRpcInternalError(f"internal error: {type(exc).__name__}")
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)


class MalformedReply(ValueError):
    """The host's reply to one of our requests is not a JSON-RPC response; the reason."""
