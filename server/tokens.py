"""Normalization and query tokenization (SPEC §3).

The rules here are the published reference: two implementations must produce
the same tokens for the same text, so nothing in this module is tunable.
"""

from __future__ import annotations

import unicodedata
from collections import OrderedDict
from collections.abc import Iterable, Iterator

import regex
from memory_recall.protocol.limits import HEAD_TOKENS, TAIL_TOKENS

# Exactly these properties; Katakana by its script extensions so that the
# prolonged sound mark (ー) and the middle dot (・) stay inside Japanese runs.
CJK_CLASS = r"\p{Script=Han}\p{Script=Hiragana}\p{Script_Extensions=Katakana}\p{Script=Hangul}"
CJK_CHAR = regex.compile(f"[{CJK_CLASS}]")

# A maximal CJK run, or a non-CJK letter/number followed by at least two more
# non-CJK letters/marks/numbers.
_RUN = regex.compile(
    rf"[{CJK_CLASS}]+"
    rf"|[[\p{{L}}\p{{N}}]--[{CJK_CLASS}]][[\p{{L}}\p{{M}}\p{{N}}]--[{CJK_CLASS}]]{{2,}}",
    flags=regex.VERSION1,
)

# Long queries keep their opening words and their most recent ones: the head
# says what the question is, the tail is what the user typed last
# (HEAD_TOKENS + TAIL_TOKENS, protocol.limits).


def normalize(text: str) -> str:
    """Unicode NFKC, then lowercase: the form every field and query is compared in."""
    return unicodedata.normalize("NFKC", text).lower()


def runs(normalized: str) -> Iterator[str]:
    """The runs of SPEC §3 in an already normalized text, left to right."""
    for match in _RUN.finditer(normalized):
        yield match.group()


def is_cjk_run(run: str) -> bool:
    return CJK_CHAR.match(run) is not None


def run_tokens(run: str) -> Iterator[str]:
    """A CJK run yields its code-point bigrams; any other run is one token."""
    if is_cjk_run(run):
        for i in range(len(run) - 1):
            yield run[i : i + 2]
    else:
        yield run


def raw_tokens(normalized: str) -> Iterator[str]:
    """Every token of a normalized text, in order, repeats included."""
    for run in runs(normalized):
        yield from run_tokens(run)


def cap_tokens(tokens: Iterable[str]) -> list[str]:
    """Distinct tokens, at most 64: the first 32, then a rolling window of the last 32.

    A token seen again while in the tail window moves to the window's end; one
    already in the head stays where it is.
    """
    head: dict[str, None] = {}
    tail: OrderedDict[str, None] = OrderedDict()
    for token in tokens:
        if token in head:
            continue
        if len(head) < HEAD_TOKENS:
            head[token] = None
        elif token in tail:
            tail.move_to_end(token)
        else:
            tail[token] = None
            if len(tail) > TAIL_TOKENS:
                tail.popitem(last=False)
    return [*head, *tail]


def query_tokens(query: str) -> list[str]:
    """The query-side tokens of SPEC §3: normalized, bigrammed, distinct, capped."""
    return cap_tokens(raw_tokens(normalize(query)))


# -- Tokens of the default ranker ---------------------------------------------
# Additions on top of SPEC §3, for the `default` ranker only: the functions
# above stay the published reference.

# Scripts written without spaces between words, outside CJK: a sentence is one
# run, so a whole-run token would only ever match itself.
UNSPACED_CHAR = regex.compile(r"[\p{Script=Thai}\p{Script=Lao}\p{Script=Khmer}\p{Script=Myanmar}]")
# A code-point trigram: the shortest piece the warm index looks up without a
# scan (a non-CJK token of three characters), and specific enough to be rare.
UNSPACED_GRAM = 3
# Identifiers joined by separators: snake_case, kebab-case, dotted and slashed paths.
# Possessive and anchored at a word's start: linear on a 32k-letter "word".
_COMPOUND = regex.compile(r"(?<![\p{L}\p{N}])[\p{L}\p{N}]++(?:[_./\\:-]++[\p{L}\p{N}]++)+")
# camelCase / PascalCase / acronym parts of one word, read before lowercasing.
_CAMEL_PART = regex.compile(r"\p{Lu}?\p{Ll}+|\p{Lu}+(?!\p{Ll})|\p{N}+")
# A word (scanned in one pass) is split when its case is mixed: a lower letter
# before an upper one (getUser), or an acronym before a word (HTTPServer).
_WORD_RUN = regex.compile(r"[\p{L}\p{N}]+")
_MIXED_CASE = regex.compile(r"\p{Ll}\p{Lu}|\p{Lu}\p{Lu}\p{Ll}")
MIN_PART = 3  # as SPEC §3's runs: shorter pieces match almost everything


