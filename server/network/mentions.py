"""Unlinked mentions: a memory's body that writes another memory's title.

"ask Priya Raman" in an incident is a link its author did not mark, to the
memory titled `Priya Raman`. Titles and bodies are compared in one form
(`mention_form`): normalized, words separated by single spaces. A title is
found through one of its words (`anchor`), so a body is only compared with the
few titles whose anchor it holds.
"""

from __future__ import annotations

import re
from collections.abc import Set as AbstractSet

from memory_recall.server.ranking.bm25f import QUERY_STOPWORDS
from memory_recall.server.tokens import CJK_CHAR, normalize

# A title can be mentioned when it names something: at least this long
# (a CJK title is two characters), at most this many words (a name, not a
# sentence), and not made of function words only.
MIN_MENTION_CHARS = 4
MAX_MENTION_WORDS = 5
MAX_MENTION_CJK_CHARS = 12
_NOT_WORD = re.compile(r"[\W_]+")


def mention_form(text: str) -> str:
    """Text as mentions are compared: normalized, words separated by single spaces,
    with a space at each end (so ` title ` finds a title between word boundaries)."""
    return " " + _NOT_WORD.sub(" ", normalize(text)).strip() + " "


def mentionable(form: str, untitled: bool) -> bool:
    title = form.strip()
    if untitled or not title:
        return False
    if CJK_CHAR.search(title):
        return 2 <= len(title) <= MAX_MENTION_CJK_CHARS
    words = title.split()
    if len(title) < MIN_MENTION_CHARS or len(words) > MAX_MENTION_WORDS:
        return False
    return any(word not in QUERY_STOPWORDS for word in words)


def anchor(title: str) -> str:
    """What finds a title in a body: its longest word that is not a function word,
    or that word's first two characters when it holds CJK (which has no spaces)."""
    words = [w for w in title.split() if w not in QUERY_STOPWORDS] or title.split()
    word = max(words, key=len)
    return word[:2] if CJK_CHAR.search(word) else word


def units(form: str, pair_starts: AbstractSet[str]) -> set[str]:
    """The words of a mention form, and the CJK character pairs that start with one of
    `pair_starts` (the first characters of the CJK anchors: pairs are only looked for
    where one could be)."""
    words = set(form.split())
    if pair_starts and not form.isascii():
        for char in pair_starts & set(form):
            at = form.find(char)
            while at >= 0:
                words.add(form[at : at + 2])
                at = form.find(char, at + 1)
    return words


def mentions(title: str, form: str) -> bool:
    return mention_needle(title) in form


# The bits of `word_bits`: about a tenth of them set by a body of 200 distinct words.
WORD_BITS = 2048


def word_bits(form: str) -> int:
    """One bit per distinct word of a mention form (a Bloom filter with one hash): a
    body that mentions a spaced title holds each of its words whole, so its bits hold
    the title's; a body whose bits do not is not searched for it. (`hash` of a string
    differs between processes: these bits are never stored.)"""
    bits = 0
    for word in set(form.split()):
        bits |= 1 << (hash(word) & (WORD_BITS - 1))
    return bits


def mention_needle(title: str) -> str:
    """What a body in mention form holds where it mentions `title`: the title between
    word boundaries, or anywhere for a CJK title (CJK has no spaces)."""
    return title if CJK_CHAR.search(title) else f" {title} "
