"""The passage of a long body that a recall delivers: at most 1,200 characters, the part
that matched, cut on line and sentence boundaries."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from memory_recall.protocol.limits import BODY_WINDOW_CHARS
from memory_recall.server.ranking.passage import (
    Excerpt,
    PassageTerm,
    _segments,
    _terms_by_segment,
    best_passage,
    opening,
)
from memory_recall.server.tokens import normalize

FILLER = "".join(f"Day {i}: standup, reviews and a quiet afternoon.\n" for i in range(80))
FACT = "The flaky checkout test was fixed by pinning the xdist worker count to 4."


def terms(*pairs: tuple[str, float]) -> list[PassageTerm]:
    return [PassageTerm(token, weight) for token, weight in pairs]


def test_a_body_that_fits_is_delivered_whole():
    body = "Short memory. " * 50
    assert best_passage(body, terms(("memory", 1.0))) == Excerpt(0, len(body))
    full = ("y" * 99 + " ") * 12  # exactly the window
    assert best_passage(full, terms(("x", 1.0))) == Excerpt(0, BODY_WINDOW_CHARS)


def test_the_passage_that_holds_the_query_terms_is_chosen_on_line_boundaries():
    body = FILLER + FACT + "\n" + FILLER
    excerpt = best_passage(body, terms(("flaky", 3.0), ("xdist", 4.0), ("standup", 0.5)))
    passage = body[excerpt.start : excerpt.end]
    assert FACT in passage
    assert len(passage) <= BODY_WINDOW_CHARS
    assert body[excerpt.start - 1] == "\n" and body[excerpt.end] == "\n"


def test_rarer_terms_outweigh_repeated_common_ones():
    body = ("deploy deploy deploy. " * 60) + "\n" + FILLER + "\nThe kalomi runbook lives here.\n"
    body += "deploy. " * 200
    excerpt = best_passage(body, terms(("deploy", 0.2), ("kalomi", 6.0)))
    assert "kalomi" in body[excerpt.start : excerpt.end]


def test_without_a_match_the_opening_is_delivered_cut_at_a_boundary():
    body = FILLER * 2
    excerpt = best_passage(body, terms(("absent", 1.0)))
    assert excerpt.start == 0 and excerpt.end <= BODY_WINDOW_CHARS
    assert body[excerpt.end] == "\n"
    assert opening(body, exact=True) == Excerpt(0, BODY_WINDOW_CHARS)  # spec's window


def test_cjk_sentences_and_acronyms():
    body = "会議の記録。" * 300 + "デプロイは CI が通ってから。" + "雑談。" * 400
    excerpt = best_passage(body, [PassageTerm("\x01ci", 5.0, "acronym"), PassageTerm("デプ", 1.0)])
    assert "CI が通って" in body[excerpt.start : excerpt.end]
    assert body[excerpt.start - 1] == "。"


def test_a_text_without_any_boundary_is_cut_hard():
    body = "x" * 5000 + "needle" + "y" * 5000
    excerpt = best_passage(body, terms(("needle", 1.0)))
    assert "needle" in body[excerpt.start : excerpt.end]
    assert excerpt.end - excerpt.start <= BODY_WINDOW_CHARS


@settings(max_examples=200, deadline=None)
@given(
    st.text(alphabet="ab c.\n。Ｃé", min_size=0, max_size=4000),
    st.lists(st.sampled_from(["ab", "c", "ba", "é", "\x01cc"]), max_size=3),
)
def test_any_body_gives_a_passage_within_it_and_the_window(body, tokens):
    found = [PassageTerm(t, 1.0, "acronym" if t[0] == "\x01" else "text") for t in tokens]
    excerpt = best_passage(body, found)
    assert 0 <= excerpt.start <= excerpt.end <= len(body)
    assert excerpt.end - excerpt.start <= BODY_WINDOW_CHARS
    if len(body) <= BODY_WINDOW_CHARS:
        assert excerpt == Excerpt(0, len(body))


@settings(max_examples=300, deadline=None)
@given(
    st.text(alphabet="ab c.\n。デプ", min_size=1, max_size=3000),
    st.lists(st.sampled_from(["ab", "a", "b b", "デプ", "プ", "c."]), min_size=1, max_size=4),
    st.integers(min_value=5, max_value=400),
)
def test_each_segment_holds_the_terms_that_start_in_it_each_once(body, tokens, limit):
    # What a passage and the densest stretch read: every occurrence of a term marks the
    # segment it starts in (one it runs past the end of included), a term at most once
    # per segment, in the terms' order.
    found_terms = [PassageTerm(t, 1.0) for t in tokens]
    segments = _segments(body, limit)
    found = _terms_by_segment(body, segments, found_terms)
    text = normalize(body)
    assert len(text) == len(body)  # this alphabet: offsets stay where they were
    expected: list[list[int]] = [[] for _ in segments]
    for i, term in enumerate(found_terms):
        starts = {at for at in range(len(text)) if text.startswith(term.token, at)}
        for k, (start, end) in enumerate(segments):
            if any(start <= at < end for at in starts):
                expected[k].append(i)
    assert found == expected
