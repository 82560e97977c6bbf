"""Consolidation carried out through the writer (docs/organisation.md): one operation, one undo, one lock."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.dev.messy_year import check, generate
from memory_recall.server.organise.dream import AUTO_AFTER_MS, Busy, Dreamer, due
from memory_recall.server.organise.organiser import Organiser, OrganiseSettings
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS
from memory_recall.server.ranking.shortlist import build_shortlist
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.files import ARCHIVE_DIR, ROOT_LOCK_NAME, RootLock, root_key
from memory_recall.server.store.state import StateStore
from memory_recall.server.store.writer import MemoryWriter, RememberRequest

MESSY_SIZE = 600 if os.environ.get("MEMORY_RECALL_FULL_LOAD") else 120


def files(root: Path) -> dict[str, bytes]:
    """Every file under the root, hidden ones (the archive) included."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ROOT_LOCK_NAME  # the root's write lock lives there
    }


class World:
    def __init__(self, tmp: Path, memories: int = MESSY_SIZE, seed: int = 17) -> None:
        self.year = generate(tmp / "year", memories=memories, seed=seed)
        self.state = StateStore(tmp / "state" / "state.sqlite3")
        self.catalog = MemoryCatalog([MemoryRoot.of(self.year.root, "project")])
        self.catalog.scan()
        self.writer = MemoryWriter(self.catalog, self.state, ranker=RANKERS[DEFAULT_RANKER])
        settings = OrganiseSettings(capacity=self.year.labels["capacity"])
        self.organiser = Organiser(
            self.catalog.roots, workspace=str(self.year.workspace), settings=settings
        )
        self.dreamer = Dreamer(self.writer, self.organiser)

    def recall(self, query: str) -> list[str]:
        spec = RANKERS[DEFAULT_RANKER]
        shortlist = build_shortlist(
            self.catalog.snapshot(), query, ranker=spec.rank, tokenizer=spec.tokenize
        )
        return [s.document.path for s in shortlist.fallback]


@pytest.fixture
def world(tmp_path: Path) -> World:
    return World(tmp_path)


def test_the_messy_year_dry_run_real_run_recall_and_one_undo(world: World):
    root = world.year.root
    before = files(root)
    dry = world.dreamer.run(0, dry_run=True)
    assert check(dry.plan, world.year.labels, root).perfect
    assert files(root) == before  # a dry run changes nothing

    run = world.dreamer.run(0)
    assert run.operation is not None
    assert {o.operation for o in run.result.operations} == {run.operation}  # one operation

    def actions(plan):  # retention scores move with the clock; the decisions must not
        return [(a.path, a.cause, a.into) for a in plan.archives], plan.rewrites

    assert actions(run.plan) == actions(dry.plan)
    after = files(root)
    live = [p for p in after if not p.startswith(ARCHIVE_DIR) and p.endswith(".md")]
    assert len([p for p in live if p != "MEMORY.md"]) == world.year.labels["capacity"]
    for pinned in world.year.labels["pinned"] + world.year.labels["always"]:
        assert after[pinned] == before[pinned]
    for cluster in world.year.labels["clusters"]:
        newest = cluster["newest"]
        if newest in after:  # not pruned for capacity
            assert all(line.encode() in after[newest] for line in cluster["keptLines"])
    index = after["MEMORY.md"].decode()
    assert index.count("\n- [") <= 200 and "](" in index

    # Recall never returns a superseded fact for the fixture's questions.
    for correction in world.year.labels["corrections"]:
        delivered = world.recall(correction["question"])
        superseded = {str(root / p) for p in correction["superseded"]}
        assert not superseded & set(delivered), correction["question"]
        for path in delivered:
            assert correction["oldFact"] not in Path(path).read_text("utf-8")

    undone = world.writer.undo(run.operation)
    assert undone.operations
    assert files(root) == before  # every file back, byte for byte
    assert not (root / ARCHIVE_DIR).exists()  # and no archive folder left behind


def test_a_second_consolidation_of_the_same_root_waits_its_turn(world: World):
    lock = RootLock(world.state.lock_dir, f"consolidate {root_key(world.catalog.roots[0])}")
    with lock.held(), pytest.raises(Busy, match="another process is consolidating"):
        world.dreamer.run(0)  # while another daemon holds it
    assert world.dreamer.run(0).operation is not None  # free again


def test_a_file_changed_after_the_plan_is_never_overwritten(world: World, monkeypatch):
    """The user saves a memory the plan merges while the plan is being carried out."""
    plan = world.organiser.plan_for(0, world.dreamer._docs(0))
    victim = Path(plan.rewrites[0].path)
    original = world.organiser.plan_for
    edits = []

    def plan_then_edit(index, docs, now_ms=None):
        made = original(index, docs, now_ms)
        if not edits:  # once: the user's save lands between the plan and the commit
            edits.append(victim)
            victim.write_text(victim.read_text("utf-8") + "\nA line the user just added.\n")
        return made

    monkeypatch.setattr(world.organiser, "plan_for", plan_then_edit)
    run = world.dreamer.run(0)  # planned again on what is on disk now
    assert "A line the user just added." in victim.read_text("utf-8")
    assert run.operation is not None


def test_nothing_to_do_is_still_the_last_consolidation(tmp_path: Path):
    world = World(tmp_path, memories=60)
    first = world.dreamer.run(0)
    second = world.dreamer.run(0)
    assert [o.title for o in second.result.operations] == ["consolidation"]
    assert second.result.operations[0].reason == "nothing to change"
    assert first.operation != second.operation


