"""Memory documents with front matter, for the organisation tests."""

from __future__ import annotations

import itertools

from memory_recall.server.documents import MemoryDocument, parse_memory
from memory_recall.server.roots import Scope

DAY_MS = 86_400_000.0
_ids = itertools.count()


def memory(
    title: str,
    body: str,
    *,
    description: str = "a description",
    type: str = "project",
    days: float = 0.0,
    front: dict[str, str] | None = None,
    name: str | None = None,
    scope: Scope = Scope.PROJECT,
    root: str = "/ws/.memory",
) -> MemoryDocument:
    """A parsed memory of `root`, written `days` days after the epoch (its mtime)."""
    keys = {"name": title, "description": description, "type": type, **(front or {})}
    text = "---\n" + "".join(f"{k}: {v}\n" for k, v in keys.items()) + "---\n" + body + "\n"
    rel = name or f"m{next(_ids):04d}.md"
    return parse_memory(
        text, path=f"{root}/{rel}", relative_path=rel, scope=scope, mtime_ms=days * DAY_MS
    )
