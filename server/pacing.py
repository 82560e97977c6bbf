"""Recalls first: background threads step aside while a recall is in flight.

The daemon answers recalls on its event loop; threads build what can wait (the
memory network after a start, `memory/status`'s figures). They share one
interpreter lock, and a busy thread keeps it for the interpreter's switch interval
(5 ms) at a time: unpaced, a recall that computes for 5 ms takes 10 or more while
the network is built. So long background loops iterate through `paced`, which lets
go of the lock every millisecond and, while a recall runs or a change of the
memories is applied (`foreground`), waits for it to end — up to `MAX_WAIT_S` at a
time, so that a recall waiting seconds for a model does not stop the background for
as long.
"""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import TypeVar

T = TypeVar("T")

HOLD_S = 0.001  # how long a paced loop keeps the lock between items
MAX_WAIT_S = 0.05  # how long it waits for recalls in flight before its next item
_STEP_S = 0.0005

# A thread that waits for the interpreter lock asks the holder to let go after this long
# (Python's default: 5 ms). The daemon's event loop, woken by a request while a worker
# thread computes (a write's reading, a status figure, the network's build), answers after
# at most this long instead (docs/performance.md, "Recalls first").
SWITCH_INTERVAL_S = 0.001

_lock = threading.Lock()
_in_flight = 0
_quiet_since = float("-inf")  # no foreground work yet: quiet since ever


@contextmanager
def foreground() -> Iterator[None]:
    """Mark foreground work in flight — a recall, or a change the next recall must see:
    paced loops wait while any is."""
    global _in_flight, _quiet_since
    with _lock:
        _in_flight += 1
    try:
        yield
    finally:
        with _lock:
            _in_flight -= 1
            _quiet_since = time.monotonic()


def requests_first() -> None:
    """Make a waiting thread — the event loop, with a request in hand — get the interpreter
    lock within `SWITCH_INTERVAL_S`."""
    sys.setswitchinterval(SWITCH_INTERVAL_S)


def quiet_from_now() -> None:
    """Count the quiet from now, not from ever: the daemon is ready, and its first
    recalls come now (work that waits for quiet then starts after them)."""
    global _quiet_since
    with _lock:
        _quiet_since = max(_quiet_since, time.monotonic())


def quiet_for() -> float:
    """Seconds since the last foreground work ended (0 while some is in flight)."""
    return 0.0 if _in_flight else time.monotonic() - _quiet_since


async def until_quiet(seconds: float, at_most: float = float("inf")) -> None:
    """Until recalls have been quiet for `seconds` (counted from `ready` at the
    earliest: `quiet_from_now`), or `at_most` seconds have passed."""
    deadline = time.monotonic() + at_most
    while quiet_for() < seconds and time.monotonic() < deadline:
        await asyncio.sleep(seconds / 4)


def recalls_in_flight() -> int:
    return _in_flight


def paced(items: Iterable[T], hold_s: float = HOLD_S) -> Iterator[T]:
    """The items, in order, letting other threads run every `hold_s` of work and
    waiting (up to `MAX_WAIT_S`) while recalls are in flight.

    On the main thread (the daemon's event loop, which runs the recalls) it only
    passes the items on: the loop must never wait for itself."""
    if threading.current_thread() is threading.main_thread():
        yield from items
        return
    clock = time.perf_counter
    since = clock()
    for item in items:
        yield item
        now = clock()
        if now - since >= hold_s:
            time.sleep(0)  # lets go of the lock: a waiting thread takes it now
            waited_until = now + MAX_WAIT_S
            while _in_flight and clock() < waited_until:
                time.sleep(_STEP_S)
            since = clock()
