"""A memory's body as statements: the sentences (and list items, and labelled lines) that
each state one fact, with where they lie in the body (docs/writing.md, "Statements").

An update rewrites statements, never the whole body: every character outside the spans
of the statements it replaces stays as it was. So the split keeps offsets into the body
and leaves markup out of the spans: a list item's `- `, a heading's `#`, a quote's `>`
stay where they are, and so does a label such as Claude Code's `**Why:**`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

import regex

# Markup that opens a line and is not part of what the line states.
_LINE_MARKUP = regex.compile(
    r"[ \t]*(?:#{1,6}[ \t]+|>[ \t]*|[-*+•][ \t]+(?:\[[ xX]\][ \t]+)?|\d{1,3}[.)][ \t]+"
    # an emoji or a symbol that marks the line ("⚠️ …", "✅ …", "→ …")
    r"|[\p{Extended_Pictographic}\p{So}→⇒][\uFE0F\u200D\p{Extended_Pictographic}\p{So}]*[ \t]+)*"
)
# A date that opens a line as its stamp, when it was written or happened: "2026-12-07:
# …", "[2026-12-07] …", "**07.12.2026** — …" (a journal's way, and many agents'). Said of
# the whole line, not a value of its fact: read as one, every note of a dated journal
# changed a value of the one before it.
_DATE = (
    r"(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[./]\d{1,2}[./]\d{4})"
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2})?(?:[ ]?(?:UTC|Z))?)?"
)
# A label may carry the day it was written, as a journal's "UPDATE (2026-12-07): …" or
# "Update 2026-12-07: …": that date is the line's stamp (`Statement.stamp`), no value of
# what it says.
_DATED_LABEL = rf"[ \t]*(?:[(\[](?P<dated>{_DATE})[)\]]|(?P<dated>{_DATE}))"
# A label that opens a line: `**Why:**`, `How to apply:`, `**Pourquoi :**`, `TL;DR:`, `注意：`
# (a full-width colon needs no space after it: "メモ：…").
_COLON = r"(?:[:：](?:\*\*|__)?[ \t]+|：(?:\*\*|__)?)"
_LABEL = regex.compile(
    rf"(?:\*\*|__)?(?P<label>[\p{{L}}][\p{{L}}\p{{M}} '’;-]{{0,30}}?)"
    rf"(?:{_DATED_LABEL})?[ \t]*{_COLON}"
    r"|\*\*(?P<label2>[\p{L}][\p{L}\p{M} '’-]{0,30}?)[ \t]*(?:\*\*)[ \t]*(?:[:：][ \t]+|：)"
)
# Words a label has at most: a longer run before a colon is a sentence ("Note that the
# API: …"), not a label.
LABEL_WORDS = 4
# Where a sentence ends: . ! ? before a space or the line's end (not inside 3.11 or
# a URL), the CJK stops, and a semicolon between two clauses ("Node 18; .nvmrc pins
# 18.19" states two facts).
_SENTENCE_END = regex.compile(
    r"(?<!\b(?:e\.g|i\.e|etc|vs|cf|z\.B|bzw|ca|approx|incl|usw|p\.ex|d\.h|u\.a|Nr|No|St))"
    r"[.!?;]+(?=[ \t]|$)|[。！？；]+"
)
_STAMP = regex.compile(
    rf"(?:\*\*|__)?[\[(]?(?P<date>{_DATE})[\])]?(?:\*\*|__)?"
    r"(?:[ \t]*[:：](?:\*\*|__)?[ \t]*|[ \t]+[-–—][ \t]+|(?<=[\])])[ \t]+)"
    # ... or a few words and a date set off by a comma: since when the line holds ("As of
    # 2026-12-07, …", "Ab 07.12.2026, …").
    rf"|(?:\p{{L}}+[ \t]+){{1,3}}(?P<date>{_DATE})[ \t]*[,，][ \t]*"
)
# A line said in italics or bold as a whole ("_Le week-end, l'astreinte …_"): the marks
# are markup, not part of its first and last words.
_WRAPPED = regex.compile(r"(\*\*|__|\*|_)(?=\S)(.*\S)\1[ \t]*$")
_DATE_HINT = regex.compile(r"\d{4}[-/.]\d|\d[./]\d{1,2}[./]\d{4}")  # a date may be here
_STAMP_WITHIN = 64  # a stamp's date opens a line: within its first characters
_RULE = regex.compile(r"[-=*_~]{3,}")  # a Markdown rule line
_SAYS_SOMETHING = regex.compile(r"[\p{L}\p{N}]")


def says_something(text: str) -> bool:
    """Whether `text` holds a letter or a digit (a line of marks and spaces says nothing)."""
    return _SAYS_SOMETHING.search(text) is not None


@dataclass(frozen=True)
class Statement:
    """One sentence of a body: its text and where it lies."""

    start: int  # offsets into the body: body[start:end] == text
    end: int
    text: str
    line: int  # which line of the body (0-based)
    label: str = ""  # a label the line opens with, normalized ("why", "how to apply")
    # A heading ("# Staging", "Staging environment:" over a list): it names what the lines
    # under it are about and states nothing of its own, so no update replaces it.
    heading: bool = False
    # The date stamp its line opens with ("2026-12-07: …"; "" when none) and where it
    # lies in the body: left out of the statement, put in place of the old one's when
    # an update replaces the statement (facts/rewrite.py).
    stamp: str = ""
    stamp_at: int = -1

    @property
    def span(self) -> tuple[int, int]:
        return self.start, self.end


def _label(line: str) -> tuple[str, int, str, int]:
    """The label a line (markup removed) opens with, where the statement after it starts,
    and a date the label carries and where it starts ("", -1 when none: "UPDATE
    (2026-12-07): …")."""
    match = _LABEL.match(line)
    if match is None:
        return "", 0, "", -1
    label = (match.group("label") or match.group("label2") or "").strip()
    if not label or len(label.split()) > LABEL_WORDS:
        return "", 0, "", -1
    dated = match.group("dated") or ""
    return label.lower(), match.end(), dated, match.start("dated") if dated else -1


@functools.cache
def _opener(discourse: frozenset[str]) -> regex.Pattern[str]:
    """A label that says how to read the line, set off by a comma ("Heads up, …")."""
    ordered = sorted(discourse, key=len, reverse=True)
    words = "|".join(map(regex.escape, ordered))
    # "Please remember that …", "Recuerda que …": a clause follows, no comma needed.
    asking = "|".join(regex.escape(w) for w in ordered if w.endswith(_THAT)) or "(?!)"
    # The comma after the bold or inside it ("**Heads up**, …", "**Heads up,** …").
    return regex.compile(
        rf"(?:\*\*|__)?(?:{words})(?:(?:\*\*|__)?[ \t]*[,，]|[ \t]*[,，](?:\*\*|__))[ \t]+"
        rf"|(?:{asking})[ \t]+",
        regex.IGNORECASE,
    )


_THAT = (" that", " que", " dass", " che", " dat")


def split_statements(body: str, discourse: frozenset[str] = frozenset()) -> list[Statement]:
    """The statements of `body`, in order; blank lines, rules and fences state nothing.
    `discourse`: labels that say how to read a line, not what it is about ("note", "fyi":
    `discourse` in data/cues.txt), left out of the statement with their colon or comma; so
    is a date stamp opening a line (`Statement.stamp`)."""
    return list(iter_statements(body, discourse))


def iter_statements(body: str, discourse: frozenset[str] = frozenset()) -> Iterator[Statement]:
    """`split_statements`, one at a time: a reader that stops early splits no more (most
    of the judge's reading of a long memory it shares little with)."""
    offset = 0
    in_fence = False
    for number, line in enumerate(body.split("\n")):
        start_of_line = offset
        offset += len(line) + 1
        stripped = line.strip()
        if stripped.startswith("```") or stripped.startswith("~~~"):
            in_fence = not in_fence
            continue
        if in_fence or not stripped or _RULE.fullmatch(stripped):
            continue
        markup = _LINE_MARKUP.match(line)
        at = markup.end() if markup else 0
        bound = len(line)
        wrapped = _WRAPPED.match(line, at) if line[at : at + 1] in ("*", "_") else None
        if wrapped and wrapped.group(1) not in wrapped.group(2):
            at, bound = wrapped.start(2), wrapped.end(2)
        stamp, stamp_at = "", -1
        near = _DATE_HINT.search(line, at, at + _STAMP_WITHIN)
        dated = _STAMP.match(line, at) if near else None
        if dated and _SAYS_SOMETHING.search(line, dated.end()):
            stamp, stamp_at = dated.group("date"), start_of_line + dated.start("date")
            at = dated.end()
        label, skip, dated, dated_at = _label(line[at:])
        if dated and not stamp:
            stamp, stamp_at = dated, start_of_line + at + dated_at
        if label in discourse:
            label = ""  # "Note: …", "FYI: …": how to read the line, said of nothing
        elif not label and discourse and (opener := _opener(discourse).match(line, at)):
            skip = opener.end() - at  # "Heads up, …", "FYI, …"
        pieces = _sentences(line, at + skip, bound)
        # A line of markup "#", or one sentence alone on its line ending with a colon.
        heading = "#" in line[:at] or (len(pieces) == 1 and stripped.endswith((":", "：")))
        first = True
        for piece_start, piece_end in pieces:
            text = line[piece_start:piece_end]
            yield Statement(
                start_of_line + piece_start,
                start_of_line + piece_end,
                text,
                number,
                label if first else "",
                heading,
                stamp if first else "",
                stamp_at if first else -1,
            )
            first = False


def _sentences(line: str, start: int, bound: int) -> list[tuple[int, int]]:
    """Spans of the sentences of `line` from `start` up to `bound`, each without
    surrounding spaces."""
    spans = []
    at = start
    for match in _SENTENCE_END.finditer(line, start, bound):
        end = match.end() if match.group()[0] not in ";；" else match.start()
        spans.append((at, end))
        at = match.end()
    spans.append((at, bound))
    out = []
    for a, b in spans:
        while a < b and line[a] in " \t":
            a += 1
        while b > a and line[b - 1] in " \t":
            b -= 1
        if a < b and _SAYS_SOMETHING.search(line, a, b):
            out.append((a, b))
    return out
