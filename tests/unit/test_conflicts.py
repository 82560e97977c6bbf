"""Conflict detection between a new memory and an existing one (docs/writing.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memory_recall.server.dev.conflict_eval import evaluate_conflicts, format_report
from memory_recall.server.store.conflicts import (
    MemoryText,
    decide,
    judge,
    same_title,
    subject_key,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "conflicts"
# Figures may drop this much before a test calls it a regression (one pair in ~60).
TOLERANCE = 0.02


def memory(title: str, description: str, body: str, type_: str = "project") -> MemoryText:
    return MemoryText(title=title, description=description, body=body, type=type_)


# -- Each verdict, in several languages -------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (
            memory(
                "Lint command", "How to lint", "Lint the code with `ruff check .` before pushing."
            ),
            memory("Lint command", "Linting", "Before pushing, lint the code with `ruff check .`."),
        ),
        (
            memory(
                "Format du changelog", "Règle", "Chaque entrée du changelog commence par un verbe."
            ),
            memory(
                "Format du changelog",
                "Règle",
                "Chaque entrée du changelog doit commencer par un verbe, merci.",
            ),
        ),
        (
            memory(
                "Кодировка файлов", "Правило", "Все исходные файлы сохраняем в кодировке UTF-8."
            ),
            memory(
                "Кодировка файлов", "Правило", "Исходные файлы сохраняем только в кодировке UTF-8."
            ),
        ),
        (
            memory("构建命令", "如何构建", "使用 `make build` 构建项目。"),
            memory("构建命令", "如何构建项目", "构建项目时使用 `make build`。"),
        ),
    ],
)
def test_a_reworded_restatement_is_a_duplicate(old: MemoryText, new: MemoryText) -> None:
    assert judge(new, old).kind == "duplicate"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (  # a version changed
            memory("TypeScript version", "Compiler", "The frontend compiles with TypeScript 5.2."),
            memory("TypeScript version", "Compiler", "The frontend compiles with TypeScript 5.4."),
        ),
        (  # a tool was replaced, announced in German
            memory("Paketmanager", "Abhängigkeiten", "Abhängigkeiten werden mit Poetry verwaltet."),
            memory(
                "Paketmanager",
                "Abhängigkeiten",
                "Abhängigkeiten werden jetzt mit uv statt Poetry verwaltet.",
            ),
        ),
        (  # a rule flipped, in Spanish
            memory("Commits firmados", "Regla de git", "Los commits deben ir firmados con GPG."),
            memory(
                "Commits firmados", "Regla de git", "Los commits ya no deben ir firmados con GPG."
            ),
        ),
        (  # a number changed, in Japanese
            memory("タイムアウト", "設定", "外部 API のタイムアウトは 30 秒。"),
            memory("タイムアウト", "設定", "外部 API のタイムアウトは 60 秒。"),
        ),
        (  # an endpoint moved, in Korean
            memory("인증 서버", "주소", "인증 서버는 https://auth.example.kr/v1 이다."),
            memory("인증 서버", "주소", "인증 서버 주소가 https://login.example.kr 로 바뀌었다."),
        ),
    ],
)
def test_a_changed_fact_on_the_same_subject_is_an_update(old: MemoryText, new: MemoryText) -> None:
    assert judge(new, old).kind == "update"


@pytest.mark.parametrize(
    ("old", "new"),
    [
        (  # two incidents of one service
            memory(
                "Incident 2024-02-01: login outage",
                "Auth down",
                "Logins failed for an hour because the Redis session store ran out of memory.",
            ),
            memory(
                "Incident 2024-06-12: login outage",
                "Auth down",
                "Logins failed after the identity provider rotated its signing keys without notice.",
            ),
        ),
        (  # two dashboards written from one template, in French
            memory(
                "Tableau des commandes",
                "Grafana",
                "Les commandes sont suivies sur https://grafana.exemple.fr/d/commandes.",
            ),
            memory(
                "Tableau des livraisons",
                "Grafana",
                "Les livraisons sont suivies sur https://grafana.exemple.fr/d/livraisons.",
            ),
        ),
        (  # two testing rules, in Chinese
            memory("测试规范", "测试", "集成测试必须使用真实数据库。"),
            memory("测试超时", "测试", "单个测试运行时间不得超过 5 秒。"),
        ),
    ],
)
def test_a_different_fact_in_the_same_area_is_independent(old: MemoryText, new: MemoryText) -> None:
    assert judge(new, old).kind == "independent"


# -- Sanity --------------------------------------------------------------------------


def test_a_memory_is_a_duplicate_of_itself_in_every_corpus_language() -> None:
    pairs = json.loads((FIXTURES / "pairs.json").read_text(encoding="utf-8"))["pairs"]
    for pair in pairs:
        for side in ("old", "new"):
            text = MemoryText(**pair[side])
            verdict = judge(text, text)
            assert verdict.kind == "duplicate", (pair["id"], side, verdict)
            assert verdict.similarity == 1.0


def test_an_unrelated_memory_is_independent() -> None:
    style = memory("Prefers terse answers", "Style", "The user wants short replies.", "user")
    deploy = memory("Deployment", "How we deploy", "Production deploys run through Argo CD.")
    assert judge(style, deploy).kind == "independent"
    assert judge(deploy, style).kind == "independent"
    assert judge(style, deploy).similarity < 0.2


def test_decide_prefers_a_duplicate_over_an_update_and_ignores_the_rest() -> None:
    old_version = memory("Node version", "Runtime", "The service runs on Node 18.")
    same_version = memory("Node version", "Runtime", "The service runs on Node 20.")
    unrelated = memory("Code owners", "Reviews", "CODEOWNERS assigns reviewers per folder.")
    new = memory("Node version", "Runtime", "The service runs on Node 20.")

    winner, verdict = decide(new, [("a", old_version), ("b", same_version), ("c", unrelated)])
    assert (winner, verdict.kind) == ("b", "duplicate")

    winner, verdict = decide(new, [("a", old_version), ("c", unrelated)])
    assert (winner, verdict.kind) == ("a", "update")

    winner, verdict = decide(new, [("c", unrelated)])
    assert (winner, verdict.kind) == (None, "independent")
    assert decide(new, []) == (None, verdict.__class__("independent", "no candidate", 0.0))


def test_titles_compare_without_case_width_or_punctuation() -> None:
    assert same_title("Node version", "node  Version!")
    assert same_title("ＡＰＩ 超时", "api 超时")
    assert not same_title("Node version", "Node versions policy")
    assert subject_key("Version of Node") == subject_key("node version")


# -- The corpus figures as a baseline ------------------------------------------------


@pytest.mark.parametrize("corpus", ["pairs.json", "pairs-blind.json"])
def test_corpus_figures_do_not_regress(corpus: str) -> None:
    baseline = json.loads((FIXTURES / "baseline.json").read_text(encoding="utf-8"))[corpus]
    assert set(baseline) == set(evaluate_conflicts(FIXTURES / corpus).figures())
    report = evaluate_conflicts(FIXTURES / corpus)
    figures = report.figures()
    regressions = {
        name: (round(figures[name], 3), floor)
        for name, floor in baseline.items()
        if figures[name] < floor - TOLERANCE
    }
    assert not regressions, format_report(report)


def test_the_tuning_corpus_is_large_and_multilingual() -> None:
    for corpus, least in (("pairs.json", 150), ("pairs-blind.json", 60)):
        report = evaluate_conflicts(FIXTURES / corpus)
        assert len(report.outcomes) >= least
        assert len(report.accuracy_by_language()) >= 5
        assert "confusion" in format_report(report)
