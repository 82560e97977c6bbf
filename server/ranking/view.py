"""What rankers read: an immutable view of the memories (documents, recency, index).

The catalog produces views; rankers, the shortlist and the recall service
consume them. Keeping this below the catalog is what lets rankers never
import the catalog.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.index import DocumentIndex
from memory_recall.server.ranking.postings import TermIndex


def input_order_key(doc: MemoryDocument) -> tuple[int, int, float, str]:
    """docs/memory-files.md tie order: project before user, then root order, mtime descending,
    path."""
    return (doc.scope.rank, doc.root_index, -doc.mtime_ms, doc.path)


@dataclass(frozen=True)
class CorpusView:
    """An immutable view of the memories that one recall works on.

    What rankers read (documents, recency order, index), so that no ranker
    ever sees the catalog that produces it.
    """

    documents: tuple[MemoryDocument, ...]  # input order
    by_recency: tuple[MemoryDocument, ...]  # mtime descending, then input order
    version: int = 0
    # The catalog's live index and its version when this snapshot was taken:
    # it answers for this snapshot only while the catalog has not changed.
    live_index: TermIndex | None = field(default=None, compare=False, repr=False)
    live_index_version: int = field(default=-1, compare=False, repr=False)

    @classmethod
    def of(cls, documents: Iterable[MemoryDocument], version: int = 0) -> CorpusView:
        ordered = tuple(sorted(documents, key=input_order_key))
        by_recency = tuple(sorted(ordered, key=lambda d: -d.mtime_ms))
        return cls(ordered, by_recency, version)

    def __len__(self) -> int:
        return len(self.documents)

    def index(self, kind: type[TermIndex] = DocumentIndex) -> TermIndex | None:
        """The index of exactly these documents, of the kind a ranker reads; None once
        the catalog has moved on.

        A snapshot made without a catalog (eval, tests), or whose catalog keeps
        another kind, indexes itself on first use, one index per kind.
        """
        live = self.live_index
        if live is not None and type(live) is kind:
            return live if live.version == self.live_index_version else None
        own = self._own_indexes.get(kind)
        if own is None:
            own = self._own_indexes[kind] = kind.of(self.documents)
        return own

    @cached_property
    def _own_indexes(self) -> dict[type[TermIndex], TermIndex]:
        return {}
