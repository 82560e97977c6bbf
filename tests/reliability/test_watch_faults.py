"""The watcher under attack: loops, bad names, closed doors, roots that come and go.

A watcher that fails must not leave the catalog stale in silence (issue 21):
it restarts with backoff or rescans, `memory/status` says what happened in
words, and what changed meanwhile is found. Bulk work (a root of thousands of
files coming back) happens off the event loop: `memory/status` keeps being
answered while it is applied.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.memory_files import write_memory
from tests.reliability.harness import (
    MODE_BOUND,
    WAIT,
    RecordingClient,
    completion,
    error_lines,
    sized,
    start_daemon,
    status_until,
)

REPRODUCE = "(reproduce: .venv/bin/pytest tests/reliability/test_watch_faults.py)"
_figures: dict[str, str] = {}


@pytest.fixture(scope="module", autouse=True)
def _report(figures: dict[str, str]) -> Iterator[None]:
    yield
    for name, figure in _figures.items():
        figures[name] = f"{figure} {REPRODUCE}"


async def recall_titles(client: RecordingClient, query: str) -> list[str]:
    handle = await client.recall(query, initial_wait_ms=0)
    result = await asyncio.wait_for(handle.response, WAIT)
    return [d.title for d in result.refined.docs]


async def seen(client: RecordingClient, title: str, timeout: float = WAIT) -> None:
    deadline = time.monotonic() + timeout
    while title not in await recall_titles(client, title):
        status = await client.status()
        assert time.monotonic() < deadline, f"{title!r} never served; watcher {status.watcher}"
        await asyncio.sleep(0.1)


@pytest.mark.parametrize("polling", [True, False], ids=["polling", "native"])
async def test_a_symlink_loop_does_not_kill_the_watcher(tmp_path: Path, polling: bool) -> None:
    root = tmp_path / "memory"
    write_memory(root, "first.md", "first note", "before the loop")
    env = {"WATCHFILES_FORCE_POLLING": "1"} if polling else {}
    client = await start_daemon(tmp_path, [(root, "project")], env=env)
    try:
        await status_until(client, lambda s: s.ready and s.watcher.state in ("watching", "polling"))
        os.symlink(".", root / "selfdir")  # `ln -s . selfdir`
        os.symlink("loop-b", root / "loop-a")
        os.symlink("loop-a", root / "loop-b")
        await asyncio.sleep(0.5)
        write_memory(root, "after.md", "after the loop", "written once the loop exists")
        await seen(client, "after the loop")
        write_memory(root, "later.md", "later still", "and another one")
        await seen(client, "later still")
        status = await client.status()
        assert status.documents == 3, status
        if polling:  # watchfiles' poller gives up on the loop: our rescan took over
            assert status.watcher.state in ("failed", "polling", "watching"), status.watcher
            if status.watcher.state == "failed":
                assert "loop" in (status.watcher.detail or "").lower(), status.watcher
                assert "rescanning" in (status.watcher.detail or ""), status.watcher
        assert not error_lines(client.stderr_log), error_lines(client.stderr_log)
    finally:
        await client.close()
    _figures[f"watcher: symlink loop ({'polling' if polling else 'native'})"] = (
        "`ln -s . selfdir` and a two-link loop in a watched root: later files still served, "
        f"status watcher {status.watcher.state!r} ({status.watcher.detail})"
    )


async def test_a_file_name_that_is_not_utf8(tmp_path: Path, fake_model: Any) -> None:
    root = tmp_path / "memory"
    write_memory(root, "deploy.md", "deploy steps", "how we deploy the service")
    bad = os.fsencode(root) + b"/caf\xe9-notes.md"
    with open(bad, "wb") as f:
        f.write(b"---\nname: latin one named\ntype: project\n---\nbody\n")
    model = fake_model(lambda _h, payload: (200, completion('{"selected_memories": []}')))
    client = await start_daemon(
        tmp_path, [(root, "project")], selector={"kind": "http", "url": model.url}
    )
    try:
        status = await status_until(client, lambda s: s.ready)
        reasons = {s.path: s.reason for s in status.skipped}
        assert reasons == {
            str(root) + "/caf\\xe9-notes.md": "file name is not valid UTF-8 (rename it to read it)"
        }
        result = await asyncio.wait_for(
            (await client.recall("how do we deploy", initial_wait_ms=0)).response, WAIT
        )
        assert result.refined.strategy == "model", result.refined  # the manifest went out
        assert model.requests, "the selector was never asked"
        # The file changes while watched: the watcher carries on, later files are seen.
        with open(bad, "ab") as f:
            f.write(b"more\n")
        os.rename(bad, os.fsencode(root) + b"/na\xefve.md")
        write_memory(root, "after.md", "after the bad name", "still watched")
        # (the refined phase is the model's, which chooses nothing here: count instead)
        status = await status_until(client, lambda s: s.documents == 2, what="after.md seen")
        assert [s.path for s in status.skipped] == [str(root) + "/na\\xefve.md"], status.skipped
        raw = json.dumps(client.received)
        assert "\\udc" not in raw and "\\ud8" not in raw  # no lone surrogate went out
        assert not error_lines(client.stderr_log), error_lines(client.stderr_log)
    finally:
        await client.close()
    _figures["watcher: non-UTF-8 file name"] = (
        "a memory named with a Latin-1 byte: skipped and reported as `caf\\xe9-notes.md`, "
        "http-selector recalls answered by the model, the name changed while watched and "
        f"later files still served (watcher {status.watcher.state!r})"
    )


async def test_a_parent_made_unreadable_and_restored(tmp_path: Path) -> None:
    if MODE_BOUND is None:
        pytest.skip("running as root without setpriv: file modes do not bind the daemon")
    parent = tmp_path / "parent"
    root = parent / "memory"
    write_memory(root, "deploy.md", "deploy steps", "how we deploy")
    client = await start_daemon(tmp_path, [(root, "project")], prefix=MODE_BOUND)
    try:
        await status_until(client, lambda s: s.ready and s.documents == 1)
        parent.chmod(0)
        status = await status_until(
            client, lambda s: any("permission denied" in f for f in s.faults), what="told"
        )
        assert status.documents == 0
        parent.chmod(0o755)
        await status_until(client, lambda s: not s.faults and s.documents == 1, what="back")
        write_memory(root, "after.md", "after the door opened", "watched again")
        await seen(client, "after the door opened")
        status = await client.status()
        assert status.watcher.state == "watching", status.watcher
        assert not error_lines(client.stderr_log), error_lines(client.stderr_log)
    finally:
        parent.chmod(0o755)
        await client.close()
    _figures["watcher: parent unreadable"] = (
        "the root's parent made mode 000 then restored: memory/status said 'memory root … "
        "cannot be read: permission denied', then served the root again and new files in it"
    )


async def test_permission_errors_clear_when_permissions_come_back(tmp_path: Path) -> None:
    if MODE_BOUND is None:
        pytest.skip("running as root without setpriv: file modes do not bind the daemon")
    root = tmp_path / "memory"
    locked_file = write_memory(root, "locked.md", "locked file", "mode 000 for a while")
    locked_dir = root / "closed"
    write_memory(locked_dir, "inside.md", "inside closed", "in a mode 000 folder")
    locked_file.chmod(0)
    locked_dir.chmod(0)
    try:
        client = await start_daemon(tmp_path, [(root, "project")], prefix=MODE_BOUND)
        try:
            status = await status_until(client, lambda s: s.ready)
            assert len(status.skipped) == 2, status.skipped
            locked_file.chmod(0o644)
            locked_dir.chmod(0o755)
            status = await status_until(
                client, lambda s: not s.skipped and s.documents == 2, what="skipped cleared"
            )
        finally:
            await client.close()
        # A restart reads them too: the snapshot never remembered "permission denied".
        locked_file.chmod(0)
        client = await start_daemon(tmp_path, [(root, "project")], prefix=MODE_BOUND)
        try:
            await status_until(client, lambda s: s.ready and len(s.skipped) == 1)
        finally:
            await client.close()
        locked_file.chmod(0o644)
        client = await start_daemon(tmp_path, [(root, "project")], prefix=MODE_BOUND)
        try:
            status = await status_until(client, lambda s: s.ready)
            assert not status.skipped and status.documents == 2, status
        finally:
            await client.close()
    finally:
        locked_file.chmod(0o644)
        locked_dir.chmod(0o755)


async def test_a_root_deleted_and_recreated_misses_no_file_made_right_after(
    tmp_path: Path,
) -> None:
    """Files made in bursts the moment a root reappears are all served."""
    root = tmp_path / "memory"
    write_memory(root, "seed.md", "seed", "the first one")
    burst = sized(150, 1000)
    cycles = sized(3, 10)
    client = await start_daemon(tmp_path, [(root, "project")])
    missing_total = 0
    try:
        await status_until(client, lambda s: s.ready and s.documents == 1)
        for cycle in range(cycles):
            shutil.rmtree(root)
            await status_until(client, lambda s: s.documents == 0, what=f"gone ({cycle})")
            root.mkdir()
            # Written steadily over the moment the daemon sees the root again and
            # watches it anew (it looks for roots every half second).
            spread_s = 1.5
            for i in range(burst):
                write_memory(root, f"burst-{cycle}-{i}.md", f"burst {cycle} {i}", "right after")
                await asyncio.sleep(spread_s / burst)
            try:
                await status_until(
                    client, lambda s: s.documents == burst, timeout=WAIT, what="burst served"
                )
            except TimeoutError:
                missing_total += burst - (await client.status()).documents
                raise
        assert not error_lines(client.stderr_log), error_lines(client.stderr_log)
    finally:
        await client.close()
    _figures["watcher: root recreated"] = (
        f"a watched root deleted and re-created {cycles} times, {burst} files written over "
        f"the 1.5 s after each comeback: {missing_total} missed"
    )


async def test_a_large_root_coming_back_does_not_stall_status(tmp_path: Path) -> None:
    """Moving a root of thousands of files back: status is answered while it is applied."""
    root = tmp_path / "memory"
    files = sized(4000, 20_000)
    for i in range(files):
        write_memory(
            root / f"d{i % 40}", f"n{i}.md", f"note {i}", f"deploy service {i}", "body " * 30
        )
    client = await start_daemon(tmp_path, [(root, "project")])
    try:
        await status_until(client, lambda s: s.ready and s.documents == files, timeout=WAIT * 6)
        root.rename(tmp_path / "away")
        await status_until(client, lambda s: s.documents == 0, timeout=WAIT * 3, what="away")
        (tmp_path / "away").rename(root)
        latencies, counts = [], []
        deadline = time.monotonic() + WAIT * 6
        while True:
            started = time.perf_counter()
            status = await asyncio.wait_for(client.status(), WAIT)
            latencies.append(time.perf_counter() - started)
            counts.append(status.documents)
            if status.documents == files or time.monotonic() > deadline:
                break
            await asyncio.sleep(0.01)
        assert counts[-1] == files, counts[-5:]
        partial = [c for c in counts if 0 < c < files]
        assert partial, f"status was never answered while the root was applied: {counts}"
    finally:
        await client.close()
    latencies.sort()
    _figures["stall: root of many files moved back"] = (
        f"a {files}-file root moved away and back: memory/status answered {len(latencies)} "
        f"times while it was re-read and applied ({len(partial)} with a partial count), "
        f"p50 {latencies[len(latencies) // 2] * 1000:.1f} ms, max {latencies[-1] * 1000:.0f} ms"
    )


@pytest.mark.parametrize("how", ["recreated", "moved-back"])
async def test_a_root_replaced_at_once_is_rescanned_whole(tmp_path: Path, how: str) -> None:
    """`rm -rf root && mkdir root` (or `mv root away && mv away root`) with no pause for the
    daemon to notice, then 500 files: every one is served, the old ones are gone (or back),
    and the watcher's state says watching. The issue's target is 2 s; the bound is generous
    (a shared machine), the figure is printed."""
    root = tmp_path / "memory"
    for i in range(20):
        write_memory(root, f"old-{i}.md", f"old {i}", "before")
    files = 500
    client = await start_daemon(tmp_path, [(root, "project")])
    try:
        await status_until(client, lambda s: s.ready and s.documents == 20)
        await status_until(client, lambda s: s.watcher.state == "watching")
        if how == "recreated":
            shutil.rmtree(root)
            root.mkdir()
            expected = files
        else:
            root.rename(tmp_path / "away")
            (tmp_path / "away").rename(root)
            expected = files + 20
        started = time.perf_counter()
        for i in range(files):
            write_memory(root / f"d{i % 10}", f"new-{i}.md", f"new {i}", "after")
        written_s = time.perf_counter() - started
        status = await status_until(
            client, lambda s: s.documents == expected, timeout=WAIT, what="every file served"
        )
        visible_s = time.perf_counter() - started
        assert status.watcher.state == "watching", status.watcher
        assert "new 499" in await recall_titles(client, "new 499")
        # The watch is on the new directory: a later change is seen too.
        write_memory(root, "later.md", "later one", "after the burst")
        await seen(client, "later one")
        assert not error_lines(client.stderr_log), error_lines(client.stderr_log)
    finally:
        await client.close()
    _figures[f"watcher: root {how} at once"] = (
        f"{files} files written in {written_s:.2f} s right after the root was {how}: "
        f"all served {visible_s:.2f} s after the first write (target 2 s)"
    )
