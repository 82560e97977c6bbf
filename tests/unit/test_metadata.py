"""Metadata by rules: a title from the first sentence, a description, a type from cue words."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memory_recall.server.dev.write_eval import evaluate_types
from memory_recall.server.store.metadata import (
    DESCRIPTION_CHARS,
    TITLE_CHARS,
    derive,
    derive_description,
    derive_title,
    infer_type,
)

FIXTURES = Path(__file__).parents[2] / "fixtures" / "metadata"


def test_type_accuracy_holds_its_baseline() -> None:
    baseline = json.loads((FIXTURES / "baseline.json").read_text())
    report = evaluate_types(FIXTURES / "types.json")
    assert report.cases >= 100 and len(report.by_lang) >= 10
    assert report.accuracy >= baseline["accuracy"] - baseline["tolerance"], report.misses


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I prefer tabs in Go code.", "user"),
        ("Never deploy on Fridays.", "feedback"),
        ("Don't mock the database in integration tests.", "feedback"),
        ("The Grafana board is at https://grafana.acme.io/d/x", "reference"),
        ("The API uses Postgres 16 and Redis.", "project"),
        ("我更喜欢简短的回答。", "user"),
        ("不要在周五发布。", "feedback"),
        ("Je préfère les réponses courtes.", "user"),
        ("Nie am Freitag deployen.", "feedback"),
        ("Я предпочитаю короткие ответы.", "user"),
        ("항상 PR에 테스트를 추가하세요.", "feedback"),
        ("決済サービスは Go で書かれている。", "project"),
    ],
)
def test_type_cues_in_many_languages(text: str, expected: str) -> None:
    assert infer_type(text)[0] == expected


def test_title_is_the_first_sentence_without_markup() -> None:
    assert derive_title("## Deploys\n- Production deploys stop on Friday.") == "Deploys"
    assert derive_title("**Use pnpm**, not npm. It is faster.") == "Use pnpm, not npm"
    assert derive_title("We pin Python 3.11, e.g. in CI. Next sentence.") == (
        "We pin Python 3.11, e.g. in CI"
    )
    assert derive_title("See [the runbook](https://x.io/rb) first.") == "See the runbook first"
    assert derive_title("发布流程很简单。先打标签。") == "发布流程很简单"


def test_long_first_sentences_are_cut_at_a_word() -> None:
    text = "The " + "very " * 40 + "long sentence."
    title = derive_title(text)
    assert len(title) <= TITLE_CHARS and title.endswith("…") and " very…" in title
    assert len(derive_title("支" * 100)) <= 40


def test_description_is_the_opening_on_one_line() -> None:
    text = "Deploy freeze\n\nNo deploys on Friday after 15:00. The release branch is cut Tuesday."
    assert derive_description(text) == (
        "Deploy freeze. No deploys on Friday after 15:00. The release branch is cut Tuesday."
    )
    long = " ".join(f"Sentence number {i} says something." for i in range(40))
    assert len(derive_description(long)) <= DESCRIPTION_CHARS


def test_derive_explains_its_type() -> None:
    derived = derive("Always run the linter before pushing.")
    assert (derived.type, derived.title) == ("feedback", "Always run the linter before pushing")
    assert "always" in derived.why
