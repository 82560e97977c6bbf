"""docs/ranking.md fast / fallback / model candidates."""

from __future__ import annotations

from memory_recall.protocol.limits import (
    FAST_LIMIT,
    LEXICAL_CANDIDATES,
    MAX_CANDIDATES,
)
from memory_recall.protocol.limits import REFINED_LIMIT as FALLBACK_LIMIT
from memory_recall.server.ranking.shortlist import build_shortlist, interleave_candidates
from memory_recall.server.ranking.view import CorpusView

from tests.conftest import make_doc


def snap(docs):
    return CorpusView.of(docs)


def test_fast_is_top_two_and_fallback_top_five():
    docs = [make_doc("deploy " + "x" * i, mtime_ms=100 - i) for i in range(8)]
    s = build_shortlist(snap(docs), "deploy")
    assert [d.document for d in s.fast] == docs[:FAST_LIMIT]
    assert [d.document for d in s.fallback] == docs[:FALLBACK_LIMIT]


def test_interleave_then_leftovers():
    assert interleave_candidates([1, 2, 3], ["a"]) == [1, "a", 2, 3]  # type: ignore[list-item]
    assert interleave_candidates([1], ["a", "b", "c"]) == [1, "a", "b", "c"]  # type: ignore[list-item]


def test_candidates_mix_lexical_and_recent_others():
    matching = [make_doc("deploy", mtime_ms=10 + i) for i in range(3)]
    others = [make_doc("unrelated", mtime_ms=100 + i) for i in range(3)]
    s = build_shortlist(snap(matching + others), "deploy")
    lexical = [d.document for d in s.ranked]
    recent = sorted(others, key=lambda d: -d.mtime_ms)
    assert s.candidates == [lexical[0], recent[0], lexical[1], recent[1], lexical[2], recent[2]]


def test_candidates_keep_all_of_180_lexical_and_cap_at_200():
    matching = [make_doc("deploy", mtime_ms=i) for i in range(250)]
    others = [make_doc("unrelated", mtime_ms=1000 + i) for i in range(50)]
    s = build_shortlist(snap(matching + others), "deploy")
    assert len(s.candidates) == MAX_CANDIDATES
    lexical = {d.document.path for d in s.ranked[:LEXICAL_CANDIDATES]}
    assert lexical <= {d.path for d in s.candidates}
    recent_in = [d for d in s.candidates if d.path not in lexical]
    assert len(recent_in) == MAX_CANDIDATES - LEXICAL_CANDIDATES
    # The "recent others" include lexical matches beyond the top 180, by mtime.
    assert recent_in[0].mtime_ms == 1049


def test_no_tokens_or_no_docs_gives_nothing():
    assert build_shortlist(snap([make_doc("deploy")]), "is it").candidates == []
    assert build_shortlist(snap([]), "deploy").ranked == []


def test_excluded_paths_are_dropped_everywhere():
    a, b = make_doc("deploy"), make_doc("deploy")
    s = build_shortlist(snap([a, b]), "deploy", exclude_paths=[a.path])
    assert [d.document for d in s.ranked] == [b]
    assert a not in s.candidates
