"""Offline evaluation of a ranker on a labelled corpus (docs/development.md).

In eval every document has mtime 1 (or its optional `mtimeMs`, for corpora
where a newer memory must win) and input order is corpus order, so the figures
depend on the ranker alone.
"""

from __future__ import annotations

import hashlib
import json
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from memory_recall.protocol.limits import REFINED_LIMIT
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.network.graph import MemoryNetwork, NetworkDocument
from memory_recall.server.ranking.bm25f import DEFAULT_PARAMS, Bm25Ranker
from memory_recall.server.ranking.bm25f.tokens import recall_tokens
from memory_recall.server.ranking.registry import RankerSpec, ranker_named
from memory_recall.server.ranking.shortlist import build_shortlist
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.network import FixedNetwork
from memory_recall.server.recall.service import RecallRequest, lexical_phases
from memory_recall.server.roots import Scope


@dataclass(frozen=True)
class EvalCase:
    id: str
    category: str
    query: str
    relevant_ids: tuple[str, ...]
    expected_top_id: str | None = None
    recent_tools: tuple[str, ...] = ()

    @property
    def answerable(self) -> bool:
        return bool(self.relevant_ids)


@dataclass(frozen=True)
class EvalCorpus:
    documents: tuple[MemoryDocument, ...]
    cases: tuple[EvalCase, ...]
    name: str = "corpus"
    # A doc's front-matter links (`related`, `supersedes`: other doc ids), as the
    # optional keys of fixtures/eval/multihop.json hold them.
    links: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)

    def network(self) -> MemoryNetwork:
        """The memory network of the corpus's memories, front-matter links included."""
        return MemoryNetwork.build(
            NetworkDocument.of(
                doc,
                related=self.links.get(doc.path, ((), ()))[0],
                supersedes=self.links.get(doc.path, ((), ()))[1],
            )
            for doc in self.documents
        )

    @property
    def snapshot(self) -> CorpusView:
        # Corpus order is input order; recency order is mtime descending, then
        # corpus order (a stable sort), which is corpus order when no doc has an mtime.
        by_recency = tuple(sorted(self.documents, key=lambda d: -d.mtime_ms))
        return CorpusView(self.documents, by_recency)


def load_corpus(path: str | Path) -> EvalCorpus:
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    docs = tuple(
        MemoryDocument(
            path=str(d["id"]),
            relative_path=str(d["id"]),
            scope=Scope.PROJECT,
            type=d["type"],
            title=d.get("title") or d["type"],
            description=d.get("description", ""),
            body=d.get("body", "").strip(),
            mtime_ms=float(d.get("mtimeMs", 1)),
        )
        for d in data["docs"]
    )
    ids = {d.path for d in docs}
    cases = []
    for c in data["cases"]:
        case = EvalCase(
            id=str(c["id"]),
            category=c.get("category", "uncategorized"),
            query=c["query"],
            relevant_ids=tuple(c.get("relevantIds", ())),
            expected_top_id=c.get("expectedTopId"),
            recent_tools=tuple(c.get("recentTools", ())),
        )
        unknown = [i for i in (*case.relevant_ids, case.expected_top_id) if i and i not in ids]
        if unknown:
            raise ValueError(f"case {case.id}: unknown doc ids {unknown}")
        cases.append(case)
    links = {
        str(d["id"]): (tuple(d.get("related", ())), tuple(d.get("supersedes", ())))
        for d in data["docs"]
        if d.get("related") or d.get("supersedes")
    }
    return EvalCorpus(docs, tuple(cases), Path(path).stem, links)


# The blind split: a share of every corpus's cases that nothing is tuned on (the
# confidence calibration, thresholds, word lists), chosen by a hash of the corpus's
# name and the case's id so that it never moves when cases are added.
BLIND_SHARE = 0.3


def split_of(corpus: str, case_id: str) -> str:
    """ "blind" or "tune": which split a case of a corpus belongs to."""
    digest = hashlib.sha1(f"{corpus}/{case_id}".encode()).digest()
    return "blind" if int.from_bytes(digest[:4], "big") % 1000 < BLIND_SHARE * 1000 else "tune"


