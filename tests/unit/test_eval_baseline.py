"""The safety net of ranking quality: today's figures may not fall below the committed
baseline by more than the tolerance, and may always rise.

`fixtures/eval/baseline.json` is the output of
`memory-recall dev eval fixtures/eval/<every corpus>.json --json --ranker … --ranker …`.
A change that makes a figure better rewrites it in the same commit (this test prints
what improved); one that makes a figure worse fails here with the figures that fell.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memory_recall.server.dev.evaluation import (
    compare_to_baseline,
    evaluate_corpora,
    tolerance,
)

EVAL = Path(__file__).parents[2] / "fixtures" / "eval"
BASELINE = EVAL / "baseline.json"
CORPORA = sorted(p for p in EVAL.glob("*.json") if p != BASELINE)


@pytest.fixture(scope="module")
def baseline() -> dict:
    return json.loads(BASELINE.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def current(baseline) -> dict:
    rankers = sorted({r for by_ranker in baseline["corpora"].values() for r in by_ranker})
    return evaluate_corpora(CORPORA, rankers)


def test_every_corpus_has_its_baseline(baseline):
    assert sorted(baseline["corpora"]) == [p.stem for p in CORPORA], (
        "a corpus was added or removed: regenerate fixtures/eval/baseline.json"
    )


def test_no_figure_falls_below_the_baseline_beyond_tolerance(baseline, current, capsys):
    regressions, improvements = compare_to_baseline(current, baseline)
    if improvements:
        with capsys.disabled():
            print("\nbetter than fixtures/eval/baseline.json (rewrite it):")
            print("\n".join(f"  {line}" for line in improvements))
    assert not regressions, "\n".join(regressions)


def test_the_comparison_fails_on_a_drop_and_never_on_a_rise(baseline, current):
    corpus = next(iter(baseline["corpora"]))
    ranker = next(iter(baseline["corpora"][corpus]))
    worse = json.loads(json.dumps(current))
    figures = worse["corpora"][corpus][ranker]["all"]
    allowed = tolerance("recallAt5", figures)
    figures["recallAt5"] = baseline["corpora"][corpus][ranker]["all"]["recallAt5"] - 2 * allowed
    regressions, _ = compare_to_baseline(worse, baseline)
    assert any(f"{corpus} {ranker} all recallAt5" in line for line in regressions)
    figures["recallAt5"] += 3 * allowed
    regressions, improvements = compare_to_baseline(worse, baseline)
    assert not [line for line in regressions if "all recallAt5" in line]
    assert any(f"{corpus} {ranker} all recallAt5" in line for line in improvements)


def test_a_small_slice_may_lose_one_case_but_not_two(baseline):
    corpus, ranker = "coding", next(iter(baseline["corpora"]["coding"]))
    figs = baseline["corpora"][corpus][ranker]["category"]
    name, tally = next((n, t) for n, t in figs.items() if t.get("answerable", 0) >= 4)
    for lost, fails in ((1, False), (2, True)):
        worse = json.loads(json.dumps(baseline))
        slice_ = worse["corpora"][corpus][ranker]["category"][name]
        slice_["recallAt5"] = tally["recallAt5"] - lost / tally["answerable"]
        regressions, _ = compare_to_baseline(worse, baseline)
        assert bool(regressions) == fails, (lost, regressions)
