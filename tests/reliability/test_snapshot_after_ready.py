"""The real daemon is ready before it writes its snapshot, writes it right after, and the
next daemon reuses it (docs/performance.md, "The snapshot written after ready")."""

from __future__ import annotations

from pathlib import Path

from tests.memory_files import write_memory
from tests.reliability.harness import start_daemon, status_until, wait_until


async def _start_and_stop(
    tmp_path: Path, root: Path, cache: Path, replacing: int | None = None
) -> tuple[Path, str]:
    """One daemon's life: ready, its snapshot written (in place of the one written at
    `replacing`, an mtime, if given), its log (the cache's report)."""
    client = await start_daemon(
        tmp_path, [(root, "project")], env={"MEMORY_RECALL_CACHE_DIR": str(cache)}
    )
    try:
        await status_until(client, lambda s: s.ready, what="ready")
        snapshot = await wait_until(
            lambda: next(
                (
                    path
                    for path in cache.glob("catalog-*.snapshot")
                    if path.stat().st_mtime_ns != replacing
                ),
                None,
            ),
            what="the snapshot written",
        )
        report = await wait_until(
            lambda: next(
                (line for line in client.stderr_log.read_text().splitlines() if "snapshot" in line),
                None,
            ),
            what="the snapshot cache's report",
        )
    finally:
        await client.close()
    return snapshot, report


async def test_a_snapshot_written_after_ready_is_what_the_next_daemon_reuses(
    tmp_path: Path,
) -> None:
    root = tmp_path / "memory"
    for i in range(12):
        write_memory(root, f"note-{i}.md", f"note {i}", f"how we deploy service {i}")
    cache = tmp_path / "cache"

    snapshot, report = await _start_and_stop(tmp_path, root, cache)
    assert "no snapshot yet" in report
    written = snapshot.stat().st_mtime_ns

    # A file changed while no daemon ran: read again, and the snapshot written again
    # after `ready`.
    write_memory(root, "note-3.md", "note 3", "how we roll back service 3")
    _snapshot, report = await _start_and_stop(tmp_path, root, cache, replacing=written)
    assert "snapshot reused for 11 files, 1 read again" in report

    _snapshot, report = await _start_and_stop(tmp_path, root, cache)
    assert "snapshot reused for 12 files, 0 read again" in report  # the rewritten one
