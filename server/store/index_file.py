"""`MEMORY.md`, the one-line-per-memory index of a writable root (SPEC §7).

An *index line* is `- [Title](relative/path.md) — description` pointing at a
file inside the root (Claude Code and qwen-code write the same lines). Index
lines are the daemon's to keep true: rewritten in place when their memory
changes, removed when it is gone, one per memory, new ones added after the
last. Every other line — headings, notes, links elsewhere — is the user's,
kept where it is, never counted out.

The file is capped (default 200 lines: what Claude Code loads). When the
memories do not fit beside the user's lines, the least important ones (not
pinned, least recently changed) are left out and *reported* — in the
operation's result and in `memory/status` — never dropped in silence.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import regex
from memory_recall.server.documents import INDEX_FILE_NAME

DEFAULT_INDEX_CAP = 200  # lines; Claude Code reads the first 200 lines of MEMORY.md

_INDEX_LINE = regex.compile(
    r"^\s*[-*+]\s+\[(?P<title>(?:\\.|[^\]\\\n])*)\]\((?P<target><[^>\n]+>|[^)\s]+)\)(?P<rest>.*)$"
)


@dataclass(frozen=True)
class IndexEntry:
    """A memory as its index line shows it, and how much it matters when room is short."""

    path: str  # inside the root
    title: str
    description: str
    pinned: bool = False
    changed_ms: float = 0.0

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
    omitted: list[str] = field(default_factory=list)  # memories without a line, by path
    changed: bool = False
    problem: str | None = None  # why the file could not be rewritten, when it could not


def render_line(entry: IndexEntry) -> str:
    title = " ".join(entry.title.split()).replace("\\", "\\\\")
    title = title.replace("[", "\\[").replace("]", "\\]")
    target = entry.path if regex.fullmatch(r"[^\s()<>]+", entry.path) else f"<{entry.path}>"
    description = " ".join(entry.description.split())
    return f"- [{title}]({target})" + (f" — {description}" if description else "")


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


def plan_index(
    text: str,
    entries: Mapping[str, IndexEntry],
    *,
    exists: Callable[[str], bool],
    changed_ms: Callable[[str], float],
    gone: frozenset[str] = frozenset(),
    cap: int = DEFAULT_INDEX_CAP,
) -> tuple[str, list[str], int]:
    """The new text of MEMORY.md, the memories left out, and how many are listed.

    `entries`: the memories the caller knows, by path; an index line for a file
    it does not know that still exists is kept as it is (another process
    wrote that memory); `gone`: paths this operation removed.
    """
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
            kept.append((render_line(entries[target]), target))
        elif target not in gone and exists(target):
            kept.append((line, target))
        else:
            continue  # its memory is gone
        listed.add(target)
    new = [entries[p] for p in entries if p not in listed]
    new.sort(key=lambda e: (not e.pinned, -e.changed_ms, e.path))

    def priority(path: str) -> tuple[bool, float]:
        entry = entries.get(path)
        return entry.priority if entry else (False, changed_ms(path))

    user_lines = sum(1 for _, path in kept if path is None)
    room = max(0, cap - user_lines)
    memories = [path for _, path in kept if path is not None] + [e.path for e in new]
    omitted: set[str] = set()
    if len(memories) > room:
        by_importance = sorted(memories, key=lambda p: (priority(p), p), reverse=True)
        omitted = set(by_importance[room:])
    out = [line for line, path in kept if path is None or path not in omitted]
    additions = [render_line(e) for e in new if e.path not in omitted]
    if additions:
        last_index = max(
            (i for i, line in enumerate(out) if index_target(line) is not None), default=None
        )
        if last_index is None:
            at = len(out)  # below the user's text
            while at and not out[at - 1].strip():
                at -= 1  # above its trailing blank lines
        else:
            at = last_index + 1
        out[at:at] = additions
    new_text = "\n".join(out) + "\n" if out else ""
    return new_text, sorted(omitted), len(memories) - len(omitted)


def index_path(root: Path) -> Path:
    return root / INDEX_FILE_NAME


def file_changed_ms(root: Path) -> Callable[[str], float]:
    def changed(path: str) -> float:
        try:
            return os.stat(root / path).st_mtime_ns / 1e6
        except OSError:
            return 0.0

    return changed
