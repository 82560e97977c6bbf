"""Suggestions: what an observed event brings, and what a session lets through."""

from __future__ import annotations

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.organise.suggestions import (
    ObservedEvent,
    Suggestion,
    SuggestionIndex,
    SuggestionSession,
)
from memory_recall.server.roots import Scope


def memory(path: str, title: str, description: str, body: str, type_: str = "feedback"):
    return MemoryDocument(
        path=path,
        relative_path=path,
        scope=Scope.PROJECT,
        type=type_,  # type: ignore[arg-type]
        title=title,
        description=description,
        body=body,
        mtime_ms=1,
    )


LESSON = memory(
    "lessons/econnreset.md",
    "ioredis ECONNRESET behind the NAT gateway",
    "Idle Redis connections are cut by the NAT after 350 seconds",
    "ioredis logs `Error: read ECONNRESET` every six minutes. Fix: `keepAlive: 30000` in "
    "`src/lib/redis.ts`.",
)
CONVENTION = memory(
    "conventions/migrations.md",
    "Applied migrations are never edited",
    "db/migrations/ is append-only: write a new migration instead",
    "Checksums break every environment. Run `alembic upgrade head` after adding one.",
)
PUBLISH = memory(
    "conventions/publish.md",
    "Publishing the npm package",
    "Releases are published by CI only",
    "`pnpm publish` runs only in the release workflow. An old `pnpm dev` has nothing to do "
    "with it.",
)
PROJECT = memory(
    "project/overview.md",
    "Orbit architecture",
    "Services in services/, the app in src/",
    "`src/lib/redis.ts` wraps ioredis; ECONNRESET is logged there.",
    "project",
)
DECLARED = {
    LESSON.path: "lessons/errors",
    CONVENTION.path: "conventions/code",
    PUBLISH.path: "conventions/release",
}


def index() -> SuggestionIndex:
    return SuggestionIndex.build([LESSON, CONVENTION, PUBLISH, PROJECT], DECLARED)


def paths(event: ObservedEvent) -> list[str]:
    return [s.path for s in index().match(event)]


def test_an_edit_of_a_cited_file_or_inside_a_cited_folder():
    assert paths(ObservedEvent("edit", path="src/lib/redis.ts")) == [LESSON.path]
    assert paths(ObservedEvent("edit", path="/home/me/orbit/src/lib/redis.ts")) == [LESSON.path]
    assert paths(ObservedEvent("edit", path="db/migrations/0042_orders.sql")) == [CONVENTION.path]
    assert paths(ObservedEvent("edit", path="src/lib/other.ts")) == []
    assert paths(ObservedEvent("edit", path="src/app.ts")) == []  # `src/` is the project's


def test_an_error_needs_two_signals():
    strong = ObservedEvent("error", "[ioredis] Error: read ECONNRESET at TCP.onStreamRead")
    (suggestion,) = index().match(strong)
    assert suggestion.path == LESSON.path
    assert suggestion.category == "lessons/errors"
    assert any("econnreset" in e for e in suggestion.evidence)
    assert paths(ObservedEvent("error", "ECONNRESET")) == []
    assert paths(ObservedEvent("error", "")) == []


def test_a_command_the_memory_is_about():
    assert paths(ObservedEvent("command", "pnpm publish --access public")) == [PUBLISH.path]
    assert paths(ObservedEvent("command", "pnpm dev")) == []  # cited, but not what it is about
    assert paths(ObservedEvent("command", "npm publish")) == []  # another program


def test_only_lessons_and_conventions_are_suggested():
    event = ObservedEvent("toolResult", "src/lib/redis.ts: ECONNRESET from ioredis")
    assert PROJECT.path not in paths(event)


def suggestion(path: str) -> Suggestion:
    return Suggestion(path, "lessons/errors", ())


def test_a_session_suggests_a_memory_once():
    session = SuggestionSession()
    assert session.admit([suggestion("a"), suggestion("b")], now=0) == [
        suggestion("a"),
        suggestion("b"),
    ]
    assert session.admit([suggestion("a")], now=100) == []
    assert session.admit([suggestion("c"), suggestion("a")], now=200) == [suggestion("c")]


def test_a_session_is_rate_limited():
    session = SuggestionSession(max_per_window=2, window_s=60)
    assert session.admit([suggestion("a")], now=0)
    assert session.admit([suggestion("b")], now=1)
    assert session.admit([suggestion("c")], now=2) == []
    assert session.admit([suggestion("c")], now=61) == [suggestion("c")]


def test_never_during_a_recalls_fast_window():
    session = SuggestionSession()
    session.recall_started("r1", now=10.0)
    assert session.wait_s(10.05) > 0
    assert session.admit([suggestion("a")], now=10.05) == []
    session.recall_answered("r1")
    assert session.wait_s(10.06) == 0
    assert session.admit([suggestion("a")], now=10.06) == [suggestion("a")]


def test_a_fast_window_left_open_does_not_hold_suggestions_for_good():
    session = SuggestionSession(fast_window_cap_s=1.0)
    session.recall_started("stuck", now=0.0)
    assert 0 < session.wait_s(0.5) <= 0.5
    assert session.wait_s(1.0) == 0
    assert session.admit([suggestion("a")], now=1.0) == [suggestion("a")]


def test_what_the_limit_stops_and_what_repeats_is_counted():
    session = SuggestionSession(max_per_window=1, window_s=60)
    assert session.admit([suggestion("a")], now=0)
    assert session.admit([suggestion("a")], now=1) == []
    assert session.admit([suggestion("b"), suggestion("c")], now=2) == []
    assert (session.repeated, session.rate_limited) == (1, 2)


def test_an_index_kept_up_to_date_answers_as_one_built_from_scratch():
    from dataclasses import replace

    events = [
        ObservedEvent("edit", path="src/lib/redis.ts"),
        ObservedEvent("error", "[ioredis] Error: read ECONNRESET at TCP.onStreamRead"),
        ObservedEvent("edit", path="db/migrations/0042_orders.sql"),
        ObservedEvent("command", "pnpm publish --access public"),
    ]
    followed = SuggestionIndex.build([LESSON, PROJECT], DECLARED)
    moved = replace(CONVENTION, description="Migrations are append-only")
    followed.follow([LESSON, CONVENTION, PUBLISH, PROJECT])
    followed.follow([LESSON, moved, PUBLISH])  # one changed, one gone
    fresh = SuggestionIndex.build([LESSON, moved, PUBLISH], DECLARED)
    assert followed.memories == fresh.memories == 3
    assert followed.word_df == fresh.word_df
    assert followed.identifier_df == fresh.identifier_df
    for event in events:
        assert followed.match(event) == fresh.match(event)
    # The changed convention no longer names db/migrations/ in its description.
    assert fresh.match(events[2]) == []
