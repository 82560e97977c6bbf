"""Baselines printed beside our rankers in eval, never used to serve recalls."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import regex
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.bm25f.query import idf
from memory_recall.server.ranking.bm25f.tokens import text_tokens
from memory_recall.server.ranking.spec import ScoredDocument
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.tokens import cap_tokens

_ASCII_WORD = regex.compile(r"[a-z0-9]{3,}")


def ascii_tokens(query: str) -> list[str]:
    """A naive English-only tokenizer: `[a-z0-9]{3,}` on the lowercased query."""
    return cap_tokens(_ASCII_WORD.findall(query.lower()))


@dataclass(frozen=True)
class _BagOfWords:
    counts: list[Counter[str]]  # per document, in input order
    lengths: list[int]
    df: Counter[str]
    average: float


class PlainBm25:
    """Textbook BM25 over each memory as one bag of words (title, description and whole
    body), every token scored, exact token matches, never silent; k1 1.2, b 0.75.

    The baseline a reader would build first: the same tokens as bm25f (the reference scorer's
    and its extra ones) on both sides, none of its fields, stems, silence or
    substring matching. A scan, for eval only.
    """

    k1 = 1.2
    b = 0.75

    def __init__(self) -> None:
        self._cache: tuple[tuple[MemoryDocument, ...], _BagOfWords] | None = None

    def _bag(self, documents: tuple[MemoryDocument, ...]) -> _BagOfWords:
        if self._cache is not None and self._cache[0] is documents:
            return self._cache[1]
        counts = [Counter(text_tokens(f"{d.title}\n{d.description}\n{d.body}")) for d in documents]
        lengths = [sum(c.values()) for c in counts]
        df: Counter[str] = Counter()
        for c in counts:
            df.update(c.keys())
        bag = _BagOfWords(counts, lengths, df, max(1.0, sum(lengths) / max(1, len(lengths))))
        self._cache = (documents, bag)
        return bag

    def __call__(
        self,
        snapshot: CorpusView,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool],
        limit: int | None = None,
    ) -> list[ScoredDocument]:
        documents = snapshot.documents
        if not tokens or not documents:
            return []
        bag = self._bag(documents)
        n = len(documents)
        scored = []
        for i, doc in enumerate(documents):
            counts = bag.counts[i]
            norm = 1 - self.b + self.b * bag.lengths[i] / bag.average
            score = 0.0
            for token in dict.fromkeys(tokens):
                tf = counts.get(token, 0)
                if tf:
                    score += idf(bag.df[token], n) * tf * (self.k1 + 1) / (tf + self.k1 * norm)
            if score > 0 and keep(doc):
                scored.append((round(score * 1000), -doc.mtime_ms, i, doc))
        scored.sort(key=lambda item: (-item[0], item[1], item[2]))
        ranked = [ScoredDocument(doc, score) for score, _, _, doc in scored]
        return ranked if limit is None else ranked[:limit]
