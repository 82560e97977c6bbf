"""The bench's load figures: do requests go first when the daemon holds many memories and writes?

Measured through the real daemon over stdio (docs/performance.md, "Recalls first"), on a
copy of a synthetic tree (the copy takes the writes), beside an empty daemon started at
the same time, so that the machine's load hits both alike:

- **start-up work**: how long after its first `memory/status` the loaded daemon is quiet
  (ready, its memory network built, the status figures worked out); every figure below
  is taken after it;
- **trivial request**: a request the daemon answers without its core (a method it does
  not have: -32601), to the loaded daemon and to the empty one, alternately: what a
  request pays for holding a large corpus; and again right after each recall;
- **recall**: the time to a recall's first result on the quiet daemon, before anything
  is written;
- **remember**: `memory/remember` end to end (gate, conflicts against the warm index,
  journal, fsync'd atomic write, MEMORY.md, index update), one write at a time; then
  recalls right after those writes (what they leave to do in the background);
- **recall during a write burst**: while another task sends `burst` remembers back to
  back on the same connection.

Figures are printed, never asserted: the machine is shared. The ratios are the figures.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import shutil
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memory_recall.server.dev.bench import QUERIES, Percentiles, _first_result_ms
from memory_recall.server.dev.synthetic import write_tree
from memory_recall.server.dev.write_bench import _facts

TRIVIAL_METHOD = "memory/nothing"  # no such method: answered -32601 by the face alone
SETTLE_S = 2.0  # after the start-up work, for its last steps and the writer's warm-up


@dataclass
class LoadResult:
    docs: int
    trivial_empty: Percentiles
    trivial_loaded: Percentiles
    trivial_after_recall_empty: Percentiles
    trivial_after_recall_loaded: Percentiles
    remember: Percentiles
    recall_quiet: Percentiles
    recall_after_writes: Percentiles
    recall_burst: Percentiles
    settle_s: float
    burst_writes: int
    burst_s: float

    @property
    def trivial_ratio(self) -> float:
        """p95 loaded ÷ p95 empty (the issue's target: ≤ 1.5)."""
        return self.trivial_loaded.p95 / self.trivial_empty.p95

    @property
    def burst_ratio(self) -> float:
        """Recall p95 during the burst ÷ quiet (the issue's target: ≤ 2)."""
        return self.recall_burst.p95 / self.recall_quiet.p95


async def _start(roots: list[tuple[Path, str]], work: Path, name: str) -> Any:
    from memory_recall.protocol.client import MemoryRecallClient

    async def nothing_selected(_params: Any) -> list[str]:
        return []

    return await MemoryRecallClient.start(
        roots=[(str(path), scope) for path, scope in roots],
        selector={"kind": "client"},  # the host's model: both phases, as an editor has them
        select_handler=nothing_selected,
        watch=True,
        env={
            "MEMORY_RECALL_CACHE_DIR": str(work / f"cache-{name}"),
            "MEMORY_RECALL_STATE_DIR": str(work / f"state-{name}"),
        },
    )


async def _settled(client: Any, docs: int, timeout_s: float = 900) -> float:
    """Ready, every memory indexed, the memory network built and `memory/status`'s figures
    worked out (the first asks for them place every memory on the topic tree: seconds of
    a worker thread at 10,000): the daemon quiet, its start-up work done. The seconds
    from the first look to then."""
    started = time.monotonic()
    deadline = started + timeout_s
    while True:
        status = await client.status()
        network = status.network
        if (
            status.ready
            and status.documents >= docs
            and (docs == 0 or network.build_ms)
            and status.usage is not None
            and status.stale is not None
        ):
            break
        if time.monotonic() > deadline:
            raise TimeoutError("the daemon did not settle")
        await asyncio.sleep(0.25)
    settled = time.monotonic() - started
    await asyncio.sleep(SETTLE_S)
    return settled


async def _trivial_ms(client: Any) -> float:
    from memory_recall.protocol.client import RpcError

    started = time.perf_counter()
    with contextlib.suppress(RpcError):
        await client.request(TRIVIAL_METHOD, {})
    return (time.perf_counter() - started) * 1000


async def run(docs: int, work: Path, *, seed: int = 1, samples: int = 400,
              writes: int = 200, burst: int = 2000) -> LoadResult:  # fmt: skip
    """Every load figure on a copy of the synthetic tree of `docs` memories under `work`."""
    tree = work / f"tree-{docs}-{seed}"
    if not (tree / ".complete").exists():
        shutil.rmtree(tree, ignore_errors=True)
        write_tree(tree, docs, seed)
        (tree / ".complete").touch()
    with tempfile.TemporaryDirectory(prefix="memory-recall-load-") as tmp:
        scratch = Path(tmp)
        copy = scratch / "tree"
        shutil.copytree(tree, copy)
        (scratch / "empty").mkdir()
        loaded = await _start([(copy / "project", "project"), (copy / "user", "user")],
                              scratch, "loaded")  # fmt: skip
        empty = await _start([(scratch / "empty", "project")], scratch, "empty")
        try:
            settle_s, _ = await asyncio.gather(_settled(loaded, docs), _settled(empty, 0))
            result = await _measure(loaded, empty, docs, samples, writes, burst, seed)
            result.settle_s = settle_s
            return result
        finally:
            await asyncio.gather(loaded.close(), empty.close())


async def _measure(loaded: Any, empty: Any, docs: int, samples: int, writes: int,
                   burst: int, seed: int) -> LoadResult:  # fmt: skip
    queries = [q for qs in QUERIES.values() for q in qs]
    # Trivial requests, alternately to each daemon (the first tenth unrecorded).
    timed: dict[str, list[float]] = {"empty": [], "loaded": []}
    for i in range(samples + samples // 10):
        order = [("empty", empty), ("loaded", loaded)]
        for name, client in order if i % 2 else order[::-1]:
            ms = await _trivial_ms(client)
            if i >= samples // 10:
                timed[name].append(ms)
            await asyncio.sleep(0.002)
    # Right after a recall: what the recall leaves behind on the daemon.
    after: dict[str, list[float]] = {"empty": [], "loaded": []}
    for i in range(samples // 4):
        for name, client in (("empty", empty), ("loaded", loaded)):
            await _first_result_ms(client, queries[i % len(queries)])
            after[name].append(await _trivial_ms(client))
    # Recalls on the quiet daemon: nothing written yet, the start-up work done.
    quiet = [(await _first_result_ms(loaded, queries[i % len(queries)]))[0] for i in range(200)]
    # Remembers, one at a time.
    facts = _facts(writes + burst + 5, seed + 2)
    remember_ms = []
    for number, (_tag, text) in enumerate(facts[: writes + 5]):
        started = time.perf_counter()
        await loaded.remember(text)
        if number >= 5:  # the first few warm the writer's rules
            remember_ms.append((time.perf_counter() - started) * 1000)
    # Recalls right after those writes (what a write leaves to do: the index, the
    # network's update), then during a burst of remembers on the same connection.
    after_writes = [
        (await _first_result_ms(loaded, queries[i % len(queries)]))[0] for i in range(200)
    ]
    during: list[float] = []
    done = asyncio.Event()

    async def write_burst() -> float:
        started = time.perf_counter()
        try:
            for _tag, text in facts[writes + 5 :]:
                await loaded.remember(text)
        finally:
            done.set()
        return time.perf_counter() - started

    writer = asyncio.create_task(write_burst())
    i = 0
    while not done.is_set():
        during.append((await _first_result_ms(loaded, queries[i % len(queries)]))[0])
        i += 1
    burst_s = await writer
    return LoadResult(
        docs=docs,
        trivial_empty=Percentiles.of(timed["empty"]),
        trivial_loaded=Percentiles.of(timed["loaded"]),
        trivial_after_recall_empty=Percentiles.of(after["empty"]),
        trivial_after_recall_loaded=Percentiles.of(after["loaded"]),
        remember=Percentiles.of(remember_ms),
        recall_quiet=Percentiles.of(quiet),
        recall_after_writes=Percentiles.of(after_writes),
        recall_burst=Percentiles.of(during),
        burst_writes=burst,
        burst_s=burst_s,
        settle_s=0.0,  # set by `run`
    )


def report(result: LoadResult) -> str:
    """The load figures as a markdown table."""
    r = result

    def pair(p: Percentiles) -> str:
        return f"{p.p50:.2f} / {p.p95:.2f} ms"

    rows = [
        (f"start-up work done ({r.docs:,} memories: network, status figures)",
         f"{r.settle_s:.1f} s after the first status", ""),
        ("trivial request, empty daemon", pair(r.trivial_empty), ""),
        (f"trivial request, {r.docs:,} loaded", pair(r.trivial_loaded),
         f"p95 ÷ empty {r.trivial_ratio:.2f} (target ≤ 1.5)"),
        ("trivial request right after a recall, empty", pair(r.trivial_after_recall_empty), ""),
        (f"trivial request right after a recall, {r.docs:,} loaded",
         pair(r.trivial_after_recall_loaded),
         f"p95 ÷ empty {r.trivial_after_recall_loaded.p95 / r.trivial_after_recall_empty.p95:.2f}"),
        (f"memory/remember at {r.docs:,}", pair(r.remember), "target p95 ≤ 30 ms"),
        ("recall (first result), quiet", pair(r.recall_quiet),
         "target p95 ≤ 5 ms at 10,000"),
        (f"recall right after {r.remember.n} remembers", pair(r.recall_after_writes), ""),
        (f"recall during {r.burst_writes:,} remembers ({r.burst_s:.1f} s)", pair(r.recall_burst),
         f"p95 ÷ quiet {r.burst_ratio:.2f} (target ≤ 2)"),
    ]  # fmt: skip
    lines = ["| figure | p50 / p95 | |", "|---|---:|---|"]
    lines += [f"| {name} | {value} | {note} |" for name, value, note in rows]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The load figures' options, beside the bench's own (`memory-recall dev bench`)."""
    parser.add_argument(
        "--load-docs", type=int, default=10_000, metavar="DOCS",
        help="the load figures (trivial request loaded vs empty, remember, recall during a"
        " write burst) at this many memories; 0 leaves them out (default 10,000)",
    )  # fmt: skip
    parser.add_argument("--burst", type=int, default=2000, help="remembers in the write burst")
    parser.add_argument("--load-only", action="store_true", help="only the load figures")


def main(args: argparse.Namespace) -> int:
    """Print the load figures (and write them to `--out`/load.md) unless `--load-docs 0`."""
    if not args.load_docs:
        return 0
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="memory-recall-load-"))
    print(f"bench: load figures at {args.load_docs:,} …", file=sys.stderr, flush=True)
    try:
        result = asyncio.run(run(args.load_docs, work, seed=args.seed, burst=args.burst))
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    table = report(result)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "load.md").write_text(table + "\n", encoding="utf-8")
    if args.json:
        print(json.dumps(asdict(result), ensure_ascii=False, indent=2))
    else:
        print(table + "\n")
    return 0
