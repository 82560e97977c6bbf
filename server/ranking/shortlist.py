"""From one query to the three lists a recall needs (SPEC §3).

- fast: the top 2, pushed before any model is asked;
- fallback: the top 5, used when there is no model or it fails;
- candidates: the manifest the model chooses from — the lexical top 180
  interleaved with the most recent other memories, at most 200 in all, so the
  model can still find a memory that shares no word with the query.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Protocol

from memory_recall.protocol.limits import (
    FAST_LIMIT,
    LEXICAL_CANDIDATES,
    MAX_CANDIDATES,
    REFINED_LIMIT,
)
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.noise import NoiseFilter
from memory_recall.server.ranking.spec import ScoredDocument, rank_scan
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.tokens import query_tokens

Keep = Callable[[MemoryDocument], bool]


class Ranker(Protocol):
    """Kept documents that match, best first; only the first `limit` when given."""

    def __call__(
        self,
        snapshot: CorpusView,
        tokens: Sequence[str],
        keep: Keep,
        limit: int | None = None,
    ) -> list[ScoredDocument]: ...


def reference_ranker(
    snapshot: CorpusView, tokens: Sequence[str], keep: Keep, limit: int | None = None
) -> list[ScoredDocument]:
    """SPEC §3's scan over every document."""
    ranked = rank_scan(snapshot.documents, tokens, keep)
    return ranked if limit is None else ranked[:limit]


def index_ranker(
    snapshot: CorpusView,
    tokens: Sequence[str],
    keep: Callable[[MemoryDocument], bool],
    limit: int | None = None,
) -> list[ScoredDocument]:
    """SPEC §3's ranking through the snapshot's index: the reference's answer, faster."""
    index = snapshot.index()
    if index is None:  # the catalog changed after this snapshot was taken
        ranked = rank_scan(snapshot.documents, tokens, keep)
        return ranked if limit is None else ranked[:limit]
    return index.rank(tokens, keep, limit)


@dataclass(frozen=True)
class Shortlist:
    tokens: list[str]
    # The best matches, noise and excluded paths removed: the lexical top
    # LEXICAL_CANDIDATES, all that any list below needs.
    ranked: list[ScoredDocument]
    candidates: list[MemoryDocument]
    # The score of a document outside `ranked` (a recent candidate the model
    # chose) by the ranker that made `ranked`.
    score_outside: Callable[[MemoryDocument], int]

    @property
    def fast(self) -> list[ScoredDocument]:
        return self.ranked[:FAST_LIMIT]

    @property
    def fallback(self) -> list[ScoredDocument]:
        return self.ranked[:REFINED_LIMIT]

    def score_of(self, doc: MemoryDocument) -> int:
        """A document's score, also for one outside `ranked`, on the scale of `ranked`."""
        for scored in self.ranked:
            if scored.document.path == doc.path:
                return scored.score
        return self.score_outside(doc)


def interleave_candidates(
    lexical: Sequence[MemoryDocument], recent: Sequence[MemoryDocument]
) -> list[MemoryDocument]:
    """L[0], R[0], L[1], R[1], … then whatever is left of either."""
    out: list[MemoryDocument] = []
    for i in range(max(len(lexical), len(recent))):
        if i < len(lexical):
            out.append(lexical[i])
        if i < len(recent):
            out.append(recent[i])
    return out


@dataclass(frozen=True)
class RecallQuery:
    """One query against one snapshot: tokens and the keep-predicate built once.

    `top(2)` is cheap and comes first in a recall (the host is waiting for the
    fast phase); `shortlist()` adds the lexical top 180 and the recent others
    for the model.
    """

    snapshot: CorpusView
    tokens: list[str]
    keep: Keep
    ranker: Ranker

    @classmethod
    def build(
        cls,
        snapshot: CorpusView,
        query: str,
        *,
        recent_tools: Sequence[str] = (),
        exclude_paths: Collection[str] = (),
        ranker: Ranker = index_ranker,
        tokenizer: Callable[[str], list[str]] = query_tokens,
    ) -> RecallQuery:
        noise = NoiseFilter.from_recent_tools(recent_tools)
        excluded = frozenset(exclude_paths)

        def keep(doc: MemoryDocument) -> bool:
            return doc.path not in excluded and not noise.is_noise(doc)

        return cls(snapshot, tokenizer(query), keep, ranker)

    def top(self, limit: int) -> list[ScoredDocument]:
        if not self.tokens or not self.snapshot.documents:
            return []
        return self.ranker(self.snapshot, self.tokens, self.keep, limit)

    def shortlist(self) -> Shortlist:
        if not self.tokens or not self.snapshot.documents:
            return Shortlist(self.tokens, [], [], self.score_alone)
        ranked = self.top(LEXICAL_CANDIDATES)
        lexical = [s.document for s in ranked]
        in_lexical = {doc.path for doc in lexical}
        room = MAX_CANDIDATES - len(lexical)
        recent: list[MemoryDocument] = []
        if room > 0:
            for doc in self.snapshot.by_recency:
                if doc.path not in in_lexical and self.keep(doc):
                    recent.append(doc)
                    if len(recent) == room:
                        break
        return Shortlist(
            self.tokens, ranked, interleave_candidates(lexical, recent), self.score_alone
        )

    def score_alone(self, doc: MemoryDocument) -> int:
        """A document's score by this query's ranker, as the only document kept
        (0 when the ranker would not return it)."""
        if not self.tokens:
            return 0
        found = self.ranker(self.snapshot, self.tokens, lambda d: d.path == doc.path, 1)
        return found[0].score if found else 0


def build_shortlist(
    snapshot: CorpusView,
    query: str,
    *,
    recent_tools: Sequence[str] = (),
    exclude_paths: Collection[str] = (),
    ranker: Ranker = index_ranker,
    tokenizer: Callable[[str], list[str]] = query_tokens,
) -> Shortlist:
    return RecallQuery.build(
        snapshot,
        query,
        recent_tools=recent_tools,
        exclude_paths=exclude_paths,
        ranker=ranker,
        tokenizer=tokenizer,
    ).shortlist()
