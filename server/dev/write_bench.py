"""`memory-recall dev bench-write`: what a write costs, and what the store costs recall.

Through the real daemon over stdio, on a synthetic multilingual tree
(dev/synthetic.py), both measured in the same run:

- `remember` end to end: request sent → response read, which covers the gate,
  conflict detection against the warm index, the journal, the fsync'd atomic
  write, MEMORY.md and the index update. After each write, one recall for a
  word only the new memory has checks it is recallable at once.
- recall with the state store (delivery statistics counted, journal open) and
  without it (`MEMORY_RECALL_STATE_DIR=off`): two daemons on the same tree,
  the same queries, rounds interleaved so that machine noise hits both alike.

Figures are printed, never asserted: machines here are shared.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memory_recall.server.dev.bench import Percentiles
from memory_recall.server.dev.synthetic import _LANGUAGE_WEIGHTS, _LANGUAGES, _Writer, write_tree

WARM_UP_WRITES = 5


@dataclass
class WriteBenchResult:
    docs: int
    writes: int
    remember: Percentiles
    recallable: int  # writes found by the next recall
    actions: dict[str, int]
    recall_with_store: Percentiles
    recall_without_store: Percentiles

    @property
    def store_overhead(self) -> float:
        """p50 with the store ÷ p50 without, minus one."""
        return self.recall_with_store.p50 / self.recall_without_store.p50 - 1


async def _daemon(roots: list[tuple[Path, str]], state: str, cache: Path) -> Any:
    from memory_recall.protocol.client import MemoryRecallClient

    client = await MemoryRecallClient.start(
        roots=[(str(p), s) for p, s in roots],
        watch=True,
        env={"MEMORY_RECALL_STATE_DIR": state, "MEMORY_RECALL_CACHE_DIR": str(cache)},
    )
    while not (await client.status()).ready:
        await asyncio.sleep(0.05)
    return client


def _facts(count: int, seed: int) -> list[tuple[str, str]]:
    """(unique tag, text) pairs: a few sentences of the synthetic corpus' languages."""
    writer = _Writer(seed)
    rng = random.Random(seed)
    out = []
    for number in range(count):
        language = rng.choices(_LANGUAGES, _LANGUAGE_WEIGHTS)[0]
        tag = _pseudo_word(number)
        sentences = [writer.sentence(language) for _ in range(rng.randint(1, 3))]
        out.append((tag, f"{sentences[0].rstrip('.:!')} ({tag}). " + " ".join(sentences[1:])))
    return out


_SYLLABLES = [
    *("ka", "lo", "mi", "ne", "ru", "sa", "te", "vo", "zu", "pi", "da", "fe", "go", "hu", "ji")
]


def _pseudo_word(number: int) -> str:
    """A word no memory has, different for each number, without digits (a digit would make
    it an identifier, which the conflict rules read as a name an update replaces)."""
    parts = []
    for _ in range(4):
        number, digit = divmod(number, len(_SYLLABLES))
        parts.append(_SYLLABLES[digit])
    return "zq" + "".join(parts)


async def _recall_ms(client: Any, query: str) -> tuple[float, Any]:
    started = time.perf_counter()
    handle = await client.recall(query, initial_wait_ms=60_000)
    result = await handle.response
    return (time.perf_counter() - started) * 1000, result


async def run(docs: int, writes: int, recalls: int, seed: int = 7) -> WriteBenchResult:
    with tempfile.TemporaryDirectory(prefix="memory-recall-write-bench-") as tmp:
        base = Path(tmp)
        project, user = write_tree(base / "tree", docs, seed)
        roots = [(project, "project"), (user, "user")]
        cache = base / "cache"
        # Recall with and without the store, before any write changes the tree.
        queries = [text.split(" (", 1)[0] for _, text in _facts(recalls, seed + 1)]
        with_store = await _daemon(roots, str(base / "state"), cache)
        without = await _daemon(roots, "off", cache)
        timed: dict[str, list[float]] = {"with": [], "without": []}
        try:
            for query in queries[:10]:  # warm both
                await _recall_ms(with_store, query)
                await _recall_ms(without, query)
            for round_number, query in enumerate(queries):
                order = [("with", with_store), ("without", without)]
                for name, client in order if round_number % 2 else reversed(order):
                    timed[name].append((await _recall_ms(client, query))[0])
        finally:
            await without.close()
        # remember, end to end, on the daemon with the store.
        client = with_store
        samples: list[float] = []
        actions: dict[str, int] = {}
        recallable = 0
        try:
            facts = _facts(writes + WARM_UP_WRITES, seed + 2)
            for number, (tag, text) in enumerate(facts):
                started = time.perf_counter()
                result = await client.remember(text)
                elapsed = (time.perf_counter() - started) * 1000
                if number < WARM_UP_WRITES:
                    continue
                samples.append(elapsed)
                for op in result.operations:
                    actions[op.action] = actions.get(op.action, 0) + 1
                _, recalled = await _recall_ms(client, tag)
                paths = {d.path for d in recalled.refined.docs} if recalled.refined else set()
                recallable += any(op.path in paths for op in result.operations)
        finally:
            await client.close()
        return WriteBenchResult(
            docs=docs,
            writes=writes,
            remember=Percentiles.of(samples),
            recallable=recallable,
            actions=actions,
            recall_with_store=Percentiles.of(timed["with"]),
            recall_without_store=Percentiles.of(timed["without"]),
        )


def report(result: WriteBenchResult) -> str:
    r, w, wo = result.remember, result.recall_with_store, result.recall_without_store
    actions = ", ".join(f"{n} {a}" for a, n in sorted(result.actions.items()))
    return "\n".join(
        [
            f"{result.docs:,} memories, {result.writes} remembers ({actions})",
            f"remember end to end: p50 {r.p50:.2f} ms, p95 {r.p95:.2f} ms",
            f"recallable in the next recall: {result.recallable}/{result.writes}",
            f"recall with the store: p50 {w.p50:.3f} ms, p95 {w.p95:.3f} ms ({w.n} recalls)",
            f"recall without it:     p50 {wo.p50:.3f} ms, p95 {wo.p95:.3f} ms",
            f"store overhead on recall (p50): {100 * result.store_overhead:+.1f} %"
            f" (p95: {100 * (w.p95 / wo.p95 - 1):+.1f} %)",
        ]
    )


def main(args: argparse.Namespace) -> int:
    result = asyncio.run(run(args.docs, args.writes, args.recalls))
    if args.json:
        payload = asdict(result)
        payload["storeOverhead"] = round(result.store_overhead, 4)
        print(json.dumps(payload, indent=2))
    else:
        print(report(result))
    return 0
