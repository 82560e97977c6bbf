"""Figures worked out in a thread for memory/status (server.daemon.background)."""

from __future__ import annotations

import asyncio
import threading

import pytest
from memory_recall.server.core.background import Refreshed
from memory_recall.server.pacing import paced


def test_a_quick_figure_is_fresh_at_once_and_worked_out_again_only_when_its_key_changes():
    calls: list[int] = []

    def prepare(n: int):
        calls.append(n)
        return lambda: n * 10

    async def scenario() -> list[int | None]:
        figure: Refreshed[int] = Refreshed("test")
        return [
            await figure.get(1, lambda: prepare(1)),
            await figure.get(1, lambda: prepare(1)),
            await figure.get(2, lambda: prepare(2)),
        ]

    assert asyncio.run(scenario()) == [10, 10, 20]
    assert calls == [1, 2]


def test_a_slow_figure_answers_with_the_last_value_and_never_holds_the_loop():
    release = threading.Event()

    def slow() -> str:
        release.wait(10)
        return "fresh"

    async def scenario() -> list[str | None]:
        figure: Refreshed[str] = Refreshed("test")
        seen = [await figure.get("a", lambda: lambda: "first")]
        # A new key whose work takes long: the last value comes back at once.
        seen.append(await figure.get("b", lambda: slow, wait_s=0.05))
        # Meanwhile the loop is free: a timer fires while the work goes on.
        await asyncio.wait_for(asyncio.sleep(0.01), 1)
        release.set()
        seen.append(await figure.get("b", lambda: slow, wait_s=10))
        return seen

    assert asyncio.run(scenario()) == ["first", "first", "fresh"]


def test_nothing_known_yet_is_none_and_a_failure_is_logged_not_raised(caplog):
    gate = threading.Event()

    def fails() -> int:
        gate.wait(10)
        raise RuntimeError("boom")

    async def scenario() -> list[int | None]:
        figure: Refreshed[int] = Refreshed("the figure")
        seen = [await figure.get(1, lambda: fails, wait_s=0.01)]
        gate.set()
        seen.append(await figure.get(1, lambda: fails, wait_s=10))
        return seen

    assert asyncio.run(scenario()) == [None, None]
    assert "the figure could not be worked out: RuntimeError: boom" in caplog.text


@pytest.mark.parametrize("hold_s", [0.0, 0.001, 10.0])
def test_paced_yields_every_item_in_order(hold_s):
    assert list(paced(range(1000), hold_s)) == list(range(1000))


def test_paced_loops_wait_while_a_recall_is_in_flight():
    from memory_recall.server import pacing

    done: list[int] = []
    started = threading.Event()

    def background() -> None:
        started.set()
        for item in paced(range(2_000), hold_s=0.0):
            done.append(item)

    with pacing.foreground():
        assert pacing.recalls_in_flight() == 1
        worker = threading.Thread(target=background)
        worker.start()
        started.wait(5)
        threading.Event().wait(0.2)
        during = len(done)
    worker.join(30)
    assert pacing.recalls_in_flight() == 0
    # While the recall ran, each item waited up to MAX_WAIT_S: a handful went through,
    # not the thousands an unpaced loop does in 0.2 s.
    assert during <= 0.2 / pacing.MAX_WAIT_S + 3
    assert done == list(range(2_000))


def test_a_figure_expected_to_take_long_is_not_waited_for():
    release = threading.Event()

    def slow() -> str:
        release.wait(10)
        return "done"

    async def scenario() -> str | None:
        figure: Refreshed[str] = Refreshed("test")
        # Waiting for it would take the whole minute it may wait: the bound fails first.
        first = await asyncio.wait_for(figure.get("a", lambda: slow, wait_s=60, expected_s=600), 30)
        release.set()
        await figure.get("a", lambda: slow, wait_s=5)
        return first

    assert asyncio.run(scenario()) is None


def test_on_the_main_thread_paced_never_waits_and_quiet_for_counts_from_the_last_end():
    from memory_recall.server import pacing

    with pacing.foreground():
        assert pacing.quiet_for() == 0.0
        # The event loop runs recalls: it must never wait for one of its own.
        assert list(paced(range(3), hold_s=0.0)) == [0, 1, 2]
    threading.Event().wait(0.01)
    assert pacing.quiet_for() > 0.0
