"""Measure the suggestion matcher (server/organise/suggestions.py) on a fixture set.

Fixture schema (fixtures/suggestions/*.json): `{"docs": [{id, type, title,
description, body, category?}], "events": [{id, event, text?, path?,
expectedIds: [...]}]}`; an empty `expectedIds` means the event must bring no
suggestion. Each event is matched on its own, as in a fresh session.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.organise.suggestions import ObservedEvent, SuggestionIndex
from memory_recall.server.roots import Scope

SUGGESTIONS = Path(__file__).parents[2] / "fixtures" / "suggestions" / "suggestions.json"


@dataclass
class SuggestionReport:
    events: int
    expected: int
    suggested: int
    correct: int
    false_alarms: int  # suggestions on events that should bring none
    silent_events: int  # events that should bring none, and brought none
    none_events: int
    by_kind: dict[str, dict[str, int]]
    errors: list[str]

    @property
    def precision(self) -> float:
        return self.correct / self.suggested if self.suggested else 1.0

    @property
    def recall(self) -> float:
        return self.correct / self.expected if self.expected else 1.0

    def as_json(self) -> dict[str, Any]:
        return {
            "events": self.events,
            "precision": round(self.precision, 4),
            "recall": round(self.recall, 4),
            "expected": self.expected,
            "suggested": self.suggested,
            "correct": self.correct,
            "falseAlarms": self.false_alarms,
            "silentNoneEvents": f"{self.silent_events}/{self.none_events}",
            "byKind": self.by_kind,
        }


def evaluate_suggestions(path: str | Path = SUGGESTIONS) -> SuggestionReport:
    """Precision and recall of the suggestion matcher on a fixture set (each event
    on its own, as in a fresh session)."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    docs = [
        MemoryDocument(
            path=d["id"],
            relative_path=d["id"],
            scope=Scope.PROJECT,
            type=d["type"],
            title=d["title"],
            description=d.get("description", ""),
            body=d.get("body", ""),
            mtime_ms=1,
        )
        for d in data["docs"]
    ]
    declared = {d["id"]: d["category"] for d in data["docs"] if d.get("category")}
    index = SuggestionIndex.build(docs, declared)
    report = SuggestionReport(0, 0, 0, 0, 0, 0, 0, {}, [])
    for event in data["events"]:
        observed = ObservedEvent(event["event"], event.get("text") or "", event.get("path"))
        got = [s.path for s in index.match(observed)]
        expected = set(event["expectedIds"])
        correct = len(expected & set(got))
        kind = report.by_kind.setdefault(
            event["event"], {"expected": 0, "suggested": 0, "correct": 0}
        )
        kind["expected"] += len(expected)
        kind["suggested"] += len(got)
        kind["correct"] += correct
        report.events += 1
        report.expected += len(expected)
        report.suggested += len(got)
        report.correct += correct
        if not expected:
            report.none_events += 1
            report.false_alarms += len(got)
            report.silent_events += not got
        if set(got) != expected:
            report.errors.append(f"{event['id']}: expected {sorted(expected)}, got {got}")
    return report


def format_suggestions(report: SuggestionReport, *, errors: bool = True) -> str:
    lines = [
        f"suggestions on {report.events} events: precision {report.precision:.3f} "
        f"({report.correct}/{report.suggested}), recall {report.recall:.3f} "
        f"({report.correct}/{report.expected}); events that must bring none: "
        f"{report.silent_events}/{report.none_events} silent, {report.false_alarms} false alarms"
    ]
    for kind, t in sorted(report.by_kind.items()):
        p = t["correct"] / t["suggested"] if t["suggested"] else 1.0
        r = t["correct"] / t["expected"] if t["expected"] else 1.0
        lines.append(f"  {kind:<11} precision {p:.3f}  recall {r:.3f}  ({t['correct']} correct)")
    if errors and report.errors:
        lines.append("  differences:")
        lines += [f"    {e}" for e in report.errors]
    return "\n".join(lines)
