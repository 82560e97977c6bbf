"""`organise` and `context` initialization options: valid ones used, invalid ones reported."""

from __future__ import annotations

from memory_recall.server.core.options import parse_options
from memory_recall.server.core.organising import organise_settings


def test_defaults():
    settings = organise_settings(parse_options(None)[0])
    assert (settings.capacity, settings.budget_chars) == (300, 4000)


def test_configured_values_are_used():
    options, problems = parse_options(
        {"organise": {"capacity": 50, "autoConsolidate": True}, "context": {"budgetChars": 900}}
    )
    assert problems == []
    assert options.organise.auto_consolidate is True
    settings = organise_settings(options)
    assert (settings.capacity, settings.budget_chars) == (50, 900)


def test_invalid_values_fall_back_and_say_why():
    options, problems = parse_options(
        {"organise": {"capacity": 0}, "context": {"budgetChars": "x"}}
    )
    assert len(problems) == 2
    assert any(p.startswith("organise.capacity") for p in problems)
    assert any(p.startswith("context.budgetChars") for p in problems)
    settings = organise_settings(options)
    assert (settings.capacity, settings.budget_chars) == (300, 4000)
