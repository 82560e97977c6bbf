"""Figures worked out in a thread, so that a polled request never holds the event loop.

`memory/status` reports per-category usage and the stale memories: both read every
memory (its category, the files it cites), which costs about a millisecond a memory
the first time — minutes at 100,000. A `Refreshed` figure is worked out in a thread
when what it depends on (its key) changes; a request waits a moment for the fresh
value (small corpora get it at once, as before), else answers with the last one it
has, or None while none is known yet.

The work shares the interpreter's lock with the event loop: it starts once recalls
have been quiet for a moment, and its loops run paced (server.pacing), so that
recalls go first.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

from memory_recall.server import pacing

log = logging.getLogger("memory_recall.background")

T = TypeVar("T")

FRESH_WAIT_S = 0.25  # how long a request waits for a fresh value before taking the last one
QUIET_BEFORE_S = 0.3  # how long recalls must have been quiet before long work starts
SHORT_WORK_S = 0.05  # work expected to take less starts at once
# Before a figure has been worked out once, what one memory is expected to cost
# (placing it on the topic tree, about a millisecond, is the dearest).
SECONDS_PER_MEMORY = 0.001


class Refreshed(Generic[T]):
    """One figure, worked out again in a thread whenever its key changes."""

    def __init__(self, what: str) -> None:
        self.what = what  # for the log
        self._key: Hashable = object()  # what the value was worked out for
        self._value: T | None = None
        self._task: asyncio.Task[None] | None = None
        self._took_s: float | None = None  # how long the last value took

    async def get(
        self,
        key: Hashable,
        prepare: Callable[[], Callable[[], T]],
        wait_s: float = FRESH_WAIT_S,
        expected_s: float = 0.0,
    ) -> T | None:
        """The value for `key`: fresh if it is ready within `wait_s`, else the last one.

        `prepare` runs on the event loop when a new value must be worked out (it reads
        what the thread may not touch) and returns the work the thread does. A request
        does not wait at all for a value that takes longer than `wait_s` — as the last
        one did, or as `expected_s` says before there is a last one.
        """
        loop = asyncio.get_running_loop()
        took = self._took_s if self._took_s is not None else expected_s
        deadline = loop.time() + (wait_s if took <= wait_s else 0.0)
        while self._key != key:
            if self._task is None:
                self._task = loop.create_task(self._work_out(key, prepare(), took))
            remaining = deadline - loop.time()
            if remaining <= 0:
                break
            try:
                await asyncio.wait_for(asyncio.shield(self._task), remaining)
            except TimeoutError:
                break
        return self._value

    async def _work_out(self, key: Hashable, work: Callable[[], T], expected_s: float) -> None:
        # Long work starts once recalls have been quiet a moment (it would only slow
        # them); short work, such as a small corpus's, at once.
        if expected_s > SHORT_WORK_S:
            await pacing.until_quiet(QUIET_BEFORE_S)
        started = time.perf_counter()
        try:
            value: T | None = await asyncio.to_thread(work)
            self._took_s = time.perf_counter() - started
        except Exception as exc:  # our bug: the figure is unknown until its key changes
            log.error("%s could not be worked out: %s: %s", self.what, type(exc).__name__, exc)
            log.debug("traceback", exc_info=True)
            value = None
        finally:
            self._task = None
        self._key, self._value = key, value
