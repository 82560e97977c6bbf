"""Two machines changed one memory: the merged memory, decided by the write side's rules,
never by text alone (docs/sync.md, "Merging").

A memory is read as front matter (key by key) and a body of statements (its lines, and
the sentences within a line). Against the last version both machines had (the base):

- what only one machine changed is taken as it changed it;
- statements both changed in the same place are put to the judge (judge.py): the same
  fact restated or the same slot with another value → the newer machine's text; two
  different facts → both, the older first; an edit against a deletion → the edit;
- front matter: a key only one side changed takes that change; both changed it →
  lists (`related`, `supersedes`) are joined, `updated` takes the later date,
  `created` the earlier, anything else the newer side's value;
- when the judge cannot tell for some statement, the memory is not merged: the newer
  version keeps the path, the older is kept beside it as a memory of its own, and the
  two are linked (`related`), for consolidation — or the user — to settle.

Two memories created on two machines under the same file name (no base) are judged as
wholes: the same fact or the same slot → the newer; different facts → both, under two
names; unsure → both, linked. A memory deleted on one machine and edited on the other
keeps the edit. Nothing here writes a conflict marker: the result is always memories.

"Newer" is the time of the last commit that changed the memory on each side (the time
of the journal operation that made it); equal times fall back to the content's hash, so
that any machine merging the same histories reaches the same result.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass, field

import regex
from memory_recall.server.documents import InvalidMemory
from memory_recall.server.store.memory_file import MemoryFile
from memory_recall.server.sync.judge import Statement, StatementJudge

LIST_KEYS = frozenset({"related", "supersedes", "maybesupersedes"})
LINK_KEY = "related"

# A statement ends at a line's end, or after a sentence's end mark followed by a space
# (CJK full stops need none).
_UNIT = regex.compile(r"[^\n]*?(?:[.!?](?=\s)|[。！？])\s*|[^\n]*\n|[^\n]+$")


@dataclass(frozen=True)
class Version:
    """One machine's version of a memory: its bytes (None: absent) and when it was made."""

    data: bytes | None
    when: float  # seconds since the epoch
    machine: str = ""

    def newer_than(self, other: Version) -> bool:
        if self.when != other.when:
            return self.when > other.when
        return (self.data or b"") > (other.data or b"")  # a tie decided by content alone


@dataclass
class Outcome:
    """The merge of one memory: `data` at its path (None: removed), and when both versions
    stay as two memories, `beside` for the older one's new file."""

    data: bytes | None
    reasons: list[str] = field(default_factory=list)
    beside: bytes | None = None  # the older version, to be written under a free name
    linked: bool = False  # `data` and `beside` name each other in `related`

    @property
    def split(self) -> bool:
        return self.beside is not None


class _Unsure(Exception):
    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def units(body: str) -> list[str]:
    """A body as statements whose concatenation is the body, exactly."""
    return [m.group() for m in _UNIT.finditer(body) if m.group()]


def _parse(data: bytes) -> MemoryFile | None:
    try:
        return MemoryFile.parse(data.decode("utf-8"))
    except (UnicodeDecodeError, InvalidMemory):
        return None


def _title(memory: MemoryFile) -> str:
    return memory.get("name") or memory.get("title") or memory.get("type") or ""


def _statement(memory: MemoryFile, text: str) -> Statement:
    # A statement is judged on its own words: its title is itself, so that two statements
    # of one memory do not count as "the same subject" merely by sharing its title.
    return Statement(title=text.strip(), text=text.strip(), type=memory.get("type") or "project")


def _whole(memory: MemoryFile) -> Statement:
    return Statement(
        title=_title(memory),
        text=memory.body,
        type=memory.get("type") or "project",
        description=memory.get("description") or "",
    )


# -- the whole memory ------------------------------------------------------------------------


