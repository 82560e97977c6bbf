"""What a ranker hands a recall: the ranked documents, and for any document its score
and the passage of its body to deliver."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.passage import Excerpt, opening
from memory_recall.server.ranking.spec import ScoredDocument


@dataclass(frozen=True)
class Ranking:
    """One query's ranking: kept matches best first; `score` of any document on the same
    scale (0 for one the ranker would not return); `excerpt` of any document's body."""

    ranked: list[ScoredDocument]
    score: Callable[[MemoryDocument], int]
    excerpt: Callable[[MemoryDocument], Excerpt]

    @classmethod
    def empty(cls) -> Ranking:
        return cls([], lambda _doc: 0, window_excerpt)


def window_excerpt(doc: MemoryDocument) -> Excerpt:
    """The body window SPEC §3 scores: its first 1,200 characters, exactly."""
    return opening(doc.body, exact=True)
