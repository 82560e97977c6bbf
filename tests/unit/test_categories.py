"""The topic tree (docs/organisation.md): inference measured on labelled memories, the tree of a root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memory_recall.server.dev.category_eval import evaluate_categories, format_report
from memory_recall.server.organise.categories import CategoryPath, infer_category, parse_category
from memory_recall.server.organise.tree import TopicTree

from tests.organise_docs import memory

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "categories"
BASELINE = json.loads((FIXTURES / "baseline.json").read_text("utf-8"))
TOLERANCE = 0.02  # about one memory in fifty
ISSUE_BAR = 0.80  # issue 17: at least 80 % on the top-level category


@pytest.mark.parametrize("name", ["labelled.json", "labelled-blind.json"])
def test_inference_holds_its_baseline(name):
    report = evaluate_categories(FIXTURES / name)
    floor = BASELINE[name]
    assert report.overall.top_accuracy >= floor["top"] - TOLERANCE, format_report(report)
    assert report.overall.sub_accuracy >= floor["sub"] - TOLERANCE, format_report(report)


def test_the_labelled_sets_meet_the_issues_bar():
    reports = [evaluate_categories(FIXTURES / n) for n in ("labelled.json", "labelled-blind.json")]
    total = sum(r.overall.total for r in reports)
    languages = set().union(*(r.by_language for r in reports))
    assert total >= 200 and len(languages) >= 5
    assert sum(r.overall.top_correct for r in reports) / total >= ISSUE_BAR
    assert reports[1].overall.top_accuracy >= ISSUE_BAR  # also on the set never tuned on


def test_declared_categories_win_and_bad_ones_are_reported():
    tree = TopicTree()
    declared = memory(
        "Deploy steps", "kubectl apply", front={"category": "Lessons learned / Incidents"}
    )
    assert tree.place(declared).path == CategoryPath("lessons", "incidents")
    wrong = tree.place(memory("Deploy steps", "kubectl apply", front={"category": "misc"}))
    assert wrong.source == "inferred" and "not on the topic tree" in (wrong.problem or "")
    assert parse_category("tools/agent-tools") == CategoryPath("tools", "agent-tools")


def test_the_tree_counts_every_category_and_caches_placements(monkeypatch):
    docs = [memory("Prefers terse answers", "Keep replies short.", type="user"),
            memory("Grafana", "https://grafana.example.com/d/api", type="reference"),
            memory("Flaky test fix", "pytest -p no:randomly fixed the flaky test", type="feedback",
                   front={"category": "lessons/errors"})]  # fmt: skip
    tree = TopicTree()
    t = tree.tree(docs)
    assert t.total == 3 and len(t.categories) == 5
    assert sum(node.count for node in t.categories) == 3
    assert t.find("lessons/errors").members == (docs[2].path,)
    calls = []
    import memory_recall.server.organise.tree as tree_module

    real = tree_module.explain_category
    monkeypatch.setattr(tree_module, "explain_category", lambda **kw: calls.append(1) or real(**kw))
    assert tree.tree(docs) == t and not calls  # unchanged files are not placed again
    # A new version of a file replaces its placement: one kept per path, however many
    # versions (a cap below the corpus made every status place every memory again).
    for day in range(1, 4):
        again = memory("Grafana", "the dashboards moved", type="reference",
                       name=docs[1].relative_path, days=day)  # fmt: skip
        assert again.path == docs[1].path
        tree.place(again)
    assert len(calls) == 3 and len(tree._placed) == 3


def test_the_rules_read_the_start_of_each_field_however_long_the_file():
    """A megabyte `name:` or body is placed by its start (the rules would take minutes)."""
    from memory_recall.server.organise.categories import READ_CHARS, explain_category

    title = "Flaky test: retry the payment webhook " + "x" * 1_000_000
    body = "When the CI job fails with ECONNRESET, rerun it once. " + "y " * 500_000
    huge = explain_category(type="feedback", title=title, description="", body=body)
    short = explain_category(
        type="feedback", title=title[: READ_CHARS[0]], description="", body=body[: READ_CHARS[2]]
    )
    assert huge == short


def test_the_reasons_name_the_first_paths_a_memory_cites_in_its_order():
    # The explanation names the first few cited paths (the signal's cap): the ones the
    # text cites first, whatever order a set of them would iterate in this process.
    from memory_recall.server.organise.categories import explain_category

    cited = ["tests/test_api.py", "tests/test_db.py", "tests/test_cli.py", "tests/test_auth.py"]
    decision = explain_category(
        type="project",
        title="Test layout",
        description="where tests live",
        body=f"Tests are in {', '.join(cited)} and tests/conftest.py.",
    )
    named = [path for path in cited if f"path {path!r}" in decision.why]
    assert named == cited[:3]
    assert (
        decision.why.index(cited[0]) < decision.why.index(cited[1]) < decision.why.index(cited[2])
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # "took" and "from" were performance cues: every handover read as a slowdown.
        ("Bob took over the billing service from Alice.", "project/people"),
        # A rotation of people is no rotation of secrets.
        ("The on-call rotation changes every Monday at 10:00 CET.", "project/people"),
        ("We rotate the API keys every 90 days.", "conventions/security"),
        ("The login page took 4 seconds to load before the cache.", "lessons/performance"),
    ],
)
def test_everyday_words_do_not_place_a_memory(text: str, expected: str) -> None:
    found = infer_category(type="project", title=text.rstrip("."), description=text, body=text)
    assert found == parse_category(expected)
