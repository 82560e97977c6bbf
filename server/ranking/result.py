"""What a ranker hands a recall: the ranked documents, and for any document its score
and the passage of its body to deliver."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from itertools import islice

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.confidence.evidence import QueryEvidence
from memory_recall.server.ranking.passage import Excerpt, opening
from memory_recall.server.ranking.spec import ScoredDocument


class Ranking:
    """One query's ranking: kept matches best first; `score` of any document on the same
    scale (0 for one the ranker would not return); `excerpt` of any document's body.

    The ranked documents may be read lazily: `top(k)` reads only as far as `k`, and
    the rest of the same order is read on when asked (`more` continues it), so a
    fast phase does not wait for the shortlist's 180.
    """

    def __init__(
        self,
        ranked: list[ScoredDocument],
        score: Callable[[MemoryDocument], int],
        excerpt: Callable[[MemoryDocument], Excerpt],
        more: Iterator[ScoredDocument] | None = None,
        limit: int | None = None,
    ) -> None:
        self._ranked = ranked
        self._more = more
        self.limit = limit
        self.score = score
        self.excerpt = excerpt
        # What the ranker can say about its best documents for the fast phase's
        # confidence (server.ranking.confidence); None for a ranker that says nothing.
        self.evidence: Callable[[Sequence[ScoredDocument]], QueryEvidence] | None = None

    @classmethod
    def empty(cls) -> Ranking:
        return cls([], lambda _doc: 0, window_excerpt)

    def top(self, k: int) -> list[ScoredDocument]:
        """The first `k` (at most `limit`)."""
        if self.limit is not None:
            k = min(k, self.limit)
        while self._more is not None and len(self._ranked) < k:
            following = next(self._more, None)
            if following is None:
                self._more = None
            else:
                self._ranked.append(following)
        return self._ranked[:k]

    @property
    def ranked(self) -> list[ScoredDocument]:
        """All of them (up to `limit`)."""
        if self._more is not None:
            self._ranked.extend(
                islice(self._more, None)
                if self.limit is None
                else islice(self._more, max(0, self.limit - len(self._ranked)))
            )
            self._more = None
        return self._ranked if self.limit is None else self._ranked[: self.limit]


def window_excerpt(doc: MemoryDocument) -> Excerpt:
    """The body window the reference scores (docs/ranking.md): its first 1,200 characters,
    exactly."""
    return opening(doc.body, exact=True)
