"""The session's memory network: kept up to date from the catalog's own change record
(equal to a network built from scratch), co-use links from feedback, and the usage
statistics retention reads (uses renew, recalls do not)."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memory_recall.protocol.messages import FeedbackParams
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.core.networking import NetworkSide
from memory_recall.server.core.reflecting import ReflectionSide
from memory_recall.server.core.writing import WriteSide
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.network.graph import MemoryNetwork, NetworkDocument
from memory_recall.server.organise.categories import infer_category
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.state import StateStore


def write(root: Path, rel: str, title: str, body: str, extra: str = "") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {title}\ndescription: d\ntype: project\n{extra}---\n{body}\n")
    return path


def steps(network: MemoryNetwork, paths: list[str]) -> dict[str, set[tuple[str, str, str]]]:
    return {p: {(n.path, n.kind, n.direction) for n in network.neighbours(p)} for p in paths}


def test_the_network_follows_the_catalog_and_equals_a_fresh_build(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    a = write(root, "a.md", "Alpha", "See [beta](b.md).")
    b = write(root, "b.md", "Beta", "Nothing.")
    write(root, "c.md", "Gamma", "Mentions nobody.")
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")], RANKERS["bm25f"].index_kind)
    catalog.scan()
    side = NetworkSide(catalog)

    async def run() -> None:
        await side.build()
        write(root, "c.md", "Gamma", "Now links [[Alpha]] and related.", "related: [b.md]\n")
        catalog.upsert(root / "c.md")
        catalog.remove(b)
        b.unlink()
        d = write(root, "d.md", "Delta", "See [alpha](a.md).")
        catalog.upsert(d)
        assert side.current() is side

    asyncio.run(run())
    assert side.network is not None
    fresh = MemoryNetwork.build(NetworkDocument.of(doc) for doc in catalog.snapshot().documents)
    paths = [str(root / n) for n in ("a.md", "c.md", "d.md")]
    assert steps(side.network, paths) == steps(fresh, paths)
    assert str(b) not in side.network and side.document(str(b)) is None
    assert side.document(str(root / "d.md")) is not None
    assert str(a) in {n.path for n in side.network.neighbours(str(root / "d.md"))}


def test_a_new_title_is_found_in_earlier_bodies_between_recalls(tmp_path: Path) -> None:
    """A recall's sync looks for a new title in the bodies already there for a moment at
    most; the rest is looked for between recalls, until the network is the fresh one."""
    root = tmp_path / "mem"
    for i in range(300):
        write(root, f"n{i:03}.md", f"Note {i:03}", f"Ask Priya Raman about release {i}.")
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")], RANKERS["bm25f"].index_kind)
    catalog.scan()
    side = NetworkSide(catalog)
    priya = str(root / "p.md")

    async def run() -> None:
        await side.build()
        assert side.network is not None
        side.network.mention_budget_s = 0.0  # as on a slow machine: nothing on the path
        catalog.upsert(write(root, "p.md", "Priya Raman", "Leads the payments team."))
        assert side.current() is side
        assert side.network.mentions_pending == 1
        for _ in range(1000):
            if not side.network.mentions_pending:
                break
            await asyncio.sleep(0.01)
        assert side.network.mentions_pending == 0

    asyncio.run(run())
    assert side.network is not None
    mentioning = {n.path for n in side.network.neighbours(priya) if n.kind == "mention"}
    fresh = MemoryNetwork.build(NetworkDocument.of(doc) for doc in catalog.snapshot().documents)
    assert mentioning == {n.path for n in fresh.neighbours(priya) if n.kind == "mention"}
    # 300 mention it: far past a rare title's few, so the search stopped long before the end
    assert 9 <= len(side.network._mentioned_by["priya raman"]) < 300


def test_feedback_links_co_used_memories_and_feeds_retention_usage(tmp_path: Path) -> None:
    root = tmp_path / "mem"
    a = str(write(root, "a.md", "Alpha", "x"))
    b = str(write(root, "b.md", "Beta", "y"))
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")], RANKERS["bm25f"].index_kind)
    catalog.scan()
    state = StateStore(tmp_path / "state.sqlite3")
    write_side = WriteSide(catalog, RANKERS["bm25f"], state=state)
    side = NetworkSide(catalog, state)
    spawned: list[object] = []

    async def run() -> None:
        await side.build()
        reflection = ReflectionSide(write_side, side, lambda coro, _name: spawned.append(coro))
        answer = reflection.feedback(FeedbackParams(used=[a, b], ignored=["/gone.md"]))
        assert (answer.recorded, answer.unknown, answer.co_use_links) == (2, ["/gone.md"], 1)
        for coro in spawned:
            await coro  # type: ignore[misc]
        assert side.network is not None
        assert ("coUse", b) in {(n.kind, n.path) for n in side.network.neighbours(a)}
        usage = reflection.usage([a, b])
        assert usage[a].used == 1 and usage[a].last_used_ms is not None
        # a restart reads the co-use pair back
        again = NetworkSide(catalog, state)
        await again.build()
        assert again.loaded_from_state and again.network is not None
        assert again.network.co_use_pairs() == 1

    asyncio.run(run())


def test_status_usage_places_a_memory_once_per_version_across_restarts(tmp_path: Path) -> None:
    """The per-category figures place every memory on the topic tree (seconds at 10,000);
    what was inferred is kept in the state store, so the next start places only the
    memories that changed, and a declared category is read, never kept."""
    root = tmp_path / "mem"
    write(root, "a.md", "Deploy runbook", "Run `make deploy` after the tests.")
    b = write(root, "b.md", "Editor", "The user prefers tabs.")
    write(root, "c.md", "Team", "Owners.", "category: people/team\n")
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")], RANKERS["bm25f"].index_kind)
    catalog.scan()
    placed: list[str] = []

    def place(doc: MemoryDocument) -> str:
        placed.append(Path(doc.path).name)
        return infer_category(
            type=doc.type, title=doc.title, description=doc.description, body=doc.body,
            declared=doc.meta("category"),
        ).slug  # fmt: skip

    def figures() -> dict[str, int]:
        state = StateStore(tmp_path / "state.sqlite3")  # a new start each time
        network = NetworkSide(catalog, state)
        write_side = WriteSide(catalog, RANKERS["bm25f"], state=state)
        reflection = ReflectionSide(write_side, network, lambda _coro, _name: None)
        docs = catalog.snapshot().documents
        usage = reflection.category_usage(docs, place, {})
        state.close()
        return {c.category: c.memories for c in usage}

    first = figures()
    assert sorted(placed) == ["a.md", "b.md", "c.md"]
    placed.clear()
    assert figures() == first
    assert placed == ["c.md"]  # declared: read from the file each time
    placed.clear()
    write(root, "b.md", "Editor", "The user prefers spaces now.")
    catalog.upsert(b)
    figures()
    assert sorted(placed) == ["b.md", "c.md"]
