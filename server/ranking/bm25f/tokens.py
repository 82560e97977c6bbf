"""The `bm25f` ranker's query tokens: the reference scorer's, and what spec
tokens cannot say.

The reference tokens (server.tokens, docs/ranking.md) stay the published reference and are all
kept;
this module adds, for bm25f only: identifier parts and compound identifiers,
code-point trigrams of scripts written without spaces, two-letter acronyms, and
the ISO forms of dates a query writes out. The document side of the same terms
(acronyms as written, compounds) is in `server.ranking.bm25f.terms`.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

import regex
from memory_recall.server.ranking.bm25f.folding import exact_form
from memory_recall.server.ranking.bm25f.words import data_lines, data_words
from memory_recall.server.tokens import cap_tokens, run_tokens, runs

# Scripts written without spaces between words, outside CJK: a sentence is one
# run, so a whole-run token would only ever match itself.
UNSPACED_CHAR = regex.compile(r"[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]")
# A code-point trigram: the shortest piece the warm index looks up without a
# scan (a non-CJK token of three characters), and specific enough to be rare.
UNSPACED_GRAM = 3
# Identifiers joined by separators: snake_case, kebab-case, dotted and slashed paths.
# Possessive and anchored at a word's start: linear on a 32k-letter "word".
COMPOUND = regex.compile(r"(?<![\p{L}\p{N}])[\p{L}\p{N}]++(?:[_./\\:-]++[\p{L}\p{N}]++)+")
# camelCase / PascalCase / acronym parts of one word, read before lowercasing.
_CAMEL_PART = regex.compile(r"\p{Lu}?\p{Ll}+|\p{Lu}+(?!\p{Ll})|\p{N}+")
# A word (scanned in one pass) is split when its case is mixed: a lower letter
# before an upper one (getUser), or an acronym before a word (HTTPServer).
_WORD_RUN = regex.compile(r"[\p{L}\p{N}]+")
_MIXED_CASE = regex.compile(r"\p{Ll}\p{Lu}|\p{Lu}\p{Lu}\p{Ll}")
MIN_PART = 3  # as the reference scorer's runs: shorter pieces match almost everything


def unspaced_grams(run: str) -> Iterator[str]:
    """Code-point trigrams of a Thai/Lao/Khmer/Myanmar run longer than one trigram."""
    if len(run) > UNSPACED_GRAM and UNSPACED_CHAR.search(run):
        for i in range(len(run) - UNSPACED_GRAM + 1):
            yield run[i : i + UNSPACED_GRAM]


def identifier_tokens(nfkc_text: str) -> Iterator[str]:
    """Extra tokens of identifiers in an NFKC (not yet lowercased) text.

    `getUserName` adds get, user, name (the whole word is already a spec
    token); `server/ranking/index.py` adds the whole path, lowercased (its
    parts are already spec tokens).
    """
    for match in _WORD_RUN.finditer(nfkc_text):
        word = match.group()
        if not _MIXED_CASE.search(word):
            continue
        for part in _CAMEL_PART.findall(word):
            if len(part) >= MIN_PART:
                yield part.lower()
    for match in COMPOUND.finditer(nfkc_text):
        yield match.group().lower()


# Two-letter words: memories write acronyms in capitals (CI, PR, UI, GP), and
# bm25f indexes those as terms of their own, marked so that no spec token can
# ever equal one. A query may write them in any case; a lowercase one that is
# a common two-letter word is not taken for an acronym.
ACRONYM_MARK = "\x01"
# A word on its own, or the first part of a hyphenated name (`db-stg-7.internal`,
# `eu-west-1`, `PR-123`): not a later piece of a compound (`index.py`, `dispatcher-ui`)
# nor one before a dot or slash (`js/app`, `io.Reader`).
_TWO_LETTERS = regex.compile(
    r"(?<![\p{L}\p{M}\p{N}])(?<![\p{L}\p{N}][_./\\:-])"
    r"[\p{Lu}\p{Ll}]{2}"
    r"(?![\p{L}\p{M}\p{N}])(?![_./\\:][\p{L}\p{N}])"
)
COMMON_TWO_LETTER_WORDS = frozenset(data_words("two_letter_words.txt"))


def acronym_tokens(nfkc_text: str) -> Iterator[str]:
    """Acronym tokens of the two-letter words of an NFKC (not lowercased) text."""
    for word in _TWO_LETTERS.findall(nfkc_text):
        lower = word.lower()
        if word.isupper() or lower not in COMMON_TWO_LETTER_WORDS:
            yield ACRONYM_MARK + lower


def is_acronym(term: str) -> bool:
    return term[:1] == ACRONYM_MARK


_MONTHS = {
    name: number for number, line in enumerate(data_lines("months.txt"), 1) for name in line.split()
}
_DAY = r"(?:(?P<day>[0-3]?\d)(?:st|nd|rd|th|er)?\.?\s+(?:of\s+|de\s+)?)?"
# "6 April 2025", "April 6th, 2025", "May 2025", "mai 2025", "6 de abril de 2025".
_WRITTEN_DATE = regex.compile(
    rf"(?<![\p{{L}}\p{{N}}]){_DAY}(?P<month>\p{{L}}++)\.?"
    r"(?:\s+(?P<day2>[0-3]?\d)(?:st|nd|rd|th)?)?,?\s+(?:de\s+)?(?P<year>(?:19|20)\d\d)(?!\p{N})"
)
# "2025年5月6日", "2025년 5월 6일".
_CJK_DATE = regex.compile(
    r"(?<!\p{N})(?P<year>(?:19|20)\d\d)\s*[年년]\s*(?P<month>[01]?\d)\s*[月월]"
    r"(?:\s*(?P<day>[0-3]?\d)\s*[日일])?"
)


def date_tokens(normalized: str) -> Iterator[str]:
    """ISO forms of the dates a normalized query writes out: `May 2025` adds
    `2025-05`, `6 April 2025` adds `2025-04` and `2025-04-06`, as memories
    (session logs, incidents) date themselves."""
    for match in _WRITTEN_DATE.finditer(normalized):
        month = _MONTHS.get(match["month"])
        if month:
            yield from _iso(match["year"], month, match["day"] or match["day2"])
    for match in _CJK_DATE.finditer(normalized):
        yield from _iso(match["year"], int(match["month"]), match["day"])


def _iso(year: str, month: int, day: str | None) -> Iterator[str]:
    if not 1 <= month <= 12:
        return
    yield f"{year}-{month:02d}"
    if day and 1 <= int(day) <= 31:
        yield f"{year}-{month:02d}-{int(day):02d}"


def recall_tokens(query: str) -> list[str]:
    """bm25f's query tokens: the reference scorer's, plus identifier parts and
    compounds,
    code-point trigrams of unspaced scripts, acronyms and ISO dates; distinct, capped."""
    nfkc = unicodedata.normalize("NFKC", query)

    def stream() -> Iterator[str]:
        lower = exact_form(nfkc)
        for run in runs(lower):
            yield from run_tokens(run)
            yield from unspaced_grams(run)
        yield from identifier_tokens(nfkc)
        yield from acronym_tokens(nfkc)
        yield from date_tokens(lower)

    return cap_tokens(stream())


def text_tokens(text: str) -> Iterator[str]:
    """Every token `recall_tokens` would take from a text, repeats included and uncapped:
    a document seen as a query sees it (for a plain bag-of-words baseline)."""
    nfkc = unicodedata.normalize("NFKC", text)
    for run in runs(exact_form(nfkc)):
        yield from run_tokens(run)
        yield from unspaced_grams(run)
    yield from identifier_tokens(nfkc)
    yield from acronym_tokens(nfkc)
