"""bm25f's own index: title and description terms, body terms with their impact codes.

The SPEC index (server.ranking.index) keeps SPEC terms of the 1,200-character
window; this one keeps bm25f's terms (acronyms too) of the whole body, each
body posting with the impact code of its term (server.ranking.bm25f.terms).
The catalog builds the index its ranker reads, never both.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, ClassVar

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.bm25f.frequency import count_code
from memory_recall.server.ranking.bm25f.terms import (
    VOCABULARY_MARK,
    BodyText,
    body_window,
    class_vocabulary,
    document_terms,
    whole_body,
)
from memory_recall.server.ranking.postings import Counters, DocTerms, TermIndex

TITLE, DESCRIPTION, BODY = range(3)


# Count codes kept for this many recent tokens (each a few bits per document).
CACHED_TOKENS = 64


class Bm25Index(TermIndex):
    """Terms of title, description and whole body → documents (body postings coded)."""

    KIND = "bm25f"
    WEIGHTED = (False, False, True)
    LENGTHS = True
    body: ClassVar[BodyText] = staticmethod(whole_body)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._codes: dict[str, Counters] = {}
        self._codes_version = -1
        self._summaries: dict[tuple[int, float], list[tuple[float, int]]] = {}
        self._summaries_version = -1

    def document_terms(self, doc: MemoryDocument) -> DocTerms:
        return document_terms(doc, type(self).body)

    @classmethod
    def of(
        cls,
        documents: Iterable[MemoryDocument],
        tiebreak: Callable[[MemoryDocument], Any] | None = None,
    ) -> Bm25Index:
        index = cls(tiebreak=tiebreak)
        index._add_all(documents)
        return index

    def body_text(self, doc: MemoryDocument) -> tuple[str, str]:
        """(normalized, as written) of the body this index indexes."""
        return type(self).body(doc)

    def summary_factors(self, field: int, b: float) -> list[tuple[float, int]]:
        """Per vocabulary class of a title or description field: (the factor a term
        found there is weighed by, the slots of that class); `summary_factors` says how.
        Kept while the index does not change."""
        if self._summaries_version != self.version:
            self._summaries.clear()
            self._summaries_version = self.version
        key = (field, b)
        found = self._summaries.get(key)
        if found is None:
            classes = {
                group: self.field_bits(field, [VOCABULARY_MARK + chr(group)])
                for group in range(1, MAX_VOCABULARY_CLASS + 1)
            }
            classes = {group: bits for group, bits in classes.items() if bits}
            found = self._summaries[key] = summary_factors(classes, len(self), b)
        return found

    def count_codes(self, token: str, words: list[str], body: int) -> Counters:
        """Per slot of `body`, the count code (`count_code`) of the token's body count:
        the sum of the counts of `words`, the body words that hold it.

        A fresh copy each time (the caller adds to it); kept for the tokens asked
        lately while the index does not change, as recalls repeat their words.
        """
        if self._codes_version != self.version:
            self._codes.clear()
            self._codes_version = self.version
        cached = self._codes.get(token)
        if cached is None:
            cached = Counters()
            by_code: dict[int, int] = {}
            for count, level in self.field_sums(BODY, words).levels(body):
                code = count_code(count)
                by_code[code] = by_code.get(code, 0) | level
            for code, level in by_code.items():
                cached.put(level, code)
            if len(self._codes) >= CACHED_TOKENS:
                del self._codes[next(iter(self._codes))]
            self._codes[token] = cached
        copy = Counters()
        copy.slices = list(cached.slices)
        return copy


MAX_VOCABULARY_CLASS = 40  # 2^19.5 distinct terms: more than a summary can hold


def summary_factors(classes: dict[int, int], documents: int, b: float) -> list[tuple[float, int]]:
    """(factor, slots) per vocabulary class: a summary with more distinct terms than
    the average of the corpus's non-empty ones weighs each by
    1 / (1 - b + b * size / average); one with fewer counts fully (BM25's length
    normalization, as a penalty only)."""
    if not classes or not documents:
        return []
    ordered = sorted(classes.items())
    total = sum(class_vocabulary(group) * bits.bit_count() for group, bits in ordered)
    held = sum(bits.bit_count() for _group, bits in ordered)
    average = max(1.0, total / held)
    return [
        (1.0 / max(1.0, 1.0 - b + b * class_vocabulary(group) / average), bits)
        for group, bits in sorted(classes.items())
    ]


class Bm25WindowIndex(Bm25Index):
    """The same, of the body's first 1,200 characters only: the window-only variant."""

    KIND = "bm25f-window"
    body: ClassVar[BodyText] = staticmethod(body_window)
