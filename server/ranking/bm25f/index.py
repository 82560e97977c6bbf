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
from memory_recall.server.ranking.bm25f.terms import (
    BodyText,
    body_window,
    document_terms,
    whole_body,
)
from memory_recall.server.ranking.postings import DocTerms, TermIndex

TITLE, DESCRIPTION, BODY = range(3)


class Bm25Index(TermIndex):
    """Terms of title, description and whole body → documents (body postings coded)."""

    KIND = "bm25f"
    WEIGHTED = (False, False, True)
    LENGTHS = True
    body: ClassVar[BodyText] = staticmethod(whole_body)

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


class Bm25WindowIndex(Bm25Index):
    """The same, of the body's first 1,200 characters only: the window-only variant."""

    KIND = "bm25f-window"
    body: ClassVar[BodyText] = staticmethod(body_window)
