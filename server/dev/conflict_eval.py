"""Measure the conflict rules (server/store/conflicts.py) on a labelled corpus of pairs.

A pair is scored by what the writer does with the verdict: an undecided (unsure) verdict
creates the new memory, so it counts as `independent` here; `memory-recall dev eval-facts`
(fact_eval.py) gives the figures per tier, language and class, with losses.

Corpus schema (fixtures/conflicts/*.json): `{"pairs": [{"id", "lang", "old":
{title, description, body, type}, "new": {...}, "verdict":
"duplicate|update|independent", "note"}]}`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from memory_recall.server.store.conflicts import PRECEDENCE, MemoryText, VerdictKind, judge

KINDS: tuple[VerdictKind, ...] = tuple(PRECEDENCE)


@dataclass(frozen=True)
class PairOutcome:
    """One pair of the corpus: what it is labelled and what the rules said."""

    id: str
    lang: str
    expected: VerdictKind
    got: VerdictKind
    reason: str
    similarity: float
    decided: bool


@dataclass
class ConflictReport:
    """Figures of the conflict rules on one corpus."""

    corpus: str
    outcomes: list[PairOutcome] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return _share(sum(o.expected == o.got for o in self.outcomes), len(self.outcomes))

    def confusion(self) -> dict[VerdictKind, dict[VerdictKind, int]]:
        """confusion[expected][got] = number of pairs."""
        table: dict[VerdictKind, dict[VerdictKind, int]] = {
            e: dict.fromkeys(KINDS, 0) for e in KINDS
        }
        for outcome in self.outcomes:
            table[outcome.expected][outcome.got] += 1
        return table

    def precision(self, kind: VerdictKind) -> float:
        said = [o for o in self.outcomes if o.got == kind]
        return _share(sum(o.expected == kind for o in said), len(said))

    def recall(self, kind: VerdictKind) -> float:
        labelled = [o for o in self.outcomes if o.expected == kind]
        return _share(sum(o.got == kind for o in labelled), len(labelled))

    def accuracy_by_language(self) -> dict[str, float]:
        languages = sorted({o.lang for o in self.outcomes})
        return {
            lang: _share(
                sum(o.expected == o.got for o in self.outcomes if o.lang == lang),
                sum(o.lang == lang for o in self.outcomes),
            )
            for lang in languages
        }

    def errors(self) -> list[PairOutcome]:
        return [o for o in self.outcomes if o.expected != o.got]

    def figures(self) -> dict[str, float]:
        """The flat figures a baseline compares: accuracy, precision and recall per verdict."""
        flat = {"accuracy": self.accuracy}
        for kind in KINDS:
            flat[f"{kind}.precision"] = self.precision(kind)
            flat[f"{kind}.recall"] = self.recall(kind)
        return flat


def _share(part: int, whole: int) -> float:
    # An empty class has nothing wrong in it: 1.0 keeps a baseline from failing on it.
    return part / whole if whole else 1.0


def _memory(raw: Mapping[str, Any]) -> MemoryText:
    return MemoryText(
        title=str(raw["title"]),
        description=str(raw.get("description", "")),
        body=str(raw.get("body", "")),
        type=str(raw.get("type", "project")),
    )


def evaluate_conflicts(path: str | Path) -> ConflictReport:
    """Judge every pair of the corpus at `path` and collect the figures."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    report = ConflictReport(corpus=str(path))
    for pair in data["pairs"]:
        expected = pair["verdict"]
        if expected not in PRECEDENCE:
            raise ValueError(f"pair {pair['id']}: unknown verdict {expected!r}")
        verdict = judge(_memory(pair["new"]), _memory(pair["old"]))
        # What the writer does with it (the zero-loss rule): an unsure verdict creates.
        got = verdict.kind if verdict.decided else "independent"
        report.outcomes.append(
            PairOutcome(
                id=str(pair["id"]),
                lang=str(pair.get("lang", "?")),
                expected=cast(VerdictKind, expected),
                got=got,
                reason=verdict.reason,
                similarity=verdict.similarity,
                decided=verdict.decided,
            )
        )
    return report


def format_report(report: ConflictReport, *, show_errors: bool = True) -> str:
    """The figures as text: per-verdict precision/recall, confusion matrix, languages, errors."""
    lines = [
        f"conflict rules on {report.corpus}: {len(report.outcomes)} pairs, "
        f"accuracy {report.accuracy:.3f}",
        "",
        f"{'verdict':<12} {'precision':>9} {'recall':>7} {'pairs':>6}",
    ]
    confusion = report.confusion()
    for kind in KINDS:
        lines.append(
            f"{kind:<12} {report.precision(kind):>9.3f} {report.recall(kind):>7.3f} "
            f"{sum(confusion[kind].values()):>6}"
        )
    lines += ["", "confusion (rows: labelled, columns: judged)"]
    lines.append(f"{'':<12} " + " ".join(f"{k:>11}" for k in KINDS))
    for expected in KINDS:
        lines.append(
            f"{expected:<12} " + " ".join(f"{confusion[expected][got]:>11}" for got in KINDS)
        )
    lines += ["", "accuracy by language"]
    lines.append(
        "  ".join(f"{lang} {share:.2f}" for lang, share in report.accuracy_by_language().items())
    )
    undecided = sum(not o.decided for o in report.outcomes)
    lines.append(f"undecided (near a threshold, a model may be asked): {undecided}")
    if show_errors and report.errors():
        lines += ["", "errors"]
        lines += [
            f"  {o.id:<14} {o.expected:>11} -> {o.got:<11} sim {o.similarity:.2f}  {o.reason}"
            for o in report.errors()
        ]
    return "\n".join(lines)
