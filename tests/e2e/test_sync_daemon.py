"""The daemon syncs on its own (issue 34): after writes once idle, on start, with back-off
when the remote cannot be reached; `memory/status` says where each root stands, and
recalls never wait for a sync."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
from memory_recall.protocol.messages import RememberParams, SearchParams
from memory_recall.server.core.core import MemoryCore
from memory_recall.server.core.options import parse_options
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.state import StateStore
from memory_recall.server.sync.service import SyncService

from tests.sync_helpers import bare_remote, git

WAIT_S = 60.0  # every wait is bounded; the machine is shared


def _core(root: Path, state: Path, monkeypatch: pytest.MonkeyPatch) -> MemoryCore:
    monkeypatch.setenv("MEMORY_RECALL_STATE_DIR", str(state))
    options, problems = parse_options(
        {
            "roots": [{"path": str(root), "scope": "user"}],
            "watch": True,
            "sync": {"idleS": 1, "intervalS": 30},
        }
    )
    assert problems == []
    return MemoryCore(options, None)


def _set_up(root: Path, state: Path, remote: Path) -> None:
    service = SyncService([MemoryRoot.of(root, "user")], StateStore(state / "state.sqlite3"))
    _done, outcome = service.init(0, str(remote))
    assert outcome.state == "synced", outcome


async def _until(what: str, check, timeout: float = WAIT_S):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = await check() if asyncio.iscoroutinefunction(check) else check()
        if found:
            return found
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


async def test_the_daemon_pushes_after_writes_pulls_on_start_and_backs_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    remote = bare_remote(tmp_path)
    root_a, root_b = tmp_path / "a" / "memory", tmp_path / "b" / "memory"
    root_a.mkdir(parents=True)
    root_b.mkdir(parents=True)
    _set_up(root_a, tmp_path / "a" / "state", remote)
    _set_up(root_b, tmp_path / "b" / "state", remote)

    a = _core(root_a, tmp_path / "a" / "state", monkeypatch)
    a.start()
    try:
        await a.session.ready.wait()
        await a.remember(RememberParams(text="The VPN config lives in 1Password under Infra/VPN.",
                                        title="VPN config", scope="user"))  # fmt: skip
        await _until(
            "the write pushed", lambda: "VPN config" in git(remote, "log", "--format=%s", "--all")
        )
        status = await a.status()
        assert status.sync is not None and len(status.sync) == 1
        synced = status.sync[0]
        assert synced.auto and synced.ahead == 0 and synced.pending == 0 and synced.last_sync_ms

        # A recall answers while a sync runs: it never waits for one.
        started = time.perf_counter()
        await a.search(SearchParams(mode="shallow", query="VPN"))
        assert time.perf_counter() - started < WAIT_S

        # The remote goes away: writes go on, the status says so, the daemon backs off.
        moved = remote.with_name("gone.git")
        remote.rename(moved)
        await a.remember(RememberParams(text="Grafana dashboards live at grafana.internal.",
                                        title="Grafana", scope="user"))  # fmt: skip
        assert (root_a / "grafana.md").exists()

        async def offline():  # type: ignore[no-untyped-def]
            found = (await a.status()).sync
            return found and found[0].state in ("offline", "error") and found[0].retry_at_ms

        await _until("the status to say offline", offline)
        moved.rename(remote)
    finally:
        await a.stop()

    b = _core(root_b, tmp_path / "b" / "state", monkeypatch)
    b.start()
    try:
        await b.session.ready.wait()

        async def pulled():  # type: ignore[no-untyped-def]
            found = await b.search(SearchParams(mode="shallow", query="VPN config"))
            return any("VPN" in (d.title or "") for d in found.docs)

        await _until("machine B to pull on start and index the memory", pulled)
    finally:
        await b.stop()
