"""What the memory network is worth, held to its figures: on the multi-hop corpus it
finds what lexical ranking cannot, on every other corpus it costs nothing, and the
suggestion matcher keeps its precision and recall.

The floor is fixtures/network/baseline.json (`memory-recall dev network-eval
--write-baseline`); a figure may rise, never fall by more than the tolerance.
"""

from __future__ import annotations

import json

import pytest
from memory_recall.server.dev.network_eval import BASELINE, DEFAULT_RANKERS, format_reports, run
from memory_recall.server.dev.suggestion_eval import evaluate_suggestions, format_suggestions
from memory_recall.server.network.join import DEFAULT_JOIN

TOLERANCE = 0.015  # about two multi-hop cases
NO_LOSS = 0.005  # with the network against without it, in the same run


@pytest.fixture(scope="module")
def baseline() -> dict:
    return json.loads(BASELINE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def reports() -> list:
    return run([], DEFAULT_RANKERS)


def test_multihop_figures_hold_the_baseline(reports, baseline, capsys):
    multihop = [r for r in reports if r.corpus == "multihop"]
    with capsys.disabled():
        print("\n" + format_reports(multihop, categories=False))
    assert {r.ranker for r in multihop} == set(baseline["multihop"])
    for report in multihop:
        floor = baseline["multihop"][report.ranker]
        t = report.total
        rule = DEFAULT_JOIN.fast_rule
        assert t["candidatesR5Network"] >= floor["candidatesR5Network"] - TOLERANCE, report.ranker
        assert t["candidateRecallNetwork"] >= floor["candidateRecallNetwork"] - TOLERANCE
        assert t["fastR2"][rule] >= floor["fastR2"] - TOLERANCE, report.ranker
        added = t["fastAdded"][rule]["toAbstentions"]
        assert added <= floor["fastAddedToAbstentions"], report.ranker
        # What the network is for: the answers no lexical ranker can find.
        assert t["candidatesR5Network"] > t["candidatesR5"] + 0.25
        assert t["fastR2"][rule] > t["fastR2"]["never"]


def test_the_network_costs_no_other_corpus_anything(reports, capsys):
    others = [r for r in reports if r.corpus != "multihop"]
    assert len({r.corpus for r in others}) >= 8
    with capsys.disabled():
        print("\n" + format_reports(others, categories=False))
    rule = DEFAULT_JOIN.fast_rule
    for report in others:
        t = report.total
        where = f"{report.corpus} {report.ranker}"
        assert t["candidatesR5Network"] >= t["candidatesR5"] - NO_LOSS, where
        assert t["candidateRecallNetwork"] >= t["candidateRecall"] - NO_LOSS, where
        assert t["fastR2"][rule] >= t["fastR2"]["never"] - NO_LOSS, where


def test_suggestion_matcher_holds_its_figures(baseline, capsys):
    report = evaluate_suggestions()
    with capsys.disabled():
        print("\n" + format_suggestions(report))
    floor = baseline["suggestions"]
    assert report.precision >= floor["precision"] - TOLERANCE
    assert report.recall >= floor["recall"] - TOLERANCE
    assert report.false_alarms <= floor["falseAlarms"]
