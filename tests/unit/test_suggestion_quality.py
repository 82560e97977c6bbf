"""The suggestion matcher on the held-out multilingual fixtures keeps its figures.

The floor is fixtures/suggestions/baseline.json; a figure may rise, never fall by
more than the tolerance (fixtures/suggestions/suggestions.json is held by
test_network_quality.py).
"""

from __future__ import annotations

import json
from pathlib import Path

from memory_recall.server.dev.suggestion_eval import evaluate_suggestions, format_suggestions

FIXTURES = Path(__file__).parents[2] / "fixtures" / "suggestions"
TOLERANCE = 0.03  # about one event of the set


def test_the_multilingual_set_holds_its_figures(capsys):
    floor = json.loads((FIXTURES / "baseline.json").read_text(encoding="utf-8"))["multilingual"]
    report = evaluate_suggestions(FIXTURES / "multilingual.json")
    with capsys.disabled():
        print("\n" + format_suggestions(report))
    assert report.events >= 30 and report.none_events >= 10
    assert report.precision >= floor["precision"] - TOLERANCE
    assert report.recall >= floor["recall"] - TOLERANCE
    assert report.false_alarms <= floor["falseAlarms"]
