"""A body's word bits never rule out a title it mentions (server/network/mentions.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from memory_recall.server.network.mentions import (
    MentionPattern,
    mention_bits,
    mention_form,
    mention_needle,
    mentions,
    title_bits,
)
from memory_recall.server.tokens import normalize

_WORDS = ["ask", "Priya", "Raman", "deploy", "runbook", "Ölçer", "straße", "STRASSE", "a", "q7"]
_GLUE = [" ", "  ", ", ", "-", "_", ".\n", "/", "(", ")"]


@st.composite
def texts(draw: st.DrawFn, most: int) -> str:
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=most))
    return "".join(word + draw(st.sampled_from(_GLUE)) for word in words)


@settings(max_examples=400, deadline=None)
@given(texts(30), texts(3))
def test_a_body_that_mentions_a_spaced_title_holds_its_bits(body, title):
    form = mention_form(body)
    titled = mention_form(title).strip()
    assert mention_needle(titled) != titled  # spaced
    if mentions(titled, form):
        assert mention_bits(form) & title_bits(titled) == title_bits(titled)


_ANY_WORDS = [*_WORDS, "支付", "回调", "支付回调", "İstanbul", "ﬁle", "①", "x_y", "Ⅻ"]


@st.composite
def any_texts(draw: st.DrawFn, most: int) -> str:
    words = draw(st.lists(st.sampled_from(_ANY_WORDS), min_size=1, max_size=most))
    return "".join(word + draw(st.sampled_from([*_GLUE, ""])) for word in words)


@settings(max_examples=600, deadline=None)
@given(any_texts(30), any_texts(3))
def test_a_title_is_found_in_a_body_exactly_where_its_mention_form_holds_it(body, title):
    """A new title is looked for in bodies whose mention form is not kept: the pattern on
    the body's normal form answers what the needle in its mention form would."""
    titled = mention_form(title).strip()
    if titled:
        found = MentionPattern(titled).found_in(normalize(body))
        assert found == mentions(titled, mention_form(body))
        if found:  # CJK titles too: their character pairs
            assert mention_bits(mention_form(body)) & title_bits(titled) == title_bits(titled)


def test_a_cjk_title_is_not_looked_for_in_a_body_without_its_characters():
    assert title_bits("支付回调")
    other = mention_bits(mention_form("支付服务的日志。Payments service logs."))
    assert other & title_bits("支付回调") != title_bits("支付回调")
    holds = mention_bits(mention_form("日志：支付回调失败"))
    assert holds & title_bits("支付回调") == title_bits("支付回调")


def test_a_match_inside_a_longer_word_does_not_hide_the_next_one():
    assert mentions("a a", mention_form("ba a a"))
    assert MentionPattern("a a").found_in(normalize("ba a a"))
    assert not MentionPattern("a a").found_in(normalize("ba a"))