def merge_memory(
    base: bytes | None, ours: Version, theirs: Version, judge: StatementJudge
) -> Outcome:
    """One memory both sides changed since `base` (None: both created it)."""
    if ours.data == theirs.data:
        return Outcome(ours.data)
    newer, older = (ours, theirs) if ours.newer_than(theirs) else (theirs, ours)
    if ours.data is None or theirs.data is None:
        kept = theirs if ours.data is None else ours
        gone = ours if kept is theirs else theirs
        return Outcome(
            kept.data,
            [f"edited on {kept.machine or 'one machine'} while removed on "
             f"{gone.machine or 'the other'}: the edit is kept"],
        )  # fmt: skip
    assert newer.data is not None and older.data is not None
    new_file, old_file = _parse(newer.data), _parse(older.data)
    if new_file is None or old_file is None:
        return _both(newer, older, "not a memory file the rules can read", link=False)
    if base is None:
        return _created_twice(newer, older, new_file, old_file, judge)
    base_file = _parse(base)
    if base_file is None:
        return _both(newer, older, "the earlier version was not a memory file", link=False)
    try:
        body, body_reasons = merge_body(base_file, new_file, old_file, judge)
    except _Unsure as unsure:
        return _both(newer, older, unsure.reason, link=True)
    frame = _frame(new_file, old_file, newer, older, body)
    reasons = _merge_front_matter(base_file, frame, new_file, old_file)
    if frame.body != body:
        frame.set_body(body)
    merged = frame.render().encode("utf-8")
    return Outcome(merged, [*body_reasons, *reasons])


def _frame(
    new_file: MemoryFile, old_file: MemoryFile, newer: Version, older: Version, body: str
) -> MemoryFile:
    """The version the merged file is built on: the one whose body is the merged body (so
    its text stays byte for byte), else the newer."""
    source = older if old_file.body == body and new_file.body != body else newer
    assert source.data is not None
    parsed = _parse(source.data)
    assert parsed is not None
    return parsed


def _created_twice(
    newer: Version,
    older: Version,
    new_file: MemoryFile,
    old_file: MemoryFile,
    judge: StatementJudge,
) -> Outcome:
    judged = judge.relate(_whole(new_file), _whole(old_file))
    if judged.relation in ("restated", "same-slot"):
        what = "the same fact" if judged.relation == "restated" else "the same slot"
        return Outcome(
            newer.data,
            [f"created on both machines, {what} ({judged.reason}): the newer "
             f"({newer.machine or 'one machine'}) is kept; the other stays in the history"],
        )  # fmt: skip
    if judged.relation == "different":
        return _both(newer, older, f"two different memories under one name ({judged.reason})",
                     link=False)  # fmt: skip
    return _both(newer, older, judged.reason, link=True)


def _both(newer: Version, older: Version, reason: str, *, link: bool) -> Outcome:
    assert newer.data is not None
    how = "kept both, linked" if link else "kept both"
    return Outcome(
        newer.data,
        [f"{reason}: {how}; {older.machine or 'the other machine'}'s version is a memory too"],
        beside=older.data,
        linked=link,
    )


# -- the body ---------------------------------------------------------------------------------


@dataclass
class _Hunk:
    start: int  # in the base's statements
    end: int
    text: list[str]  # what the side put there
    side: int  # 0 newer, 1 older


