"""A fact's reason and use: the lines Claude Code writes under a memory's fact ("**Why:**
…", "**How to apply:** …"), and their kin in other languages (`rationale` in
data/cues.txt).

Such a line says something of the fact above it, not a fact of its own. Two notes of one
fact each give their own reason, and read as statements the two reasons were compared as
two facts: "a word changed" between "**Why:** it was agreed in the retro" and "**Why:**
the user asked for it" made every correction between two such notes a lean (never
applied) and every two notes of different things perhaps one thing's update. So `judge`
reads a new note's facts without its reason lines — against the old note's facts without
theirs, and as written when that relates nothing — and gives them their place after
(judgement.py, `_with_reasons`): each replaces the old note's line of the same label, or
is added at its end.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass

import regex
from memory_recall.server.facts.lexicon import lexicon
from memory_recall.server.facts.statements import Statement, says_something, split_statements

_WORDS = regex.compile(r"[\p{L}\p{N}]+")


@dataclass(frozen=True)
class ReasonLine:
    """A line of a body that gives its fact's reason or use."""

    label: str  # normalised, as `Statement.label` ("why", "how to apply")
    line: int  # which line of the body
    # What the line says after its label, as one statement: its span in the body.
    said: Statement
    whole: str  # the line as written, its markup and label included


@functools.lru_cache(maxsize=1024)
def reason_lines(body: str) -> tuple[ReasonLine, ...]:
    """The lines of `body` that open with a reason's or a use's label, in order. Kept: a
    remember judges its new note against each of its candidates."""
    words = lexicon()
    by_line: dict[int, list[Statement]] = {}
    for statement in split_statements(body, words.discourse):
        by_line.setdefault(statement.line, []).append(statement)
    lines = body.split("\n")
    out = []
    for number, statements in by_line.items():
        first, last = statements[0], statements[-1]
        if first.label not in words.rationale or first.heading:
            continue
        said = Statement(first.start, last.end, body[first.start : last.end], number, first.label)
        out.append(ReasonLine(first.label, number, said, lines[number]))
    return tuple(out)


def blanked(body: str, reasons: Sequence[ReasonLine]) -> str | None:
    """`body` with its reason lines blanked (spaces: every other statement keeps its place
    in it, which the rewrite's spans are), or None when that would leave nothing said or
    move what is left (a reason on the first line)."""
    dropped = {r.line for r in reasons}
    if 0 in dropped:
        return None
    lines = body.split("\n")
    kept = [" " * len(line) if n in dropped else line for n, line in enumerate(lines)]
    out = "\n".join(kept)
    return out if says_something(out) else None


def said_alike(a: str, b: str) -> bool:
    """Whether two reasons say the same words (case and punctuation aside)."""
    return _WORDS.findall(a.casefold()) == _WORDS.findall(b.casefold())
