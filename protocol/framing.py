"""LSP base framing: `Content-Length: N` headers, then N bytes of body.

One frame reader for everyone who reads the wire — the daemon, the Python client
and the tests' harness — so a quirk is fixed once. `FrameReader` cuts a byte
stream into bodies and never gets stuck behind a header it cannot use: a missing,
negative, non-numeric or oversize `Content-Length` is returned as a `FramingError`
to answer at once, and reading resumes at the next `Content-Length` header. It
knows nothing of JSON-RPC. `frame` writes one; `blocking_frames` reads from a
blocking stream (a thread reading a child's stdout).
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, BinaryIO

log = logging.getLogger("memory_recall")

# The largest message body read. A recall is at most a 32,768-character query
# (≤ 128 KiB in UTF-8) plus tool names and excluded paths; 4 MiB leaves room
# for thousands of excluded paths without letting one message exhaust memory.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
MAX_HEADER_LINE_BYTES = 8 * 1024


def is_text(value: str) -> bool:
    """A str that is Unicode text (no lone surrogate), which UTF-8 can carry."""
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def frame(body: bytes) -> bytes:
    """One frame of `body`."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


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
            if isinstance(value, int) or (isinstance(value, str) and is_text(value)):
                return value
        return None


class _Blocking:
    """A blocking stream as the reader's source: each read returns at once, blocking the
    calling thread, so the reader's coroutine never suspends."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    async def read(self, n: int) -> bytes:
        read1 = getattr(self._stream, "read1", None)
        return read1(n) if read1 is not None else self._stream.read(n)


def blocking_frames(stream: BinaryIO) -> Iterator[bytes | FramingError]:
    """The frames of a blocking stream, until EOF, read in the calling thread."""
    reader = FrameReader(_Blocking(stream))
    while True:
        step = reader.next()
        try:
            step.send(None)
        except StopIteration as done:
            found = done.value
        else:  # pragma: no cover - a blocking source never waits
            step.close()
            raise RuntimeError("a blocking source suspended the frame reader")
        if found is None:
            return
        yield found
