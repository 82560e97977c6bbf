"""Always-loaded memories (docs/organisation.md `memory/context`): what every session starts with.

The memories marked `always: true` — communication style, standing rules — go
into one prompt block within a character budget. Order: scope (project, then
team, then user: the nearer rule first), then the topic tree's order (user
preferences, project, conventions, lessons, tools), then path, so the block is
the same from one session to the next. A memory that does not fit is skipped
(a smaller one after it may still fit) and listed, never silently dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.organise.categories import CategoryPath
from memory_recall.server.organise.tree import tree_order

# About a thousand tokens for what every prompt carries (docs/organisation.md).
DEFAULT_BUDGET_CHARS = 4000
HEADING = "## Always-loaded memory"


@dataclass(frozen=True)
class Omitted:
    """An always-loaded memory that did not fit, and its size."""

    doc: MemoryDocument
    chars: int  # its section's size
    reason: str


@dataclass(frozen=True)
class Context:
    prompt: str
    docs: tuple[MemoryDocument, ...]
    omitted: tuple[Omitted, ...]
    budget_chars: int
    used_chars: int


def section(doc: MemoryDocument) -> str:
    """One memory's part of the block: its title and path, description and whole body."""
    parts = [f"### {doc.title} ({doc.relative_path})"]
    if doc.description:
        parts.append(doc.description)
    if doc.body:
        parts.append(doc.body)
    return "\n\n".join(parts)


def build_context(
    docs: Iterable[MemoryDocument],
    *,
    budget_chars: int = DEFAULT_BUDGET_CHARS,
    place: Callable[[MemoryDocument], CategoryPath],
) -> Context:
    """The always-loaded block of `docs` (only those with `always: true` are read)."""
    always = sorted(
        (d for d in docs if d.flag("always")),
        key=lambda d: (d.scope.rank, tree_order(place(d)), d.path),
    )
    separator = "\n\n"
    used = len(HEADING) + 1  # the heading and the final newline
    chosen: list[MemoryDocument] = []
    sections: list[str] = []
    omitted: list[Omitted] = []
    for doc in always:
        text = section(doc)
        cost = len(separator) + len(text)
        if used + cost <= budget_chars:
            chosen.append(doc)
            sections.append(text)
            used += cost
            continue
        left = max(0, budget_chars - used)
        reason = (
            f"{cost} characters, larger than the whole budget of {budget_chars}"
            if cost + len(HEADING) + 1 > budget_chars
            else f"{cost} characters; {left} left of the {budget_chars}-character budget"
        )
        omitted.append(Omitted(doc, cost, reason))
    prompt = separator.join([HEADING, *sections]) + "\n" if chosen else ""
    return Context(prompt, tuple(chosen), tuple(omitted), budget_chars, len(prompt))