@dataclass
class _Tally:
    cases: int = 0
    answerable: int = 0
    recall_sum: float = 0.0
    top1_hits: int = 0
    silent_right: int = 0
    unanswerable: int = 0
    # The fast phase (what a host with a model injects before the model answers).
    delivered: int = 0  # memories delivered, over every case
    delivered_right: int = 0  # … of them relevant
    hits: int = 0  # answerable cases with a relevant memory among the delivered
    muted: int = 0  # answerable cases given nothing
    noise: int = 0  # memories delivered to unanswerable cases
    fast_silent: int = 0  # unanswerable cases given nothing

    def add(self, case: EvalCase, top5: Sequence[str], fast: Sequence[str]) -> None:
        self.cases += 1
        self.delivered += len(fast)
        if case.answerable:
            relevant = set(case.relevant_ids)
            self.answerable += 1
            self.recall_sum += len(relevant & set(top5)) / len(relevant)
            expected = {case.expected_top_id} if case.expected_top_id else relevant
            self.top1_hits += bool(top5) and top5[0] in expected
            right = len(relevant & set(fast))
            self.delivered_right += right
            self.hits += right > 0
            self.muted += not fast
        else:
            self.unanswerable += 1
            self.silent_right += not top5
            self.noise += len(fast)
            self.fast_silent += not fast

    def merge(self, other: _Tally) -> None:
        """Add another tally's counts to this one (pooling corpora)."""
        for name in self.__dataclass_fields__:
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "cases": self.cases,
            "answerable": self.answerable,
            "unanswerable": self.unanswerable,
            "delivered": self.delivered,
        }
        if self.answerable:
            out["recallAt5"] = round(self.recall_sum / self.answerable, 4)
            out["top1"] = round(self.top1_hits / self.answerable, 4)
            out["hitAt2"] = round(self.hits / self.answerable, 4)
            out["muted"] = round(self.muted / self.answerable, 4)
            out["fastAnswered"] = round(1 - self.muted / self.answerable, 4)
        if self.delivered:
            out["fastPrecision"] = round(self.delivered_right / self.delivered, 4)
        if self.unanswerable:
            out["silentRate"] = round(self.silent_right / self.unanswerable, 4)
            out["fastSilence"] = round(self.fast_silent / self.unanswerable, 4)
            out["perUnanswerable"] = round(self.noise / self.unanswerable, 4)
        return out


@dataclass
class EvalReport:
    ranker: str
    docs: int
    cases: int
    recall_at5: float
    top1: float
    no_result_precision: float
    no_result_recall: float
    random_baseline: float
    by_category: dict[str, dict[str, Any]]
    per_case: list[dict[str, Any]] = field(default_factory=list)
    # The same figures by the writing systems of the query (see `query_script`).
    by_script: dict[str, dict[str, Any]] = field(default_factory=dict)
    overall: dict[str, Any] = field(default_factory=dict)  # the tally of every case
    by_split: dict[str, dict[str, Any]] = field(default_factory=dict)  # tune / blind
    # The counts behind `overall` and `by_split` ("all", "tune", "blind"), to pool corpora.
    tallies: dict[str, _Tally] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "ranker": self.ranker,
            "docs": self.docs,
            "cases": self.cases,
            "recallAt5": self.recall_at5,
            "top1": self.top1,
            "noResultPrecision": self.no_result_precision,
            "noResultRecall": self.no_result_recall,
            "randomBaseline": self.random_baseline,
            "byCategory": self.by_category,
            "byScript": self.by_script,
            "bySplit": self.by_split,
            "fast": {
                k: self.overall[k]
                for k in ("fastPrecision", "hitAt2", "perUnanswerable", "fastSilence", "muted")
                if k in self.overall
            },
            "perCase": self.per_case,
        }


