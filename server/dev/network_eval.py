"""Measure the memory network (server/network) on the labelled corpora.

For every corpus and ranker, with and without the network:

- Recall@5 of the candidates: the first five of the list the model is shown
  (lexical hits, and the network's finds placed among them), before the most
  recent other memories are appended;
- candidate recall: the share of relevant memories anywhere in that list (the
  recent fill left out: on a corpus of fewer than 200 memories it holds every
  memory, and says nothing);
- fast Recall@2 under each fast rule (`server.network.join`), with the number of
  memories the rule added, how many of them were relevant, and how many it added
  to abstention cases (where anything delivered is wrong).

Corpus format: docs/development.md, plus the optional keys of fixtures/eval/multihop.json
(a doc's `related` and `supersedes`, lists of other doc ids, as front matter
would hold them). Multi-hop cases are reported per link kind.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_recall.protocol.limits import FAST_LIMIT, REFINED_LIMIT
from memory_recall.server.dev.evaluation import EvalCorpus, load_corpus
from memory_recall.server.dev.suggestion_eval import (
    SUGGESTIONS,
    evaluate_suggestions,
    format_suggestions,
)
from memory_recall.server.network.activation import DEFAULT_ACTIVATION, ActivationParams, spread
from memory_recall.server.network.graph import MemoryNetwork, NetworkDocument
from memory_recall.server.network.join import (
    DEFAULT_JOIN,
    FAST_RULES,
    JoinParams,
    join_candidates,
    join_fast,
)
from memory_recall.server.ranking.registry import RANKERS, RankerSpec
from memory_recall.server.ranking.shortlist import build_shortlist

EVAL_DIR = Path(__file__).parents[2] / "fixtures" / "eval"
DEFAULT_RANKERS = ("default", "indexed")


def load_network_corpus(path: str | Path) -> tuple[EvalCorpus, MemoryNetwork]:
    """A labelled corpus and the network of its memories (front-matter links included)."""
    corpus = load_corpus(path)
    raw = {d["id"]: d for d in json.loads(Path(path).read_text(encoding="utf-8"))["docs"]}
    network = MemoryNetwork.build(
        NetworkDocument.of(
            doc,
            related=raw[doc.path].get("related", ()),
            supersedes=raw[doc.path].get("supersedes", ()),
        )
        for doc in corpus.documents
    )
    return corpus, network


@dataclass
class _Tally:
    answerable: int = 0
    abstentions: int = 0
    lexical_r5: float = 0.0
    joined_r5: float = 0.0
    lexical_reach: float = 0.0
    joined_reach: float = 0.0
    fast: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    added: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    added_relevant: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    added_abstention: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def figures(self) -> dict[str, Any]:
        n = max(1, self.answerable)
        out: dict[str, Any] = {"answerable": self.answerable, "abstentions": self.abstentions}
        if self.answerable:
            out |= {
                "candidatesR5": round(self.lexical_r5 / n, 4),
                "candidatesR5Network": round(self.joined_r5 / n, 4),
                "candidateRecall": round(self.lexical_reach / n, 4),
                "candidateRecallNetwork": round(self.joined_reach / n, 4),
            }
        out["fastR2"] = {rule: round(self.fast[rule] / n, 4) for rule in FAST_RULES}
        out["fastAdded"] = {
            rule: {
                "added": self.added[rule],
                "relevant": self.added_relevant[rule],
                "toAbstentions": self.added_abstention[rule],
            }
            for rule in FAST_RULES
            if rule != "never"
        }
        return out


@dataclass
class NetworkReport:
    corpus: str
    ranker: str
    docs: int
    edges: int
    build_ms: float
    activation_ms_p95: float
    total: dict[str, Any]
    by_category: dict[str, dict[str, Any]]

    def as_json(self) -> dict[str, Any]:
        return {
            "corpus": self.corpus,
            "ranker": self.ranker,
            "docs": self.docs,
            "edges": self.edges,
            "buildMs": round(self.build_ms, 1),
            "activationMsP95": round(self.activation_ms_p95, 3),
            "total": self.total,
            "byCategory": self.by_category,
        }


def _recall(relevant: set[str], got: Sequence[str]) -> float:
    return len(relevant & set(got)) / len(relevant)


def evaluate_network(
    name: str,
    corpus: EvalCorpus,
    network: MemoryNetwork,
    ranker: RankerSpec,
    *,
    activation: ActivationParams = DEFAULT_ACTIVATION,
    join: JoinParams = DEFAULT_JOIN,
    build_ms: float = 0.0,
) -> NetworkReport:
    snapshot = corpus.snapshot
    total = _Tally()
    by_category: dict[str, _Tally] = defaultdict(_Tally)
    timings = []
    for case in corpus.cases:
        shortlist = build_shortlist(
            snapshot,
            case.query,
            recent_tools=case.recent_tools,
            ranker=ranker.rank,
            tokenizer=ranker.tokenize,
        )
        lexical = [(s.document.path, float(s.score)) for s in shortlist.ranked]
        started = time.perf_counter()
        reached = spread(network, lexical, activation)
        timings.append((time.perf_counter() - started) * 1000)
        joined = [j.path for j in join_candidates(lexical, reached, join)]
        lexical_paths = [p for p, _ in lexical]
        fast_by_rule = {
            rule: join_fast(
                lexical[:FAST_LIMIT], reached, JoinParams(**{**vars(join), "fast_rule": rule})
            )
            for rule in FAST_RULES
        }
        relevant = set(case.relevant_ids)
        for tally in (total, by_category[case.category]):
            if not case.answerable:
                tally.abstentions += 1
                for rule, (_paths, added) in fast_by_rule.items():
                    tally.added_abstention[rule] += added is not None
                continue
            tally.answerable += 1
            tally.lexical_r5 += _recall(relevant, lexical_paths[:REFINED_LIMIT])
            tally.joined_r5 += _recall(relevant, joined[:REFINED_LIMIT])
            tally.lexical_reach += _recall(relevant, lexical_paths)
            tally.joined_reach += _recall(relevant, joined)
            for rule, (paths, added) in fast_by_rule.items():
                tally.fast[rule] += _recall(relevant, paths)
                if added is not None:
                    tally.added[rule] += 1
                    tally.added_relevant[rule] += added.path in relevant
    timings.sort()
    p95 = timings[min(len(timings) - 1, int(0.95 * len(timings)))] if timings else 0.0
    return NetworkReport(
        corpus=name,
        ranker=ranker.name,
        docs=len(corpus.documents),
        edges=network.edge_count(),
        build_ms=build_ms,
        activation_ms_p95=p95,
        total=total.figures(),
        by_category={cat: t.figures() for cat, t in sorted(by_category.items())},
    )


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value * 100:5.1f}%"


def format_reports(reports: Sequence[NetworkReport], *, categories: bool = True) -> str:
    lines = []
    header = (
        f"{'corpus / slice':<34} {'ranker':<8} {'cand R@5':>8} {'+net':>7} "
        f"{'cand recall':>11} {'+net':>7} "
        + " ".join(f"{'fast ' + rule:>17}" for rule in FAST_RULES)
    )
    lines.append(header)
    lines.append("-" * len(header))

    def row(label: str, ranker: str, t: dict[str, Any]) -> str:
        if not t.get("answerable"):
            added = "  ".join(
                f"{rule}: +{t['fastAdded'][rule]['toAbstentions']}" for rule in t["fastAdded"]
            )
            return (
                f"{label:<34} {ranker:<8} (abstentions: {t['abstentions']}; fast additions {added})"
            )
        fast = " ".join(
            f"{_pct(t['fastR2'][rule]):>7}"
            + (
                f" +{t['fastAdded'][rule]['added']:>2}/{t['fastAdded'][rule]['relevant']:<2}"
                f"a{t['fastAdded'][rule]['toAbstentions']:<2}"
                if rule != "never"
                else " " * 10
            )
            for rule in FAST_RULES
        )
        return (
            f"{label:<34} {ranker:<8} {_pct(t['candidatesR5']):>8} "
            f"{_pct(t['candidatesR5Network']):>7} {_pct(t['candidateRecall']):>11} "
            f"{_pct(t['candidateRecallNetwork']):>7} {fast}"
        )

    for r in reports:
        label = f"{r.corpus} ({r.docs} docs, {r.edges} edges)"
        lines.append(row(label, r.ranker, r.total))
        if categories:
            for cat, t in r.by_category.items():
                lines.append(row(f"  {cat}", r.ranker, t))
    lines.append(
        "fast columns: Recall@2, then +added/relevant among them, a = added to abstention cases"
    )
    return "\n".join(lines)


def corpora(paths: Sequence[str]) -> list[Path]:
    """The corpora named, or every labelled corpus in fixtures/eval (a JSON file with
    docs and cases: a figures file beside them is not one)."""
    if paths:
        return [Path(p) for p in paths]
    out = []
    for path in sorted(EVAL_DIR.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if isinstance(data, dict) and "docs" in data and "cases" in data:
            out.append(path)
    return out


def run(
    paths: Sequence[str],
    rankers: Sequence[str],
    *,
    activation: ActivationParams = DEFAULT_ACTIVATION,
    join: JoinParams = DEFAULT_JOIN,
) -> list[NetworkReport]:
    reports = []
    for path in corpora(paths):
        started = time.perf_counter()
        corpus, network = load_network_corpus(path)
        build_ms = (time.perf_counter() - started) * 1000
        for name in rankers:
            reports.append(
                evaluate_network(
                    path.stem,
                    corpus,
                    network,
                    RANKERS[name],
                    activation=activation,
                    join=join,
                    build_ms=build_ms,
                )
            )
    return reports


BASELINE = Path(__file__).parents[2] / "fixtures" / "network" / "baseline.json"


def baseline_figures() -> dict[str, Any]:
    """The figures the quality test holds the network to: multi-hop with both rankers,
    and the suggestion matcher."""
    out: dict[str, Any] = {
        "description": "Written by `memory-recall dev network-eval --write-baseline`: the floor "
        "tests/unit/test_network_quality.py holds the network and the suggestion matcher to "
        "(a tolerance below it, never above). Rewrite it when a change improves a figure.",
        "multihop": {},
    }
    for report in run([str(EVAL_DIR / "multihop.json")], DEFAULT_RANKERS):
        t = report.total
        out["multihop"][report.ranker] = {
            "candidatesR5": t["candidatesR5"],
            "candidatesR5Network": t["candidatesR5Network"],
            "candidateRecallNetwork": t["candidateRecallNetwork"],
            "fastR2": t["fastR2"][DEFAULT_JOIN.fast_rule],
            "fastR2Never": t["fastR2"]["never"],
            "fastAddedToAbstentions": t["fastAdded"][DEFAULT_JOIN.fast_rule]["toAbstentions"],
        }
    suggestions = evaluate_suggestions()
    out["suggestions"] = {
        "precision": round(suggestions.precision, 4),
        "recall": round(suggestions.recall, 4),
        "falseAlarms": suggestions.false_alarms,
    }
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "corpus", nargs="*", help="labelled corpora (default: fixtures/eval/*.json)"
    )
    parser.add_argument(
        "--ranker", action="append", choices=sorted(RANKERS),
        help=f"repeatable (default: {', '.join(DEFAULT_RANKERS)})",
    )  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--summary", action="store_true", help="corpus totals only, no slices")
    parser.add_argument(
        "--suggestions", nargs="?", const=str(SUGGESTIONS), metavar="FIXTURES",
        help="only the suggestion matcher's precision and recall (default fixture set)",
    )  # fmt: skip
    parser.add_argument(
        "--write-baseline", action="store_true",
        help=f"rewrite {BASELINE.relative_to(BASELINE.parents[2])} from today's figures",
    )  # fmt: skip


def main(args: argparse.Namespace) -> int:
    if args.write_baseline:
        BASELINE.write_text(json.dumps(baseline_figures(), indent=2) + "\n", encoding="utf-8")
        print(f"wrote {BASELINE}")
        return 0
    if args.suggestions:
        report = evaluate_suggestions(args.suggestions)
        print(json.dumps(report.as_json(), indent=2) if args.json else format_suggestions(report))
        return 0
    reports = run(args.corpus, args.ranker or DEFAULT_RANKERS)
    if args.json:
        print(json.dumps([r.as_json() for r in reports], ensure_ascii=False, indent=2))
    else:
        print(format_reports(reports, categories=not args.summary))
        builds = [r.build_ms for r in reports]
        print(f"network build per corpus: median {statistics.median(builds):.1f} ms")
        if not args.corpus:
            print()
            print(format_suggestions(evaluate_suggestions(), errors=False))
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(prog="network_eval", description=__doc__)
    add_arguments(parser)
    raise SystemExit(main(parser.parse_args()))
