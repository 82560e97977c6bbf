"""`Content-Length` framing: a header that cannot be used is answered at once and
reading resumes at the next header (issue 21), never waiting for bytes that
will not come nor swallowing the requests behind it.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memory_recall.protocol.framing import MAX_MESSAGE_BYTES, FrameReader, FramingError


class Source:
    """A stream that hands out the given chunks, then waits forever (a client that
    sent what it sent and keeps the pipe open), or ends if `eof`."""

    def __init__(self, *chunks: bytes, eof: bool = False) -> None:
        self._chunks = list(chunks)
        self._eof = eof

    async def read(self, n: int) -> bytes:
        if self._chunks:
            chunk = self._chunks.pop(0)
            if len(chunk) > n:
                self._chunks.insert(0, chunk[n:])
                chunk = chunk[:n]
            return chunk
        if self._eof:
            return b""
        await asyncio.Event().wait()
        raise AssertionError("unreachable")


def frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


GOOD = {"jsonrpc": "2.0", "id": 7, "method": "memory/status"}


async def frames(*chunks: bytes, count: int) -> list[bytes | FramingError | None]:
    reader = FrameReader(Source(*chunks))
    return [await asyncio.wait_for(reader.next(), 2) for _ in range(count)]


@pytest.mark.parametrize(
    "header",
    [
        b"Content-Length: %d\r\n\r\n" % (MAX_MESSAGE_BYTES + 1),
        b"Content-Length: 99999999999999999999999\r\n\r\n",
        b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n",
    ],
    ids=["one-over", "absurd", "5000-digits"],
)
async def test_an_oversize_length_is_answered_at_once_and_the_next_frame_is_read(header):
    # The oversize body never arrives in full: the next request must not wait for it.
    got = await frames(
        header + b'{"jsonrpc": "2.0", "id": 5, "method": "x", "params": {"a": "',
        frame(GOOD),
        count=2,
    )
    assert isinstance(got[0], FramingError) and "limit" in got[0].message
    assert got[0].id == 5  # read from the start of the body: answered to its id
    assert json.loads(got[1]) == GOOD  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("header", "words"),
    [
        (b"Content-Length: -12\r\n\r\n", "not a byte count"),
        (b"Content-Length: twelve\r\n\r\n", "not a byte count"),
        (b"Content-Length: 12 bytes\r\n\r\n", "not a byte count"),
        (b"Content-Type: application/json\r\n\r\n", "without Content-Length"),
        (b"X-Content-Length: 12\r\n\r\n", "without Content-Length"),
    ],
    ids=["negative", "word", "trailing-text", "missing", "x-content-length"],
)
async def test_an_unusable_length_is_answered_then_reading_resumes(header, words):
    got = await frames(header + b'{"jsonrpc": "2.0", "id": 1}', frame(GOOD), count=2)
    assert isinstance(got[0], FramingError) and words in got[0].message
    assert got[0].id is None
    assert json.loads(got[1]) == GOOD  # type: ignore[arg-type]


async def test_x_content_length_next_to_the_real_one_is_not_the_length():
    body = json.dumps(GOOD).encode()
    data = b"X-Content-Length: 3\r\nContent-Length: %d\r\n\r\n" % len(body) + body
    assert await frames(data, count=1) == [body]


async def test_a_short_body_running_into_the_next_header_recovers_at_it():
    body = json.dumps(GOOD).encode()
    short = b"Content-Length: %d\r\n\r\n" % (len(body) - 3) + body
    got = await frames(short, frame(GOOD), count=2)
    assert got[0] == body[:-3]
    assert json.loads(got[1]) == GOOD  # type: ignore[arg-type]


async def test_a_header_line_over_8_kib_is_dropped_and_its_frame_still_read():
    body = json.dumps(GOOD).encode()
    data = b"Content-Length: %d\r\nX-Long: " % len(body) + b"y" * 10_000 + b"\r\n\r\n" + body
    assert await frames(data, count=1) == [body]


async def test_eof_inside_a_body_or_a_header_is_the_end():
    assert await FrameReader(Source(b"Content-Length: 10\r\n\r\nabc", eof=True)).next() is None
    assert await FrameReader(Source(b"Content-Le", eof=True)).next() is None


@settings(max_examples=200, deadline=None)
@given(garbage=st.binary(max_size=300).filter(lambda b: b"ength" not in b.lower()))
async def test_after_any_garbage_the_next_frame_is_read(garbage):
    """Whatever precedes it (that is not itself a frame), a frame is found."""
    reader = FrameReader(Source(garbage + b"\r\n\r\n", frame(GOOD), eof=True))
    seen = []
    for _ in range(5):
        item = await asyncio.wait_for(reader.next(), 2)
        if item is None:
            break
        seen.append(item)
    assert json.dumps(GOOD).encode() in seen
