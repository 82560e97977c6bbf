"""Issue 29's data-loss items, reproduced through the real daemon (and the CLI and MCP):
distinct facts never overwritten, an update changes only its statement, a paraphrased
correction is recalled newest-first, real updates are never answered `unchanged`.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.requests import RememberRequest
from memory_recall.server.store.state import StateStore
from memory_recall.server.store.writer import MemoryWriter

from tests.reliability.harness import WAIT, sized, start_daemon, status_until

NO_CAP = {"write": {"indexCap": 5000}}


def state_env(tmp_path: Path) -> dict[str, str]:
    return {"MEMORY_RECALL_STATE_DIR": str(tmp_path / "state")}


def memories(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*.md") if p.name != "MEMORY.md" and ".archive" not in p.parts
    )


async def daemon(tmp_path: Path, root: Path) -> Any:
    root.mkdir(parents=True, exist_ok=True)
    client = await start_daemon(
        tmp_path, [(root, "project")], watch=False, env=state_env(tmp_path),
        initialization_options=NO_CAP,
    )  # fmt: skip
    await status_until(client, lambda s: s.ready)
    return client


async def test_three_url_workers_are_three_memories(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    client = await daemon(tmp_path, root)
    try:
        actions = []
        for text in (
            "Set ORDERS_DB_URL for the orders worker.",
            "Set PAYMENTS_DB_URL for the payments worker.",
            "Set SEARCH_INDEX_URL for the search worker.",
        ):
            (op,) = (await client.remember(text)).operations
            actions.append(op.action)
        assert actions == ["created", "created", "created"]
        bodies = "\n".join(p.read_text("utf-8") for p in memories(root))
        for name in ("ORDERS_DB_URL", "PAYMENTS_DB_URL", "SEARCH_INDEX_URL"):
            assert name in bodies
    finally:
        await client.close()


async def test_sixty_template_facts_are_sixty_memories(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    client = await daemon(tmp_path, root)
    try:
        for n in range(60):
            (op,) = (
                await client.remember(f"queue q{n} drains into bucket b{(n * 7) % 13}")
            ).operations
            assert op.action == "created", (n, op)
        assert len(memories(root)) == 60
    finally:
        await client.close()


def test_two_thousand_template_facts_stay_distinct(tmp_path: Path) -> None:
    """The same writer the daemon runs, in-process (round trips would only time the wire):
    every fact its own memory, none answered unchanged or updated. 300 by default (each
    write fsyncs and journals: ~30 ms here); the issue's 2,000 with MEMORY_RECALL_FULL_LOAD=1."""
    total = sized(300, 2000)
    root = tmp_path / "memory"
    root.mkdir()
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")])
    catalog.scan()
    writer = MemoryWriter(
        catalog, StateStore(tmp_path / "state.sqlite3"), ranker=RANKERS[DEFAULT_RANKER]
    )
    writer.settings = type(writer.settings)(limits=writer.settings.limits, index_cap=5000)
    actions: dict[str, int] = {}
    for n in range(total):
        result = writer.remember(
            RememberRequest(text=f"queue q{n} drains into bucket b{(n * 37) % 101}")
        )
        for op in result.operations:
            actions[op.action] = actions.get(op.action, 0) + 1
    assert actions == {"created": total}
    assert len(memories(root)) == total


def _postgres_root(root: Path) -> Path:
    root.mkdir(parents=True)
    (root / "project_db_version.md").write_text(
        "---\nname: Database version\ndescription: The project database\ntype: project\n---\n\n"
        "The project database is PostgreSQL 16 on db.internal:5432.\n",
        encoding="utf-8",
    )
    (root / "deploys.md").write_text(
        "---\nname: Deploy days\ndescription: When we deploy\ntype: project\n---\n\n"
        "Deploys go out on Tuesdays and Thursdays.\n",
        encoding="utf-8",
    )
    return root


