"""The deterministic merge of duplicate memories: every distinct line kept (docs/organisation.md).

Duplicates say the same thing in other words, but each may carry a line the
others lack (a command, an exception, a name). The merge keeps the newest
memory's body as it is and appends, in order, every line of the older ones
that it does not already have. Two lines are the same when they read the same
once normalized (Unicode NFKC, case, spacing, list markers, end punctuation):
`- Run tests with make test.` and `* run tests with  make test` are one line.
Blank lines are not lines to keep; the appended block is set off by one.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex
from memory_recall.server.tokens import normalize

_MARKER = regex.compile(r"^\s*(?:[-*+•·]|\d{1,3}[.)]|\[[ xX]\])\s+")
_END = regex.compile(r"[\s.,;:!?。、．，；：！？]+$")
_SPACE = regex.compile(r"\s+")


def line_key(line: str) -> str:
    """A line as compared for sameness: no list marker, normalized, spacing folded."""
    text = _MARKER.sub("", line)
    return _END.sub("", _SPACE.sub(" ", normalize(text)).strip())


@dataclass(frozen=True)
class Merged:
    body: str
    added: tuple[str, ...]  # the lines taken from the older memories, in order


def merge_bodies(newest: str, older: Sequence[str]) -> Merged:
    """`newest` with every line of `older` (newest first) that it lacks appended."""
    seen = {line_key(line) for line in newest.splitlines()}
    seen.discard("")
    added: list[str] = []
    for body in older:
        for line in body.splitlines():
            key = line_key(line)
            if key and key not in seen:
                seen.add(key)
                added.append(line.rstrip())
    if not added:
        return Merged(newest, ())
    head = newest.rstrip()
    merged = "\n".join(added) if not head else head + "\n\n" + "\n".join(added)
    return Merged(merged, tuple(added))


def covers(body: str, other: str) -> bool:
    """Whether every line of `other` is already in `body` (nothing would be lost)."""
    have = {line_key(line) for line in body.splitlines()}
    return all(line_key(line) in have for line in other.splitlines() if line_key(line))
