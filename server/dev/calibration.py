"""`memory-recall dev calibrate`: fit the fast phase's confidence on the labelled corpora.

For every case of the tuning split (never the blind one: `evaluation.split_of`), the
default ranker's top 2 and its evidence (server.ranking.confidence.evidence) are
taken, each memory labelled relevant or not; a logistic model per place (the first
memory, the second) is fitted by Newton's method with a small L2 penalty, then the
gate's two thresholds are chosen on the same split: the most precise fast phase
that keeps hit@2 within `HIT_LOSS` of the ungated top 2 and mutes at most
`MUTED_MAX` of the answerable questions. The result is written as data
(`server/ranking/confidence/data/calibration.json`) with where it came from and
the figures of both splits. Then the same for small folders (server/dev/small_folders.py),
for the sizes at which the corpora's gate mutes too much (`calibrate_small`).
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from itertools import takewhile
from pathlib import Path
from typing import Any

from memory_recall.protocol.limits import FAST_LIMIT
from memory_recall.server.dev.evaluation import EvalCorpus, load_corpus, split_of
from memory_recall.server.dev.small_folders import SIZES, small_folders
from memory_recall.server.ranking.confidence import calibration as calibration_module
from memory_recall.server.ranking.confidence.calibration import (
    Calibration,
    Model,
    features,
)
from memory_recall.server.ranking.confidence.evidence import QueryEvidence
from memory_recall.server.ranking.registry import RANKERS, RankerSpec
from memory_recall.server.ranking.shortlist import RecallQuery

EVAL = Path(__file__).resolve().parents[2] / "fixtures" / "eval"
DATA_PATH = Path(calibration_module.__file__).parent / "data" / calibration_module.DATA

L2 = 1.0  # the penalty on every weight but the intercept: a few hundred cases per model
ITERATIONS = 40
HIT_LOSS = 0.02  # hit@2 may fall this much below the ungated top 2 …
MUTED_MAX = 0.03  # … and this share of the answerable questions may get nothing
THRESHOLDS = tuple(round(0.05 * i, 2) for i in range(0, 19))


@dataclass
class Sample:
    """One case: the evidence about its top memories and whether each is relevant."""

    corpus: str
    case: str
    answerable: bool
    evidence: QueryEvidence | None
    relevant: tuple[bool, ...]
    split: str = "tune"


@dataclass
class Figures:
    delivered: int = 0
    right: int = 0
    answerable: int = 0
    hits: int = 0
    muted: int = 0
    unanswerable: int = 0
    noise: int = 0
    silent: int = 0
    per_corpus: dict[str, Figures] = field(default_factory=dict)

    def add(self, s: Sample, kept: Sequence[bool]) -> None:
        self.delivered += len(kept)
        if s.answerable:
            self.answerable += 1
            self.right += sum(kept)
            self.hits += any(kept)
            self.muted += not kept
        else:
            self.unanswerable += 1
            self.noise += len(kept)
            self.silent += not kept

    def as_json(self) -> dict[str, float]:
        return {
            "fastPrecision": round(self.right / max(1, self.delivered), 4),
            "hitAt2": round(self.hits / max(1, self.answerable), 4),
            "muted": round(self.muted / max(1, self.answerable), 4),
            "perUnanswerable": round(self.noise / max(1, self.unanswerable), 4),
            "fastSilence": round(self.silent / max(1, self.unanswerable), 4),
        }


def collect(
    corpora: Iterable[EvalCorpus],
    ranker: RankerSpec = RANKERS["bm25f"],
    annotate: Callable[[EvalCorpus, Any, QueryEvidence], QueryEvidence] | None = None,
) -> list[Sample]:
    """Every case's evidence about the ranker's top 2 (`annotate` may change it)."""
    samples = []
    for corpus in corpora:
        snapshot = corpus.snapshot
        for case in corpus.cases:
            query = RecallQuery.build(
                snapshot,
                case.query,
                recent_tools=case.recent_tools,
                ranker=ranker.rank,
                tokenizer=ranker.tokenize,
            )
            top = query.top(FAST_LIMIT)
            evidence = query.evidence
            found = evidence(top) if top and evidence is not None else None
            if found is not None and annotate is not None:
                found = annotate(corpus, case, found)
            relevant = tuple(s.document.path in case.relevant_ids for s in top)
            samples.append(
                Sample(
                    corpus.name,
                    case.id,
                    case.answerable,
                    found,
                    relevant,
                    split_of(corpus.name, case.id),
                )
            )
    return samples


def fit_logistic(rows: Sequence[dict[str, float]], labels: Sequence[bool]) -> Model:
    """Logistic regression by Newton's method, L2 on the weights (not the intercept)."""
    names = sorted({name for row in rows for name in row})
    x = [[1.0, *(row.get(n, 0.0) for n in names)] for row in rows]
    y = [1.0 if label else 0.0 for label in labels]
    k = len(names) + 1
    w = [0.0] * k
    for _ in range(ITERATIONS):
        gradient = [L2 * w[j] if j else 0.0 for j in range(k)]
        hessian = [[(L2 if i == j and i else 0.0) for j in range(k)] for i in range(k)]
        for xi, yi in zip(x, y, strict=True):
            z = sum(a * b for a, b in zip(w, xi, strict=True))
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            d = p * (1.0 - p)
            for i in range(k):
                gradient[i] += (p - yi) * xi[i]
                if d:
                    di = d * xi[i]
                    row = hessian[i]
                    for j in range(i, k):
                        row[j] += di * xi[j]
        for i in range(k):
            for j in range(i):
                hessian[i][j] = hessian[j][i]
        step = _solve(hessian, gradient)
        w = [a - b for a, b in zip(w, step, strict=True)]
        if max(abs(s) for s in step) < 1e-8:
            break
    return Model(round(w[0], 6), {n: round(v, 6) for n, v in zip(names, w[1:], strict=True)})


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """a x = b by Gaussian elimination with partial pivoting (a is small and regular)."""
    n = len(b)
    m = [[*row, rhs] for row, rhs in zip(a, b, strict=True)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        if abs(m[col][col]) < 1e-12:
            continue
        for r in range(col + 1, n):
            f = m[r][col] / m[col][col]
            if f:
                for c in range(col, n + 1):
                    m[r][c] -= f * m[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        if abs(m[r][r]) < 1e-12:
            continue
        x[r] = (m[r][n] - sum(m[r][c] * x[c] for c in range(r + 1, n))) / m[r][r]
    return x


def _rows(samples: Sequence[Sample], rank: int) -> tuple[list[dict[str, float]], list[bool]]:
    rows, labels = [], []
    for s in samples:
        if s.evidence is not None and len(s.evidence.docs) > rank:
            rows.append(features(s.evidence, rank))
            labels.append(s.relevant[rank])
    return rows, labels


def simulate(
    samples: Sequence[Sample],
    calibration: Calibration | None,
    confidences: Sequence[list[float] | None] | None = None,
) -> Figures:
    """The fast phase's figures with `calibration`'s gate (None: the ungated top 2);
    `confidences`, per sample, when already computed with the same models."""
    total = Figures()
    for i, s in enumerate(samples):
        kept: Sequence[bool] = ()
        if s.evidence is not None:
            if calibration is None:
                kept = s.relevant
            else:
                known = confidences[i] if confidences is not None else None
                if known is None:
                    known = calibration.confidences(s.evidence)
                kept = s.relevant[: calibration.gate(known)]
        total.add(s, kept)
        total.per_corpus.setdefault(s.corpus, Figures()).add(s, kept)
    return total


Thresholds = tuple[float, float, float]  # first, second, doubted first


def choose_thresholds(
    samples: Sequence[Sample],
    first: Model,
    second: Model,
    hit_loss: float = HIT_LOSS,
    muted_max: float = MUTED_MAX,
) -> Thresholds:
    """The gate's thresholds: the most precise fast phase that keeps every corpus's
    hit@2 within `hit_loss` of the ungated top 2 and mutes at most `muted_max` of the
    answerable questions (on `samples`, the tuning split)."""
    ungated = simulate(samples, None)
    floors = {
        name: f.hits / max(1, f.answerable) - hit_loss for name, f in ungated.per_corpus.items()
    }
    best: tuple[float, Thresholds] | None = None
    models = _calibration(first, second, (0.0, 0.0, 0.0))
    known = [models.confidences(s.evidence) if s.evidence else None for s in samples]

    def consider(thresholds: Thresholds) -> None:
        nonlocal best
        gated = simulate(samples, _calibration(first, second, thresholds), known)
        figs = gated.as_json()
        if figs["muted"] > muted_max + 1e-9 or any(
            f.hits / max(1, f.answerable) < floors[name] - 1e-9
            for name, f in gated.per_corpus.items()
        ):
            return
        if best is None or figs["fastPrecision"] > best[0] + 1e-9:
            best = (figs["fastPrecision"], thresholds)

    for t1 in THRESHOLDS:
        for t2 in THRESHOLDS:
            for doubted in (0.0, *(t for t in THRESHOLDS if t > t1)):
                consider((t1, t2, doubted))
    # Then a finer look around the best of the coarse grid (steps of 0.01).
    if best is not None:
        c1, c2, doubted = best[1]
        for t1 in _around(c1):
            for t2 in _around(c2):
                consider((t1, t2, doubted if doubted > t1 else 0.0))
    return best[1] if best else (0.0, 0.0, 0.0)


def _around(centre: float) -> list[float]:
    """The thresholds within 0.04 of `centre`, by 0.01 (never below 0)."""
    return [round(centre + i / 100, 2) for i in range(-4, 5) if centre + i / 100 >= 0]


def _calibration(first: Model, second: Model, thresholds: Thresholds) -> Calibration:
    t1, t2, doubted = thresholds
    return Calibration(first, second, t1, t2, doubted)


def calibrate(samples: Sequence[Sample]) -> Calibration:
    tune = [s for s in samples if s.split == "tune"]
    first = fit_logistic(*_rows(tune, 0))
    second = fit_logistic(*_rows(tune, 1))
    return _calibration(first, second, choose_thresholds(tune, first, second))


def _hit_loss(samples: Sequence[Sample], calibration: Calibration) -> float:
    """How much of the ungated top 2's hit@2 the gate of `calibration` loses on `samples`."""
    ungated, gated = simulate(samples, None), simulate(samples, calibration)
    return (ungated.hits - gated.hits) / max(1, ungated.answerable)


def calibrate_small(
    small: Mapping[int, Sequence[Sample]], main: Calibration, smallest: int
) -> Calibration:
    """`main`, with a calibration of its own for the folder sizes at which it loses more
    than HIT_LOSS of hit@2 (pooled, tuning split) — from the smallest sampled size up to
    the first it keeps within that, and below `smallest`, the size of the smallest
    labelled corpus (from there on `main` was fitted on real folders of that size) —
    fitted on those sizes' folders as `calibrate` fits the corpora. The muting allowed
    is MUTED_MAX on top of what the ranker itself leaves silent there (questions that
    share no word with their memory: no gate can answer them)."""
    tune = {size: [s for s in samples if s.split == "tune"] for size, samples in small.items()}
    sizes = [size for size in sorted(tune) if size < smallest]
    failing = list(takewhile(lambda size: _hit_loss(tune[size], main) > HIT_LOSS, sizes))
    if not failing:
        return main
    fit_on = [s for size in failing for s in tune[size]]
    first = fit_logistic(*_rows(fit_on, 0))
    second = fit_logistic(*_rows(fit_on, 1))
    silent = simulate(fit_on, None).as_json()["muted"]
    thresholds = choose_thresholds(fit_on, first, second, muted_max=silent + MUTED_MAX)
    following = [size for size in sorted(tune) if size > failing[-1]]
    up_to = min(following[0] if following else failing[-1] + 1, smallest) - 1
    return replace(main, small=_calibration(first, second, thresholds), small_up_to=up_to)


def collect_small(corpora: Sequence[EvalCorpus]) -> dict[int, list[Sample]]:
    """The samples of every corpus's small folders, per size."""
    return {
        size: collect(folder for c in corpora for folder in small_folders(c, size))
        for size in SIZES
    }


def small_report(small: Mapping[int, Sequence[Sample]], fitted: Calibration) -> dict[str, Any]:
    """Per folder size and split: the ungated top 2, the full corpora's gate, and the gate
    a folder of that size gets."""
    out: dict[str, Any] = {}
    for size, samples in sorted(small.items()):
        for split in ("tune", "blind"):
            part = [s for s in samples if s.split == split]
            out.setdefault(str(size), {})[split] = {
                "cases": len(part),
                "ungated": simulate(part, None).as_json(),
                "fullCorporaGate": simulate(part, replace(fitted, small=None)).as_json(),
                "gated": simulate(part, fitted.for_folder(size)).as_json(),
            }
    return out


FRONTIER = (0.02, 0.05, 0.10, 1.0)  # hit@2 losses allowed per corpus


def frontier(samples: Sequence[Sample], fitted: Calibration) -> list[dict[str, Any]]:
    """What the gate could be, for each hit@2 loss a corpus is allowed: the thresholds
    chosen on the tuning split and the figures of both splits. The shipped calibration
    is the first (HIT_LOSS); the others say what precision more loss would buy."""
    tune = [s for s in samples if s.split == "tune"]
    blind = [s for s in samples if s.split == "blind"]
    rows = []
    for loss in FRONTIER:
        thresholds = choose_thresholds(tune, fitted.first, fitted.second, hit_loss=loss)
        trial = _calibration(fitted.first, fitted.second, thresholds)
        rows.append(
            {
                "hitLossPerCorpus": loss,
                "thresholds": list(thresholds),
                "tune": simulate(tune, trial).as_json(),
                "blind": simulate(blind, trial).as_json(),
            }
        )
    return rows


MUTED_BUDGETS = (0.03, 0.05, 0.10, 0.20)  # shares of the answerable questions muted


def silence_frontier(samples: Sequence[Sample], fitted: Calibration) -> list[dict[str, Any]]:
    """What silence on unanswerable questions costs in answerable ones muted: for each
    budget, the first threshold (by 0.01, on the tuning split) that silences the most
    unanswerable questions while muting at most that share of the answerable ones; the
    second memory's rule as fitted. Figures of both splits."""
    tune = [s for s in samples if s.split == "tune"]
    blind = [s for s in samples if s.split == "blind"]
    known = [fitted.confidences(s.evidence) if s.evidence else None for s in tune]
    rows = []
    for budget in MUTED_BUDGETS:
        best: tuple[float, float] | None = None
        for step in range(101):
            t1 = step / 100
            trial = Calibration(
                fitted.first, fitted.second, t1, fitted.second_threshold, fitted.doubted_first
            )
            figs = simulate(tune, trial, known).as_json()
            if figs["muted"] <= budget + 1e-9 and (best is None or figs["fastSilence"] > best[0]):
                best = (figs["fastSilence"], t1)
        if best is None:
            continue
        trial = Calibration(
            fitted.first, fitted.second, best[1], fitted.second_threshold, fitted.doubted_first
        )
        rows.append(
            {
                "mutedMax": budget,
                "first": best[1],
                "tune": simulate(tune, trial).as_json(),
                "blind": simulate(blind, trial).as_json(),
            }
        )
    return rows


def report(samples: Sequence[Sample], calibration: Calibration) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for split in ("tune", "blind"):
        part = [s for s in samples if s.split == split]
        before, after = simulate(part, None), simulate(part, calibration)
        out[split] = {
            "cases": len(part),
            "ungated": before.as_json(),
            "gated": after.as_json(),
            "perCorpus": {
                name: {"ungated": before.per_corpus[name].as_json(), "gated": f.as_json()}
                for name, f in sorted(after.per_corpus.items())
            },
        }
    return out


def corpora_paths(paths: Sequence[str]) -> list[Path]:
    if paths:
        return [Path(p) for p in paths]
    return sorted(p for p in EVAL.glob("*.json") if p.name != "baseline.json")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "corpus", nargs="*", help="labelled corpora (default: fixtures/eval/*.json)"
    )
    parser.add_argument(
        "--write", action="store_true", help=f"write the calibration to {DATA_PATH.name}"
    )


def main(args: argparse.Namespace) -> int:
    paths = corpora_paths(args.corpus)
    corpora = [load_corpus(p) for p in paths]
    samples = collect(corpora)
    fitted = calibrate(samples)
    figures = report(samples, fitted)
    figures["frontier"] = frontier(samples, fitted)
    figures["silenceFrontier"] = silence_frontier(samples, fitted)
    small = collect_small(corpora)
    fitted = calibrate_small(small, fitted, min(len(c.documents) for c in corpora))
    figures["smallFolders"] = small_report(small, fitted)
    document = {
        "about": (
            "The fast phase's confidence (server/ranking/confidence/calibration.py): logistic "
            "models of the bm25f ranker's first and second memory being relevant, and the "
            "gate's thresholds. Written by `memory-recall dev calibrate --write`; fitted on the "
            "tuning split of the corpora below (server/dev/evaluation.py split_of), never on "
            "the blind split, whose figures are kept here to compare. `smallFolders`: the "
            "same for folders of a few memories, made of the same corpora "
            "(server/dev/small_folders.py)."
        ),
        "written": datetime.date.today().isoformat(),
        "corpora": [p.stem for p in paths],
        "objective": {
            "hitLossMax": HIT_LOSS,
            "mutedMax": MUTED_MAX,
            "maximise": "fastPrecision",
        },
        "calibration": fitted.as_json(),
        "figures": figures,
    }
    text = json.dumps(document, ensure_ascii=False, indent=2) + "\n"
    if args.write:
        DATA_PATH.write_text(text, encoding="utf-8")
        calibration_module.default_calibration.cache_clear()
        print(f"wrote {DATA_PATH}")
    print(json.dumps({"calibration": fitted.as_json(), "figures": figures}, indent=2))
    return 0
