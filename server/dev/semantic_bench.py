"""`memory-recall dev semantic-bench`: the semantic channel's cost, printed, never asserted.

Two figures (issue 20): the fast phase's latency with the channel on at N memories
(through the daemon's recall service, a selector configured so the fast phase happens,
the query embedding from a local OpenAI-compatible endpoint), beside the same recalls
with the channel off, measured in the same run; and the throughput of embedding N
memories through the endpoint (docs/s, batches of 64). `--encoder concept` is the
deterministic test double (fast: the figures are the daemon's own cost); `--encoder use`
the real model of the `eval-semantic` extra (its speed is the model's on this machine).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import statistics
import time
from collections.abc import Sequence
from typing import Any

from memory_recall.protocol.messages import PhaseNotification, RecallTelemetry
from memory_recall.server.dev.embed_server import ConceptEncoder, EmbedServer, UseEncoder
from memory_recall.server.dev.synthetic import synthetic_documents
from memory_recall.server.models import SelectionRequest
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.service import RecallRequest, RecallService
from memory_recall.server.semantic.cache import VectorCache
from memory_recall.server.semantic.channel import SemanticChannel
from memory_recall.server.semantic.endpoint import EmbeddingsEndpoint


class _Instant:
    kind = "client"

    async def select(self, request: SelectionRequest) -> list[str]:
        return []


class _Clock:
    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.fast_ms: float | None = None
        self.waited = False

    def fast_result(self, note: PhaseNotification) -> None:
        self.fast_ms = (time.perf_counter() - self.started) * 1000
        self.waited = note.semantic is not None and (
            note.semantic.query_ms is not None or note.semantic.failure is not None
        )

    def refined_result(self, note: PhaseNotification) -> None:
        pass

    def telemetry(self, event: RecallTelemetry) -> None:
        pass


def queries(docs: Sequence[Any], count: int, seed: int = 7) -> list[str]:
    """Half from memory titles (the lexical top is full: no wait), half of words that
    match one memory or none (a slot is empty: the fast phase waits for the vector)."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        doc = rng.choice(docs)
        if i % 2:
            out.append(" ".join(doc.title.split()[:3]))
        else:
            out.append(f"how do we handle {rng.choice(['quux', 'zorblat', 'frobnicate'])} {i}")
    return out


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


async def fast_latencies(
    service: RecallService, view: CorpusView, texts: Sequence[str]
) -> tuple[list[float], int]:
    async def source() -> CorpusView:
        return view

    out, waited = [], 0
    for i, text in enumerate(texts):
        clock = _Clock()
        await service.recall(RecallRequest(request_id=i, query=text), source, clock)
        if clock.fast_ms is not None:
            out.append(clock.fast_ms)
            waited += clock.waited
    return out, waited


async def run(docs_n: int, recalls: int, encoder_name: str, embed_n: int) -> dict[str, Any]:
    docs = synthetic_documents(docs_n)
    view = CorpusView.of(docs)
    encoder = UseEncoder() if encoder_name == "use" else ConceptEncoder(dimension=384)
    with EmbedServer(encoder) as server:
        model = f"bench-{encoder_name}"
        channel = SemanticChannel(
            EmbeddingsEndpoint(server.url, model, None), VectorCache(None, model), timeout_s=600
        )
        embed_view = CorpusView.of(docs[:embed_n])
        started = time.perf_counter()
        await channel.sync(embed_view)
        embed_s = time.perf_counter() - started
        if embed_n != docs_n:
            await channel.sync(view)
        off = RecallService(_Instant(), RANKERS["bm25f"])
        on = RecallService(_Instant(), RANKERS["bm25f"])
        on.semantic = channel
        texts = queries(docs, recalls)
        await fast_latencies(off, view, texts[:10])  # warm caches
        await fast_latencies(on, view, texts[:10])
        off_ms, _ = await fast_latencies(off, view, texts)
        on_ms, waited = await fast_latencies(on, view, texts)
        await channel.aclose()
    return {
        "docs": docs_n,
        "encoder": encoder_name,
        "dimension": channel.matrix.dimension,
        "fastDeadlineMs": round(channel.fast_deadline_s * 1000),
        "embed": {
            "docs": embed_n,
            "seconds": round(embed_s, 2),
            "docsPerSecond": round(embed_n / embed_s, 1),
        },
        "fastPhase": {
            "off": {
                "p50": round(statistics.median(off_ms), 2),
                "p95": round(percentile(off_ms, 0.95), 2),
            },
            "on": {
                "p50": round(statistics.median(on_ms), 2),
                "p95": round(percentile(on_ms, 0.95), 2),
            },
            "recalls": len(on_ms),
            "waitedForVector": waited,
        },
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memory-recall dev semantic-bench", description=__doc__)
    parser.add_argument("--docs", type=int, default=10_000)
    parser.add_argument("--recalls", type=int, default=200)
    parser.add_argument("--encoder", choices=("concept", "use"), default="concept")
    parser.add_argument(
        "--embed-docs", type=int, default=None, help="memories to time embedding on (default all)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.docs, args.recalls, args.encoder, args.embed_docs or args.docs))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    e, f = result["embed"], result["fastPhase"]
    print(f"{result['docs']} memories, encoder {result['encoder']} ({result['dimension']} dims)")
    print(f"embedding: {e['docs']} memories in {e['seconds']} s = {e['docsPerSecond']} docs/s")
    print(
        f"fast phase, channel off: p50 {f['off']['p50']} ms, p95 {f['off']['p95']} ms; "
        f"on: p50 {f['on']['p50']} ms, p95 {f['on']['p95']} ms "
        f"(deadline {result['fastDeadlineMs']} ms; {f['waitedForVector']} of {f['recalls']} "
        "recalls waited for the query vector)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
