"""The daemon's suggestion side in-process: a match waits for a recall's first result."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memory_recall.protocol import methods
from memory_recall.protocol.messages import ObserveParams
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.core.session import CatalogSession, TaskRegistry
from memory_recall.server.core.suggesting import SuggestionSide
from memory_recall.server.roots import MemoryRoot

LESSON = """---
name: ioredis ECONNRESET behind the NAT gateway
description: Idle Redis connections are cut by the NAT after 350 seconds
type: feedback
category: lessons/errors
---
Fix: `keepAlive: 30000` in `src/lib/redis.ts`.
"""


async def side_for(tmp_path: Path, clock: list[float]):
    (tmp_path / "redis.md").write_text(LESSON, encoding="utf-8")
    tasks = TaskRegistry()
    session = CatalogSession(MemoryCatalog([MemoryRoot.of(tmp_path, "project")]), tasks)
    session.start(watch=False)
    await asyncio.wait_for(session.ready.wait(), 10)
    sent: list[tuple[str, dict]] = []
    side = SuggestionSide(session, tasks, lambda m, p: sent.append((m, p)), clock=lambda: clock[0])
    return side, sent, tasks


async def until(condition, timeout: float = 10) -> None:
    async def poll() -> None:
        while not condition():
            await asyncio.sleep(0.005)

    await asyncio.wait_for(poll(), timeout)


async def test_a_match_waits_while_a_recall_has_sent_nothing(tmp_path: Path):
    clock = [100.0]
    side, sent, tasks = await side_for(tmp_path, clock)
    side.recall_started("r1")
    side.observe(ObserveParams(event="edit", path="src/lib/redis.ts"))
    await until(lambda: side.counters.matched == 1)
    await asyncio.sleep(0.05)
    assert sent == []  # the clock stands still: the window stays open
    side.recall_answered("r1")
    await until(lambda: bool(sent))
    ((method, params),) = sent
    assert method == methods.SUGGESTION
    assert params["docs"][0]["title"].startswith("ioredis ECONNRESET")
    assert side.counters.deferred == 1 and side.counters.sent == 1
    tasks.cancel_all()


async def test_a_flood_beyond_what_can_wait_is_dropped(tmp_path: Path):
    clock = [0.0]
    side, _sent, tasks = await side_for(tmp_path, clock)
    for _ in range(200):
        side.observe(ObserveParams(event="command", text="ls"))
    assert side.counters.observed == 200 and side.counters.dropped > 0
    await until(lambda: side._pending == 0)
    tasks.cancel_all()