def test_the_redis_line_never_replaces_the_postgres_memory_via_the_cli(tmp_path: Path) -> None:
    root = _postgres_root(tmp_path / "memory")
    done = subprocess.run(
        [sys.executable, "-m", "memory_recall.server", "remember", "--root", str(root),
         "The staging Redis runs on redis-staging.internal:6380"],
        capture_output=True, text=True, timeout=WAIT * 3, env={**os.environ, **state_env(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("created"), done.stdout
    text = (root / "project_db_version.md").read_text("utf-8")
    assert "PostgreSQL 16 on db.internal:5432" in text and "Redis" not in text
    assert any("redis-staging.internal:6380" in p.read_text("utf-8") for p in memories(root))


async def test_the_redis_line_never_replaces_the_postgres_memory_via_mcp(tmp_path: Path) -> None:
    from tests.e2e.test_mcp import answer, call, mcp_session

    workspace = tmp_path / "ws"
    root = _postgres_root(workspace / ".memory")
    async with mcp_session(workspace, tmp_path / "user", env=state_env(tmp_path)) as session:
        result = answer(
            await call(
                session,
                "memory_remember",
                text="The staging Redis runs on redis-staging.internal:6380",
            )
        )
    assert [op["action"] for op in result["operations"]] == ["created"], result
    text = (root / "project_db_version.md").read_text("utf-8")
    assert "PostgreSQL 16 on db.internal:5432" in text and "Redis" not in text


GERMAN = (
    "---\nname: API-Rate-Limit\ndescription: Das Rate-Limit liegt bei 100 Anfragen pro Minute\n"
    "type: project\n---\n\n"
    "Das Rate-Limit liegt bei 100 Anfragen pro Minute.\n"
    "Bei Überschreitung: HTTP 429 mit Retry-After.\n\n"
    "**Why:** Partner haben die API bei Launches überlastet.\n"
    "**How to apply:** Anfragen im SDK bündeln.\n"
)


async def test_an_update_keeps_the_other_sentences_and_why_how_lines(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    (root / "rate-limit.md").write_text(GERMAN, encoding="utf-8")
    client = await daemon(tmp_path, root)
    try:
        (op,) = (
            await client.remember("Das Rate-Limit liegt jetzt bei 250 Anfragen pro Minute.")
        ).operations
        assert (op.action, Path(op.path).name) == ("updated", "rate-limit.md")
        text = (root / "rate-limit.md").read_text("utf-8")
        for kept in (
            "Bei Überschreitung: HTTP 429 mit Retry-After.",
            "**Why:** Partner haben die API bei Launches überlastet.",
            "**How to apply:** Anfragen im SDK bündeln.",
        ):
            assert kept in text
        assert "250 Anfragen" in text and "100 Anfragen" not in text
        index = (root / "MEMORY.md").read_text("utf-8")
        assert "250 Anfragen" in index and "100 Anfragen" not in index
        # The old version stays restorable.
        await client.undo(op.operation)
        assert (root / "rate-limit.md").read_text("utf-8") == GERMAN
    finally:
        await client.close()


async def test_a_paraphrased_correction_is_recalled_newest_first(tmp_path: Path) -> None:
    """Two notes of one slot on disk, titled as `remember` titles them (the correction kept
    beside the old note by an earlier release, or written by another tool): recall delivers
    the newer, marked as superseding the older, dates shown."""
    root = tmp_path / "memory"
    root.mkdir()
    (root / "db.md").write_text(
        "---\nname: The production database is PostgreSQL 15\ndescription: Which PostgreSQL\n"
        "type: project\nupdated: 2025-01-10\n---\n\nThe production database is PostgreSQL 15.\n",
        encoding="utf-8",
    )
    (root / "db-upgrade.md").write_text(
        "---\nname: Since the spring upgrade, the production database is PostgreSQL 16\n"
        "description: After the spring upgrade\ntype: project\n"
        "updated: 2025-06-03\n---\n\nSince the spring upgrade, the production database is"
        " PostgreSQL 16.\n",
        encoding="utf-8",
    )
    client = await daemon(tmp_path, root)
    try:
        handle = await client.recall("which PostgreSQL version does the production database run")
        result = await asyncio.wait_for(handle.response, WAIT)
        assert result.refined is not None
        docs = result.refined.docs
        assert docs and "PostgreSQL 16" in docs[0].body
        assert not any("PostgreSQL 15" in d.body for d in docs)
        (mark,) = docs[0].supersedes or []
        assert (mark.relative_path, mark.date) == ("db.md", "2025-01-10")
        assert "2025-01-10" in result.refined.prompt and "2025-06-03" in result.refined.prompt
    finally:
        await client.close()


REAL_UPDATES = [
    ("The on-call lead for payments is Priya.", "The on-call lead for payments is Marco now."),
    (
        "Dependency updates are opened by Dependabot.",
        "Dependency updates are opened by Renovate now.",
    ),
    ("Python code is formatted with black.", "Python code is formatted with ruff format now."),
    ("The search index is rebuilt nightly.", "The search index is rebuilt hourly."),
    ("Session tokens expire after 24 h.", "Session tokens expire after 1 h."),
    (
        "Backups are written to the bucket acme-backups.",
        "Backups are written to the bucket acme-backups-eu.",
    ),
]


async def test_real_updates_are_never_unchanged(tmp_path: Path) -> None:
    root = tmp_path / "memory"
    client = await daemon(tmp_path, root)
    try:
        for old, new in REAL_UPDATES:
            await client.remember(old)
            (op,) = (await client.remember(new)).operations
            assert op.action != "unchanged", (new, op)
            bodies = "\n".join(p.read_text("utf-8") for p in memories(root))
            assert new.rstrip(".") in bodies, new
    finally:
        await client.close()
