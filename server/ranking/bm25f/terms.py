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
from collections.abc import Callable
from operator import add

import regex
from memory_recall.protocol.limits import BODY_WINDOW_CHARS
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.bm25f.tokens import ACRONYM_MARK
from memory_recall.server.ranking.index import CJK_RUN, WORD, field_terms
from memory_recall.server.ranking.postings import DocTerms
from memory_recall.server.tokens import normalize

MAX_COUNT = 255  # a body posting's count fits its one-byte code

# Two-letter words written in capitals (CI, PR, UI, GP); the same for ASCII text,
# with the faster `re`.
_ACRONYM = regex.compile(r"(?<![\p{L}\p{M}\p{N}])\p{Lu}{2}(?![\p{L}\p{M}\p{N}])")
# (Capitals first, then the look-behind: `re` skips to the next capital in C.)
_ASCII_ACRONYM = re.compile(r"[A-Z]{2}(?<![A-Za-z0-9][A-Z]{2})(?![A-Za-z0-9])")
_ASCII_WORD = re.compile(r"[a-z0-9]{3,}")


def acronyms(raw: str) -> list[str]:
    """The acronym terms of one field as written, repeats included: `CI` → `\\x01ci`."""
    if raw.isascii():
        return [ACRONYM_MARK + word.lower() for word in _ASCII_ACRONYM.findall(raw)]
    return [ACRONYM_MARK + normalize(word) for word in _ACRONYM.findall(raw)]


# ASCII: every character that is not a letter or digit becomes a space, so that
# `split` gives the maximal alphanumeric runs (one C pass instead of two regexes).
_ASCII_SEPARATORS = str.maketrans({c: " " for c in map(chr, range(128)) if not c.isalnum()})


def _ascii_counts(raw: str) -> Counter[str]:
    """`term_counts` of an ASCII field: words of three or more, acronyms as written."""
    runs = raw.translate(_ASCII_SEPARATORS).split()
    counts = Counter(map(str.lower, runs))
    for short in [term for term in counts if len(term) < 3]:
        del counts[short]
    if not raw.islower():
        counts.update(ACRONYM_MARK + run.lower() for run in _ASCII_ACRONYM.findall(raw))
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
    if not raw.islower():  # no capitals, no acronyms
        counts.update(acronyms(raw))
    return counts


def coded_terms(counts: Counter[str]) -> Counter[str]:
    """Every term of a body with its count, capped to the one-byte code (in place)."""
    if counts and max(counts.values()) > MAX_COUNT:
        for term, count in counts.items():
            if count > MAX_COUNT:
                counts[term] = MAX_COUNT
    return counts


def summary_terms(text: str, raw: str) -> dict[str, int]:
    """The distinct terms of a title or a description (in it or not: code 0)."""
    terms = dict.fromkeys(field_terms(text), 0)
    if not raw.islower():
        terms.update(dict.fromkeys(acronyms(raw), 0))
    return terms


BodyText = Callable[[MemoryDocument], tuple[str, str]]


def whole_body(doc: MemoryDocument) -> tuple[str, str]:
    """(normalized, as written) of the whole body."""
    return normalize(doc.body), doc.body


def body_window(doc: MemoryDocument) -> tuple[str, str]:
    """(normalized, as written) of the first 1,200 characters: the window-only variant."""
    raw = doc.body[:BODY_WINDOW_CHARS]
    return normalize(raw), raw


def document_terms(doc: MemoryDocument, body: BodyText) -> DocTerms:
    """Title terms, description terms, body terms with their counts; the body's length."""
    text, raw = body(doc)
    return DocTerms(
        [
            summary_terms(doc.norm_title, doc.title),
            summary_terms(doc.norm_description, doc.description),
            coded_terms(term_counts(text, raw)),
        ],
        len(text),
    )
