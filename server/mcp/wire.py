"""The MCP face's stdio: every line gets an answer by JSON-RPC's rules, even one the SDK drops.

The SDK's stdio reader parses each line with pydantic and, when that fails, hands the
exception to the session, which logs it at debug level and answers nothing: a line
that is not JSON, a 100,000-deep nested value (beyond the parser's recursion limit),
or JSON that is no JSON-RPC message left the host waiting for ever. Here the reader's
exceptions are answered instead, with `id: null` (the id of a line that could not be
read is not known): -32700 for a line that is not JSON or is nested too deeply,
-32600 for JSON that is not a request, a notification or a response. The face goes
on serving (docs/performance.md, "Every change seen"; JSON-RPC 2.0, section 5.1).
"""

from __future__ import annotations

import logging
from types import TracebackType
from typing import Any

import anyio
from mcp.server.lowlevel.server import Server
from mcp.shared.message import SessionMessage
from mcp.types import ErrorData, JSONRPCError
from pydantic import ValidationError

log = logging.getLogger("memory_recall.mcp")

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def error_for(exc: Exception) -> ErrorData:
    """The JSON-RPC error a line the SDK could not read deserves."""
    if isinstance(exc, ValidationError):
        kinds = {e.get("type") for e in exc.errors(include_url=False)}
        if "json_invalid" in kinds:
            messages = [str(e.get("msg", "")) for e in exc.errors(include_url=False)]
            if any("recursion" in m for m in messages):
                return ErrorData(code=PARSE_ERROR, message="parse error: JSON nested too deeply")
            return ErrorData(code=PARSE_ERROR, message="parse error: the line is not JSON")
        return ErrorData(
            code=INVALID_REQUEST,
            message="invalid request: not a JSON-RPC request, notification or response",
        )
    if isinstance(exc, (ValueError, RecursionError)):
        return ErrorData(code=PARSE_ERROR, message="parse error: the line could not be read")
    return ErrorData(code=INVALID_REQUEST, message="invalid request: the line could not be read")


class AnsweringReader:
    """The SDK's read stream, less the exceptions: each is answered on the write stream."""

    def __init__(self, inner: Any, write: Any) -> None:
        self._inner = inner
        self._write = write

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    async def receive(self) -> SessionMessage:
        while True:
            item = await self._inner.receive()
            if not isinstance(item, Exception):
                return item
            error = error_for(item)
            log.info("answered a line that could not be read: %s", error.message)
            answer = JSONRPCError(jsonrpc="2.0", id=None, error=error)
            await self._write.send(SessionMessage(answer))

    def __aiter__(self) -> AnsweringReader:
        return self

    async def __anext__(self) -> SessionMessage:
        try:
            return await self.receive()
        except anyio.EndOfStream:
            raise StopAsyncIteration from None

    def close(self) -> None:
        self._inner.close()

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> AnsweringReader:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc_val: BaseException | None,
        exc_tb: TracebackType | None,
    ) -> None:
        await self.aclose()


async def serve_streams(server: Server[Any], read_stream: Any, write_stream: Any) -> None:
    """`server` on the SDK's stdio streams, every unreadable line answered."""
    await server.run(
        AnsweringReader(read_stream, write_stream),
        write_stream,
        server.create_initialization_options(),
    )
