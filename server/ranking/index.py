r"""Candidate lookup for the reference scorer: its scores and order, touching only the
documents that share something with the query.

Why it is exact. A query token (server.tokens) is either a run of at least
three non-CJK letters/marks/numbers, or a bigram of two CJK characters. A
substring match of the first kind inside a field lies within one maximal run of
non-CJK ``[\p{L}\p{M}\p{N}]`` characters of that field; a match of the second
kind is two adjacent CJK characters of the field. So, per field (title,
description, body window), the index keeps postings (term → documents) for:

- words: every distinct maximal non-CJK letter/mark/number run of three or more
  characters;
- pairs: every distinct pair of adjacent CJK characters (a CJK token *is* a
  pair, so its lookup is exact);

and a trigram index over the vocabulary of words, which finds the words that
contain a query token (each candidate word is then checked with ``in``).
Tokens of any other shape — another tokenizer's — are scanned for, so any token
list gets the reference's answer. Nothing else is indexed: the spec index holds
spec terms only (bm25f keeps its own, server.ranking.bm25f.index).

Why it is fast. Each (token, field) becomes a bitmap of slots
(server.ranking.postings); the bitmaps are added with their weights into
bit-sliced counters, and the score levels are walked from the top, so only the
documents that can reach the first `limit` places are ever materialized.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import regex
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.postings import (
    GRAM,
    Counters,
    DocTerms,
    TermIndex,
    bitmap_of,
)
from memory_recall.server.ranking.spec import (
    BODY_WEIGHT,
    DESCRIPTION_WEIGHT,
    TITLE_WEIGHT,
    TYPE_KEYWORDS,
    ScoredDocument,
    type_boost,
)
from memory_recall.server.tokens import CJK_CLASS

FIELD_WEIGHTS = (TITLE_WEIGHT, DESCRIPTION_WEIGHT, BODY_WEIGHT)
FIELDS = range(len(FIELD_WEIGHTS))

# Field side: maximal runs, so a token can only ever be found inside one.
WORD = regex.compile(rf"[[\p{{L}}\p{{M}}\p{{N}}]--[{CJK_CLASS}]]{{{GRAM},}}", flags=regex.VERSION1)
# The same class for ASCII text, which normalizing has lowercased.
_ASCII_WORD = re.compile(rf"[a-z0-9]{{{GRAM},}}")
CJK_PAIR = regex.compile(rf"[{CJK_CLASS}]{{2}}")
CJK_RUN = regex.compile(rf"[{CJK_CLASS}]{{2,}}")


def field_texts(doc: MemoryDocument) -> tuple[str, str, str]:
    """The three normalized fields the reference scores (docs/ranking.md), in FIELD_WEIGHTS
    order."""
    return (doc.norm_title, doc.norm_description, doc.norm_body_window)


def field_terms(text: str) -> set[str]:
    """The distinct words (3+ characters) and CJK pairs (2) of one normalized field."""
    if text.isascii():  # most memories: no CJK, no marks, and a faster regex
        return set(_ASCII_WORD.findall(text))
    terms = set(WORD.findall(text))
    # The pairs of each CJK run, sliced: a third cheaper than an overlapped findall.
    terms.update([run[i : i + 2] for run in CJK_RUN.findall(text) for i in range(len(run) - 1)])
    return terms


class DocumentIndex(TermIndex):
    """Words and CJK pairs of title, description and body window → documents."""

    KIND = "spec"
    WEIGHTED = (False, False, False)

    def document_terms(self, doc: MemoryDocument) -> DocTerms:
        return DocTerms([dict.fromkeys(field_terms(text), 0) for text in field_texts(doc)])

    @classmethod
    def of(
        cls,
        documents: Iterable[MemoryDocument],
        tiebreak: Callable[[MemoryDocument], Any] | None = None,
    ) -> DocumentIndex:
        index = cls(tiebreak=tiebreak)
        index._add_all(documents)
        return index

    def rank(
        self,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool] = lambda _doc: True,
        limit: int | None = None,
    ) -> list[ScoredDocument]:
        """Exactly `rank_scan(documents, tokens, keep)[:limit]`, from the postings."""
        if not tokens or not self._docs or limit == 0:
            return []
        counters = Counters()
        matched = 0
        for token, times in Counter(tokens).items():  # a repeated token counts again
            for field, bitmap in enumerate(self.token_bits(token)):
                if bitmap:
                    counters.add(bitmap, FIELD_WEIGHTS[field] * times)
                    matched |= bitmap
        if not matched:
            return []
        for doc_type in TYPE_KEYWORDS:
            boost = type_boost(doc_type, tokens)
            if boost:
                counters.add(matched & self._type_bits.get(doc_type, 0), boost)
        return self._best(counters, matched, keep, len(self._docs) if limit is None else limit)

    def token_bits(self, token: str) -> list[int]:
        """Per field, the bitmap of the slots whose field contains `token`."""
        if WORD.fullmatch(token):
            terms = self.words_containing(token)
        elif CJK_PAIR.fullmatch(token):
            terms = [token]
        else:
            return [
                bitmap_of(slot for slot, doc in self._docs.items() if token in field_texts(doc)[f])
                for f in FIELDS
            ]
        return [self.field_bits(field, terms) for field in FIELDS]

    def _best(
        self,
        counters: Counters,
        matched: int,
        keep: Callable[[MemoryDocument], bool],
        limit: int,
    ) -> list[ScoredDocument]:
        """The first `limit` kept slots by score descending, then recency order."""
        docs = self._docs
        out: list[ScoredDocument] = []
        for score, bitmap in counters.levels(matched):
            for slot in self.in_order(bitmap, limit - len(out)):
                doc = docs[slot]
                if keep(doc):
                    out.append(ScoredDocument(doc, score))
                    if len(out) == limit:
                        return out
        return out
