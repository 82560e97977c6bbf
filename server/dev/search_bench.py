"""Benchmark memory/search and the suggestion matcher at size (prints figures).

The memories are network_bench's linked synthetic ones (~900-character multilingual
bodies, about five edges each). Per search mode, the time of one search (median,
p95) beside a recall's own ranking (the shortlist, as `memory/recall` computes it)
on the same queries in the same run — the ratio is what travels between machines.
Also: the network's first build (what the daemon does once after its first index),
one changed memory followed, and the suggestion
index (built again whenever the catalog changed) and one observed event matched.
Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from memory_recall.server.dev.bench import Percentiles
from memory_recall.server.dev.network_bench import _queries, linked_documents
from memory_recall.server.dev.synthetic import synthetic_documents
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.network.graph import MemoryNetwork, NetworkDocument
from memory_recall.server.organise.suggestions import ObservedEvent, SuggestionIndex
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.shortlist import RecallQuery
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.search import (
    SEARCH_MODES,
    MemorySearch,
    SearchRequest,
)


@dataclass
class SearchBench:
    docs: int
    recall_ms: Percentiles
    modes: dict[str, Percentiles]
    network_build_ms: float
    network_follow_ms: float
    suggestion_build_ms: float
    suggestion_follow_ms: float
    suggestion_match_ms: Percentiles

    def as_json(self) -> dict[str, Any]:
        return {
            "docs": self.docs,
            "recallMs": vars(self.recall_ms),
            "modesMs": {m: vars(p) for m, p in self.modes.items()},
            "p95OverRecallP95": {
                m: round(p.p95 / self.recall_ms.p95, 3) for m, p in self.modes.items()
            },
            "networkFirstBuildMs": round(self.network_build_ms, 1),
            "networkFollowOneChangeMs": round(self.network_follow_ms, 2),
            "suggestionIndexBuildMs": round(self.suggestion_build_ms, 1),
            "suggestionIndexFollowOneChangeMs": round(self.suggestion_follow_ms, 2),
            "suggestionMatchMs": vars(self.suggestion_match_ms),
        }


def _documents(count: int, seed: int) -> list[MemoryDocument]:
    linked = linked_documents(count, seed=seed)
    plain = synthetic_documents(count, seed)
    return [
        replace(s, body=d.body, extra=(("related", d.related[0]),) if d.related else ())
        for d, s in zip(linked, plain, strict=True)
    ]


def _timed(run: Callable[[], object]) -> float:
    started = time.perf_counter()
    run()
    return (time.perf_counter() - started) * 1000


def bench(count: int = 10_000, *, queries: int = 100, seed: int = 7) -> SearchBench:
    rng = random.Random(seed)
    docs = _documents(count, seed)
    view = CorpusView.of(docs, version=1)
    view.index(RANKERS["bm25f"].index_kind)  # warm, as the catalog keeps it
    ranker = RANKERS["bm25f"]
    service = MemorySearch(ranker)
    built: list[MemoryNetwork] = []
    build_ms = _timed(
        lambda: built.append(MemoryNetwork.build(NetworkDocument.of(d) for d in docs))
    )
    network = built[0]
    changed = replace(docs[0], body=docs[0].body + "\nSee also the runbook.")
    later = CorpusView.of([changed, *docs[1:]], version=2)
    # One changed memory followed, as the daemon's network follows the catalog.
    follow_ms = _timed(lambda: network.upsert(NetworkDocument.of(changed)))
    network.upsert(NetworkDocument.of(docs[0]))
    for doc in docs:  # placements cached, as a session's topic tree keeps them
        service.topics.place(doc)
    asked = _queries(docs, queries, rng)

    def recall(query: str) -> object:
        return RecallQuery.build(
            view, query, ranker=ranker.rank, tokenizer=ranker.tokenize
        ).shortlist()

    def search(request: SearchRequest) -> object:
        return service.search(view, request, network=network)

    recall_ms = [_timed(partial(recall, q)) for q in asked]
    modes: dict[str, list[float]] = {"shallow": [], "deep": [], "explore": [], "get": []}
    for q in asked:
        for mode in SEARCH_MODES[:3]:
            modes[mode].append(_timed(partial(search, SearchRequest(mode, q))))
        path = rng.choice(docs).relative_path
        modes["get"].append(_timed(partial(search, SearchRequest("get", path=path))))
    started = time.perf_counter()
    # Placed by the session's topic tree (cached), as the daemon builds it.
    index = SuggestionIndex.build(docs, place=lambda d: service.topics.place(d).path)
    suggestion_build_ms = (time.perf_counter() - started) * 1000
    suggestion_follow_ms = _timed(partial(index.follow, later.documents))
    events = [ObservedEvent("error", q) for q in asked] + [
        ObservedEvent("edit", path=f"src/{d.relative_path}") for d in rng.sample(docs, 50)
    ]
    match_ms = [_timed(partial(index.match, e)) for e in events]
    return SearchBench(
        docs=count,
        recall_ms=Percentiles.of(recall_ms),
        modes={m: Percentiles.of(v) for m, v in modes.items()},
        network_build_ms=build_ms,
        network_follow_ms=follow_ms,
        suggestion_build_ms=suggestion_build_ms,
        suggestion_follow_ms=suggestion_follow_ms,
        suggestion_match_ms=Percentiles.of(match_ms),
    )


def format_bench(result: SearchBench) -> str:
    r = result.recall_ms
    lines = [
        f"memory/search at {result.docs:,} memories ({r.n} queries)",
        f"  a recall's ranking (shortlist, the baseline): p50 {r.p50:.2f} ms, p95 {r.p95:.2f} ms",
    ]
    for mode, p in result.modes.items():
        lines.append(
            f"  {mode:<8} p50 {p.p50:.2f} ms, p95 {p.p95:.2f} ms "
            f"(p95 / recall p95 = {p.p95 / r.p95:.2f})"
        )
    m = result.suggestion_match_ms
    lines += [
        f"  network first built: {result.network_build_ms:,.0f} ms; "
        f"one changed memory followed: {result.network_follow_ms:.1f} ms",
        f"  suggestion index built: {result.suggestion_build_ms:,.0f} ms; one changed memory "
        f"followed: {result.suggestion_follow_ms:.1f} ms; one event matched: "
        f"p50 {m.p50:.2f} ms, p95 {m.p95:.2f} ms ({m.n} events)",
    ]
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--docs", type=int, default=10_000, help="memories (default 10,000)")
    parser.add_argument("--queries", type=int, default=100, help="queries per mode (default 100)")
    parser.add_argument("--json", action="store_true", help="print JSON")


def main(args: argparse.Namespace) -> int:
    result = bench(args.docs, queries=args.queries)
    print(json.dumps(result.as_json(), indent=2) if args.json else format_bench(result))
    return 0
