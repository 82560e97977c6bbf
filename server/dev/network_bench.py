"""Benchmark the memory network at size: build from scratch, activation, one update.

Synthetic memories (server/dev/synthetic.py, ~900-character multilingual bodies)
get links added the way people write them: markdown links to other memory
files, `[[Title]]` links, `related` lists, and identifiers shared by small
groups (tickets, job names), about `edges_per_doc` edges per memory in all.
Queries are drawn from the memories' own words and ranked by the default
ranker; activation starts from their lexical hits, as a recall's would.

Figures are printed, never asserted: activation and join time per recall
(median, p95) beside the ranker's own time on the same queries in the same run
(the ratio is what travels between machines), build time from scratch (median
of the repeats), and the time of one memory's update.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from memory_recall.server.dev.bench import Percentiles
from memory_recall.server.dev.synthetic import synthetic_documents
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.network.activation import spread
from memory_recall.server.network.graph import MemoryNetwork, NetworkDocument
from memory_recall.server.network.join import join_candidates, join_fast
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.shortlist import RecallQuery
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.network import FixedNetwork, NetworkRecall

EDGES_PER_DOC = 5  # the 10k memories with 50k edges


@dataclass
class NetworkBench:
    docs: int
    edges: int
    build_ms: list[float]
    build_cpu_ms: list[float]  # the process's CPU time: less noisy on a shared machine
    warm_ms: float  # every memory's steps computed ahead, after the build
    rank_ms: Percentiles
    activation_ms: Percentiles
    activation_cpu_ms: Percentiles
    reached: float  # memories reached per recall, mean
    update_ms: Percentiles
    # What the daemon's recall adds (server.recall.network: activation from the
    # ranker's best, the recall's filter, the fast rule, the candidates' join).
    in_recall_ms: Percentiles | None = None
    in_recall_cpu_ms: Percentiles | None = None

    def as_json(self) -> dict[str, Any]:
        return {
            "docs": self.docs,
            "edges": self.edges,
            "buildMsMedian": round(statistics.median(self.build_ms), 1),
            "buildMs": [round(b, 1) for b in self.build_ms],
            "buildCpuMsMedian": round(statistics.median(self.build_cpu_ms), 1),
            "warmMs": round(self.warm_ms, 1),
            "rankMs": vars(self.rank_ms),
            "activationMs": vars(self.activation_ms),
            "activationCpuMs": vars(self.activation_cpu_ms),
            "activationP95OverRankP95": round(self.activation_ms.p95 / self.rank_ms.p95, 3),
            "reachedPerRecall": round(self.reached, 1),
            "updateMs": vars(self.update_ms),
            "addedToRecallMs": vars(self.in_recall_ms) if self.in_recall_ms else None,
            "addedToRecallCpuMs": vars(self.in_recall_cpu_ms) if self.in_recall_cpu_ms else None,
        }


def linked_documents(
    count: int, edges_per_doc: int = EDGES_PER_DOC, seed: int = 7
) -> list[NetworkDocument]:
    """Synthetic memories with links: per memory about `edges_per_doc` edges —
    markdown and wiki links (two of three markdown), one `related`, one
    identifier shared with two other memories."""
    rng = random.Random(seed)
    docs = synthetic_documents(count, seed)
    out = []
    for doc in docs:
        body = [doc.body]
        links = max(0, edges_per_doc - 2)  # besides one `related` and one shared ticket
        for i in range(links):
            target = rng.choice(docs)
            if i % 3 == 2:
                body.append(f"Also [[{target.title}]].")
            else:
                body.append(f"See [{target.title}](/{target.relative_path}).")
        # An identifier shared by a group of three memories (a ticket, a job).
        body.append(f"Ticket LNK-{rng.randrange(count // 3 + 1):05d}.")
        related = (rng.choice(docs).relative_path,)
        out.append(replace(NetworkDocument.of(doc, related=related), body="\n".join(body)))
    return out


def _queries(docs: Sequence[MemoryDocument], count: int, rng: random.Random) -> list[str]:
    """Questions made of a memory's own words: a few from its title and body."""
    out = []
    for doc in rng.sample(list(docs), min(count, len(docs))):
        words = (doc.title + " " + doc.body).split()
        out.append(" ".join(rng.sample(words, min(len(words), rng.randint(3, 7)))))
    return out