def evaluate(
    corpus: EvalCorpus,
    ranker: RankerSpec,
    *,
    exclude_categories: Sequence[str] = (),
    case_filter: Callable[[EvalCase], bool] | None = None,
) -> EvalReport:
    snapshot = corpus.snapshot
    network = FixedNetwork.of(corpus.network(), corpus.documents)
    total = _Tally()
    by_category: dict[str, _Tally] = defaultdict(_Tally)
    by_script: dict[str, _Tally] = defaultdict(_Tally)
    by_split: dict[str, _Tally] = defaultdict(_Tally)
    silent_cases = 0
    per_case = []
    for case in corpus.cases:
        if case.category in exclude_categories or (case_filter and not case_filter(case)):
            continue
        shortlist = build_shortlist(
            snapshot,
            case.query,
            recent_tools=case.recent_tools,
            ranker=ranker.rank,
            tokenizer=ranker.tokenize,
        )
        top5 = [s.document.path for s in shortlist.ranked[:REFINED_LIMIT]]
        # The fast phase as the daemon sends it: the confidence gate, then the network.
        request = RecallRequest(case.id, case.query, recent_tools=case.recent_tools)
        fast_phase, _refined = lexical_phases(snapshot, request, ranker, network)
        fast = [doc.path for doc in fast_phase.docs] if fast_phase else []
        per_case.append({"id": case.id, "category": case.category, "top5": top5, "fast": fast})
        silent_cases += not top5
        split = by_split[split_of(corpus.name, case.id)]
        for tally in (total, by_category[case.category], by_script[query_script(case.query)]):
            tally.add(case, top5, fast)
        split.add(case, top5, fast)
    n_docs = len(corpus.documents)
    return EvalReport(
        ranker=ranker.name,
        docs=n_docs,
        cases=total.cases,
        recall_at5=_ratio(total.recall_sum, total.answerable),
        top1=_ratio(total.top1_hits, total.answerable),
        no_result_precision=_ratio(total.silent_right, silent_cases),
        no_result_recall=_ratio(total.silent_right, total.unanswerable),
        random_baseline=round(min(REFINED_LIMIT, n_docs) / n_docs, 4) if n_docs else 0.0,
        by_category={name: t.as_dict() for name, t in sorted(by_category.items())},
        per_case=per_case,
        by_script={name: t.as_dict() for name, t in sorted(by_script.items())},
        overall=total.as_dict(),
        by_split={name: t.as_dict() for name, t in sorted(by_split.items())},
        tallies={"all": total, **by_split},
    )


_SCRIPTS = (
    "latin", "cyrillic", "greek", "arabic", "hebrew", "devanagari", "thai", "lao", "khmer",
    "myanmar", "hangul", "hiragana", "katakana", "cjk",
)  # fmt: skip


def query_script(query: str) -> str:
    """The writing systems of a query's letters, e.g. "latin", "cjk+latin", "thai".

    A language slice that needs no label: read from the Unicode names of the
    letters (NFKC first, so full-width Latin is Latin). Kana counts as Japanese
    script beside any Han it comes with.
    """
    found: set[str] = set()
    for ch in unicodedata.normalize("NFKC", query):
        if not ch.isalpha():
            continue
        name = unicodedata.name(ch, "").lower()
        script = next((s for s in _SCRIPTS if name.startswith(s)), "other")
        found.add("japanese" if script in ("hiragana", "katakana") else script)
    if "japanese" in found:
        found.discard("cjk")
    return "+".join(sorted(found)) or "none"


def _ratio(numerator: float, denominator: int) -> float:
    return round(numerator / denominator, 4) if denominator else 0.0


def ranker(name: str) -> RankerSpec:
    """A ranker by name or alias; ValueError for an unknown one."""
    spec = ranker_named(name)
    if spec is None:
        raise ValueError(f"unknown ranker {name!r}")
    return spec


def evaluate_all(corpus: EvalCorpus, ranker_names: Sequence[str]) -> list[EvalReport]:
    return [evaluate(corpus, ranker(name)) for name in ranker_names]


# -- the figures baseline -------------------------------------------------------
# `memory-recall dev eval CORPUS… --json` prints these figures; fixtures/eval/baseline.json
# is that output, committed. tests/unit/test_eval_baseline.py fails when a figure
# drops below it by more than the tolerance, never when one rises: a better ranker
# rewrites the baseline in the same commit.

# Higher is better for each (the fast phase's muting is kept as `fastAnswered`).
METRICS = (
    "recallAt5",
    "top1",
    "silentRate",
    "fastPrecision",
    "hitAt2",
    "fastSilence",
    "fastAnswered",
)
# A figure may fall by one point or by one of its cases, whichever is more: one
# question changing places in a tie order is noise, two are a regression.
TOLERANCE = 0.01
ROUNDING = 1e-3  # figures are kept to four decimals


