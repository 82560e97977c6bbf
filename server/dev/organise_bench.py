"""Benchmarks of the organisation services (`dev bench-organise`): figures, no verdicts.

1. **Consolidation plan at scale**: synthetic memories (dev/synthetic.py) of which
   10 % are near-duplicates of others — the same memory written again later with
   its lines reordered, a list marker or the case changed, a line dropped, or one
   number changed (a corrected fact) — planned in process (orient, gather,
   consolidate, prune) with the capacity set to the corpus size, so every step
   runs and nothing is pruned for capacity. Time, and the peak resident memory
   above what the process held before the plan (sampled every 2 ms).
2. **Dry run on 1k**: the `consolidate --dry-run` path on files: scan a
   1,000-memory tree from disk, check staleness, plan.
3. **Staleness in a recall**: recalls over the 10k corpus whose bodies cite
   workspace paths (half of the cited files exist), through the recall service
   with and without the staleness check, interleaved; the check's own time per
   recall and the recall latency both ways.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import random
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from memory_recall.protocol.messages import PhaseNotification, RecallTelemetry
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.dev.synthetic import synthetic_documents, write_tree
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.organise.consolidate import plan_root
from memory_recall.server.organise.organiser import Organiser, OrganiseSettings
from memory_recall.server.organise.staleness import StalenessChecker, citations
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.service import RecallRequest, RecallService
from memory_recall.server.roots import MemoryRoot

NEAR_DUPLICATE_SHARE = 0.10


def near_duplicates(count: int, seed: int = 5) -> list[MemoryDocument]:
    """`count` memories, 10 % of them near-duplicates of earlier ones, written later."""
    rng = random.Random(seed)
    originals = synthetic_documents(round(count * (1 - NEAR_DUPLICATE_SHARE)), seed)
    originals = [replace(d, scope=originals[0].scope, root_index=0) for d in originals]
    copies = []
    for n, doc in enumerate(rng.sample(originals, count - len(originals))):
        lines = doc.body.splitlines()
        kind = n % 4
        if kind == 0:
            rng.shuffle(lines)
        elif kind == 1:
            lines = [("- " + line.lower()) for line in lines]
        elif kind == 2 and len(lines) > 2:
            lines.pop(rng.randrange(len(lines)))
        else:
            lines.append(f"Limit raised to {rng.randint(10, 99)} in the last review.")
        copies.append(
            replace(
                doc,
                path=doc.path.replace(".md", "-again.md"),
                relative_path=doc.relative_path.replace(".md", "-again.md"),
                body="\n".join(lines),
                mtime_ms=doc.mtime_ms + rng.uniform(1, 90) * 86_400_000,
            )
        )
    return originals + copies


class PeakRss:
    """The peak resident set size while the block runs, sampled from /proc (Linux)."""

    def __init__(self, every_s: float = 0.002) -> None:
        self.every_s = every_s
        self.before = self.peak = _rss_bytes()
        self._stop = threading.Event()

    def __enter__(self) -> PeakRss:
        gc.collect()
        self.before = self.peak = _rss_bytes()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self

    def _sample(self) -> None:
        while not self._stop.wait(self.every_s):
            self.peak = max(self.peak, _rss_bytes())

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.peak = max(self.peak, _rss_bytes())

    @property
    def extra_mb(self) -> float:
        return (self.peak - self.before) / 1e6


def _rss_bytes() -> int:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except OSError:  # not Linux: the high-water mark is the best there is
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@dataclass
class _Quiet:
    """A recall listener that keeps nothing."""

    def fast_result(self, note: PhaseNotification) -> None: ...
    def refined_result(self, note: PhaseNotification) -> None: ...
    def telemetry(self, event: RecallTelemetry) -> None: ...


def bench_plan(docs: Sequence[MemoryDocument], repeats: int) -> dict[str, Any]:
    """The first plan is the one that counts (a daemon consolidates once a day, its rule
    caches cold); later ones reuse the conflict rules' per-memory readings."""
    times, extra, steps, plan = [], [], [], None
    for _ in range(repeats):
        with PeakRss() as rss:
            started = time.perf_counter()
            plan = plan_root(docs, root="/synthetic/project", capacity=len(docs))
            times.append(time.perf_counter() - started)
        extra.append(rss.extra_mb)
        steps.append(plan.gather.elapsed_ms)
    assert plan is not None
    return {
        "memories": len(docs),
        "first_s": round(times[0], 2),
        "again_median_s": round(statistics.median(times[1:]), 2) if len(times) > 1 else None,
        "extra_rss_mb": round(max(extra), 1),
        "pairs_judged": plan.gather.pairs_judged,
        "merged": len(plan.archived("merged")),
        "superseded": len(plan.archived("superseded")),
        "first_steps_ms": steps[0],
    }


