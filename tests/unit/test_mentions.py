"""A body's word bits never rule out a title it mentions (server/network/mentions.py)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from memory_recall.server.network.mentions import (
    mention_form,
    mention_needle,
    mentions,
    word_bits,
)

_WORDS = ["ask", "Priya", "Raman", "deploy", "runbook", "Ölçer", "straße", "STRASSE", "a", "q7"]
_GLUE = [" ", "  ", ", ", "-", "_", ".\n", "/", "(", ")"]


@st.composite
def texts(draw: st.DrawFn, most: int) -> str:
    words = draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=most))
    return "".join(word + draw(st.sampled_from(_GLUE)) for word in words)


@settings(max_examples=400, deadline=None)
@given(texts(30), texts(3))
def test_a_body_that_mentions_a_spaced_title_holds_its_word_bits(body, title):
    form = mention_form(body)
    titled = mention_form(title).strip()
    assert mention_needle(titled) != titled  # spaced: the bits apply
    if mentions(titled, form):
        assert word_bits(form) & word_bits(titled) == word_bits(titled)
