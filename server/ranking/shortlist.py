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

from server.catalog import CatalogSnapshot
from server.documents import MemoryDocument
from server.ranking.index import index_ranker
from server.ranking.noise import NoiseFilter
from server.ranking.reference import ScoredDocument, rank_scan, score_document
from server.tokens import query_tokens

FAST_LIMIT = 2  # what fits a first prompt without crowding it
FALLBACK_LIMIT = 5  # the refined phase's budget, model or not
LEXICAL_CANDIDATES = 180  # lexical matches the model always sees
MAX_CANDIDATES = 200  # the manifest's size: bounded prompt cost for the selector

Keep = Callable[[MemoryDocument], bool]


class Ranker(Protocol):
    """Kept documents that match, best first; only the first `limit` when given."""

    def __call__(
        self,
        snapshot: CatalogSnapshot,
        tokens: Sequence[str],
        keep: Keep,
        limit: int | None = None,
    ) -> list[ScoredDocument]: ...


def reference_ranker(
    snapshot: CatalogSnapshot, tokens: Sequence[str], keep: Keep, limit: int | None = None
) -> list[ScoredDocument]:
    """SPEC §3's scan over every document."""
    ranked = rank_scan(snapshot.documents, tokens, keep)
    return ranked if limit is None else ranked[:limit]


@dataclass(frozen=True)
class Shortlist:
    tokens: list[str]
    # The best matches, noise and excluded paths removed: the lexical top
    # LEXICAL_CANDIDATES, all that any list below needs.
    ranked: list[ScoredDocument]
    candidates: list[MemoryDocument]

    @property
    def fast(self) -> list[ScoredDocument]:
        return self.ranked[:FAST_LIMIT]

    @property
    def fallback(self) -> list[ScoredDocument]:
        return self.ranked[:FALLBACK_LIMIT]

    def score_of(self, doc: MemoryDocument) -> int:
        """A document's SPEC §3 score, also for one outside `ranked` (a recent candidate)."""
        for scored in self.ranked:
            if scored.document.path == doc.path:
                return scored.score
        return score_document(doc, self.tokens)


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


def build_shortlist(
    snapshot: CatalogSnapshot,
    query: str,
    *,
    recent_tools: Sequence[str] = (),
    exclude_paths: Collection[str] = (),
    ranker: Ranker = index_ranker,
    tokenizer: Callable[[str], list[str]] = query_tokens,
) -> Shortlist:
    tokens = tokenizer(query)
    if not tokens or not snapshot.documents:
        return Shortlist(tokens, [], [])
    noise = NoiseFilter.from_recent_tools(recent_tools)
    excluded = frozenset(exclude_paths)

    def keep(doc: MemoryDocument) -> bool:
        return doc.path not in excluded and not noise.is_noise(doc)

    ranked = ranker(snapshot, tokens, keep, LEXICAL_CANDIDATES)
    lexical = [s.document for s in ranked[:LEXICAL_CANDIDATES]]
    in_lexical = {doc.path for doc in lexical}
    room = MAX_CANDIDATES - len(lexical)
    recent: list[MemoryDocument] = []
    if room > 0:
        for doc in snapshot.by_recency:
            if doc.path not in in_lexical and keep(doc):
                recent.append(doc)
                if len(recent) == room:
                    break
    return Shortlist(tokens, ranked, interleave_candidates(lexical, recent))
