"""From a ranker's evidence to a probability-like confidence, and the fast phase's gate.

Two logistic models, fitted on labelled corpora by `memory-recall dev calibrate`
(server.dev.calibration) and kept as data (`data/calibration.json`, with where its
numbers came from): one for the ranking's first memory, one for its second, which
also sees how the second compares with the first.

The gate (docs/ranking.md, "Confidence and silence"): the first memory is
delivered when its confidence reaches `first`, the second when the first was
delivered and its own reaches `second`, or the first's stays below `doubtedFirst`.
A small folder has models and thresholds of its own (`smallFolders`, docs/ranking.md,
"Small folders"): there most words of a question are in no memory at all, which in a
folder of hundreds says the question has no answer, and in a folder of ten says little.
Silence is a result: a query whose best memory is unlikely to answer it gets
nothing in the fast phase (the refined phase and the model's candidates are not
gated).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from memory_recall.server.ranking.confidence.evidence import QueryEvidence

# Figures are clipped where they stop saying more: a coverage past 1.5 (a body that
# repeats every term) is not surer than 1.5; a margin of e^1.5 is already decisive.
COVERAGE_CLIP = 1.5
MARGIN_CLIP = 1.5
ALONE_MARGIN = math.log(4)  # the margin of a memory with nothing ranked after it


def _ratio(a: float, b: float) -> float:
    return math.log(a / b) if a > 0 and b > 0 else 0.0


def _doc_features(q: QueryEvidence, rank: int) -> dict[str, float]:
    d = q.docs[rank]
    first = q.docs[0]
    following = q.scores[rank + 1] if rank + 1 < len(q.scores) else None
    margin = _ratio(d.score, following) if following else ALONE_MARGIN
    field = sum(q.scores) / len(q.scores) if q.scores else d.score
    terms = max(1, q.content_terms)
    return {
        "coverage": min(d.coverage, COVERAGE_CLIP),
        "summary": d.summary,
        "terms": d.terms / terms,
        "lack": q.lack,
        "relative": _ratio(d.score, first.score),
        "margin": max(-MARGIN_CLIP, min(MARGIN_CLIP, margin)),
        "depth": _ratio(d.score, field),
        "anchor": float(d.anchor),
        "matched": math.log1p(q.matched) / math.log1p(max(1, q.corpus)),
        "strength": math.log1p(d.score / 1000),
        "short": 1.0 / terms,
        "proximity": min(d.proximity, COVERAGE_CLIP),
        "focus": math.log(max(d.focus, 1e-3)),
        "rest": d.rest,
        "unheld": d.unheld,
        "unfound": q.unfound,
        # The classic false positive: a memory whose title or description names the
        # question's subject and whose body holds none of what is asked about it.
        "subject_only": d.summary * (1.0 - d.rest),
        "valueless": d.valueless,
        "contactless": d.contactless,
    }


def _second_features(q: QueryEvidence) -> dict[str, float]:
    """What the second memory is beside the first: as much of the query, or less."""
    a, b = q.docs[0], q.docs[1]
    terms = max(1, q.content_terms)
    return {
        "coverage_gain": min(b.coverage, COVERAGE_CLIP) - min(a.coverage, COVERAGE_CLIP),
        "proximity_gain": min(b.proximity, COVERAGE_CLIP) - min(a.proximity, COVERAGE_CLIP),
        "terms_gain": (b.terms - a.terms) / terms,
        "summary_gain": b.summary - a.summary,
        "first_coverage": min(a.coverage, COVERAGE_CLIP),
        "first_proximity": min(a.proximity, COVERAGE_CLIP),
        "unheld_gain": a.unheld - b.unheld,
        "rest_gain": b.rest - a.rest,
    }


# The second memory's model also reads the products of these figures two by two: whether
# a second memory is right on its own depends on how its figures combine (a body that
# holds the rest of the question counts when its summary agrees, a margin when the
# coverage is high), which a sum of single figures cannot say. Measured on the tuning
# split against the same model without them: fast precision 55.6 -> 58.0 %, silence
# and hit@2 unchanged (docs/ranking.md, "Confidence and silence"). The first memory's
# model gains nothing it keeps on the blind split from them, so it reads none.
PAIRED = (
    "coverage", "proximity", "unheld", "rest", "summary",
    "margin", "strength", "terms", "short", "depth",
)  # fmt: skip


def _pairs(figures: dict[str, float]) -> dict[str, float]:
    return {
        f"{a}*{b}": figures[a] * figures[b] for i, a in enumerate(PAIRED) for b in PAIRED[i + 1 :]
    }


def features(q: QueryEvidence, rank: int) -> dict[str, float]:
    """The named figures the model of `rank` (0: the first memory, 1: the second) reads."""
    out = _doc_features(q, rank)
    if rank == 1:
        out |= _pairs(out) | _second_features(q)
    return out


@dataclass(frozen=True)
class Model:
    """A logistic model: P(relevant) = σ(intercept + Σ weight · feature)."""

    intercept: float
    weights: Mapping[str, float]

    def probability(self, figures: Mapping[str, float]) -> float:
        z = self.intercept + sum(w * figures.get(name, 0.0) for name, w in self.weights.items())
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def as_json(self) -> dict[str, Any]:
        return {"intercept": self.intercept, "weights": dict(self.weights)}

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Model:
        return cls(float(data["intercept"]), {k: float(v) for k, v in data["weights"].items()})


@dataclass(frozen=True)
class Calibration:
    """The fitted models and the gate's thresholds."""

    first: Model
    second: Model
    first_threshold: float
    second_threshold: float
    # Below this, the first memory is delivered but doubted: the second goes with it
    # whatever its own confidence (the answer is as likely one as the other).
    doubted_first: float = 0.0
    # The calibration of a folder of at most `small_up_to` memories, fitted on such
    # folders (None: this one serves every size).
    small: Calibration | None = None
    small_up_to: int = 0

    def for_folder(self, memories: int) -> Calibration:
        """The calibration that gates a recall among `memories` memories."""
        if self.small is not None and memories <= self.small_up_to:
            return self.small
        return self

    def confidences(self, q: QueryEvidence) -> list[float]:
        """A confidence per memory of `q.docs` (at most two are modelled: a third and
        later get the second's model)."""
        out = []
        for rank in range(len(q.docs)):
            model_rank = min(rank, 1)
            model = self.first if model_rank == 0 else self.second
            out.append(model.probability(features(q, model_rank)))
        return out

    def gate(self, confidences: Sequence[float]) -> int:
        """How many of the ranked memories the fast phase delivers: 0, 1 or 2."""
        if not confidences or confidences[0] < self.first_threshold:
            return 0
        if len(confidences) > 1 and (
            confidences[1] >= self.second_threshold or confidences[0] < self.doubted_first
        ):
            return 2
        return 1

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "first": self.first.as_json(),
            "second": self.second.as_json(),
            "thresholds": {
                "first": self.first_threshold,
                "second": self.second_threshold,
                "doubtedFirst": self.doubted_first,
            },
        }
        if self.small is not None:
            out["smallFolders"] = {"upTo": self.small_up_to, **self.small.as_json()}
        return out

    @classmethod
    def of(cls, data: Mapping[str, Any]) -> Calibration:
        small = data.get("smallFolders")
        return cls(
            Model.of(data["first"]),
            Model.of(data["second"]),
            float(data["thresholds"]["first"]),
            float(data["thresholds"]["second"]),
            float(data["thresholds"].get("doubtedFirst", 0.0)),
            cls.of(small) if small else None,
            int(small["upTo"]) if small else 0,
        )


DATA = "calibration.json"


@cache
def default_calibration() -> Calibration:
    """The calibration shipped with the package (`data/calibration.json`)."""
    text = resources.files(__package__).joinpath("data").joinpath(DATA).read_text("utf-8")
    return Calibration.of(json.loads(text)["calibration"])


def choose(
    top: Sequence[Any],
    evidence: Any,
    calibration: Calibration | None = None,
) -> tuple[list[Any], list[float | None]]:
    """The fast phase's memories among the ranking's `top` and their confidence
    (gated as a folder of the ranking's size is: `Calibration.for_folder`).

    `evidence`: the ranking's account of its best memories (`Ranking.evidence`), or
    None for a ranker that gives none: then `top` is delivered as ranked, with no
    confidence (the `spec` ranker's fast phase is its top 2 exactly).
    """
    if not top or evidence is None:
        return list(top), [None] * len(top)
    found = evidence(top)
    calibration = (calibration or default_calibration()).for_folder(found.corpus)
    confidences = calibration.confidences(found)
    kept = calibration.gate(confidences)
    return list(top[:kept]), [round(c, 4) for c in confidences[:kept]]
