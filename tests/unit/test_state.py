"""The state store: WAL, schema versions and migrations, shared by several processes."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from memory_recall.server.store.journal import Change, Journal
from memory_recall.server.store.state import (
    MIGRATIONS,
    SCHEMA_VERSION,
    DeliveryCounter,
    StateStore,
    default_state_dir,
)


def test_a_new_store_is_at_the_current_schema_in_wal_mode(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.sqlite3")
    assert store.schema_version == SCHEMA_VERSION == len(MIGRATIONS)
    assert store.query("PRAGMA journal_mode")[0][0] == "wal"
    tables = {row[0] for row in store.query("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"roots", "operations", "changes", "memory_stats", "links"} <= tables


def test_the_state_dir_follows_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMORY_RECALL_STATE_DIR", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    if sys.platform.startswith("linux"):
        assert default_state_dir() == tmp_path / "xdg" / "memory-recall"
    monkeypatch.setenv("MEMORY_RECALL_STATE_DIR", "off")
    assert default_state_dir() is None
    assert StateStore.open_default() is None


def test_a_later_release_migrates_an_old_database_in_place(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    old = StateStore(path)
    root = old.root_id("/mem")
    Journal(old).begin(root, "remember", "explicit", [Change("a.md", "created", None, b"x")])
    old.close()

    def add_vectors(connection: sqlite3.Connection) -> None:
        connection.execute("ALTER TABLE memory_stats ADD COLUMN vector BLOB")

    newer = StateStore(path, migrations=[*MIGRATIONS, ("embedding vectors", add_vectors)])
    assert newer.schema_version == len(MIGRATIONS) + 1
    columns = {row[1] for row in newer.query("PRAGMA table_info(memory_stats)")}
    assert "vector" in columns
    assert len(Journal(newer).pending(newer.root_id("/mem"))) == 1  # nothing lost
    newer.close()
    # The older release leaves a newer database alone and says why.
    with pytest.raises(sqlite3.DatabaseError, match="newer"):
        StateStore(path)


def test_a_file_that_is_not_a_database_is_moved_aside(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    path.write_bytes(b"this is not sqlite" * 100)
    store = StateStore(path)
    assert store.schema_version == SCHEMA_VERSION
    assert store.problem and "moved to" in store.problem
    assert any(p.name.startswith("state.sqlite3.unreadable-") for p in tmp_path.iterdir())


_WRITER = """
import sys
from pathlib import Path
from memory_recall.server.store.state import DeliveryCounter, StateStore
store = StateStore(Path(sys.argv[1]))
counter = DeliveryCounter()
for i in range(200):
    counter.add("/mem", f"m{i % 10}.md")
    if i % 20 == 19:
        counter.flush(store)
"""


def test_several_processes_share_one_database(tmp_path: Path) -> None:
    path = tmp_path / "state.sqlite3"
    StateStore(path).close()
    procs = [
        subprocess.Popen([sys.executable, "-c", _WRITER, str(path)], stderr=subprocess.PIPE)
        for _ in range(3)
    ]
    for proc in procs:
        assert proc.wait(60) == 0, proc.stderr.read() if proc.stderr else ""
    stats = StateStore(path).stats("/mem")
    assert sum(s.delivered for s in stats.values()) == 600
    assert stats["m3.md"].delivered == 60


def test_deliveries_are_kept_when_a_flush_fails(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "s.sqlite3")
    counter = DeliveryCounter()
    counter.add("/mem", "a.md", 5)
    store.close()
    with pytest.raises(sqlite3.ProgrammingError):
        counter.flush(store)
    fresh = StateStore(tmp_path / "s.sqlite3")
    assert counter.flush(fresh) == 1
    assert fresh.stats("/mem")["a.md"].delivered == 1


def test_a_first_release_database_gains_the_feedback_columns_and_keeps_its_statistics(
    tmp_path: Path,
) -> None:
    path = tmp_path / "state.sqlite3"
    old = StateStore(path, migrations=MIGRATIONS[:1])
    old.add_deliveries({("/mem", "a.md"): (3, 1000)})
    old.close()
    store = StateStore(path)
    assert store.schema_version == SCHEMA_VERSION
    store.add_feedback([("/mem", "a.md"), ("/mem", "b.md")], [("/mem", "c.md")], 5000)
    store.add_recalls({("/mem", "a.md"): 4})
    stats = store.stats("/mem")
    assert (stats["a.md"].delivered, stats["a.md"].used, stats["a.md"].recalled) == (3, 1, 4)
    assert stats["a.md"].last_used_ms == 5000
    assert stats["c.md"].ignored == 1 and stats["c.md"].used == 0
    assert store.co_use(["/mem"]) == {(("/mem", "a.md"), ("/mem", "b.md")): 1}
    store.add_feedback([("/mem", "b.md"), ("/mem", "a.md")], [], 6000)
    assert store.co_use(["/mem"]) == {(("/mem", "a.md"), ("/mem", "b.md")): 2}


def test_a_memory_known_only_by_its_category_has_no_statistics(tmp_path: Path) -> None:
    """Every memory gets a row once its inferred category is kept; `stats` (read on the
    event loop for the status figures) lists only the memories something was counted for."""
    store = StateStore(tmp_path / "s.sqlite3")
    store.cache_categories("/mem", {"a.md": ("h1", "project/decisions"), "b.md": ("h2", "x")})
    store.add_recalls({("/mem", "b.md"): 2})
    assert store.cached_categories("/mem") == {
        "a.md": ("h1", "project/decisions"),
        "b.md": ("h2", "x"),
    }
    stats = store.stats("/mem")
    assert set(stats) == {"b.md"} and stats["b.md"].recalled == 2


def test_the_memories_delivered_last_come_latest_first_from_the_roots_asked(
    tmp_path: Path,
) -> None:
    store = StateStore(tmp_path / "state.sqlite3")
    store.add_deliveries(
        {("/mem", "a.md"): (3, 1000), ("/mem", "b.md"): (1, 3000), ("/other", "c.md"): (1, 5000)}
    )
    store.add_deliveries({("/mem", "a.md"): (1, 4000)})  # delivered again, later
    store.add_recalls({("/mem", "d.md"): 2})  # a candidate, never delivered
    assert store.delivered_last(["/mem"], 10) == [("/mem", "a.md"), ("/mem", "b.md")]
    assert store.delivered_last(["/mem", "/other"], 2) == [("/other", "c.md"), ("/mem", "a.md")]
    assert store.delivered_last([], 10) == [] and store.delivered_last(["/mem"], 0) == []
