"""Stdio for the LSP face: the stdout writer and the stdin reader the frames are read from.

The frames themselves are cut by `memory_recall.protocol.framing.FrameReader`, the one
reader the daemon, the client and the tests share; `transport.read_frames` answers
what it returns.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
from typing import Any, BinaryIO

from memory_recall.protocol.framing import MAX_HEADER_LINE_BYTES
from memory_recall.server.opening import Opening

log = logging.getLogger("memory_recall")


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


class HeldReader:
    """The bytes the opening held (`server/opening.py`), then the rest of stdin."""

    def __init__(self, held: bytes, rest: Any) -> None:
        self._held = held
        self._rest = rest

    async def read(self, n: int) -> bytes:
        if self._held:
            chunk, self._held = self._held[:n], self._held[n:]
            return chunk
        data: bytes = await self._rest.read(n)
        return data


class OpenedWriter(StdoutWriter):
    """stdout minus pygls' replies to the requests the opening already answered (one
    frame per write, as pygls and the transport write)."""

    def __init__(self, stream: BinaryIO, early: Opening) -> None:
        super().__init__(stream)
        self._early = early
        self._pending = len(early.answered)

    def write(self, data: bytes) -> None:
        if self._pending and self._early.drops(_body(data)):
            self._pending -= 1
            return
        super().write(data)


def _body(frame: bytes) -> Any:
    _, _, body = frame.partition(b"\r\n\r\n")
    try:
        return json.loads(body)
    except ValueError:
        return None
