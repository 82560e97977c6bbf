"""The organisation services of one session, over the memories the catalog holds.

What the daemon's handlers and the command line call: the topic tree, the
always-loaded context, the stale memories and the consolidation plans of the
configured roots. It owns the caches that make them cheap to ask again (the
tree's placements, the staleness checker's parsed citations) and the settings
(`organise.capacity`, `context.budgetChars`). It knows memories and roots,
never the wire.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.organise.categories import Tree
from memory_recall.server.organise.consolidate import ConsolidationPlan, plan_root
from memory_recall.server.organise.context import DEFAULT_BUDGET_CHARS, Context, build_context
from memory_recall.server.organise.retention import DEFAULT_CAPACITY, UsageStats
from memory_recall.server.organise.staleness import Stale, StalenessChecker
from memory_recall.server.organise.tree import TopicTree
from memory_recall.server.roots import MemoryRoot

# path → statistics, for the memories the state store knows (docs/network.md); until
# feedback exists the source answers with nothing and retention falls back.
UsageSource = Callable[[Sequence[str]], Mapping[str, UsageStats]]


def no_usage(_paths: Sequence[str]) -> Mapping[str, UsageStats]:
    return {}


@dataclass(frozen=True)
class OrganiseSettings:
    capacity: int = DEFAULT_CAPACITY
    budget_chars: int = DEFAULT_BUDGET_CHARS


class Organiser:
    """Tree, context, staleness and consolidation plans for one set of roots."""

    def __init__(
        self,
        roots: Sequence[MemoryRoot],
        *,
        workspace: str | None,
        settings: OrganiseSettings | None = None,
        usage: UsageSource = no_usage,
        staleness: StalenessChecker | None = None,
    ) -> None:
        self.roots = list(roots)
        self.settings = settings or OrganiseSettings()
        self.topics = TopicTree()
        self.staleness = staleness or StalenessChecker(workspace)
        self.usage = usage

    def in_scope(self, docs: Sequence[MemoryDocument], scope: str | None) -> list[MemoryDocument]:
        return [d for d in docs if scope is None or d.scope.value == scope]

    def tree(self, docs: Sequence[MemoryDocument], scope: str | None = None) -> Tree:
        return self.topics.tree(self.in_scope(docs, scope))

    def context(self, docs: Sequence[MemoryDocument], budget_chars: int | None = None) -> Context:
        return build_context(
            docs,
            budget_chars=budget_chars or self.settings.budget_chars,
            place=lambda d: self.topics.place(d).path,
        )

    def stale(self, docs: Iterable[MemoryDocument]) -> list[tuple[MemoryDocument, Stale]]:
        return self.staleness.check_all(docs)

    def plan_for(
        self, index: int, docs: Sequence[MemoryDocument], now_ms: float | None = None
    ) -> ConsolidationPlan:
        """The consolidation plan of root `index` over its memories `docs`."""
        root = self.roots[index]
        stale = {doc.path: found.reason for doc, found in self.stale(docs)}
        return plan_root(
            docs,
            root=str(root.path),
            capacity=self.settings.capacity,
            now_ms=time.time() * 1000 if now_ms is None else now_ms,
            usage=self.usage([d.path for d in docs]),
            stale=stale,
            team=root.scope.value == "team",
        )

    def plans(
        self,
        docs: Sequence[MemoryDocument],
        scope: str | None = None,
        now_ms: float | None = None,
    ) -> list[ConsolidationPlan]:
        """One plan per configured root in `scope` (team roots are only reported on)."""
        now_ms = time.time() * 1000 if now_ms is None else now_ms
        by_root: dict[int, list[MemoryDocument]] = {i: [] for i in range(len(self.roots))}
        for doc in docs:
            if doc.root_index in by_root:
                by_root[doc.root_index].append(doc)
        return [
            self.plan_for(index, by_root[index], now_ms)
            for index, root in enumerate(self.roots)
            if scope is None or root.scope.value == scope
        ]
