"""Is a memory addressing the agent instead of stating a fact? (the gate's `injection` rule)

Memories are data, not instructions (docs/safety.md). The cue patterns live in
data/injection_patterns.txt (label, regex; by language). A poisoned memory hides
its words from a plain pattern match, so the text is read in four ways and a cue
in any of them fires:

1. as written, after NFKC and lowercase (fullwidth letters fold here);
2. its *skeleton*: each letter that looks like a Latin letter (Cyrillic а, Greek ο,
   …; the Unicode confusables table, packaged as confusable-homoglyphs) replaced by
   that letter, invisible characters (U+200B…, soft hyphens, bidi controls) dropped;
3. *squeezed*: the skeleton's letters only, so `i g n o r e`, `i.g.n.o.r.e` and
   `ig​nore` all read `ignore`; matched against the `squeezed` patterns only
   (written without spaces: a squeezed text has no word boundaries);
4. the hidden parts on their own: an HTML comment (`<!-- … -->`, invisible once
   rendered but read by a model) that speaks to the agent, and a heading that
   pretends to open a system or developer turn (`## System`).
"""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources

import regex
from memory_recall.server.tokens import normalize


@dataclass(frozen=True)
class Cue:
    label: str
    pattern: regex.Pattern[str]
    squeezed: bool  # matched against the letters-only text
    # Text every match begins with, one of these (lowercase): a text holding none of
    # them is not searched. Empty when the pattern's opening is not plain text.
    openings: tuple[str, ...] = ()

    def may_match(self, view: str) -> bool:
        return not self.openings or any(opening in view for opening in self.openings)


_METACHARS = frozenset("\\()[]{}|.*+?^$")


def _unescaped(pattern: str) -> Iterator[tuple[int, str]]:
    """Each character of a pattern that no backslash escapes, with where it stands."""
    i = 0
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        yield i, pattern[i]
        i += 1


def _alternatives(group: str) -> list[str] | None:
    """The top-level alternatives of a group's body, None if a bracket is unbalanced."""
    found, depth, start = [], 0, 0
    for i, char in _unescaped(group):
        if char in "([":
            depth += 1
        elif char in ")]":
            depth -= 1
        elif char == "|" and depth == 0:
            found.append(group[start:i])
            start = i + 1
    return None if depth else [*found, group[start:]]


def _literal_start(alternative: str) -> str:
    """The plain text an alternative surely begins with: its characters up to the first
    metacharacter, less the last one when a quantifier makes it optional (`takes?`)."""
    end = 0
    while end < len(alternative) and alternative[end] not in _METACHARS:
        end += 1
    if end < len(alternative) and alternative[end] in "?*{":
        end -= 1
    return alternative[:end]


def openings(pattern: str) -> tuple[str, ...]:
    """What every match of `pattern` begins with (`\\bignore…` → ("ignore",),
    `\\b(?:takes?\\s+precedence|overrides?)…` → ("take", "override")); () when that is not
    plain text. A prefilter: searching a text that holds none of them finds nothing."""
    branches = _alternatives(pattern.removeprefix("(?m)"))
    if not branches:
        return ()
    found: list[str] = []
    for branch in branches:
        starts = _branch_openings(branch.removeprefix("\\b"))
        if not starts:
            return ()
        found.extend(starts)
    return tuple(dict.fromkeys(found))


def _branch_openings(branch: str) -> list[str]:
    """What one top-level alternative of a pattern begins with (see `openings`)."""
    if branch.startswith("(?:"):
        depth, end = 0, None
        for i, char in _unescaped(branch):  # the group's closing bracket
            if char == "[":
                return []  # a class may hold a bracket: too clever to read, not filtered
            if char == "(":
                depth += 1
            elif char == ")":
                depth -= 1
                if depth == 0:
                    end = i
                    break
        if end is None or branch[end + 1 : end + 2] in ("?", "*", "{"):
            return []
        inner = _alternatives(branch[3:end]) or []
    else:
        inner = [branch]
    starts = [_literal_start(alternative).lower() for alternative in inner]
    return [] if not starts or any(len(start) < 2 for start in starts) else starts


def _data_lines(name: str) -> list[str]:
    text = resources.files(__package__).joinpath(f"data/{name}").read_text("utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


@cache
def cues() -> tuple[Cue, ...]:
    found = []
    for line in _data_lines("injection_patterns.txt"):
        label, pattern = line.split("\t", 1)
        squeezed = label.startswith("squeezed:")
        compiled = regex.compile(pattern, regex.IGNORECASE)
        found.append(Cue(label.removeprefix("squeezed:"), compiled, squeezed, openings(pattern)))
    return tuple(found)


# Characters that render as nothing (or only reorder text) and so hide a word's letters.
_INVISIBLE = regex.compile(r"[\p{Cf}\u00ad\u034f\u115f\u1160\u3164\uffa0]")


@cache
def _latin_look_alikes() -> dict[int, str]:
    """Each non-ASCII letter whose confusable is one ASCII letter, mapped to that letter."""
    try:
        data = json.loads(
            resources.files("confusable_homoglyphs").joinpath("confusables.json").read_text("utf-8")
        )
    except (ModuleNotFoundError, FileNotFoundError, ValueError):
        return {}
    table: dict[int, str] = {}
    for char, entries in data.items():
        if len(char) != 1 or char.isascii() or not char.isalpha():
            continue
        for entry in entries:
            glyph = entry.get("c", "")
            if len(glyph) == 1 and glyph.isascii() and glyph.isalpha():
                table[ord(char)] = glyph.lower()
                break
    return table


def skeleton(text: str) -> str:
    """`text` lowercased with look-alike letters as the Latin ones and invisibles dropped."""
    folded = unicodedata.normalize("NFKC", _INVISIBLE.sub("", text)).lower()
    return folded.translate(_latin_look_alikes())


_NOT_LETTER = regex.compile(r"[^\p{L}]+")


def squeeze(text: str) -> str:
    """The letters of `text` only (its skeleton), nothing between them."""
    return _NOT_LETTER.sub("", skeleton(text))


_HTML_COMMENT = regex.compile(r"<!--(.*?)(?:-->|$)", regex.S)
# Words by which a hidden comment speaks to the agent rather than annotating the note.
_ADDRESSES_AGENT = regex.compile(
    r"\b(?:you|your|assistant|agent|ai|llm|model|claude|codex|gemini|copilot|system|"
    r"instructions?|prompt|always|never|must|du|sie|vous|tu|usted|ты|вы)\b|你|あなた|당신",
    regex.IGNORECASE,
)


def hidden_comment(text: str) -> bool:
    """Whether an HTML comment in `text` speaks to the agent."""
    return any(_ADDRESSES_AGENT.search(skeleton(m.group(1))) for m in _HTML_COMMENT.finditer(text))


def find_injection(text: str) -> str | None:
    """The label of the first injection cue in `text` (e.g. `override-instructions`), or None."""
    if hidden_comment(text):
        return "hidden-comment"
    folded, looks = normalize(text), skeleton(text)
    views = (folded,) if looks == folded else (folded, looks)  # alike: most texts, read once
    squeezed = squeeze(text)
    for cue in cues():
        if cue.squeezed:
            if cue.may_match(squeezed) and cue.pattern.search(squeezed):
                return cue.label
        elif any(cue.may_match(view) and cue.pattern.search(view) for view in views):
            return cue.label
    return None
