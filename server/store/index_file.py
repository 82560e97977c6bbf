"""`MEMORY.md`, the one-line-per-memory index of a writable root (docs/writing.md).

An *index line* is `- [Title](relative/path.md) — description` pointing at a
file inside the root (Claude Code and qwen-code write the same lines). Index
lines are the daemon's to keep true: rewritten in place when their memory
changes, removed when it is gone, one per memory, new ones added after the
last. Every other line — headings, notes, links elsewhere — is the user's,
kept where it is, never counted out. A memory whose title or description reads as
orders to an AI is listed by its file alone (agents load this file unquoted).

The file is capped (default 200 lines: what Claude Code loads). When the
memories do not fit beside the user's lines, the least important ones (not
pinned, least recently changed) are left out and *reported* — in the
operation's result and in `memory/status` — never dropped in silence.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import os
import posixpath
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from urllib.parse import unquote

import regex
from memory_recall.server.documents import INDEX_FILE_NAME
from memory_recall.server.store.injection import find_injection
from memory_recall.server.store.lines import plain_line

DEFAULT_INDEX_CAP = 200  # lines; Claude Code reads the first 200 lines of MEMORY.md

_INDEX_LINE = regex.compile(
    r"^\s*[-*+]\s+\[(?P<title>(?:\\.|[^\]\\\n])*)\]\((?P<target><[^>\n]+>|[^)\s]+)\)(?P<rest>.*)$"
)


_PLAIN_TARGET = regex.compile(r"[^\s()<>]+")

# How many left-out memories a report names (the count is always exact).
OMITTED_SAMPLE = 50
# Every write reads MEMORY.md's lines and renders each listed memory's line again (up to
# the cap, 200 by default, per root): at 10,000 memories that was 9 ms of a remember's
# 16 ms in MEMORY.md. Both are pure, and between two writes almost every line is the
# same, so they are remembered (a few roots' worth of lines).
_REMEMBERED_LINES = 4096


@dataclass(frozen=True)
class IndexPlan:
    text: str
    omitted: list[str]  # the first OMITTED_SAMPLE left out, by path
    omitted_count: int
    listed: int


@dataclass(frozen=True)
class IndexEntry:
    """A memory as its index line shows it, and how much it matters when room is short."""

    path: str  # inside the root
    title: str
    description: str
    pinned: bool = False
    changed_ms: float = 0.0
    # Older memories this one perhaps corrects (`maybeSupersedes`: the writer's lean, not
    # settled): both are listed, and agents that load this file as it is see which.
    corrects: tuple[str, ...] = ()

    @property
    def priority(self) -> tuple[bool, float]:
        return (self.pinned, self.changed_ms)


@dataclass
class IndexReport:
    """What maintaining one root's MEMORY.md did."""

    path: str
    lines: int
    cap: int
    listed: int
    omitted: list[str] = field(default_factory=list)  # memories without a line (a sample)
    omitted_count: int = 0
    changed: bool = False
    problem: str | None = None  # why the file could not be rewritten, when it could not


@functools.lru_cache(maxsize=_REMEMBERED_LINES)
def render_line(entry: IndexEntry) -> str:
    target = entry.path if _PLAIN_TARGET.fullmatch(entry.path) else f"<{entry.path}>"
    cue = find_injection(f"{entry.title}\n{entry.description}")
    if cue is not None:
        # Agents load MEMORY.md into every session as it is, unquoted: a title or a
        # description that reads as orders to an AI (a file written by hand, forced, or
        # merged) is named by its file only, and the user sees why.
        return (
            f"- [A note that reads as orders to an AI ({cue}); open the file to read it]({target})"
        )
    title = " ".join(plain_line(entry.title).split()).replace("\\", "\\\\")
    title = title.replace("[", "\\[").replace("]", "\\]")
    description = " ".join(plain_line(entry.description).split())
    line = f"- [{title}]({target})" + (f" — {description}" if description else "")
    if entry.corrects:
        line += f" (perhaps corrects {', '.join(plain_line(p) for p in entry.corrects)})"
    return line


@functools.lru_cache(maxsize=_REMEMBERED_LINES)
def index_target(line: str) -> str | None:
    """The root-relative memory path an index line points at, or None for any other line."""
    match = _INDEX_LINE.match(line)
    if match is None:
        return None
    target = match.group("target")
    if target.startswith("<"):
        target = target[1:-1]
    target = unquote(target.split("#", 1)[0])
    if "://" in target or target.startswith(("/", "mailto:")) or not target.endswith(".md"):
        return None
    normalized = posixpath.normpath(target.removeprefix("./"))
    if normalized.startswith("../") or normalized == "..":
        return None
    return normalized


