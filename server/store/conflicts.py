"""Conflict detection between a new memory and an existing one: the store's view of the
zero-loss rule (docs/writing.md).

A pure service over `server/facts/` (statements, slots, the judgement): two texts in, a
verdict out. What the writer does with a verdict:

- `duplicate`, `decided`: the old memory already says it; the write is `unchanged` and
  the old file's `updated` date is refreshed;
- `update`, `decided`: the same slot with another value; only the changed statements of
  the old file are rewritten (facts/rewrite.py), `supersedes` is recorded;
- anything else — `independent`, or a duplicate or update the rules are not sure of
  (`decided=False`) — creates the new memory; an undecided duplicate or update is
  linked to the old one (`related`, `maybeSupersedes`) so consolidation can settle it.

Candidates come from the warm index of the same root: the new memory's best lexical
matches plus every memory whose normalized title equals the new one's (`same_title`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

import regex
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.facts.judgement import (
    Judgement,
    holds_more,
)
from memory_recall.server.facts.judgement import MemoryText as FactText
from memory_recall.server.facts.judgement import judge as judge_facts
from memory_recall.server.facts.terms import read_terms
from memory_recall.server.tokens import normalize

VerdictKind = Literal["duplicate", "update", "independent"]
# The front-matter key of a new memory that may replace older ones (an update the rules
# could not settle), as written; a parsed memory's keys are lowercase
# (facts.newer.MAYBE_SUPERSEDES_KEY): consolidation, newer-wins and the index read it so.
MAYBE_SUPERSEDES = "maybeSupersedes"
# A second memory the new fact updates is archived with the first only when this close to
# it (the conflict rules' duplicate threshold): a false `update` then costs an undo, not a
# fact.
ALSO_REPLACED_SIMILARITY = 0.6
# Which candidate wins in `decide`: knowing the fact already beats replacing one.
PRECEDENCE: dict[VerdictKind, int] = {"duplicate": 0, "update": 1, "independent": 2}


class MemoryText(FactText):
    """The parts of a memory the judge reads."""

    @classmethod
    def of(cls, document: MemoryDocument) -> MemoryText:
        return cls(document.title, document.description, document.body, document.type)


@dataclass(frozen=True)
class Verdict:
    """How a new memory relates to an old one, and why (`reason` is for logs and the journal)."""

    kind: VerdictKind
    reason: str
    similarity: float  # Dice coefficient of the two memories' terms, 0..1
    decided: bool = True  # False: the rules are unsure; the write creates and links
    judgement: Judgement | None = field(default=None, compare=False)

    @property
    def acts(self) -> bool:
        """Whether the writer may act on it: a decided duplicate or update."""
        return self.decided and self.kind != "independent"

    @property
    def links(self) -> bool:
        """Whether the new memory is linked to the old one for consolidation to settle."""
        return not self.decided and self.kind != "independent"


def of_judgement(judgement: Judgement) -> Verdict:
    return Verdict(
        judgement.kind, judgement.reason, judgement.similarity, judgement.sure, judgement
    )


def judge(new: FactText, old: FactText) -> Verdict:
    """How `new` relates to `old`, an existing memory of the same root."""
    return of_judgement(judge_facts(_plain(new), _plain(old)))


def _plain(memory: FactText) -> FactText:
    # One cache key for a memory whatever subclass carries it.
    if type(memory) is FactText:
        return memory
    return FactText(memory.title, memory.description, memory.body, memory.type)


def decide(new: FactText, candidates: Sequence[tuple[str, FactText]]) -> tuple[str | None, Verdict]:
    """Judge `new` against each candidate; the winner's id and its verdict.

    Only decided verdicts win (duplicate before update, then the higher similarity);
    when none does the id is None (the new memory is created) and the verdict is the
    closest candidate's, for the log.
    """
    winner: str | None = None
    best = Verdict("independent", "no candidate", 0.0)
    for candidate_id, old in candidates:
        verdict = judge(new, old)
        rank = (not verdict.acts, PRECEDENCE[verdict.kind], -verdict.similarity)
        if rank < (not best.acts, PRECEDENCE[best.kind], -best.similarity):
            best = verdict
            winner = candidate_id if verdict.acts else None
    return winner, best


def told_apart(
    title: str, judged: list[tuple[MemoryDocument, Verdict]]
) -> list[tuple[MemoryDocument, Verdict]]:
    """`judged`, with its sure updates made unsure when the new memory updates two
    memories as surely and does not say which it means: "The owner is now Bob." beside the
    billing service's "The owner is Alice." and the search service's "The owner is
    Carol." Writing the first found would be a coin toss over a fact; both stay, linked
    as perhaps corrected (docs/writing.md, "Which memory a correction means"). Not when
    the other is the same fact stated the old way (the writer archives it too), nor when
    the new memory's `title` names the first and not the other."""
    updates = [
        (doc, verdict)
        for doc, verdict in judged
        if verdict.acts and verdict.kind == "update"
        and verdict.similarity < ALSO_REPLACED_SIMILARITY
    ]  # fmt: skip
    if not judged or judged[0][1].kind != "update" or len(updates) < 2:
        return judged
    named = title_key(title)
    if title_key(judged[0][0].title) == named and all(
        title_key(doc.title) != named for doc, _v in updates[1:]
    ):
        return judged
    unsure = {doc.path for doc, _v in updates}
    reason = "another memory is updated as surely, and the new one does not say which it means"
    return [
        (
            doc,
            replace(v, decided=False, reason=f"{v.reason}; {reason}") if doc.path in unsure else v,
        )
        for doc, v in judged
    ]


def says_all_of(new: FactText, old: FactText, verdict: Verdict) -> bool:
    """Whether `new` says all that `old` does but the statements `verdict` (of `new`
    against `old`) changes (`holds_more`): only such an old memory may be put away as
    superseded."""
    return verdict.judgement is not None and not holds_more(
        _plain(old), _plain(new), verdict.judgement
    )


# -- Titles ------------------------------------------------------------------------

_NON_WORD = regex.compile(r"[^\p{L}\p{M}\p{N}]+")


def title_key(title: str) -> str:
    """A title as compared for equality: normalized, punctuation and spacing folded."""
    return _NON_WORD.sub(" ", normalize(title)).strip()


def same_title(a: str, b: str) -> bool:
    """Whether two titles are the same once normalized (case, width, punctuation)."""
    return title_key(a) == title_key(b)


def subject_key(text: str) -> str:
    """The terms of a title (or any short text), sorted: word order and function words
    do not count (`Node version` and `Version of Node` share a key)."""
    return " ".join(sorted(set(read_terms(text).keys)))