def bench(
    count: int = 10_000,
    *,
    edges_per_doc: int = EDGES_PER_DOC,
    queries: int = 300,
    repeats: int = 3,
    seed: int = 7,
) -> NetworkBench:
    rng = random.Random(seed)
    linked = linked_documents(count, edges_per_doc, seed)
    builds, cpu = [], []
    network = MemoryNetwork()
    for _ in range(repeats):
        started, started_cpu = time.perf_counter(), time.process_time()
        network = MemoryNetwork.build(linked)
        builds.append((time.perf_counter() - started) * 1000)
        cpu.append((time.process_time() - started_cpu) * 1000)
    started = time.perf_counter()
    network.warm()
    warm_ms = (time.perf_counter() - started) * 1000
    docs = [
        MemoryDocument(
            path=d.path,
            relative_path=d.relative_path,
            scope=s.scope,
            type=s.type,
            title=d.title,
            description=d.description,
            body=d.body,
            mtime_ms=s.mtime_ms,
        )
        for d, s in zip(linked, synthetic_documents(count, seed), strict=True)
    ]
    view = CorpusView.of(docs)
    view.index()  # built once, as the catalog keeps it warm
    spec = RANKERS["default"]
    rank_ms, activation_ms, activation_cpu_ms, reached_counts = [], [], [], []
    in_recall_ms, in_recall_cpu_ms = [], []
    fixed = FixedNetwork.of(network, docs)
    for query in _queries(docs, queries, rng):
        started = time.perf_counter()
        recall = RecallQuery.build(view, query, ranker=spec.rank, tokenizer=spec.tokenize)
        shortlist = recall.shortlist()
        ranked = shortlist.ranked
        joined_at, joined_cpu = time.perf_counter(), time.process_time()
        joined = NetworkRecall(fixed, recall.keep)
        joined.fast(shortlist.fast, ranked)
        joined.candidates(shortlist)
        in_recall_ms.append((time.perf_counter() - joined_at) * 1000)
        in_recall_cpu_ms.append((time.process_time() - joined_cpu) * 1000)
        ranked_at, ranked_cpu = time.perf_counter(), time.process_time()
        lexical = [(s.document.path, float(s.score)) for s in ranked]
        reached = spread(network, lexical)
        join_candidates(lexical, reached)
        join_fast(lexical[:2], reached)
        done, done_cpu = time.perf_counter(), time.process_time()
        activation_cpu_ms.append((done_cpu - ranked_cpu) * 1000)
        rank_ms.append((ranked_at - started) * 1000)
        activation_ms.append((done - ranked_at) * 1000)
        reached_counts.append(len(reached))
    updates = []
    for doc in rng.sample(linked, min(200, len(linked))):
        changed = replace(doc, body=doc.body + f"\nSee [[{rng.choice(linked).title}]].")
        started = time.perf_counter()
        network.upsert(changed)
        updates.append((time.perf_counter() - started) * 1000)
    return NetworkBench(
        docs=count,
        edges=network.edge_count(),
        build_ms=builds,
        build_cpu_ms=cpu,
        warm_ms=warm_ms,
        rank_ms=Percentiles.of(rank_ms),
        activation_ms=Percentiles.of(activation_ms),
        activation_cpu_ms=Percentiles.of(activation_cpu_ms),
        reached=statistics.mean(reached_counts) if reached_counts else 0.0,
        update_ms=Percentiles.of(updates),
        in_recall_ms=Percentiles.of(in_recall_ms),
        in_recall_cpu_ms=Percentiles.of(in_recall_cpu_ms),
    )


def format_bench(result: NetworkBench) -> str:
    a, r, u = result.activation_ms, result.rank_ms, result.update_ms
    return "\n".join(
        [
            f"network at {result.docs:,} memories, {result.edges:,} edges",
            f"  build from scratch: median {statistics.median(result.build_ms):,.0f} ms "
            f"({', '.join(f'{b:,.0f}' for b in result.build_ms)}; CPU "
            f"{statistics.median(result.build_cpu_ms):,.0f} ms); every memory's steps "
            f"ahead: {result.warm_ms:,.0f} ms more",
            f"  activation + join per recall: p50 {a.p50:.3f} ms, p95 {a.p95:.3f} ms "
            f"(CPU p95 {result.activation_cpu_ms.p95:.3f} ms; {result.reached:.1f} memories "
            f"reached on average, {a.n} recalls)",
            f"  the default ranker on the same recalls (top 180): p50 {r.p50:.3f} ms, "
            f"p95 {r.p95:.3f} ms; activation p95 / ranker p95 = {a.p95 / r.p95:.2f}",
            f"  one memory updated: p50 {u.p50:.3f} ms, p95 {u.p95:.3f} ms ({u.n} updates)",
            *(
                [
                    f"  added to a daemon recall (activation, filter, fast rule, candidates' "
                    f"join): p50 {result.in_recall_ms.p50:.3f} ms, p95 "
                    f"{result.in_recall_ms.p95:.3f} ms (CPU p95 "
                    f"{result.in_recall_cpu_ms.p95:.3f} ms); p95 / ranker p95 = "
                    f"{result.in_recall_ms.p95 / r.p95:.2f}"
                ]
                if result.in_recall_ms and result.in_recall_cpu_ms
                else []
            ),
        ]
    )


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--docs", type=int, default=10_000, help="memories (default 10,000)")
    parser.add_argument(
        "--edges-per-doc", type=int, default=EDGES_PER_DOC, help="edges per memory (default 5)"
    )
    parser.add_argument("--queries", type=int, default=300, help="recalls measured (default 300)")
    parser.add_argument("--repeats", type=int, default=3, help="builds measured (default 3)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def main(args: argparse.Namespace) -> int:
    result = bench(
        args.docs, edges_per_doc=args.edges_per_doc, queries=args.queries, repeats=args.repeats
    )
    print(json.dumps(result.as_json(), indent=2) if args.json else format_bench(result))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="network_bench", description=__doc__)
    add_arguments(parser)
    raise SystemExit(main(parser.parse_args()))
