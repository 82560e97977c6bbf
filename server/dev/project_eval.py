"""How well `projectInit` reads repositories: the labelled fixtures in fixtures/projects/.

A *slot* is (fixture, component folder, kind) for the kinds the labels fix
(build, test, lint, format). A slot is right when the reader's commands for it
equal the label's (as a set); a labelled slot with no command is missing; a
command where the label has none is extra. Accuracy = right / all slots
either side names. Facts (languages, package managers, frameworks, services)
count as found when the reader names each labelled one; skipped files as
found when each labelled broken file is reported.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_recall.server.extract.project.facts import CommandKind, ProjectReport
from memory_recall.server.extract.project.reader import read_project

SCORED_KINDS: tuple[CommandKind, ...] = ("build", "test", "lint", "format")
FACTS = ("languages", "packageManagers", "frameworks")


@dataclass
class FixtureResult:
    name: str
    right: int = 0
    wrong: list[str] = field(default_factory=list)  # "component kind: got … expected …"
    facts_found: int = 0
    facts_labelled: int = 0
    missing_facts: list[str] = field(default_factory=list)
    problems_found: int = 0
    problems_labelled: int = 0
    elapsed_ms: float = 0.0

    @property
    def slots(self) -> int:
        return self.right + len(self.wrong)

    @property
    def all_right(self) -> bool:
        return (
            not self.wrong
            and not self.missing_facts
            and self.problems_found == self.problems_labelled
        )


@dataclass
class ProjectEvalReport:
    fixtures: list[FixtureResult]

    @property
    def accuracy(self) -> float:
        slots = sum(f.slots for f in self.fixtures)
        return sum(f.right for f in self.fixtures) / slots if slots else 1.0

    @property
    def fact_recall(self) -> float:
        labelled = sum(f.facts_labelled for f in self.fixtures)
        return sum(f.facts_found for f in self.fixtures) / labelled if labelled else 1.0

    @property
    def problems_recall(self) -> float:
        labelled = sum(f.problems_labelled for f in self.fixtures)
        return sum(f.problems_found for f in self.fixtures) / labelled if labelled else 1.0

    def as_json(self) -> dict[str, Any]:
        return {
            "fixtures": len(self.fixtures),
            "fixturesAllRight": sum(f.all_right for f in self.fixtures),
            "commandSlots": sum(f.slots for f in self.fixtures),
            "commandAccuracy": round(self.accuracy, 4),
            "factRecall": round(self.fact_recall, 4),
            "skippedFilesReported": round(self.problems_recall, 4),
            "wrong": {f.name: f.wrong + f.missing_facts for f in self.fixtures if not f.all_right},
        }


def load_labels(directory: Path) -> dict[str, Any]:
    data = json.loads((directory / "expected.json").read_text("utf-8"))
    fixtures: dict[str, Any] = data["fixtures"]
    return fixtures


def score_fixture(name: str, report: ProjectReport, label: dict[str, Any]) -> FixtureResult:
    result = FixtureResult(name, elapsed_ms=report.elapsed_ms)
    expected_components: dict[str, Any] = label["components"]
    produced = {c.path: c for c in report.components}
    for path in sorted(set(expected_components) | set(produced)):
        expected = expected_components.get(path, {})
        component = produced.get(path)
        resolved = component.resolved() if component else {}
        for kind in SCORED_KINDS:
            want = set(expected.get(kind, []))
            got = {c.command for c in resolved.get(kind, [])}
            if not want and not got:
                continue
            if want == got:
                result.right += 1
            else:
                result.wrong.append(f"{path} {kind}: got {sorted(got)} expected {sorted(want)}")
        for fact in FACTS:
            names = {
                "languages": list(component.languages) if component else [],
                "packageManagers": component.package_managers if component else [],
                "frameworks": component.frameworks if component else [],
            }[fact]
            for wanted in expected.get(fact, []):
                result.facts_labelled += 1
                if wanted in names:
                    result.facts_found += 1
                else:
                    result.missing_facts.append(f"{path} {fact}: {wanted} not named")
    for service in label.get("services", []):
        result.facts_labelled += 1
        if any(service in s for s in report.services):
            result.facts_found += 1
        else:
            result.missing_facts.append(f"service {service} not named")
    reported = {p.path for p in report.problems}
    for path in label.get("problems", []):
        result.problems_labelled += 1
        result.problems_found += path in reported
    return result


def evaluate(directory: Path) -> ProjectEvalReport:
    labels = load_labels(directory)
    results = [
        score_fixture(name, read_project(directory / name), label)
        for name, label in sorted(labels.items())
    ]
    return ProjectEvalReport(results)


def format_report(report: ProjectEvalReport) -> str:
    lines = [f"{'fixture':32} {'commands':>9} {'facts':>7} {'skipped':>8} {'ms':>6}"]
    for f in report.fixtures:
        facts = f"{f.facts_found}/{f.facts_labelled}"
        problems = f"{f.problems_found}/{f.problems_labelled}" if f.problems_labelled else "-"
        lines.append(
            f"{f.name:32} {f.right:>4}/{f.slots:<4} {facts:>7} {problems:>8} {f.elapsed_ms:>6.1f}"
        )
    lines.append("")
    all_right = sum(f.all_right for f in report.fixtures)
    lines.append(
        f"command accuracy {report.accuracy:.1%} over {sum(f.slots for f in report.fixtures)} "
        f"slots (build/test/lint/format per component); facts named {report.fact_recall:.1%}; "
        f"broken files reported {report.problems_recall:.1%}; "
        f"{all_right}/{len(report.fixtures)} fixtures entirely right"
    )
    for f in report.fixtures:
        for wrong in f.wrong + f.missing_facts:
            lines.append(f"  {f.name}: {wrong}")
    return "\n".join(lines)