def test_automatic_consolidation_is_due_after_a_day_and_five_writes(world: World):
    key = root_key(world.catalog.roots[0])
    now = world.state.query("SELECT strftime('%s','now') * 1000")[0][0]
    assert not due(world.state, key, now).due  # no writes yet
    for n in range(5):
        world.writer.remember(RememberRequest(text=f"Fact number {n}: the queue holds {n} jobs."))
    assert due(world.state, key, now + 1000).due  # never consolidated, 5 writes
    world.dreamer.run(0, trigger="auto")
    later = due(world.state, key, now + 2000)
    assert not later.due and later.writes == 0 and later.last_ms is not None
    for n in range(5):
        world.writer.remember(RememberRequest(text=f"Another fact {n}: the cache keeps {n} keys."))
    assert not due(world.state, key, later.last_ms + 1000).due  # 5 writes, but within a day
    assert due(world.state, key, later.last_ms + AUTO_AFTER_MS + 1).due


async def test_the_daemon_path_plans_off_the_event_loop(world: World):
    ticks = 0

    async def ticker():
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    task = asyncio.ensure_future(ticker())
    run = await world.dreamer.run_async(0)
    task.cancel()
    assert run.operation is not None and ticks > 0


async def test_automatic_consolidation_runs_only_when_idle_and_due(world: World):
    from memory_recall.server.organise.dream import AutoConsolidation

    clock = [1000.0]
    auto = AutoConsolidation(world.dreamer, idle_s=120, clock=lambda: clock[0])
    for n in range(5):
        world.writer.remember(RememberRequest(text=f"Fact number {n}: the queue holds {n} jobs."))
    assert await auto.tick(last_activity=990.0) == []  # a request 10 s ago: not idle
    (run,) = await auto.tick(last_activity=800.0)  # idle for 200 s, never consolidated
    assert run.operation is not None
    record = world.writer.journal.get(run.operation)
    assert (record.kind, record.trigger) == ("consolidate", "auto")
    assert await auto.tick(last_activity=0.0) == []  # just consolidated: not due for a day
    lock = RootLock(world.state.lock_dir, f"consolidate {root_key(world.catalog.roots[0])}")
    auto.wall_ms = lambda: 10**13  # far in the future: due again…
    for n in range(5):
        world.writer.remember(RememberRequest(text=f"Later fact {n}: the pool holds {n} items."))
    with lock.held():  # … but another daemon is consolidating: skipped, not waited for
        assert await auto.tick(last_activity=0.0) == []


def test_a_memory_archived_by_consolidation_can_be_restored(world: World):
    run = world.dreamer.run(0)
    pruned = [a for a in run.plan.archives if a.cause == "capacity"]
    superseded = [a for a in run.plan.archives if a.cause == "superseded"]
    root = world.year.root
    for item in (pruned[0], superseded[0]):
        rel = os.path.relpath(item.path, root)
        original = (root / ARCHIVE_DIR / rel).read_bytes()
        restored = world.writer.restore(item.path)
        assert [o.action for o in restored.operations] == ["restored"]
        assert (root / rel).read_bytes() == original and not (root / ARCHIVE_DIR / rel).exists()


def test_restore_finds_the_copy_consolidation_made_beside_an_older_one(world: World):
    root = world.year.root
    plan = world.organiser.plan_for(0, world.dreamer._docs(0))
    rel = os.path.relpath(next(a for a in plan.archives if a.cause == "capacity").path, root)
    older = root / ARCHIVE_DIR / rel  # an earlier forget left a copy under the same name
    older.parent.mkdir(parents=True, exist_ok=True)
    older.write_text("---\nname: an older forgotten version\ntype: project\n---\nold\n")
    current = (root / rel).read_bytes()
    world.dreamer.run(0)
    assert not (root / rel).exists()
    world.writer.restore(str(root / rel))
    assert (root / rel).read_bytes() == current
    assert older.read_text().endswith("old\n")  # the other archived copy is left alone


def test_one_consolidation_of_two_roots_is_undone_by_one_undo(tmp_path: Path):
    """The user's and the project's memories consolidated by one request: one batch."""
    project = generate(tmp_path / "project", memories=60, seed=3)
    user = generate(tmp_path / "user", memories=60, seed=5)
    state = StateStore(tmp_path / "state" / "state.sqlite3")
    catalog = MemoryCatalog(
        [MemoryRoot.of(project.root, "project"), MemoryRoot.of(user.root, "user")]
    )
    catalog.scan()
    writer = MemoryWriter(catalog, state, ranker=RANKERS[DEFAULT_RANKER])
    settings = OrganiseSettings(capacity=project.labels["capacity"])
    organiser = Organiser(catalog.roots, workspace=str(project.workspace), settings=settings)
    dreamer = Dreamer(writer, organiser)
    before = {r: files(r) for r in (project.root, user.root)}

    runs = dreamer.run_all(None)
    operations = [run.operation for run in runs]
    assert len(operations) == 2 and None not in operations
    records = [writer.journal.get(op) for op in operations]
    assert records[0].batch and records[0].batch == records[1].batch
    assert all(files(r) != before[r] for r in before)  # both roots changed

    undone = writer.undo(operations[0])  # either operation names the whole batch
    assert len(undone.operations) >= 2
    assert {r: files(r) for r in before} == before  # both roots back, byte for byte

    redone_from = writer.journal.get(undone.operations[0].operation)
    assert redone_from.batch  # the undos are a batch too: undoing one redoes both
    writer.undo(redone_from.id)
    assert all(files(r) != before[r] for r in before)


def test_a_dry_run_of_several_roots_is_no_batch(tmp_path: Path):
    world = World(tmp_path, memories=40)
    runs = world.dreamer.run_all(None, dry_run=True)
    assert [r.result for r in runs] == [None]
