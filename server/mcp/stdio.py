"""The MCP face's stdio after an opening (`server/opening.py`): the SDK's own stdio
transport, given the bytes the opening already read and a stdout that drops the SDK's
replies to what the opening answered.

As the SDK does for its own stdio, fd 0 then points at the null device and fd 1 at
stderr while serving, so a stray print or a child process cannot touch the wire.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import AsyncIterator
from typing import Any

import anyio
from mcp.server.stdio import stdio_server
from memory_recall.server.opening import Opening


class _HeldThenFd(io.RawIOBase):
    """The bytes the opening held, then the rest of the descriptor."""

    def __init__(self, held: bytes, fd: int) -> None:
        self._held = memoryview(held)
        self._fd = fd

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self._held:
            n = min(len(buffer), len(self._held))
            buffer[:n] = self._held[:n]
            self._held = self._held[n:]
            return n
        data = os.read(self._fd, len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _Replies:
    """The SDK's stdout, minus its replies to the requests the opening answered."""

    def __init__(self, fd: int, early: Opening) -> None:
        self._out = anyio.wrap_file(io.TextIOWrapper(os.fdopen(fd, "wb", closefd=False), "utf-8"))
        self._early = early

    async def write(self, text: str) -> None:
        if self._early.answered and self._early.drops(_parsed(text)):
            return
        await self._out.write(text)

    async def flush(self) -> None:
        await self._out.flush()


def _parsed(line: str) -> Any:
    try:
        return json.loads(line)
    except ValueError:
        return None


@contextlib.asynccontextmanager
async def opened_stdio(early: Opening) -> AsyncIterator[tuple[Any, Any]]:
    """The SDK's read and write streams over stdio, starting with what `early` held."""
    wire_in, wire_out = os.dup(0), os.dup(1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    os.dup2(2, 1)
    text_in = io.TextIOWrapper(
        io.BufferedReader(_HeldThenFd(early.held, wire_in)), "utf-8", errors="replace"
    )
    try:
        async with stdio_server(
            stdin=anyio.wrap_file(text_in),
            stdout=_Replies(wire_out, early),  # type: ignore[arg-type]
        ) as streams:
            yield streams
    finally:
        with contextlib.suppress(OSError):
            os.dup2(wire_in, 0)
            os.dup2(wire_out, 1)
