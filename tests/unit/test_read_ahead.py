"""What a start reads ahead: the memories delivered last, in this session or an earlier
one, read as newer wins will read them at recall (facts/newer.py, `read_ahead`), so that
a session's first recalls do not pay for reading them."""

from __future__ import annotations

import argparse
import asyncio
from pathlib import Path

import pytest
from memory_recall.protocol.messages import RecallParams
from memory_recall.server.cli.common import settings_of
from memory_recall.server.core.core import MemoryCore
from memory_recall.server.facts import judgement, newer
from memory_recall.server.facts.newer import superseded


def write(root: Path, rel: str, title: str, body: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {title}\ndescription: d\ntype: project\n---\n{body}\n")
    return path


class Listener:
    def __init__(self) -> None:
        self.delivered: list[str] = []

    def fast_result(self, note) -> None:
        self.delivered += [d.path for d in note.docs]

    def refined_result(self, note) -> None:
        self.delivered += [d.path for d in note.docs]

    def telemetry(self, event) -> None:
        pass


def core_on(root: Path, monkeypatch: pytest.MonkeyPatch, state: Path) -> MemoryCore:
    monkeypatch.setenv("MEMORY_RECALL_STATE_DIR", str(state))
    args = argparse.Namespace(root=[f"{root}:project"], workspace=str(root))
    settings = settings_of(args)
    return MemoryCore(settings.options, settings.workspace, problems=settings.problems)


def test_a_start_reads_ahead_the_memories_an_earlier_session_delivered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "mem"
    # One title: newer wins reads these pairs (two titles given apart are not read).
    write(root, "tokens.md", "Webhooks", "Webhook tokens expire after 12 h.")
    write(root, "rotation.md", "Webhooks", "Webhook tokens are rotated by the ops team.")
    gone = write(root, "gone.md", "Webhooks", "Webhook retries back off after 30 s.")
    for i in range(6):
        write(root, f"other-{i}.md", f"Other {i}", f"The lunch menu changes on day {i}.")
    state = tmp_path / "state"

    async def first_session() -> list[str]:
        core = core_on(root, monkeypatch, state)
        core.start()
        await core.session.ready.wait()
        listener = Listener()
        await core.recall(
            RecallParams(query="webhook tokens"), 1, listener, fast_without_model=True
        )
        await core.stop()  # writes the deliveries
        return listener.delivered

    delivered = asyncio.run(first_session())
    assert str(gone) in delivered and len(delivered) >= 2
    gone.unlink()  # gone before the next start: nothing to read of it
    judgement._reading.cache_clear()  # a new process has read nothing, judged nothing
    newer._judge.cache_clear()

    async def next_session() -> None:
        core = core_on(root, monkeypatch, state)
        core.start()
        await core.session.ready.wait()
        for task in [t for t in asyncio.all_tasks() if t.get_name() == "read-ahead"]:
            await task  # (or done already)
        docs = core.write.delivered_last(10)
        assert {d.path for d in docs} == set(delivered) - {str(gone)}

        def no_more_reading(*_args):
            raise AssertionError("a memory delivered last read again at recall")

        with monkeypatch.context() as patched:
            patched.setattr(judgement, "_read_statements", no_more_reading)
            superseded(docs)  # reads nothing: all read ahead
        await core.stop()

    asyncio.run(next_session())
