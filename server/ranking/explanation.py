"""A ranker's account of one document's score (`memory/explain`, docs/ranking.md): the addends
that make it up, per field and per term, so that they sum to the score the ranker
gives; and, for a ranker with a silence rule, how much of the query it covers.

Each ranker writes its own (`explain(snapshot, tokens, doc)`), from the same
quantities it ranks with, rather than an explainer re-deriving them.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ScorePart:
    field: str  # title, description, body, type, …
    term: str | None  # None for a part that belongs to no one term (the type boost)
    value: float
    detail: str | None = None


@dataclass(frozen=True)
class Coverage:
    """A silence rule seen from one document."""

    share: float  # of the query's content weight the document covers
    threshold: float  # what one of the best documents must cover
    silenced: bool  # the rule silenced the whole query
    detail: str | None = None


@dataclass(frozen=True)
class ScoreExplanation:
    score: int  # the ranker's score of the document (0: it would not return it)
    tokens: tuple[str, ...]  # the query's terms as the ranker scores them
    parts: tuple[ScorePart, ...] = ()
    coverage: Coverage | None = None
    notes: tuple[str, ...] = field(default=())