def figures(report: EvalReport) -> dict[str, Any]:
    """What the baseline keeps of a report: overall, per category, per script, per split
    (the tuning split the calibration was fitted on, the blind one it never saw)."""
    return {
        "all": report.overall,
        "category": report.by_category,
        "script": report.by_script,
        "split": report.by_split,
    }


SPLITS = ("all", "tune", "blind")


def pooled(reports: Sequence[EvalReport]) -> dict[str, dict[str, Any]]:
    """One ranker's figures over several corpora taken as one: every case counts once,
    per split ("all"; "tune", the cases the confidence was fitted on; "blind", never)."""
    out = {}
    for split in SPLITS:
        total = _Tally()
        for report in reports:
            if split in report.tallies:
                total.merge(report.tallies[split])
        out[split] = total.as_dict()
    return out


def evaluate_corpora(paths: Sequence[str | Path], ranker_names: Sequence[str]) -> dict[str, Any]:
    """`{"corpora": {name: {ranker: figures}}, "pooled": {ranker: {split: figures}}}` for
    every corpus and ranker (the comparison with a baseline reads "corpora")."""
    out: dict[str, Any] = {}
    reports: dict[str, list[EvalReport]] = defaultdict(list)
    for path in paths:
        corpus = load_corpus(path)
        out[Path(path).stem] = {}
        for name in ranker_names:
            report = evaluate(corpus, ranker(name))
            reports[name].append(report)
            out[Path(path).stem][name] = figures(report)
    return {"corpora": out, "pooled": {name: pooled(r) for name, r in reports.items()}}


def _slices(figs: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "all", figs["all"]
    for kind in ("category", "script", "split"):
        for name, tally in figs.get(kind, {}).items():
            yield f"{kind} {name}", tally


def tolerance(metric: str, tally: dict[str, Any]) -> float:
    """How far a figure may fall: one point, or one of the cases it is measured on."""
    counted = {
        "silentRate": "unanswerable",
        "fastSilence": "unanswerable",
        "fastPrecision": "delivered",
    }
    over = tally.get(counted.get(metric, "answerable")) or 1
    return max(TOLERANCE, 1.0 / over)


def compare_to_baseline(
    current: dict[str, Any], baseline: dict[str, Any]
) -> tuple[list[str], list[str]]:
    """(regressions beyond tolerance, improvements) of `current` against `baseline`,
    as readable lines. Figures only in one of the two are neither."""
    regressions, improvements = [], []
    for corpus, by_ranker in baseline["corpora"].items():
        for ranker, figs in by_ranker.items():
            now = current["corpora"].get(corpus, {}).get(ranker)
            if now is None:
                continue
            now_slices = dict(_slices(now))
            for slice_name, was in _slices(figs):
                tally = now_slices.get(slice_name)
                if tally is None:
                    continue
                for metric in METRICS:
                    if metric not in was or metric not in tally:
                        continue
                    before, after = was[metric], tally[metric]
                    where = f"{corpus} {ranker} {slice_name} {metric}: {before:.4f} → {after:.4f}"
                    if after < before - tolerance(metric, tally) - ROUNDING:
                        regressions.append(where)
                    elif after > before + ROUNDING / 10:
                        improvements.append(where)
    return regressions, improvements


SILENCE_SHARES = (0.0, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.4)


def silence_sweep(corpus: EvalCorpus, shares: Sequence[float] = SILENCE_SHARES) -> str:
    """bm25f's silence threshold against what it costs, as a table:
    per `min_coverage` share, Recall@5 and top-1 of the answerable cases and the
    share of no-result/abstention cases answered with silence."""
    lines = ["min_coverage  Recall@5  top-1   silent"]
    for share in shares:
        swept = Bm25Ranker(replace(DEFAULT_PARAMS, min_coverage=share))
        report = evaluate(corpus, RankerSpec(f"bm25f@{share}", "", swept, recall_tokens))
        marker = "  <- default" if share == DEFAULT_PARAMS.min_coverage else ""
        lines.append(
            f"{share:12.2f}  {report.recall_at5 * 100:7.1f}%  {report.top1 * 100:5.1f}%"
            f"  {report.no_result_recall * 100:5.1f}%{marker}"
        )
    return "\n".join(lines)
