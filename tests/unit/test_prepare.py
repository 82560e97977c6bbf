"""Ready means ready: what a start prepares on the first index before `ready`
(core/rehearsal.py, `prepare_index`: the commonest words looked up as a recall would,
so that a first question holding them does not pay for their count codes), and the
start-up work that waits until the first recalls are done."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path
from typing import Any

import pytest
from memory_recall.protocol.messages import RecallParams
from memory_recall.server import pacing
from memory_recall.server.cli.common import settings_of
from memory_recall.server.core.core import START_AFTER_QUIET_S, MemoryCore
from memory_recall.server.ranking.bm25f.index import Bm25Index


class Listener:
    def __init__(self) -> None:
        self.fast: list[str] = []

    def fast_result(self, note) -> None:
        self.fast += [d.path for d in note.docs]

    def refined_result(self, note) -> None:
        pass

    def telemetry(self, event) -> None:
        pass


def settings_on(bodies: list[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A core's settings on a root of one memory per body, with its own state and no
    snapshot cache."""
    root = tmp_path / "mem"
    root.mkdir()
    for i, body in enumerate(bodies):
        (root / f"m{i}.md").write_text(
            f"---\nname: Note {i}\ndescription: d\ntype: project\n---\n{body}\n"
        )
    monkeypatch.setenv("MEMORY_RECALL_STATE_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("MEMORY_RECALL_CACHE_DIR", "off")
    return settings_of(argparse.Namespace(root=[f"{root}:project"], workspace=str(root)))


def test_a_first_recall_of_the_commonest_words_finds_their_count_codes_made(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # More memories hold "deploy" than are scored one by one (the bitmap path).
    bodies = [f"{'deploy ' * (1 + i % 5)}on host{i}." for i in range(300)]
    settings = settings_on(bodies, tmp_path, monkeypatch)

    async def session() -> list[str]:
        core = MemoryCore(settings.options, settings.workspace, problems=settings.problems)
        core.start()
        await core.session.ready.wait()
        index = core.session.catalog.snapshot().index(Bm25Index)
        assert "deploy" in index.common_terms(8)

        def made_again(*_args):
            raise AssertionError("a count code made at the first recall")

        monkeypatch.setattr(index, "field_sums", made_again)
        listener = Listener()
        await core.recall(RecallParams(query="deploy"), 1, listener, fast_without_model=True)
        await core.stop()
        return listener.fast

    assert asyncio.run(session())  # answered, from codes made before ready


def test_the_start_up_work_after_ready_waits_for_the_first_recall(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings = settings_on([f"Deploy host{i}." for i in range(20)], tmp_path, monkeypatch)
    events: list[str] = []
    quiet: list[float] = []

    async def session() -> None:
        core = MemoryCore(settings.options, settings.workspace, problems=settings.problems)
        build = core.network.ensure_built

        async def recorded_build() -> None:
            events.append("network")
            quiet.append(pacing.quiet_for())
            await build()

        monkeypatch.setattr(core.network, "ensure_built", recorded_build)
        core.start()
        await core.session.ready.wait()
        listener = Listener()  # a host's first prompt, sent the moment the daemon is ready
        await core.recall(RecallParams(query="deploy"), 1, listener, fast_without_model=True)
        events.append("recall")
        while "network" not in events:
            await asyncio.sleep(0.05)
        await core.stop()

    asyncio.run(session())
    assert events == ["recall", "network"]
    # ... and only once recalls have been quiet a while, counted from ready at the earliest.
    assert START_AFTER_QUIET_S <= quiet[0] < 60


def test_a_host_that_never_pauses_still_gets_the_start_up_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Recalls back to back are never quiet for START_AFTER_QUIET_S: the wait is bounded
    # (START_AFTER_AT_MOST_S), so the network, which multihop questions need, is built.
    settings = settings_on([f"Deploy host{i}." for i in range(20)], tmp_path, monkeypatch)
    quiet: list[float] = []

    async def session() -> int:
        core = MemoryCore(settings.options, settings.workspace, problems=settings.problems)
        build = core.network.ensure_built

        async def recorded_build() -> None:
            quiet.append(pacing.quiet_for())
            await build()

        monkeypatch.setattr(core.network, "ensure_built", recorded_build)
        core.start()
        await core.session.ready.wait()
        recalls = 0
        # (The cap only keeps a broken bound from hanging the suite.)
        while not quiet and recalls < 20_000:
            await core.recall(RecallParams(query="deploy"), 1, Listener(), fast_without_model=True)
            recalls += 1
            await asyncio.sleep(0)  # the next request comes through the event loop
        await core.stop()
        return recalls

    recalls = asyncio.run(session())
    assert quiet, f"no network build during {recalls} recalls without a pause"
    assert quiet[0] < START_AFTER_QUIET_S  # started by the bound, not by a quiet moment
