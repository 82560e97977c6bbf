"""Long-lived objects kept out of the cyclic collector's way (docs/performance.md,
"Collections nobody waits for").

CPython's cyclic collector walks every tracked object of the generations it collects: a
full collection walks all of the oldest one, and whatever allocation starts it — a
recall's, a remember's — waits for it. The daemon's big structures live as long as it
does and make no cycles, so it takes them out of the walk (`gc.freeze`):

- a build of one (the catalog's first scan, the memory network's first build) runs with the
  collector paused (`collector_paused`): without the pause the network's build alone
  started three full collections at 10,000 memories (36-62 ms each) and fourteen at
  100,000 (up to 0.9 s each), each walking what it had built so far;
- what it made is then collected once, young generations only — everything made since
  the pause is there — and the survivors frozen (`freeze_young`; after the network's
  build, once recalls are quiet: 64 ms at 10,000 memories, 0.7 s at 100,000);
- what ages into the oldest generation later (readings a remember keeps, status
  figures) is collected in full and frozen once it passes `GROWN` objects, when the
  daemon has been quiet for a moment (`keep_settled`).

A frozen object is still freed when its last reference goes; it is only never collected
as part of a cycle, which is why only the survivors of a collection are frozen.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import time
from collections.abc import Iterator

from memory_recall.server import pacing

log = logging.getLogger("memory_recall.heap")

CHECK_EVERY_S = 10.0
QUIET_S = 1.0
# A build's objects wait this long at most for quiet recalls before they are frozen. The
# collector stays paused meanwhile, and paused for long under a steady stream of requests
# the cycles they leave pile up: with 30 s here, the load bench's trivial requests took
# 0.05-0.14 ms longer (p50) than with the collector running.
FREEZE_AT_MOST_S = 3.0
# Objects in the oldest generation worth a full collection and a freeze: about 10 ms of
# every later full collection, at roughly 200-300 ns an object.
GROWN = 50_000


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """No cyclic collection while a long-lived structure is built (in a thread: the event
    loop keeps serving meanwhile; its garbage is freed by reference counts, and its rare
    cycles wait for the collector to resume). Nests: the outermost pause resumes it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def freeze_young() -> float:
    """Collect the young generations and freeze everything tracked; the milliseconds it
    took. Right after a build under `collector_paused`, what it made is all young."""
    return _collect_and_freeze(1)


async def freeze_young_when_quiet() -> float:
    """`freeze_young` once recalls have been quiet for `QUIET_S` (at most
    `FREEZE_AT_MOST_S` from now): a build's objects are many, and walking them once is
    a pause (64 ms at 10,000 memories, 0.7 s at 100,000)."""
    await pacing.until_quiet(QUIET_S, FREEZE_AT_MOST_S)
    return freeze_young()


def settle_if_grown(grown: int = GROWN) -> float | None:
    """Collect in full and freeze the survivors when the oldest generation holds at least
    `grown` objects; the milliseconds it took, or None when it was not worth it."""
    if len(gc.get_objects(generation=2)) < grown:
        return None
    return _collect_and_freeze(2)


def _collect_and_freeze(generation: int) -> float:
    """Collect up to `generation` and freeze the survivors; the milliseconds it took."""
    started = time.perf_counter()
    gc.collect(generation)
    gc.freeze()
    return (time.perf_counter() - started) * 1000


async def keep_settled(ready: asyncio.Event) -> None:
    """From `ready` on: every `CHECK_EVERY_S`, once recalls have been quiet for `QUIET_S`,
    `settle_if_grown`."""
    await ready.wait()
    while True:
        await asyncio.sleep(CHECK_EVERY_S)
        await pacing.until_quiet(QUIET_S)
        ms = settle_if_grown()
        if ms is not None:
            log.debug("collected and froze the long-lived objects in %.0f ms", ms)
