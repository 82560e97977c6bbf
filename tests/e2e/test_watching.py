"""Live updates: what an editor does to a memory file shows in the next recall."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from memory_recall.protocol import methods

from tests.e2e.conftest import WAIT, request, start
from tests.memory_files import write_memory


async def eventually(client, query: str, predicate, timeout: float = WAIT) -> dict:
    """Recall until `predicate(paths)` holds: the watcher is asynchronous by nature."""

    async def poll() -> dict:
        while True:
            result = await request(client, methods.RECALL, {"query": query})
            if predicate([d["path"] for d in result["refined"]["docs"]]):
                return result
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(poll(), timeout)


async def test_create_edit_delete_atomic_save_and_rename(client, tmp_path):
    root = tmp_path / "memory"
    root.mkdir()
    await start(client, [(root, "project")], watch=True)

    created = write_memory(root, "notes/kafka.md", title="Kafka consumer lag",
                           description="rebalancing storms")  # fmt: skip
    await eventually(client, "kafka", lambda p: str(created) in p)

    write_memory(root, "notes/kafka.md", title="Broker settings", description="retention")
    await eventually(client, "kafka", lambda p: str(created) not in p)
    await eventually(client, "retention", lambda p: str(created) in p)

    # An editor's atomic save: write a temp file, rename it over the target.
    tmp = root / "notes" / ".kafka.md.tmp"
    tmp.write_text("---\nname: Atomic title\ntype: project\n---\nzeppelin\n", encoding="utf-8")
    os.replace(tmp, created)
    result = await eventually(client, "zeppelin", lambda p: str(created) in p)
    assert result["refined"]["docs"][0]["title"] == "Atomic title"

    # vim-style: rename the old file away, write the new one, delete the backup.
    backup = root / "notes" / "kafka.md~"
    os.rename(created, backup)
    created.write_text("---\nname: Vim saved\ntype: project\n---\nquokka\n", encoding="utf-8")
    backup.unlink()
    await eventually(client, "quokka", lambda p: str(created) in p)

    renamed = root / "archive" / "kafka-old.md"
    renamed.parent.mkdir()
    os.rename(created, renamed)
    await eventually(client, "quokka", lambda p: p == [str(renamed)])

    renamed.unlink()
    await eventually(client, "quokka", lambda p: p == [])


async def test_root_that_appears_later_is_picked_up(client, tmp_path):
    root = tmp_path / "later"
    await start(client, [(root, "user")], watch=True)
    status = await request(client, methods.STATUS, {})
    assert status["roots"][0]["exists"] is False
    write_memory(root, "pref.md", title="Terse answers", type="user")
    await eventually(client, "terse", lambda p: p == [str(root / "pref.md")])


async def test_malformed_file_is_reported_and_siblings_served(client, tmp_path: Path):
    root = tmp_path / "memory"
    write_memory(root, "good.md", title="Good memory", description="walrus")
    (root / "bad.md").write_text("no front matter here\n", encoding="utf-8")
    (root / "todo.md").write_text("---\ntype: todo\n---\n", encoding="utf-8")
    (root / "MEMORY.md").write_text("- [Good](good.md)\n", encoding="utf-8")
    status = await start(client, [(root, "project")], watch=True)
    assert status["documents"] == 1
    reasons = {Path(s["path"]).name: s["reason"] for s in status["skipped"]}
    assert reasons.keys() == {"bad.md", "todo.md"}
    assert "front matter" in reasons["bad.md"] and "todo" in reasons["todo.md"]
    result = await request(client, methods.RECALL, {"query": "walrus"})
    assert [d["title"] for d in result["refined"]["docs"]] == ["Good memory"]
    # Fixing the file makes it a memory; breaking a good one reports it.
    write_memory(root, "bad.md", title="Fixed now", description="walrus")
    await eventually(client, "walrus", lambda p: len(p) == 2)
    (root / "good.md").write_text("---\nname: x\n", encoding="utf-8")
    await eventually(client, "walrus", lambda p: p == [str(root / "bad.md")])
    status = await request(client, methods.STATUS, {})
    assert (
        "unterminated" in {Path(s["path"]).name: s["reason"] for s in status["skipped"]}["good.md"]
    )
