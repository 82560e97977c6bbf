"""What a ranker says about its best memories for one query: the figures the fast
phase's confidence is computed from (docs/ranking.md, "Confidence and silence").

A ranker fills these from the quantities it ranked with; nothing here reads a
document or an index, so the confidence model stays independent of how a ranker
works inside.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class DocEvidence:
    """One ranked memory seen from the query."""

    score: int
    # Share of the query's content weight (IDF mass) the memory covers, as the
    # ranker's silence rule counts it (0..1; a body-only or inside-a-word match
    # covers part of its term).
    coverage: float
    # Share of the query's content weight found in its title or description: the
    # fields that say what a memory is about agree with the body.
    summary: float
    # Distinct content terms of the query it holds, whatever their weight.
    terms: int
    # Whether it is about one of the query's rarest words (title or description).
    anchor: bool = False
    # Share of the query's content weight that one stretch of a few sentences holds
    # (with the title and description): the terms of an answer stand together.
    proximity: float = 0.0
    # The query's content terms it holds, over the distinct terms of what it would deliver
    # (title, description, passage): a memory that matches a question by the few of its
    # many words that happen to be the question's — a keyword list — is unfocused.
    focus: float = 0.0
    # Share of the query's content weight left once the memory's title and description
    # have spoken (the attribute asked about, when they name the subject) that its body
    # holds: 1.0 when the summary holds the whole query, 0.0 when the memory is only
    # about the subject ("Anna's phone number" beside a note about Anna).
    rest: float = 1.0
    # Share of the query's scored words (IDF-free; a CJK pair or Thai trigram counts as
    # the part of a word it is) the memory does not hold, words no memory holds included.
    unheld: float = 0.0
    # 1.0 when the question asks for a number or a time that nothing the memory would
    # deliver holds (`values.py`); 0.0 otherwise.
    valueless: float = 0.0
    # The same for a contact asked for (a phone number, an e-mail address).
    contactless: float = 0.0


@dataclass(frozen=True)
class QueryEvidence:
    """The query's side: how much of it any memory could answer, and the field."""

    content_terms: int  # content terms the query has (function words left out)
    # Share of the query's content weight in words no memory holds: a question
    # about something the memories never mention.
    lack: float
    matched: int  # memories matching at least one term
    corpus: int  # memories in the index
    # The best scores of the ranking, best first (up to FIELD_DEPTH): the field a
    # memory's score stands out from.
    scores: tuple[int, ...]
    docs: tuple[DocEvidence, ...] = field(default=())  # the memories asked about, in order
    # Share of the query's scored words (IDF-free, as `DocEvidence.unheld`) that no memory
    # holds: `lack` leaves out the CJK pairs and trigrams found nowhere, this counts them.
    unfound: float = 0.0

    def with_docs(self, docs: tuple[DocEvidence, ...]) -> QueryEvidence:
        return QueryEvidence(
            self.content_terms,
            self.lack,
            self.matched,
            self.corpus,
            self.scores,
            docs,
            self.unfound,
        )


FIELD_DEPTH = 5  # scores kept of the field: the fast phase's 2 and the refined phase's 5
