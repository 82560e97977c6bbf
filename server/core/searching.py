"""The search side of a session: `memory/search` through the search service, on the wire.

`SearchSide` holds the session's `MemorySearch` (its ranker, the topic tree's
placements the organisation side already caches) and where the memory network
comes from; `search_wire` turns the service's plain outcome into the protocol's
`SearchResult`, for the daemon and for any other face (MCP) that wants the same
shape.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from memory_recall.protocol.limits import SEARCH_DEFAULT_LIMIT
from memory_recall.protocol.messages import (
    Excerpt,
    NetworkHop,
    SearchDoc,
    SearchParams,
    SearchResult,
    SearchSubtree,
    StaleMark,
)
from memory_recall.server.network.graph import MemoryNetwork
from memory_recall.server.organise.staleness import StalenessChecker
from memory_recall.server.organise.tree import TopicTree
from memory_recall.server.ranking.registry import RankerSpec
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.search import (
    MemorySearch,
    SearchHit,
    SearchOutcome,
    SearchRequest,
    render_search,
)
from memory_recall.server.recall.search import SearchSubtree as Subtree

# The memory network a search spreads over (the core's, synced), None before it is built.
NetworkSource = Callable[[CorpusView], MemoryNetwork | None]


class SearchSide:
    """`memory/search` over the core's catalog, topic tree, staleness and network.

    `network`: the memory network `deep` and `explore` spread over (the core's own,
    kept in step with the catalog); a search before its first build goes without.
    """

    def __init__(
        self,
        ranker: RankerSpec,
        *,
        topics: TopicTree | None = None,
        staleness: StalenessChecker | None = None,
        network: NetworkSource | None = None,
    ) -> None:
        self.service = MemorySearch(ranker, topics or TopicTree())
        self.staleness = staleness
        self.network = network
        self.searches = 0

    def run(self, view: CorpusView, request: SearchRequest) -> SearchOutcome:
        """One search (blocking: placing memories on the topic tree takes a while)."""
        self.searches += 1
        spreads = self.network is not None and request.mode in ("deep", "explore")
        network = self.network(view) if spreads else None  # type: ignore[misc]
        stale = self.staleness.for_recall() if self.staleness is not None else None
        return self.service.search(view, request, network=network, stale_check=stale)

    async def search(self, view: CorpusView, params: SearchParams) -> SearchResult:
        """`memory/search` params → its result; raises SearchError."""
        request = SearchRequest(
            mode=params.mode,
            query=params.query,
            path=params.path,
            category=params.category,
            scope=params.scope,
            limit=params.limit or SEARCH_DEFAULT_LIMIT,
        )
        # Off the event loop: a first network build or a tree placement takes a while.
        outcome = await asyncio.to_thread(self.run, view, request)
        return search_wire(outcome)


def search_wire(outcome: SearchOutcome) -> SearchResult:
    """The protocol's `SearchResult` of a search outcome."""
    return SearchResult(
        mode=outcome.mode,
        query=outcome.query,
        docs=[_doc(hit) for hit in outcome.hits],
        total=outcome.total,
        subtree=_subtree(outcome.subtree) if outcome.subtree is not None else None,
        network=outcome.network_used,
        prompt=render_search(outcome),
        elapsed_ms=outcome.elapsed_ms,
    )


def _doc(hit: SearchHit) -> SearchDoc:
    doc = hit.doc
    reached = hit.reached
    return SearchDoc(
        path=doc.path,
        relative_path=doc.relative_path,
        scope=doc.scope.wire,
        type=doc.type,
        title=doc.title,
        description=doc.description,
        category=hit.category,
        source=hit.source,
        body=hit.body,
        truncated=hit.truncated,
        excerpt=Excerpt(start=hit.excerpt.start, end=hit.excerpt.end) if hit.excerpt else None,
        mtime_ms=doc.mtime_ms,
        score=hit.score,
        activation=round(reached.activation, 4) if reached is not None else None,
        via=[
            NetworkHop.model_validate(
                {
                    "from": h.source,
                    "to": h.target,
                    "kind": h.kind,
                    "direction": h.direction,
                    "keyword": h.keyword,
                }
            )
            for h in reached.hops
        ]
        if reached is not None
        else None,
        stale=StaleMark(reason=hit.stale) if hit.stale else None,
        content_hash=doc.content_hash or None,
    )


def _subtree(subtree: Subtree) -> SearchSubtree:
    return SearchSubtree(
        slug=subtree.slug,
        label=subtree.label,
        count=subtree.count,
        children=[_subtree(c) for c in subtree.children],
    )
