"""How two versions of a statement relate: the write side's judgement, behind one small
interface so that a better judge plugs in without touching the merge (docs/sync.md).

The merge asks one question of two texts that two machines wrote in the same place of
one memory: do they state the same fact, the same slot with another value, different
facts, or can the rules not tell? The answer decides the merge exactly as it decides a
`remember` on one machine (docs/writing.md):

- `restated`   (a sure duplicate): one fact, two wordings → the newer wording stays;
- `same-slot`  (a sure update): one slot, two values → the newer value wins; the other
  version stays in the history and the journal;
- `different`  (independent): two facts → both are kept;
- `unsure`     (a duplicate or update the rules are not sure of) → both versions are
  kept, as two memories linked to each other (`related`), for consolidation to settle.

`RulesJudge` asks the store's conflict rules (`store/conflicts.judge`), reading only
what every version of them gives: the verdict's `kind` and whether it is `decided`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from memory_recall.server.store import conflicts

Relation = Literal["restated", "same-slot", "different", "unsure"]


@dataclass(frozen=True)
class Statement:
    """What a machine wrote: the memory's title and type, and the text in question."""

    title: str
    text: str
    type: str = "project"
    description: str = ""


@dataclass(frozen=True)
class Judged:
    relation: Relation
    reason: str


class StatementJudge(Protocol):
    """Anything that can tell how a newer statement relates to an older one."""

    def relate(self, newer: Statement, older: Statement) -> Judged: ...


class RulesJudge:
    """The write side's deterministic rules (store/conflicts.py)."""

    def relate(self, newer: Statement, older: Statement) -> Judged:
        verdict = conflicts.judge(_text(newer), _text(older))
        if verdict.kind == "independent":
            return Judged("different", verdict.reason)
        if not verdict.decided:
            return Judged("unsure", f"the rules are not sure ({verdict.reason})")
        if verdict.kind == "duplicate":
            return Judged("restated", verdict.reason)
        return Judged("same-slot", verdict.reason)


def _text(statement: Statement) -> conflicts.MemoryText:
    return conflicts.MemoryText(
        statement.title, statement.description, statement.text, statement.type
    )
