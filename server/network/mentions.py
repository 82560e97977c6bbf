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


# The bits of `mention_bits`: about a tenth of them set by a body of 200 distinct words.
MENTION_BITS = 2048
_ASCII = frozenset(map(chr, range(128)))


def mention_bits(form: str) -> int:
    """One bit per distinct word of a mention form and per distinct character past ASCII
    (a Bloom filter with one hash): a body that mentions a title holds what `title_bits`
    asks of it, so a body whose bits do not hold a title's is not searched for it.
    (`hash` of a string differs between processes: these bits are never stored.)"""
    hashes = set(map(hash, form.split()))
    if not form.isascii():
        hashes.update(map(hash, set(form) - _ASCII))
    return _bits(hashes)


def title_bits(title: str) -> int:
    """What a body's `mention_bits` hold where it mentions `title` (a title's mention form):
    its words, or for a CJK title (found anywhere, not as words) its characters past
    ASCII."""
    if CJK_CHAR.search(title):
        return _bits(set(map(hash, set(title) - _ASCII)))
    return _bits(set(map(hash, title.split())))


def _bits(hashes: set[int]) -> int:
    bits = 0
    for value in hashes:
        bits |= 1 << (value & (MENTION_BITS - 1))
    return bits


class MentionPattern:
    """What finds a title in a body's normal form (`normalize(prose(body))`) exactly where
    its mention form would hold the title's needle: the title's words joined by any run of
    what is not a word, between word boundaries unless it is CJK. A title that appears is
    looked for with it in bodies whose mention form is not kept (tests/unit/test_mentions.py
    holds the two to the same answer)."""

    def __init__(self, title: str) -> None:
        joined = r"[\W_]+".join(map(re.escape, title.split()))
        self.bounded = not CJK_CHAR.search(title)
        # Opening with the title's first word, so that `re` scans for it as a literal (a
        # look-behind in front made each search about ten times slower); the boundary
        # before it is checked on each match.
        self.pattern = re.compile(rf"{joined}(?![^\W_])" if self.bounded else joined)

    def found_in(self, text: str) -> bool:
        search = self.pattern.search
        match = search(text)
        while match is not None:
            start = match.start()
            if not self.bounded or start == 0 or not text[start - 1].isalnum():
                return True
            match = search(text, start + 1)  # a later match may overlap this one
        return False


def mention_needle(title: str) -> str:
    """What a body in mention form holds where it mentions `title`: the title between
    word boundaries, or anywhere for a CJK title (CJK has no spaces)."""
    return title if CJK_CHAR.search(title) else f" {title} "