class Amended(MutableMapping[str, IndexEntry]):
    """A root's index entries with one operation's changes over them, as a copy of them
    changed in place would be (the same order: changed entries in place, new ones and
    ones removed then added again last), without the copy: copying 100,000 entries was a
    few milliseconds of every remember."""

    def __init__(self, base: Mapping[str, IndexEntry]) -> None:
        self._base = base
        self._changed: dict[str, IndexEntry] = {}
        self._moved: set[str] = set()  # of base: removed, or removed and added again
        self._added: dict[str, None] = {}  # in the order they were added
        self._length = len(base)

    def __getitem__(self, path: str) -> IndexEntry:
        if path in self._changed:
            return self._changed[path]
        if path in self._moved:
            raise KeyError(path)
        return self._base[path]

    def __contains__(self, path: object) -> bool:
        return path in self._changed or (path not in self._moved and path in self._base)

    def __setitem__(self, path: str, entry: IndexEntry) -> None:
        if path not in self:
            if path in self._base:
                self._moved.add(path)
            self._added[path] = None
            self._length += 1
        self._changed[path] = entry

    def __delitem__(self, path: str) -> None:
        if path not in self:
            raise KeyError(path)
        self._changed.pop(path, None)
        self._added.pop(path, None)
        if path in self._base:
            self._moved.add(path)
        self._length -= 1

    def __iter__(self) -> Iterator[str]:
        moved = self._moved
        for path in self._base:
            if path not in moved:
                yield path
        yield from self._added

    def __len__(self) -> int:
        return self._length


def plan_index(
    text: str,
    entries: Mapping[str, IndexEntry],
    *,
    exists: Callable[[str], bool],
    changed_ms: Callable[[str], float],
    gone: frozenset[str] = frozenset(),
    cap: int = DEFAULT_INDEX_CAP,
    fresh: Collection[str] | None = None,
) -> IndexPlan:
    """The new text of MEMORY.md, and what it lists and leaves out.

    `entries`: the memories the caller knows, by path; an index line for a file
    it does not know that still exists is kept as it is (another process
    wrote that memory); `gone`: paths this operation removed. `fresh`: the
    paths this operation wrote — then the lines already in the file are taken
    to be the most important memories (every write keeps them so) and only
    these compete with them, instead of ranking every memory of the root.
    """

    def line_of(entry: IndexEntry) -> str:
        if entry.corrects:  # only what is still there: a forgotten memory corrects nothing
            still = tuple(
                p for p in entry.corrects if p not in gone and (p in entries or exists(p))
            )
            entry = replace(entry, corrects=still)
        return render_line(entry)

    lines = text.splitlines()
    kept: list[tuple[str, str | None]] = []  # (line, memory path or None for the user's)
    listed: set[str] = set()
    for line in lines:
        target = index_target(line)
        if target is None:
            kept.append((line, None))
            continue
        if target in listed:
            continue  # one line per memory
        if target in entries:
            kept.append((line_of(entries[target]), target))
        elif target not in gone and exists(target):
            kept.append((line, target))
        else:
            continue  # its memory is gone
        listed.add(target)

    def priority(path: str) -> tuple[bool, float, str]:
        entry = entries.get(path)
        pinned, changed = entry.priority if entry else (False, changed_ms(path))
        return (pinned, changed, path)

    user_lines = sum(1 for _, path in kept if path is None)
    room = max(0, cap - user_lines)
    listed_paths = [path for _, path in kept if path is not None]
    unlisted_count = len(entries) - sum(1 for path in listed_paths if path in entries)
    total = len(listed_paths) + unlisted_count
    omitted: set[str] | frozenset[str] = frozenset()
    omitted_sample: list[str] = []
    if total <= room:
        new = [entries[p] for p in entries if p not in listed]
    else:
        if fresh is None:
            pool = listed_paths + [p for p in entries if p not in listed]
        else:
            pool = listed_paths + [p for p in fresh if p in entries and p not in listed]
            if len(pool) < room:  # room left by removals: the best of the rest fill it
                taken = set(pool)
                rest = [p for p in entries if p not in taken]
                pool += heapq.nlargest(room - len(pool), rest, key=priority)
        chosen = set(heapq.nlargest(room, pool, key=priority))
        omitted = set(listed_paths) - chosen
        new = [entries[p] for p in chosen if p not in listed]
        # The count is exact; the sample is the first left out, without a pass over all.
        left_out = _unique(p for p in itertools.chain(listed_paths, entries) if p not in chosen)
        omitted_sample = sorted(itertools.islice(left_out, OMITTED_SAMPLE))
    new.sort(key=lambda e: (not e.pinned, -e.changed_ms, e.path))
    out: list[str] = []
    last_index = None
    for line, path in kept:
        if path is None or path not in omitted:
            if path is not None:
                last_index = len(out)
            out.append(line)
    additions = [line_of(e) for e in new]
    if additions:
        if last_index is None:
            at = len(out)  # below the user's text
            while at and not out[at - 1].strip():
                at -= 1  # above its trailing blank lines
        else:
            at = last_index + 1
        out[at:at] = additions
    new_text = "\n".join(out) + "\n" if out else ""
    listed_now = len(listed_paths) - len(omitted) + len(new)
    return IndexPlan(new_text, omitted_sample, total - listed_now, listed_now)


def _unique(paths: Iterable[str]) -> Iterator[str]:
    seen: set[str] = set()
    for path in paths:
        if path not in seen:
            seen.add(path)
            yield path


def index_path(root: Path) -> Path:
    return root / INDEX_FILE_NAME


def file_changed_ms(root: Path) -> Callable[[str], float]:
    def changed(path: str) -> float:
        try:
            return os.stat(root / path).st_mtime_ns / 1e6
        except OSError:
            return 0.0

    return changed
