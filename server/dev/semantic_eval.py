"""`memory-recall dev semantic-eval`: recall with and without the semantic channel, on every
labelled corpus, through a real local embeddings endpoint.

The command starts the tiny OpenAI-compatible server of `embed_server` with the real
encoder (`--encoder use`: Universal Sentence Encoder multilingual v3 from the `eval-semantic`
extra; `concept`:
the deterministic test double, for a run without it), embeds each corpus through the same
channel the daemon uses (`SemanticChannel.sync`, the same text, the same background
floor), and scores the top 5 of each case three ways: lexical only (the channel off), fill
(the daemon's rule) and reciprocal-rank fusion, at several floors. Figures: Recall@5 and
top-1 over the answerable cases, silence on the abstentions, and the slices that need
meaning rather than words: `semantic` (category semantic) and `cross-language` (every
category with "cross" in its name).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_recall.protocol.limits import REFINED_LIMIT
from memory_recall.server.dev.embed_server import ConceptEncoder, EmbedServer, UseEncoder
from memory_recall.server.dev.evaluation import EvalCase, load_corpus
from memory_recall.server.ranking.registry import RANKERS, RankerSpec
from memory_recall.server.ranking.shortlist import RecallQuery
from memory_recall.server.ranking.spec import ScoredDocument
from memory_recall.server.semantic.cache import VectorCache
from memory_recall.server.semantic.channel import SemanticChannel
from memory_recall.server.semantic.endpoint import EmbeddingsEndpoint
from memory_recall.server.semantic.fill import RESERVED_SLOTS, Z_FLOOR, fill, fuse

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "eval"
FLOORS = (2.0, 2.5, 3.0, 3.5, 4.0)
SLICES: dict[str, Callable[[EvalCase], bool]] = {
    "semantic": lambda c: c.category == "semantic",
    "cross-language": lambda c: "cross" in c.category,
}


@dataclass
class Tally:
    answerable: int = 0
    recall_sum: float = 0.0
    top1: int = 0
    unanswerable: int = 0
    silent: int = 0

    def add(self, case: EvalCase, top5: Sequence[str]) -> None:
        if case.answerable:
            relevant = set(case.relevant_ids)
            self.answerable += 1
            self.recall_sum += len(relevant & set(top5)) / len(relevant)
            expected = {case.expected_top_id} if case.expected_top_id else relevant
            self.top1 += bool(top5) and top5[0] in expected
        else:
            self.unanswerable += 1
            self.silent += not top5

    def figures(self) -> dict[str, Any]:
        out: dict[str, Any] = {"answerable": self.answerable, "unanswerable": self.unanswerable}
        if self.answerable:
            out["recallAt5"] = round(self.recall_sum / self.answerable, 4)
            out["top1"] = round(self.top1 / self.answerable, 4)
        if self.unanswerable:
            out["silentRate"] = round(self.silent / self.unanswerable, 4)
        return out


@dataclass
class ModeReport:
    all: Tally = field(default_factory=Tally)
    slices: dict[str, Tally] = field(default_factory=dict)


def corpora_paths(given: Sequence[str]) -> list[Path]:
    if given:
        return [Path(p) for p in given]
    return sorted(p for p in FIXTURES.glob("*.json") if p.name != "baseline.json")


async def evaluate_corpus(
    path: Path, url: str, model: str, ranker: RankerSpec, floors: Sequence[float]
) -> tuple[dict[str, ModeReport], dict[str, float]]:
    corpus = load_corpus(path)
    # A loaded machine embeds slowly: the eval measures quality, not the endpoint's speed.
    channel = SemanticChannel(
        EmbeddingsEndpoint(url, model, None), VectorCache(None, model), timeout_s=600
    )
    started = time.perf_counter()
    await channel.sync(corpus.snapshot)
    embed_s = time.perf_counter() - started
    assert channel.counters.failure is None, channel.counters.failure
    queries = [c.query for c in corpus.cases]
    vectors: list[list[float]] = []
    for start in range(0, len(queries), 64):
        vectors += await channel.endpoint.embed(queries[start : start + 64])
    modes = ["off"]
    for f in floors:
        modes += [f"fill@{f:g}", f"tail1@{f:g}", f"tail2@{f:g}", f"rrf@{f:g}", f"guard@{f:g}"]
    reports = {m: ModeReport(slices={s: Tally() for s in SLICES}) for m in modes}
    for case, vector in zip(corpus.cases, vectors, strict=True):
        query = RecallQuery.build(
            corpus.snapshot,
            case.query,
            recent_tools=case.recent_tools,
            ranker=ranker.rank,
            tokenizer=ranker.tokenize,
        )
        lexical = query.shortlist().ranked
        hits = [
            (ScoredDocument(h.document, 0), h.similarity, h.z)
            for h in channel.hits(vector, query.keep, 40)
        ]
        tops = {"off": lexical[:REFINED_LIMIT]}
        for f in floors:
            tops[f"fill@{f:g}"] = fill(lexical[:REFINED_LIMIT], hits, REFINED_LIMIT, f)[0]
            for reserve in (1, 2):
                tops[f"tail{reserve}@{f:g}"] = fill(
                    lexical[:REFINED_LIMIT], hits, REFINED_LIMIT, f, reserve
                )[0]
            tops[f"rrf@{f:g}"] = fuse(lexical, hits, REFINED_LIMIT, f)
            # The daemon's rule: the last slot reserved, never filling a silent result.
            tops[f"guard@{f:g}"] = fill(
                lexical[:REFINED_LIMIT], hits, REFINED_LIMIT, f, RESERVED_SLOTS, alone=False
            )[0]
        for mode, top in tops.items():
            paths = [s.document.path for s in top]
            reports[mode].all.add(case, paths)
            for name, belongs in SLICES.items():
                if belongs(case):
                    reports[mode].slices[name].add(case, paths)
    await channel.aclose()
    return reports, {"docs": len(corpus.documents), "embedSeconds": round(embed_s, 2)}


def _pct(value: float | None) -> str:
    return "   -  " if value is None else f"{value * 100:5.1f}%"


def format_table(results: dict[str, tuple[dict[str, ModeReport], dict[str, float]]]) -> str:
    lines = [
        f"{'corpus':<10} {'mode':<9} {'R@5':>6} {'top1':>6} {'silent':>6}   "
        f"{'semantic R@5':>12} {'cross R@5':>10}"
    ]
    for name, (reports, _meta) in results.items():
        for mode, report in reports.items():
            figs = report.all.figures()
            sem = report.slices["semantic"].figures()
            cross = report.slices["cross-language"].figures()
            lines.append(
                f"{name:<10} {mode:<9} {_pct(figs.get('recallAt5'))} {_pct(figs.get('top1'))} "
                f"{_pct(figs.get('silentRate'))}   {_pct(sem.get('recallAt5')):>12} "
                f"{_pct(cross.get('recallAt5')):>10}"
            )
    return "\n".join(lines)


def totals(results: dict[str, tuple[dict[str, ModeReport], dict[str, float]]]) -> str:
    """Every corpus pooled, per mode: the figures that choose the rule and the floor."""
    pooled: dict[str, ModeReport] = {}
    for reports, _meta in results.values():
        for mode, report in reports.items():
            into = pooled.setdefault(mode, ModeReport(slices={s: Tally() for s in SLICES}))
            for src, dst in [(report.all, into.all)] + [
                (report.slices[s], into.slices[s]) for s in SLICES
            ]:
                dst.answerable += src.answerable
                dst.recall_sum += src.recall_sum
                dst.top1 += src.top1
                dst.unanswerable += src.unanswerable
                dst.silent += src.silent
    return format_table({"(pooled)": (pooled, {})})


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="memory-recall dev semantic-eval", description=__doc__)
    parser.add_argument("corpora", nargs="*", help="eval corpora (default: fixtures/eval/*)")
    parser.add_argument("--encoder", choices=("use", "concept"), default="use")
    parser.add_argument("--ranker", default="bm25f")
    parser.add_argument("--floors", default=",".join(f"{f:g}" for f in FLOORS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    floors = [float(f) for f in args.floors.split(",")]
    encoder = UseEncoder() if args.encoder == "use" else ConceptEncoder()
    model = "use-multilingual-v3" if args.encoder == "use" else "concept-double"
    results = {}
    with EmbedServer(encoder) as server:
        for path in corpora_paths(args.corpora):
            results[path.stem] = asyncio.run(
                evaluate_corpus(path, server.url, model, RANKERS[args.ranker], floors)
            )
    if args.json:
        out = {
            name: {
                "meta": meta,
                "modes": {
                    m: {"all": r.all.figures(), **{s: t.figures() for s, t in r.slices.items()}}
                    for m, r in reports.items()
                },
            }
            for name, (reports, meta) in results.items()
        }
        print(json.dumps({"model": model, "daemonFloor": Z_FLOOR, "corpora": out}, indent=2))
        return 0
    print(f"encoder: {model}; the daemon's fill floor: z ≥ {Z_FLOOR:g}")
    print(format_table(results))
    print()
    print(totals(results))
    for name, (_r, meta) in results.items():
        print(f"{name}: {meta['docs']} memories embedded in {meta['embedSeconds']} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
