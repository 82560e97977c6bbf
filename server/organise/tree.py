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

# Placements kept, one per path (the newest version of each file): past it the cache starts
# again. Above any corpus served: a cap below the corpus's size made every pass over it
# (the status figures) place every memory again.
_CACHE_LIMIT = 1_000_000


class TopicTree:
    """Places memories on the tree, once per version of each file."""

    def __init__(self) -> None:
        self._placed: dict[str, tuple[float, CategoryDecision]] = {}

    def place(self, doc: MemoryDocument) -> CategoryDecision:
        """Where `doc` sits, and why."""
        kept = self._placed.get(doc.path)
        if kept is not None and kept[0] == doc.mtime_ms:
            return kept[1]
        if len(self._placed) >= _CACHE_LIMIT:
            self._placed.clear()
        found = explain_category(
            type=doc.type,
            title=doc.title,
            description=doc.description,
            body=doc.body,
            declared=doc.meta("category"),
        )
        self._placed[doc.path] = (doc.mtime_ms, found)
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