def unspaced_grams(run: str) -> Iterator[str]:
    """Code-point trigrams of a Thai/Lao/Khmer/Myanmar run longer than one trigram."""
    if len(run) > UNSPACED_GRAM and UNSPACED_CHAR.search(run):
        for i in range(len(run) - UNSPACED_GRAM + 1):
            yield run[i : i + UNSPACED_GRAM]


def identifier_tokens(nfkc_text: str) -> Iterator[str]:
    """Extra tokens of identifiers in an NFKC (not yet lowercased) text.

    `getUserName` adds get, user, name (the whole word is already a SPEC
    token); `server/ranking/index.py` adds the whole path, lowercased (its
    parts are already SPEC tokens).
    """
    for match in _WORD_RUN.finditer(nfkc_text):
        word = match.group()
        if not _MIXED_CASE.search(word):
            continue
        for part in _CAMEL_PART.findall(word):
            if len(part) >= MIN_PART:
                yield part.lower()
    for match in _COMPOUND.finditer(nfkc_text):
        yield match.group().lower()


# Two-letter words: memories write acronyms in capitals (CI, PR, UI, GP), and the
# index keeps those as terms of their own, marked so that no SPEC token can
# ever equal one. A query may write them in any case; a lowercase one that is
# a common two-letter word is not taken for an acronym.
ACRONYM_MARK = "\x01"
# A word on its own: not a piece of a compound (`index.py`, `dispatcher-ui`).
_TWO_LETTERS = regex.compile(
    r"(?<![\p{L}\p{M}\p{N}])(?<![\p{L}\p{N}][_./\\:-])"
    r"[\p{Lu}\p{Ll}]{2}"
    r"(?![\p{L}\p{M}\p{N}])(?![_./\\:-][\p{L}\p{N}])"
)
_COMMON_TWO_LETTER_WORDS = frozenset(
    """
    ah am an as at be by do go he hi if in is it me my no of oh ok on or so to up us we
    al au da de di du el en es et il im ja la le lo ne se si su te tu un wo ya zu
    """.split()  # noqa: SIM905 - a word list reads better as text
)


def acronym_tokens(nfkc_text: str) -> Iterator[str]:
    """Acronym tokens of the two-letter words of an NFKC (not lowercased) text."""
    for word in _TWO_LETTERS.findall(nfkc_text):
        lower = word.lower()
        if word.isupper() or lower not in _COMMON_TWO_LETTER_WORDS:
            yield ACRONYM_MARK + lower


# Month names in English (with its abbreviations), German, French, Spanish,
# Italian and Portuguese.
_MONTH_NAMES = (
    "january jan januar janvier enero gennaio janeiro",
    "february feb februar février febrero febbraio fevereiro",
    "march mar märz mars marzo março",
    "april apr avril abril aprile",
    "may mai mayo maggio maio",
    "june jun juni juin junio giugno junho",
    "july jul juli juillet julio luglio julho",
    "august aug août agosto",
    "september sep sept septembre septiembre settembre setembro",
    "october oct oktober octobre octubre ottobre outubro",
    "november nov novembre noviembre novembro",
    "december dec dezember décembre diciembre dicembre dezembro",
)
_MONTHS = {name: number for number, names in enumerate(_MONTH_NAMES, 1) for name in names.split()}
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
    """The default ranker's query tokens: SPEC §3's, plus identifier parts and
    compounds, code-point trigrams of unspaced scripts, acronyms and ISO dates;
    distinct, capped."""
    nfkc = unicodedata.normalize("NFKC", query)

    def stream() -> Iterator[str]:
        lower = nfkc.lower()
        for run in runs(lower):
            yield from run_tokens(run)
            yield from unspaced_grams(run)
        yield from identifier_tokens(nfkc)
        yield from acronym_tokens(nfkc)
        yield from date_tokens(lower)

    return cap_tokens(stream())