def _hunks(base: list[str], side: list[str], which: int) -> list[_Hunk]:
    matcher = difflib.SequenceMatcher(None, base, side, autojunk=False)
    return [
        _Hunk(i1, i2, side[j1:j2], which)
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _overlap(a: _Hunk, b: _Hunk) -> bool:
    if a.start == a.end and b.start == b.end:
        return a.start == b.start  # two insertions at one place
    return a.start < b.end and b.start < a.end


def merge_body(
    base: MemoryFile, newer: MemoryFile, older: MemoryFile, judge: StatementJudge
) -> tuple[str, list[str]]:
    """The merged body and why; raises _Unsure when the judge cannot tell for a statement
    both sides changed."""
    if newer.body == older.body:
        return newer.body, []
    if older.body == base.body:
        return newer.body, []
    if newer.body == base.body:
        return older.body, []
    base_units = units(_terminated(base.body))
    hunks = sorted(
        _hunks(base_units, units(_terminated(newer.body)), 0)
        + _hunks(base_units, units(_terminated(older.body)), 1),
        key=lambda h: (h.start, h.end, h.side),
    )
    groups: list[list[_Hunk]] = []
    for hunk in hunks:
        if groups and any(_overlap(hunk, other) for other in groups[-1]):
            groups[-1].append(hunk)
        else:
            groups.append([hunk])
    out: list[str] = []
    reasons: list[str] = []
    at = 0
    for group in groups:
        start = min(h.start for h in group)
        end = max(h.end for h in group)
        out += base_units[at:start]
        sides = {h.side for h in group}
        if len(sides) == 1:
            out += _apply(base_units, start, end, group)
        else:
            new_text = _apply(base_units, start, end, [h for h in group if h.side == 0])
            old_text = _apply(base_units, start, end, [h for h in group if h.side == 1])
            chosen, why = _resolve(newer, new_text, old_text, judge)
            out += chosen
            if why:
                reasons.append(why)
        at = end
    out += base_units[at:]
    return "".join(out).strip(), reasons


def _terminated(body: str) -> str:
    return body if body.endswith("\n") else body + "\n"


def _apply(base: list[str], start: int, end: int, hunks: Sequence[_Hunk]) -> list[str]:
    """One side's statements for base[start:end], with its hunks (which do not overlap
    each other: one side's diff) applied."""
    out: list[str] = []
    at = start
    for hunk in sorted(hunks, key=lambda h: (h.start, h.end)):
        out += base[at : hunk.start]
        out += hunk.text
        at = hunk.end
    out += base[at:end]
    return out


def _resolve(
    newer: MemoryFile, new_text: list[str], old_text: list[str], judge: StatementJudge
) -> tuple[list[str], str | None]:
    """Both sides changed the same statements: the rules decide."""
    new_words, old_words = "".join(new_text).strip(), "".join(old_text).strip()
    if new_words == old_words:
        return new_text, None
    if not old_words:
        return new_text, "a statement removed on one machine and edited on the other: kept"
    if not new_words:
        return old_text, "a statement removed on one machine and edited on the other: kept"
    judged = judge.relate(_statement(newer, new_words), _statement(newer, old_words))
    short = _short(new_words)
    if judged.relation == "restated":
        return new_text, f"“{short}”: the same fact reworded on both machines; the newer wording"
    if judged.relation == "same-slot":
        return new_text, f"“{short}”: the same slot changed on both machines; the newer value wins"
    if judged.relation == "different":
        joined = list(old_text)
        if joined and not joined[-1].endswith(("\n", " ")):
            joined[-1] += "\n"
        return joined + new_text, f"“{short}”: different facts in one place; both kept"
    raise _Unsure(f"“{short}” was changed on both machines and the rules are not sure how")


def _short(text: str, limit: int = 60) -> str:
    one = " ".join(text.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


# -- front matter -----------------------------------------------------------------------------


def _merge_front_matter(
    base: MemoryFile, frame: MemoryFile, newer: MemoryFile, older: MemoryFile
) -> list[str]:
    """Set `frame`'s keys to the merged values; the reasons for keys both sides changed."""
    reasons = []
    keys = list(dict.fromkeys([*newer.keys(), *older.keys(), *base.keys()]))
    for key in keys:
        b, n, o = base.get(key), newer.get(key), older.get(key)
        if key in LIST_KEYS:
            bl, nl, ol = base.get_list(key), newer.get_list(key), older.get_list(key)
            if nl == ol:
                wanted: list[str] | None = nl
            elif ol == bl:
                wanted = nl
            elif nl == bl:
                wanted = ol
            else:
                wanted = list(dict.fromkeys([*nl, *ol]))
            if wanted != frame.get_list(key):
                frame.set(key, wanted or None)
            continue
        if n == o or o == b:
            value = n
        elif n == b:
            value = o
        elif key == "updated":
            value = max(v for v in (n, o) if v is not None)
        elif key == "created":
            value = min(v for v in (n, o) if v is not None)
        else:
            value = n
            reasons.append(f"`{key}` changed on both machines: the newer value")
        if value != frame.get(key):
            _copy_key(frame, key, newer if value == n else older)
    return reasons


def _copy_key(frame: MemoryFile, key: str, source: MemoryFile) -> None:
    """`key` in `frame` as `source` writes it (its lines verbatim), or removed."""
    found = next((b for b in source.blocks if b.key == key), None)
    if found is None:
        frame.set(key, None)
        return
    mine = next((b for b in frame.blocks if b.key == key), None)
    if mine is not None:
        mine.lines = list(found.lines)
    else:
        frame.blocks.append(type(found)(key, list(found.lines)))


def link(data: bytes, other: str) -> bytes:
    """A memory file with `other` (a path in its root) added to its `related` list."""
    memory = _parse(data)
    if memory is None:
        return data
    related = memory.get_list(LINK_KEY)
    if other in related:
        return data
    memory.set(LINK_KEY, [*related, other])
    return memory.render().encode("utf-8")
