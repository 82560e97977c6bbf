"""How well the quality gate's detectors do on the labelled sets in fixtures/gate/.

Three sets, three figures: the secret detector (per kind, matched by kind
within a case), the injection detector and the ephemeral detector (a yes/no
label per draft). A CLI command prints `format_report(...)`; the unit tests
compare the figures with a baseline.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from memory_recall.server.store.gate import MemoryDraft, find_injection, is_ephemeral
from memory_recall.server.store.secrets import find_secrets


@dataclass(frozen=True)
class KindRecall:
    """How many labelled secrets of one kind the detector found."""

    found: int
    labelled: int

    @property
    def recall(self) -> float:
        return self.found / self.labelled if self.labelled else 1.0


@dataclass
class SecretReport:
    """The secret detector against a labelled set.

    A finding counts as a true positive when its case has an unmatched label of
    the same kind; any other finding is a false positive. Precision and recall
    are over findings and labels, so a case with two secrets counts twice.
    """

    cases: int
    true_positives: int
    false_positives: list[tuple[str, str]] = field(default_factory=list)
    """(case id, kind found) for every finding with no label to match."""
    false_negatives: list[tuple[str, str]] = field(default_factory=list)
    """(case id, kind labelled) for every label the detector missed."""
    per_kind: dict[str, KindRecall] = field(default_factory=dict)

    @property
    def precision(self) -> float:
        found = self.true_positives + len(self.false_positives)
        return self.true_positives / found if found else 1.0

    @property
    def recall(self) -> float:
        labelled = self.true_positives + len(self.false_negatives)
        return self.true_positives / labelled if labelled else 1.0


@dataclass
class LabelReport:
    """A yes/no detector against a labelled set: which cases it got wrong."""

    name: str
    cases: int
    true_positives: int
    false_positives: list[str] = field(default_factory=list)
    """Ids of cases flagged but labelled negative."""
    false_negatives: list[str] = field(default_factory=list)
    """Ids of cases labelled positive but not flagged."""

    @property
    def precision(self) -> float:
        flagged = self.true_positives + len(self.false_positives)
        return self.true_positives / flagged if flagged else 1.0

    @property
    def recall(self) -> float:
        labelled = self.true_positives + len(self.false_negatives)
        return self.true_positives / labelled if labelled else 1.0


def evaluate_secrets(path: Path | str) -> SecretReport:
    """Run `find_secrets` on every case of a `{"cases": [{id, text, secrets: [{kind}]}]}` file."""
    cases = json.loads(Path(path).read_text("utf-8"))["cases"]
    report = SecretReport(cases=len(cases), true_positives=0)
    found_by_kind: Counter[str] = Counter()
    labelled_by_kind: Counter[str] = Counter()
    for case in cases:
        expected = Counter(secret["kind"] for secret in case["secrets"])
        found = Counter(finding.kind for finding in find_secrets(case["text"]))
        labelled_by_kind.update(expected)
        for kind, count in found.items():
            matched = min(count, expected[kind])
            report.true_positives += matched
            found_by_kind[kind] += matched
            report.false_positives += [(case["id"], kind)] * (count - matched)
        for kind, count in expected.items():
            report.false_negatives += [(case["id"], kind)] * max(0, count - found[kind])
    report.per_kind = {
        kind: KindRecall(found_by_kind[kind], labelled)
        for kind, labelled in sorted(labelled_by_kind.items())
    }
    return report


def _drafts(path: Path | str) -> list[tuple[str, MemoryDraft, bool]]:
    cases = json.loads(Path(path).read_text("utf-8"))["cases"]
    return [
        (
            case["id"],
            MemoryDraft(case.get("title", ""), case.get("description", ""), case.get("body", "")),
            bool(case["label"]),
        )
        for case in cases
    ]


def _text(draft: MemoryDraft) -> str:
    return "\n".join((draft.title, draft.description, draft.body))


def _label_report(name: str, results: list[tuple[str, bool, bool]]) -> LabelReport:
    report = LabelReport(name=name, cases=len(results), true_positives=0)
    for case_id, flagged, labelled in results:
        if flagged and labelled:
            report.true_positives += 1
        elif flagged:
            report.false_positives.append(case_id)
        elif labelled:
            report.false_negatives.append(case_id)
    return report


def evaluate_injection(path: Path | str) -> LabelReport:
    """Run the injection detector on each case of a `{"cases": [{id, title, body, label}]}` file."""
    return _label_report(
        "injection",
        [
            (case_id, find_injection(_text(draft)) is not None, label)
            for case_id, draft, label in _drafts(path)
        ],
    )


def evaluate_ephemeral(path: Path | str) -> LabelReport:
    """Run the ephemeral detector on each case of a `{"cases": [{id, title, body, label}]}` file."""
    return _label_report(
        "ephemeral",
        [(case_id, is_ephemeral(draft), label) for case_id, draft, label in _drafts(path)],
    )


def format_report(secrets: SecretReport, *labelled: LabelReport) -> str:
    """The figures for humans: overall and per-kind, then every mistake by case id."""
    lines = [
        f"secrets: {secrets.cases} cases  precision {secrets.precision:.3f}"
        f"  recall {secrets.recall:.3f}",
    ]
    for kind, kind_recall in secrets.per_kind.items():
        lines.append(
            f"  {kind:<28} {kind_recall.found:>3}/{kind_recall.labelled:<3}"
            f" recall {kind_recall.recall:.2f}"
        )
    for case_id, kind in secrets.false_positives:
        lines.append(f"  false positive: {case_id} ({kind})")
    for case_id, kind in secrets.false_negatives:
        lines.append(f"  missed: {case_id} ({kind})")
    for report in labelled:
        lines.append(
            f"{report.name}: {report.cases} cases  precision {report.precision:.3f}"
            f"  recall {report.recall:.3f}"
        )
        lines += [f"  false positive: {case_id}" for case_id in report.false_positives]
        lines += [f"  missed: {case_id}" for case_id in report.false_negatives]
    return "\n".join(lines)
