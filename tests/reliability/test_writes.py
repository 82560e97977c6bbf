"""The write side under attack: kill -9 in the middle of writes, two daemons on one root.

Default sizes keep the tier quick; `MEMORY_RECALL_FULL_LOAD=1` runs the
issue's figures (1,000 writes killed at random points; 200 operations from each
of two daemons).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sqlite3
from pathlib import Path
from typing import Any

from memory_recall.protocol import methods
from memory_recall.protocol.client import RpcError
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.documents import content_hash
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.index_file import index_target
from memory_recall.server.store.memory_file import MemoryFile

from tests.reliability.harness import WAIT, sized, start_daemon, status_until

_WORDS = str.split(
    "amber basalt cobalt dune ember fjord garnet harbor iris jasper kelp lagoon marble nectar "
    "onyx prairie quartz reef sierra tundra umber valley willow xenon yarrow zephyr anchor "
    "beacon canyon delta estuary falcon glacier heron island juniper kestrel lantern meadow "
    "nimbus orchid pebble quill raven saffron thistle upland vortex walnut yonder zinnia"
)


# MEMORY.md big enough for every memory these tests make, so that "one line per memory"
# can be checked (the cap itself is tested in the unit tier).
NO_CAP = {"write": {"indexCap": 5000}}


def fact(rng: random.Random, tag: str) -> str:
    """A memory no other one duplicates or updates: a unique tag and random words."""
    words = rng.sample(_WORDS, 7)
    return f"Fact {tag}: the {words[0]} {words[1]} sits beside {' '.join(words[2:])}."


def state_env(tmp_path: Path) -> dict[str, str]:
    return {"MEMORY_RECALL_STATE_DIR": str(tmp_path / "state")}


def known_versions(state_path: Path) -> dict[str, set[str | None]]:
    """Every content hash the journal ever recorded per relative path (old and new)."""
    with sqlite3.connect(state_path) as db:
        rows = db.execute("SELECT path, before_hash, after_hash FROM changes").fetchall()
    versions: dict[str, set[str | None]] = {}
    for path, before, after in rows:
        versions.setdefault(path, set()).update({before, after})
    return versions


def check_disk(root: Path, state_path: Path) -> None:
    """Every memory file is a whole version the journal knows; nothing odd is visible."""
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")])
    catalog.scan()
    assert not catalog.skipped, catalog.skipped  # no half-written or stray file is scanned
    versions = known_versions(state_path)
    for path in root.rglob("*.md"):
        rel = path.relative_to(root).as_posix()
        if rel == "MEMORY.md":
            continue
        digest = content_hash(path.read_bytes())
        assert digest in versions.get(rel, set()), f"{rel} is neither an old nor a new version"
    visible = [p for p in root.iterdir() if not p.name.startswith(".") and p.suffix != ".md"]
    assert not visible, visible


def check_index(root: Path) -> None:
    """MEMORY.md lists each memory once and nothing that is gone."""
    lines = (root / "MEMORY.md").read_text().splitlines()
    targets = [index_target(line) for line in lines if index_target(line)]
    on_disk = {
        p.relative_to(root).as_posix()
        for p in root.rglob("*.md")
        if p.name != "MEMORY.md" and not p.relative_to(root).as_posix().startswith(".")
    }
    assert len(targets) == len(set(targets)), "a memory listed twice"
    assert set(targets) == on_disk, set(targets) ^ on_disk


def _send_writes(
    client: Any, rng: random.Random, tag: str, count: int, live: list[str]
) -> list[Any]:
    """Send `count` writes without waiting for their answers (the daemon queues them)."""
    sent = []
    for i in range(count):
        kind = rng.random()
        if kind < 0.55 or not live:
            sent.append(client.request(methods.REMEMBER, {"text": fact(rng, f"{tag}-{i}")}))
        elif kind < 0.8:
            path = rng.choice(live)
            body = fact(rng, f"{tag}-{i}-edit")
            sent.append(client.request(methods.UPDATE, {"path": path, "body": body}))
        else:
            sent.append(
                client.request(methods.FORGET, {"path": live.pop(rng.randrange(len(live)))})
            )
    return [asyncio.ensure_future(request) for request in sent]


async def _until_answered(sent: list[Any], count: int) -> None:
    """Until `count` of the writes are answered (or all are)."""
    pending = set(sent)
    while pending and len(sent) - len(pending) < count:
        _done, pending = await asyncio.wait(pending, return_when=asyncio.FIRST_COMPLETED)


async def _answered(sent: list[Any], live: list[str]) -> int:
    """How many of the writes were answered before the daemon died."""
    answered = 0
    for outcome in await asyncio.gather(*sent, return_exceptions=True):
        if isinstance(outcome, dict):
            answered += 1
            for op in outcome["operations"]:
                if op["action"] == "created":
                    live.append(op["path"])
    return answered


async def test_kill_dash_nine_during_writes_leaves_old_or_new_never_a_mix(
    tmp_path: Path, figures: dict[str, str]
) -> None:
    total = sized(150, 1000)
    root = tmp_path / "memory"
    root.mkdir()
    state_path = tmp_path / "state" / "state.sqlite3"
    rng = random.Random(15)
    sent = answered = kills = 0
    live: list[str] = []
    while answered < total:
        client = await start_daemon(
            tmp_path, [(root, "project")], watch=False, env=state_env(tmp_path),
            initialization_options=NO_CAP,
        )  # fmt: skip
        await status_until(client, lambda s: s.ready)
        batch = rng.randint(30, 80)
        writing = _send_writes(client, rng, f"r{kills}", batch, live)
        # Somewhere in the middle of the batch. Writes sent together are drafted and read
        # ahead side by side before the first is committed, so the first answer comes a
        # few hundred milliseconds after the batch and the next ones a few milliseconds
        # apart: most kills fall a moment after some write's answer, in the next one; the
        # others at any moment from the first request on.
        if rng.random() < 0.8:
            await asyncio.wait_for(_until_answered(writing, rng.randint(5, 25)), WAIT)
            await asyncio.sleep(rng.uniform(0.0, 0.02))
        else:
            await asyncio.sleep(rng.uniform(0.02, 0.5))
        assert client.process is not None
        os.kill(client.process.pid, signal.SIGKILL)
        await client.process.wait()
        kills += 1
        sent += batch
        answered += await asyncio.wait_for(_answered(writing, live), WAIT)
        live = [p for p in live if Path(p).exists()]
        check_disk(root, state_path)
    # One more daemon settles what the last kill left, with its first write.
    client = await start_daemon(
        tmp_path, [(root, "project")], watch=False, env=state_env(tmp_path),
        initialization_options=NO_CAP,
    )  # fmt: skip
    try:
        await status_until(client, lambda s: s.ready)
        await client.remember("The last fact after all the kills.")
        check_disk(root, state_path)
        check_index(root)
        with sqlite3.connect(state_path) as db:
            states = dict(db.execute("SELECT state, COUNT(*) FROM operations GROUP BY state"))
            recovered = dict(
                db.execute(
                    "SELECT state, COUNT(*) FROM operations WHERE result LIKE '%recovered%'"
                    " GROUP BY state"
                )
            )
        assert "pending" not in states and "interrupted" not in states, states
        assert not list(root.rglob(".*.tmp")), "temp files left after recovery"
        files = len([p for p in root.glob("*.md") if p.name != "MEMORY.md"])
        status = await client.status()
        assert status.documents == files
    finally:
        await client.close()
    figures["writes: kill -9"] = (
        f"{answered} writes answered of {sent} sent (remember/update/forget) to daemons killed"
        f" with SIGKILL {kills} times at random moments: every file an old or a new version,"
        " never a mix, nothing half-written visible to the scanner; operations the kills left"
        f" pending were settled by the next daemon ({recovered.get('applied', 0)} replayed or"
        f" found complete, {recovered.get('discarded', 0)} discarded), none left pending;"
        f" {states.get('applied', 0)} applied in all; MEMORY.md consistent"
        " (reproduce: MEMORY_RECALL_FULL_LOAD=1 .venv/bin/pytest tests/reliability/test_writes.py)"
    )


async def _counter(client: Any, token: str) -> tuple[str, str, int]:
    handle = await client.recall(f"{token} counter")
    result = await asyncio.wait_for(handle.response, WAIT)
    doc = result.refined.docs[0]
    return doc.path, doc.content_hash, int(doc.body.rsplit(" ", 1)[1])


async def _daemon_work(
    client: Any, name: str, ops: int, rng: random.Random, token: str
) -> tuple[list[str], int, int]:
    created: list[str] = []
    increments = conflicts = 0
    for i in range(ops):
        if rng.random() < 0.6:
            text = fact(rng, f"{name}-{i}")
            result = await client.remember(text)
            (op,) = result.operations
            assert op.action == "created", op
            created.append(text)
            continue
        for _attempt in range(100):  # read, modify, write with ifMatch: retry when raced
            path, version, value = await _counter(client, token)
            try:
                await client.update(path, if_match=version, body=f"{token} counter {value + 1}")
                increments += 1
                break
            except RpcError as exc:
                assert exc.code == methods.REQUEST_FAILED and "changed on disk" in exc.message
                conflicts += 1
                await asyncio.sleep(rng.uniform(0.01, 0.08))
        else:
            raise AssertionError("an increment never got through")
    return created, increments, conflicts


async def test_two_daemons_on_one_root_lose_no_update(
    tmp_path: Path, figures: dict[str, str]
) -> None:
    ops = sized(40, 200)
    root = tmp_path / "memory"
    root.mkdir()
    env = state_env(tmp_path)
    a = await start_daemon(
        tmp_path, [(root, "project")], watch=True, env=env, initialization_options=NO_CAP
    )
    b = await start_daemon(
        tmp_path, [(root, "project")], watch=True, env=env, initialization_options=NO_CAP
    )
    token = "zebracounter"
    try:
        await status_until(a, lambda s: s.ready)
        await status_until(b, lambda s: s.ready)
        await a.remember(f"{token} counter 0", title=f"{token} counter")
        await status_until(b, lambda s: s.documents == 1, what="b sees the counter")
        (made_a, inc_a, raced_a), (made_b, inc_b, raced_b) = await asyncio.gather(
            _daemon_work(a, "a", ops, random.Random(1), token),
            _daemon_work(b, "b", ops, random.Random(2), token),
        )
        files = [p for p in root.glob("*.md") if p.name != "MEMORY.md"]
        bodies = {MemoryFile.parse(p.read_text()).body for p in files}  # every file whole
        for text in made_a + made_b:
            assert text in bodies, f"lost: {text}"
        assert len(files) == len(made_a) + len(made_b) + 1
        counter = next(p for p in files if p.name.startswith(token))
        value = int(MemoryFile.parse(counter.read_text()).body.rsplit(" ", 1)[1])
        assert value == inc_a + inc_b, (value, inc_a, inc_b)  # no lost update
        check_index(root)
        for client in (a, b):  # each catalog catches up with the other daemon's writes
            await status_until(client, lambda s: s.documents == len(files), what="catalog")
            for _ in range(100):
                if (await _counter(client, token))[2] == value:
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("a daemon never saw the other's last write")
    finally:
        await a.close()
        await b.close()
    figures["writes: two daemons"] = (
        f"two daemons on one root, {ops} operations each (60 % new memories, 40 % increments of"
        f" one shared counter memory with ifMatch): {len(made_a) + len(made_b)} memories all"
        f" present, counter {inc_a + inc_b} = increments made, {raced_a + raced_b} races refused"
        " as 'changed on disk' and retried, MEMORY.md lists every memory once"
        " (reproduce: MEMORY_RECALL_FULL_LOAD=1 .venv/bin/pytest tests/reliability/test_writes.py)"
    )
