"""The deterministic reference scorer of the reference scorer, exactly (docs/ranking.md).

A plain scan over every document: the published behaviour that every faster
ranker must reproduce (see `server.ranking.index`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from memory_recall.server.documents import MemoryDocument

TITLE_WEIGHT = 4
DESCRIPTION_WEIGHT = 3
BODY_WEIGHT = 1

# A query that names a memory's kind ("rule", "dashboard") leans toward that
# kind, but only a little and only once something else matched.
MAX_TYPE_BOOST = 2
TYPE_KEYWORDS: dict[str, frozenset[str]] = {
    "user": frozenset({"user", "preference", "preferences", "background", "role", "terse"}),
    "feedback": frozenset({"feedback", "rule", "rules", "avoid", "style", "summary"}),
    "project": frozenset({"project", "goal", "goals", "incident", "deadline", "release"}),
    "reference": frozenset({"reference", "dashboard", "ticket", "docs", "doc", "link"}),
}


@dataclass(frozen=True)
class ScoredDocument:
    document: MemoryDocument
    score: int


def lexical_score(doc: MemoryDocument, tokens: Iterable[str]) -> int:
    """Field-weighted substring matches of the query tokens, without the type boost."""
    score = 0
    for token in tokens:
        if token in doc.norm_title:
            score += TITLE_WEIGHT
        if token in doc.norm_description:
            score += DESCRIPTION_WEIGHT
        if token in doc.norm_body_window:
            score += BODY_WEIGHT
    return score


def type_boost(doc_type: str, tokens: Iterable[str]) -> int:
    keywords = TYPE_KEYWORDS.get(doc_type, frozenset())
    return min(MAX_TYPE_BOOST, sum(1 for token in tokens if token in keywords))


def score_document(doc: MemoryDocument, tokens: Sequence[str]) -> int:
    """The reference scorer's score: 0 without a lexical match, else lexical +
    type boost."""
    lexical = lexical_score(doc, tokens)
    if lexical == 0:
        return 0
    return lexical + type_boost(doc.type, tokens)


def order_key(scored: ScoredDocument) -> tuple[int, float]:
    """Score descending, then mtime descending; a stable sort keeps input order last."""
    return (-scored.score, -scored.document.mtime_ms)


def rank_scan(
    documents: Sequence[MemoryDocument],
    tokens: Sequence[str],
    keep: Callable[[MemoryDocument], bool] = lambda _doc: True,
) -> list[ScoredDocument]:
    """Score every kept document (in input order) and return the matches ranked.

    Never ranked by type; documents scoring 0 are never returned.
    """
    if not tokens:
        return []
    scored = []
    for doc in documents:
        if not keep(doc):
            continue
        score = score_document(doc, tokens)
        if score > 0:
            scored.append(ScoredDocument(doc, score))
    scored.sort(key=order_key)
    return scored
