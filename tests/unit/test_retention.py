"""Retention and capacity (docs/organisation.md): use renews, recall does not, pinned stays."""

from __future__ import annotations

import math
from datetime import date

import pytest
from memory_recall.server.dev.retention_sim import run
from memory_recall.server.organise.retention import (
    NO_USAGE,
    RetentionFacts,
    UsageStats,
    edited_ms,
    plan_capacity,
    retention,
    rules,
)

from tests.organise_docs import DAY_MS, memory

NOW = 400 * DAY_MS


def facts(type: str = "project", days: float = 0.0, **kw) -> RetentionFacts:
    base = dict(path=f"/r/{type}-{days}.md", type=type, edited_ms=days * DAY_MS,
                has_description=True, body_chars=200)  # fmt: skip
    base.update(kw)
    return RetentionFacts(**base)


def test_an_unused_memory_fades_by_its_types_half_life():
    half = rules().half_life_days["project"]
    fresh = retention(facts(days=400), NO_USAGE, NOW)
    aged = retention(facts(days=400 - half), NO_USAGE, NOW)
    assert fresh.recency == pytest.approx(1.0)
    assert aged.recency == pytest.approx(0.5)
    assert aged.score == pytest.approx(fresh.score / 2)


def test_preferences_and_rules_outlast_project_state():
    old = 400 - 120
    scores = {t: retention(facts(t, old), NO_USAGE, NOW).score for t in
              ("user", "feedback", "reference", "project")}  # fmt: skip
    assert scores["user"] == scores["feedback"] > scores["reference"] > scores["project"]


def test_being_recalled_is_not_being_used():
    """Deliveries without use lower the score; they never renew it."""
    quiet = retention(facts(days=100), NO_USAGE, NOW)
    recalled = retention(facts(days=100), UsageStats(0, 40, None), NOW)
    assert recalled.recency == quiet.recency  # the clock did not reset
    assert recalled.score < quiet.score / 1.5


def test_use_renews_and_slows_forgetting():
    never = retention(facts(days=0), NO_USAGE, NOW)
    used = retention(facts(days=0), UsageStats(10, 12, 390 * DAY_MS), NOW)
    assert used.recency > 0.9 > never.recency
    assert used.half_life_days > never.half_life_days
    assert used.score > 3 * never.score


def test_quality_lowers_stale_expired_and_undescribed_memories():
    base = retention(facts(days=390), NO_USAGE, NOW).score
    for kw in ({"stale": "cites a deleted file"}, {"expired": True}, {"has_description": False},
               {"body_chars": 5}):  # fmt: skip
        assert retention(facts(days=390, **kw), NO_USAGE, NOW).score < base


def test_pinned_is_never_archived_whatever_its_score():
    pinned = retention(facts(days=0, protected="pinned", expired=True), NO_USAGE, NOW)
    assert math.isinf(pinned.score)
    plan = plan_capacity([pinned, retention(facts(days=399), NO_USAGE, NOW)], 0)
    assert [r.path for r in plan.archive] == ["/r/project-399.md"]
    assert plan.protected_over == 1


def test_capacity_archives_the_lowest_first_and_keeps_exactly_the_capacity():
    scores = [retention(facts(days=d, path=f"/r/{d}.md"), NO_USAGE, NOW) for d in range(10)]
    plan = plan_capacity(scores, 4)
    assert len(plan.keep) == 4 and len(plan.archive) == 6
    assert [r.path for r in plan.keep] == ["/r/9.md", "/r/8.md", "/r/7.md", "/r/6.md"]
    assert plan.archive[0].path == "/r/0.md"  # the oldest goes first
    assert plan_capacity(scores, 50).archive == ()
    with pytest.raises(ValueError):
        plan_capacity(scores, -1)


def test_facts_come_from_front_matter_before_the_files_mtime():
    doc = memory("t", "body text long enough to count as a body", days=390,
                 front={"updated": "1970-01-11", "created": "1970-01-02", "pinned": "true",
                        "expires": "1970-01-05"})  # fmt: skip
    assert edited_ms(doc) == 10 * DAY_MS  # `updated`, not the mtime
    f = RetentionFacts.of(doc, today=date(1970, 2, 1))
    assert f.protected == "pinned" and f.expired
    assert edited_ms(memory("t", "b", days=3)) == 3 * DAY_MS
    assert RetentionFacts.of(memory("t", "b", front={"always": "yes"})).protected == "always loaded"


def test_a_synthetic_year_keeps_what_is_used_and_archives_noise():
    """The formula against the alternatives on the same history (ratios, not times)."""
    results = run(capacity=300, seed=3)
    ours = results["retention"]
    assert ours.archived["pinned"] == 0
    for other in ("recalled=used", "newest", "random"):
        assert ours.misses < results[other].misses
    # Counting recalls as uses keeps the noise: what docs/organisation.md rules out.
    assert results["recalled=used"].kept["noise"] > ours.kept["noise"]
    assert ours.kept["rule"] / (ours.kept["rule"] + ours.archived["rule"]) > 0.7
