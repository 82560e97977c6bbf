"""The document side of bm25f: the terms of each field, the body's counts and length.

Fields are the title, the description and the body: the whole body by default
(files up to the 1 MiB limit), or its first 1,200 characters for the window-only
variant. Terms are the reference scorer's field terms (words of three or more
letters, CJK
pairs) plus acronyms as written (`CI` → `\\x01ci`), which spec tokens skip.

Title and description are one statement each: a term is in them or not. In the
body, each posting keeps how often its term occurs (capped at 255: far past
where BM25 saturates), and the index keeps the body's length: at query time a
token's frequency is the sum over the body's words that contain it, normalized
by the body's length against the corpus's average (server.ranking.bm25f.ranker).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping
from operator import add
from typing import Protocol

import regex
from memory_recall.protocol.limits import BODY_WINDOW_CHARS
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.bm25f.folding import exact_form, needs_tailoring, with_folded
from memory_recall.server.ranking.bm25f.tokens import ACRONYM_MARK, COMMON_TWO_LETTER_WORDS
from memory_recall.server.ranking.index import CJK_RUN, WORD, field_terms
from memory_recall.server.ranking.postings import DocTerms
from memory_recall.server.tokens import CJK_CHAR, normalize

MAX_COUNT = 255  # a body posting's count fits its one-byte code

# Two-letter words written in capitals (CI, PR, UI, GP); the same for ASCII text,
# with the faster `re`.
_ACRONYM = regex.compile(r"(?<![\p{L}\p{M}\p{N}])\p{Lu}{2}(?![\p{L}\p{M}\p{N}])")
# (Capitals first, then the look-behind: `re` skips to the next capital in C.)
_ASCII_ACRONYM = re.compile(r"[A-Z]{2}(?<![A-Za-z0-9][A-Z]{2})(?![A-Za-z0-9])")
_ASCII_WORD = re.compile(r"[a-z0-9]{3,}")


def acronyms(raw: str) -> list[str]:
    """The acronym terms of one field as written, repeats included: `CI` → `\\x01ci`;
    and lowercase two-letter names that are no common word (`db` of `db-stg-7`)."""
    if raw.isascii():
        found = [ACRONYM_MARK + word.lower() for word in _ASCII_ACRONYM.findall(raw)]
    else:
        found = [ACRONYM_MARK + normalize(word) for word in _ACRONYM.findall(raw)]
    return found + _lower_names(raw)


# A lowercase two-letter word heading a hyphenated name (`db` of `db-stg-7`), as the
# query side reads one (bm25f.tokens); alone, it is too often a word of some language.
_LOWER_TWO = regex.compile(
    r"(?<![\p{L}\p{M}\p{N}])(?<![\p{L}\p{N}][_./\\:-])[a-z]{2}(?=-[\p{L}\p{N}])"
)


# What joins the pieces of a compound: a two-letter word after one (and a letter or digit
# before it) is a later piece, not a name's head.
_JOINS = frozenset("_./\\:-")


def _lower_names(raw: str) -> list[str]:
    if "-" not in raw:  # (most fields: no scan)
        return []
    if not raw.isascii():
        found = _LOWER_TWO.findall(raw)
    else:  # from each hyphen back: the scan of a whole body cost more than the rest
        found = []
        at = raw.find("-", 2)
        while at != -1:
            word = raw[at - 2 : at]
            before = raw[at - 3] if at >= 3 else ""
            joined = before in _JOINS and at >= 4 and raw[at - 4].isalnum()
            if (
                word.isalpha()
                and word.islower()
                and not before.isalnum()
                and not joined
                and raw[at + 1 : at + 2].isalnum()
            ):
                found.append(word)
            at = raw.find("-", at + 1)
    return [ACRONYM_MARK + word for word in found if word not in COMMON_TWO_LETTER_WORDS]


# ASCII: every character that is not a letter or digit becomes a space, so that
# `split` gives the maximal alphanumeric runs (one C pass instead of two regexes).
_ASCII_SEPARATORS = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum()})


def _ascii_counts(raw: str) -> Counter[str]:
    """`term_counts` of an ASCII field: words of three or more, acronyms as written."""
    runs = raw.translate(_ASCII_SEPARATORS).split()
    counts = Counter(map(str.lower, runs))
    shorts = [term for term in counts if len(term) < 3]
    for short in shorts:
        del counts[short]
    if not raw.islower():
        counts.update(ACRONYM_MARK + run.lower() for run in _ASCII_ACRONYM.findall(raw))
    if any(len(s) == 2 and s.isalpha() and s not in COMMON_TWO_LETTER_WORDS for s in shorts):
        counts.update(_lower_names(raw))  # (scanned only when such a word is there at all)
    return counts


def term_counts(text: str, raw: str) -> Counter[str]:
    """Every term of one normalized field with how often it occurs (CJK pairs by
    position, overlapping), acronyms read from the field as written."""
    if raw.isascii():  # then `text` is `raw` lowercased: NFKC keeps ASCII as it is
        return _ascii_counts(raw)
    if text.isascii():
        counts = Counter(_ASCII_WORD.findall(text))
    else:
        terms = WORD.findall(text)
        for run in CJK_RUN.findall(text):  # the pairs of each run, joined in C
            terms.extend(map(add, run, run[1:]))
        counts = Counter(terms)
    if not raw.islower():  # no capitals, no acronyms; but `db` of `db-stg-7` is lower
        counts.update(acronyms(raw))
    else:
        counts.update(_lower_names(raw))
    return counts


def coded_terms(counts: Counter[str]) -> Counter[str]:
    """Every term of a body with its count, capped to the one-byte code (in place)."""
    if counts and max(counts.values()) > MAX_COUNT:
        for term, count in counts.items():
            if count > MAX_COUNT:
                counts[term] = MAX_COUNT
    return counts


# Stuffing does not pay: a title or description is a statement of what a memory is
# about. One that holds more distinct terms than these (a CJK pair counting half a word)
# is a list, not a summary, and is weighed as body text: its terms join the body's
# counts and its length the body's, where they saturate and are normalized like any
# other body words (docs/ranking.md, "Stuffing does not pay"). The labelled corpora's
# titles hold at most 14, their descriptions 21; the write gate's 100 and 300
# characters hold about 16 and 50 words.
TITLE_TERMS_MAX = 20
DESCRIPTION_TERMS_MAX = 32


def vocabulary_size(terms: Mapping[str, int]) -> int:
    """How many words a summary's terms stand for: a CJK pair counts half (a run of n
    characters gives n - 1 overlapping pairs, about n / 2 words)."""
    pairs = sum(1 for term in terms if CJK_CHAR.match(term))
    return len(terms) - pairs + (pairs + 1) // 2


def summary_terms(text: str, raw: str) -> dict[str, int]:
    """The distinct terms of a title or a description (in it or not: code 0), and
    their folded forms (bm25f.folding)."""
    terms = dict.fromkeys(field_terms(text), 0)
    if not raw.islower():
        terms.update(dict.fromkeys(acronyms(raw), 0))
    return terms if raw.isascii() else with_folded(terms)


def exact_title(doc: MemoryDocument) -> str:
    """The title in its exact form (bm25f.folding.exact_form)."""
    return exact_form(doc.title) if needs_tailoring(doc.title) else doc.norm_title


def exact_description(doc: MemoryDocument) -> str:
    return exact_form(doc.description) if needs_tailoring(doc.description) else doc.norm_description


class BodyText(Protocol):
    """The body an index reads: (exact form, as written); `form` makes the exact form."""

    def __call__(
        self, doc: MemoryDocument, form: Callable[[str], str] = ...
    ) -> tuple[str, str]: ...


def whole_body(doc: MemoryDocument, form: Callable[[str], str] = exact_form) -> tuple[str, str]:
    """(exact form, as written) of the whole body; `form` makes the exact form."""
    return form(doc.body), doc.body


def body_window(doc: MemoryDocument, form: Callable[[str], str] = exact_form) -> tuple[str, str]:
    """(exact form, as written) of the first 1,200 characters: the window-only variant."""
    raw = doc.body[:BODY_WINDOW_CHARS]
    return form(raw), raw


def body_terms(text: str, raw: str) -> Counter[str]:
    """The body's terms with their counts, folded forms beside (bm25f.folding)."""
    counts = term_counts(text, raw)
    if not raw.isascii():
        counts = Counter(with_folded(counts))
    return coded_terms(counts)


def document_terms(doc: MemoryDocument, body: BodyText) -> DocTerms:
    """Title terms, description terms, body terms with their counts; the body's length.
    A title or description too broad to be a summary is read as body text."""
    text, raw = body(doc)
    counts = body_terms(text, raw)
    length = len(text)
    summaries: list[dict[str, int]] = []
    for exact, written, most in (
        (exact_title(doc), doc.title, TITLE_TERMS_MAX),
        (exact_description(doc), doc.description, DESCRIPTION_TERMS_MAX),
    ):
        if len(exact) > most and vocabulary_size(dict.fromkeys(field_terms(exact), 0)) > most:
            counts = coded_terms(counts + body_terms(exact, written))
            length += len(exact)
            summaries.append({})
        else:
            summaries.append(summary_terms(exact, written))
    return DocTerms([*summaries, counts], length)
