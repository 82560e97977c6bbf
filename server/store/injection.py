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
from typing import NamedTuple

import regex
from memory_recall.server.tokens import CJK_CHAR, normalize


@dataclass(frozen=True)
class Cue:
    label: str
    pattern: regex.Pattern[str]
    squeezed: bool  # matched against the letters-only text
    # Text every match begins with, one of these (lowercase): a text holding none of
    # them is not searched. Empty when the pattern's opening is not plain text.
    openings: tuple[str, ...] = ()
    # Those of `openings` a match holds as a whole word (`\bsi\s+…`): a text holds one
    # when it is one of the text's words, not when it is inside one ("si" in "since").
    words: frozenset[str] = frozenset()


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


def _literal_start(alternative: str) -> tuple[str, int]:
    """The plain text an alternative surely begins with: its characters up to the first
    metacharacter (an escaped punctuation mark, `\\.`, is its character), less the last
    one when a quantifier makes it optional (`takes?`); and where in `alternative` the
    rest of the pattern after that text begins."""
    chars: list[str] = []
    ends: list[int] = []  # where each character's writing ends
    end = 0
    while end < len(alternative):
        char = alternative[end]
        if char == "\\" and end + 1 < len(alternative) and _escaped_literal(alternative[end + 1]):
            chars.append(alternative[end + 1])
            end += 2
        elif char in _METACHARS:
            break
        else:
            chars.append(char)
            end += 1
        ends.append(end)
    if chars and end < len(alternative) and alternative[end] in "?*{":
        chars.pop()
        ends.pop()
    return "".join(chars), ends[-1] if ends else 0


def _escaped_literal(char: str) -> bool:
    """Whether a backslash before `char` makes it the character itself (`\\.`, `\\-`),
    not a class or an anchor (`\\s`, `\\b`, `\\d`)."""
    return not char.isalnum() and char != "_"


# What may follow a whole word's last letter in a pattern: a space, a word boundary, a
# character that is no word's (`,`, `'`, a space written as itself).
_WORD_ENDS = ("\\s", "\\b", "\\W", "\\n")
_WORD = regex.compile(r"\w+")


def _ends_a_word(follower: str) -> bool:
    """Whether a match surely has no letter or digit where `follower` (the rest of a
    pattern after a literal) begins."""
    if follower.startswith(_WORD_ENDS):
        return True
    head = follower[:1]
    return bool(head) and head not in _METACHARS and not _WORD.match(head)


def openings(pattern: str) -> tuple[str, ...]:
    """What every match of `pattern` begins with (`\\bignore…` → ("ignore",),
    `\\b(?:takes?\\s+precedence|overrides?)…` → ("take", "override")); () when that is not
    plain text. A prefilter: searching a text that holds none of them finds nothing."""
    return tuple(dict.fromkeys(start for start, _whole in _openings(pattern)))


def whole_words(pattern: str) -> frozenset[str]:
    """Those of `pattern`'s openings every match holds as a word of its own: the pattern
    opens at a word boundary and the opening is letters followed by no letter
    (`\\b(?:cuando|si)\\s+…` → {"cuando", "si"}); a text that does not have one as a word
    does not match, though "si" is inside "since"."""
    pairs = _openings(pattern)
    partial = {start for start, whole in pairs if not whole}
    return frozenset(start for start, whole in pairs if whole and start not in partial)


def _openings(pattern: str) -> list[tuple[str, bool]]:
    """Each opening of `pattern` (see `openings`) and whether it is a whole word."""
    branches = _alternatives(pattern.removeprefix("(?m)"))
    if not branches:
        return []
    found: list[tuple[str, bool]] = []
    for branch in branches:
        bounded = branch.startswith("\\b")
        starts = _branch_openings(branch.removeprefix("\\b"))
        if not starts:
            return []
        found.extend(
            (start, bounded and _WORD.fullmatch(start) is not None and _ends_a_word(follower))
            for start, follower in starts
        )
    return found


def _branch_openings(branch: str) -> list[tuple[str, str]]:
    """What one top-level alternative of a pattern begins with (see `openings`), each with
    the pattern that follows it."""
    after = ""
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
        after = branch[end + 1 :]
    else:
        inner = [branch]
    starts = []
    for alternative in inner:
        start, rest = _literal_start(alternative)
        if not _says_enough(start):
            return []
        starts.append((start.lower(), alternative[rest:] if rest < len(alternative) else after))
    return starts


def _says_enough(start: str) -> bool:
    """Whether an opening is rare enough to filter by: two characters, or one of a script
    written without spaces ("别": every text in another script is passed over)."""
    return len(start) >= 2 or (len(start) == 1 and CJK_CHAR.match(start) is not None)


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
        found.append(
            Cue(
                label.removeprefix("squeezed:"),
                compiled,
                squeezed,
                openings(pattern),
                frozenset() if squeezed else whole_words(pattern),
            )
        )
    return tuple(found)


class _Index(NamedTuple):
    """Which cues a text may match, by the openings it holds: read once for all the cues."""

    inside: dict[str, tuple[int, ...]]  # an opening looked for anywhere → its cues
    words: dict[str, tuple[int, ...]]  # an opening looked for as a word → its cues
    squeezed: dict[str, tuple[int, ...]]  # a squeezed cue's, in the letters-only text
    always: tuple[int, ...]  # the cues with no openings: searched in every text


@cache
def _index() -> _Index:
    inside: dict[str, list[int]] = {}
    words: dict[str, list[int]] = {}
    squeezed: dict[str, list[int]] = {}
    always: list[int] = []
    for i, cue in enumerate(cues()):
        if not cue.openings:
            always.append(i)
        for opening in cue.openings:
            where = squeezed if cue.squeezed else words if opening in cue.words else inside
            where.setdefault(opening, []).append(i)

    def frozen(found: dict[str, list[int]]) -> dict[str, tuple[int, ...]]:
        return {opening: tuple(cues) for opening, cues in found.items()}

    return _Index(frozen(inside), frozen(words), frozen(squeezed), tuple(always))


def _may_match(view: str, squeezed: bool = False) -> set[int]:
    """The cues (their places in `cues()`) that may match in `view`, one reading of a text
    (the letters-only one for the squeezed cues): those whose openings it holds, and those
    with none. A cue of the other kind may be among them; it is skipped by the caller."""
    index = _index()
    found = set(index.always)
    for opening, cues_of in (index.squeezed if squeezed else index.inside).items():
        if opening in view:
            found.update(cues_of)
    if not squeezed:
        for word in index.words.keys() & set(_WORD.findall(view)):
            found.update(index.words[word])
    return found


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
    squeezed = _NOT_LETTER.sub("", looks)  # squeeze(text), its skeleton made once
    readings = [(view, _may_match(view)) for view in views]
    in_squeezed = _may_match(squeezed, squeezed=True)
    every = cues()
    for i in sorted(in_squeezed.union(*(may for _view, may in readings))):
        cue = every[i]
        if cue.squeezed:
            if i in in_squeezed and cue.pattern.search(squeezed):
                return cue.label
        elif any(i in may and cue.pattern.search(view) for view, may in readings):
            return cue.label
    return None
