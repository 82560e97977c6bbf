"""The extraction eval with the scripted model: the corpus's shape and the figures' baseline."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memory_recall.server.dev.extract_eval import evaluate, load_cases, routes
from memory_recall.server.dev.scripted_model import ScriptedModel
from memory_recall.server.models.complete import HttpCompleter

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "extract" / "corpus.json"
# Figures when the corpus was written (scripted answers, gate and conflict rules as on
# main then); a test fails on a regression, never on an improvement.
BASELINE = {"precision": 0.935, "recall": 0.933}
TOLERANCE = 0.035  # about one memory of 30


def test_corpus_covers_what_the_issue_asks() -> None:
    cases = load_cases(CORPUS)
    assert len(cases) >= 30
    assert len({c["language"] for c in cases}) >= 4
    categories = {c["category"] for c in cases}
    assert {"preference", "correction", "error-fix", "decision", "smalltalk"} <= categories
    assert all(not c["expected"] for c in cases if c["category"] == "smalltalk")
    assert sum(bool(c["secrets"]) for c in cases) >= 3


def test_scripted_figures_hold_and_nothing_secret_leaks() -> None:
    cases = load_cases(CORPUS)
    with ScriptedModel(routes=routes(cases)) as model:
        completer = HttpCompleter(model.url, "scripted", None)
        report = asyncio.run(evaluate(cases, completer, "scripted", 5.0)).as_json()
        sent = model.sent_text()
    assert report["secretsLeaked"] == 0
    for case in cases:
        for secret in case["secrets"]:
            assert secret not in sent
    assert report["modelFailures"] == 0
    for key, value in BASELINE.items():
        assert report[key] >= value - TOLERANCE, (key, report[key])
    assert report["duplicatesCreated"] <= 1
    assert report["skipped"].get("secret", 0) >= 1 and report["skipped"].get("injection", 0) >= 1
