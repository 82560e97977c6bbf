"""The topic tree of a set of memories (docs/organisation.md `memory/tree`), placements cached.

Where each memory sits comes from `categories.py` (its `category:` front matter
when valid, else the rules); this module remembers each placement by path and
mtime, so a tree of thousands of memories is recomputed only for what changed.
"""

from __future__ import annotations

from collections.abc import Iterable

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.organise.categories import (
    CATEGORIES,
    CategoryDecision,
    CategoryPath,
    Tree,
    build_tree,
    explain_category,
)

_CACHE_LIMIT = 50_000  # placements kept; past it the cache starts again


class TopicTree:
    """Places memories on the tree, once per version of each file."""

    def __init__(self) -> None:
        self._placed: dict[tuple[str, float], CategoryDecision] = {}

    def place(self, doc: MemoryDocument) -> CategoryDecision:
        """Where `doc` sits, and why."""
        key = (doc.path, doc.mtime_ms)
        found = self._placed.get(key)
        if found is None:
            if len(self._placed) >= _CACHE_LIMIT:
                self._placed.clear()
            found = self._placed[key] = explain_category(
                type=doc.type,
                title=doc.title,
                description=doc.description,
                body=doc.body,
                declared=doc.meta("category"),
            )
        return found

    def tree(self, docs: Iterable[MemoryDocument]) -> Tree:
        """The tree of `docs`, members by path in the order given."""
        return build_tree((doc.path, self.place(doc).path) for doc in docs)


_ORDER = {
    slug: i
    for i, slug in enumerate(
        slug for cat in CATEGORIES for slug in (cat.slug, *(s.slug for s in cat.subcategories))
    )
}


def tree_order(path: CategoryPath) -> int:
    """The position of a place in docs/organisation.md's order (user preferences first)."""
    return _ORDER[path.slug]
