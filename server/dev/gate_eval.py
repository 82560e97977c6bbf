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


@dataclass
class Tally:
    """Refusals of one class or one language: positives refused, look-alikes refused."""

    positives: int = 0
    refused: int = 0
    negatives: int = 0
    false_refusals: int = 0

    @property
    def refusal_rate(self) -> float:
        return self.refused / self.positives if self.positives else 1.0

    @property
    def false_refusal_rate(self) -> float:
        return self.false_refusals / self.negatives if self.negatives else 0.0


@dataclass
class RefusalReport:
    """The gate's `secret` rule as a user meets it: is a text holding a credential refused,
    is a harmless look-alike let through? Per case, per class and per language."""

    total: Tally = field(default_factory=Tally)
    by_class: dict[str, Tally] = field(default_factory=dict)
    by_lang: dict[str, Tally] = field(default_factory=dict)
    missed: list[str] = field(default_factory=list)
    falsely_refused: list[str] = field(default_factory=list)


def evaluate_refusals(path: Path | str) -> RefusalReport:
    """Whether the secret rule refuses each text of a labelled set (`class` and `lang` per
    case; a case without a secret is a look-alike that must pass)."""
    report = RefusalReport()
    for case in json.loads(Path(path).read_text("utf-8"))["cases"]:
        refused = bool(find_secrets(case["text"]))
        positive = bool(case["secrets"])
        tallies = (
            report.total,
            report.by_class.setdefault(case.get("class", "?"), Tally()),
            report.by_lang.setdefault(case.get("lang", "?"), Tally()),
        )
        for tally in tallies:
            if positive:
                tally.positives += 1
                tally.refused += refused
            else:
                tally.negatives += 1
                tally.false_refusals += refused
        if positive and not refused:
            report.missed.append(case["id"])
        elif refused and not positive:
            report.falsely_refused.append(case["id"])
    return report


def format_refusals(name: str, report: RefusalReport, *, show_cases: bool = True) -> str:
    """Refused and falsely refused, overall, per class and per language."""

    def row(label: str, tally: Tally) -> str:
        return (
            f"  {label:<22} refused {tally.refused:>3}/{tally.positives:<3}"
            f" ({tally.refusal_rate:6.1%})   look-alikes refused"
            f" {tally.false_refusals:>2}/{tally.negatives:<3} ({tally.false_refusal_rate:5.1%})"
        )

    lines = [f"{name}:", row("all", report.total), " per class:"]
    lines += [row(k, t) for k, t in sorted(report.by_class.items())]
    lines.append(" per language:")
    lines += [row(k, t) for k, t in sorted(report.by_lang.items())]
    if show_cases:
        lines += [f"  missed: {case_id}" for case_id in report.missed]
        lines += [f"  look-alike refused: {case_id}" for case_id in report.falsely_refused]
    return "\n".join(lines)


def gate_main(*, as_json: bool = False, show_cases: bool = True) -> int:
    """`memory-recall eval-gate`: the secret rule's refusals on the tuned and the blind set
    (per class, per language), and the injection check's figures."""
    here = Path(__file__).resolve()
    base = next(
        (p / "fixtures" / "gate" for p in here.parents if (p / "fixtures" / "gate").is_dir()),
        Path("fixtures") / "gate",
    )
    sets = {"tuned": base / "secrets.json", "blind": base / "secrets-blind.json"}
    reports = {name: evaluate_refusals(path) for name, path in sets.items()}
    injection = {
        name: evaluate_injection(base / file)
        for name, file in (("tuned", "injection.json"), ("blind", "injection-blind.json"))
        if (base / file).is_file()
    }
    if as_json:
        print(
            json.dumps(
                {
                    "secrets": {
                        name: {
                            "refused": r.total.refusal_rate,
                            "falseRefusals": r.total.false_refusal_rate,
                            "positives": r.total.positives,
                            "negatives": r.total.negatives,
                            "classes": sorted(r.by_class),
                            "languages": sorted(r.by_lang),
                        }
                        for name, r in reports.items()
                    },
                    "injection": {
                        name: {"cases": r.cases, "precision": r.precision, "recall": r.recall}
                        for name, r in injection.items()
                    },
                },
                indent=2,
            )
        )
        return 0
    for name, report in reports.items():
        print(
            format_refusals(f"secrets ({name}: {sets[name].name})", report, show_cases=show_cases)
        )
    for name, labels in injection.items():
        print(
            f"injection ({name}): {labels.cases} cases  precision {labels.precision:.3f}"
            f"  recall {labels.recall:.3f}"
        )
        if show_cases:
            print("\n".join(f"  false positive: {c}" for c in labels.false_positives))
            print("\n".join(f"  missed: {c}" for c in labels.false_negatives))
    return 0