def bench_dry_run(count: int, repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        project, user = write_tree(Path(tmp), count)
        scans, plans = [], []
        for _ in range(repeats):
            started = time.perf_counter()
            catalog = MemoryCatalog(
                [MemoryRoot.of(project, "project"), MemoryRoot.of(user, "user")]
            )
            catalog.scan()
            scanned = time.perf_counter()
            organiser = Organiser(catalog.roots, workspace=tmp, settings=OrganiseSettings())
            organiser.plans(catalog.snapshot().documents)
            scans.append(scanned - started)
            plans.append(time.perf_counter() - scanned)
    return {
        "memories": len(catalog),
        "scan_median_s": round(statistics.median(scans), 3),
        "plan_median_s": round(statistics.median(plans), 3),
        "total_median_s": round(
            statistics.median(a + b for a, b in zip(scans, plans, strict=True)), 3
        ),
    }


def _timed(check: Callable[[Sequence[MemoryDocument]], Any], spent: list[float], cpu: list[float]):
    """`check`, adding its wall time to spent[-1] and its CPU time to cpu[-1]: on a shared
    machine a wall-clock p95 mostly measures the other processes."""

    def timed(docs: Sequence[MemoryDocument]) -> Any:
        started, started_cpu = time.perf_counter(), time.thread_time()
        try:
            return check(docs)
        finally:
            spent[-1] += time.perf_counter() - started
            cpu[-1] += time.thread_time() - started_cpu

    return timed


def bench_staleness(docs: Sequence[MemoryDocument], recalls: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as workspace:
        cited = sorted({c.path for d in docs for c in citations(d.body)})
        for n, path in enumerate(cited):  # half the cited files exist
            if n % 2 == 0:
                target = Path(workspace) / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text("x\n")
        checker = StalenessChecker(workspace)
        spent: list[float] = []
        cpu: list[float] = []

        def per_recall() -> Callable[[Sequence[MemoryDocument]], Any]:
            spent.append(0.0)
            cpu.append(0.0)
            return _timed(checker.for_recall(), spent, cpu)

        ranker = RANKERS[DEFAULT_RANKER]
        with_check = RecallService(None, ranker, staleness=per_recall)
        without = RecallService(None, ranker)
        view = CorpusView.of(docs)

        async def source() -> CorpusView:
            return view

        rng = random.Random(3)
        queries = [rng.choice(docs).title for _ in range(recalls)]
        durations: dict[str, list[float]] = {"with": [], "without": []}
        stale_delivered = 0

        async def run() -> None:
            nonlocal stale_delivered
            for n, query in enumerate(queries):
                order = (("with", with_check), ("without", without))
                for name, service in order if n % 2 else reversed(order):
                    started = time.perf_counter()
                    result = await service.recall(
                        RecallRequest(request_id=n, query=query), source, _Quiet()
                    )
                    durations[name].append(time.perf_counter() - started)
                    if name == "with" and result.refined is not None:
                        stale_delivered += sum(d.stale is not None for d in result.refined.docs)

        asyncio.run(run())

    def ms(values: list[float], q: float) -> float:
        return round(1000 * sorted(values)[min(len(values) - 1, int(q * len(values)))], 3)

    return {
        "memories": len(docs),
        "recalls": recalls,
        "check_p50_ms": ms(spent, 0.5),
        "check_p95_ms": ms(spent, 0.95),
        "check_cpu_p50_ms": ms(cpu, 0.5),
        "check_cpu_p95_ms": ms(cpu, 0.95),
        "recall_p50_ms": {k: ms(v, 0.5) for k, v in durations.items()},
        "recall_p95_ms": {k: ms(v, 0.95) for k, v in durations.items()},
        "stale_docs_delivered": stale_delivered,
    }


def main(args: argparse.Namespace) -> int:
    docs = near_duplicates(args.docs)
    # As the daemon does after its index build (core/session.py): the corpus is
    # long-lived, so the cyclic collector stops walking it on every full collection.
    gc.collect()
    gc.freeze()
    try:
        figures = {
            "plan": bench_plan(docs, args.repeats),
            "dry_run": bench_dry_run(args.dry_docs, args.repeats),
            "staleness": bench_staleness(docs, args.recalls),
        }
    finally:
        gc.unfreeze()
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    p, d, s = figures["plan"], figures["dry_run"], figures["staleness"]
    print(
        f"consolidation plan, {p['memories']} memories with 10 % near-duplicates:"
        f" {p['first_s']} s the first time (again: {p['again_median_s']} s), extra RSS"
        f" {p['extra_rss_mb']} MB; {p['pairs_judged']} pairs judged, {p['merged']} merged,"
        f" {p['superseded']} superseded; first run's steps (ms) {p['first_steps_ms']}"
    )
    print(
        f"dry run on {d['memories']} memories from disk: median {d['total_median_s']} s"
        f" (scan {d['scan_median_s']} s, plan {d['plan_median_s']} s)"
    )
    print(
        f"staleness over {s['recalls']} recalls at {s['memories']} memories: the check p50"
        f" {s['check_p50_ms']} ms, p95 {s['check_p95_ms']} ms per recall (CPU time p50"
        f" {s['check_cpu_p50_ms']}, p95 {s['check_cpu_p95_ms']} ms); recall p50"
        f" {s['recall_p50_ms']['without']} → {s['recall_p50_ms']['with']} ms, p95"
        f" {s['recall_p95_ms']['without']} → {s['recall_p95_ms']['with']} ms (without → with);"
        f" {s['stale_docs_delivered']} stale memories delivered and marked"
    )
    return 0
