"""`memory/search` (docs/network.md): the memory tool a host gives its agent, in four modes.

A pure service: it reads a `CorpusView` (the warm catalog's snapshot), the
session's ranker, the topic tree's placements and the memory network, and
returns plain results (`SearchOutcome`); the daemon's handler and the MCP
server both call `MemorySearch.search` and put the outcome on their own wire.

- `shallow`: the query against titles and descriptions only; each hit is its
  title, description and place on the topic tree, no body (a cheap list the
  agent reads before it asks for more);
- `deep`: the query against whole bodies (the ranker's whole-body index; the
  `spec` ranker reads its 1,200-character window), each hit with the passage
  that matched, and the memories the network reaches from the lexical hits
  (links, `related`, `supersedes`, shared rare keywords, mentions, co-use),
  each with the path that reached it;
- `explore`: a subtree of the topic tree (`category`: `lessons`,
  `lessons/errors`), or the subtree of a memory (`path`) or of the query's best
  hit: first what the network reaches from that memory or those hits, then the
  subtree's members, ranked by the query when there is one, else newest first;
  with the subtree's subcategories and their counts, to go further down;
- `get`: one memory by its path or its relative path, whole body.

A request that cannot be answered as asked (`deep` without a query, a category
not on the tree, `get` of a path no memory has) raises `SearchError`, whose
message names what to change.

One job, four modes: they share the request's checks, the hit and its passage, and
the network, so they stay one module.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal

from memory_recall.protocol.limits import SEARCH_DEFAULT_LIMIT, SEARCH_MAX_LIMIT
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.network.activation import DEFAULT_ACTIVATION, ActivationParams, Reached
from memory_recall.server.network.activation import spread as spread_activation
from memory_recall.server.network.graph import MemoryNetwork
from memory_recall.server.network.join import DEFAULT_JOIN, JoinParams, join_candidates
from memory_recall.server.organise.categories import CATEGORIES, CategoryPath
from memory_recall.server.organise.tree import TopicTree
from memory_recall.server.ranking.bm25f.ranker import Bm25Params, Bm25Ranker
from memory_recall.server.ranking.passage import Excerpt
from memory_recall.server.ranking.registry import RankerSpec
from memory_recall.server.ranking.view import CorpusView, input_order_key
from memory_recall.server.recall.prompt import (
    PROMPT_DESCRIPTION_CHARS,
    PROMPT_TITLE_CHARS,
    one_line,
)

SearchMode = Literal["shallow", "deep", "explore", "get"]
SEARCH_MODES: tuple[SearchMode, ...] = ("shallow", "deep", "explore", "get")
HitSource = Literal["lexical", "network", "tree", "path"]
# path → why a memory may be outdated (docs/organisation.md): `StalenessChecker.for_recall()`.
StaleCheck = Callable[[Sequence[MemoryDocument]], Mapping[str, str]]

# The lexical hits whose neighbours `deep` and `explore` look at: activation
# spreads from the best ones only (ActivationParams.max_seeds), so more would add
# nothing.
SEEDS = 32
# bm25f over titles and descriptions only: the body weighs nothing and covers
# nothing, so a memory whose body alone holds the words is not a shallow hit.
SHALLOW_PARAMS = Bm25Params(field_weights=(3.0, 2.0, 0.0), body_coverage_weight=0.0)
# the reference scorer's field weights, for `shallow` under the `spec` ranker.
SPEC_TITLE, SPEC_DESCRIPTION = 4, 3


class SearchError(ValueError):
    """A search that cannot be answered as asked; `kind` says whose the fault is."""

    def __init__(self, message: str, kind: Literal["invalid", "notFound"] = "invalid") -> None:
        super().__init__(message)
        self.kind = kind


@dataclass(frozen=True)
class SearchRequest:
    """What the agent asked. `path` (get, explore) is a path or a relative path;
    `category` (explore) a topic-tree slug; `scope` keeps one scope's memories."""

    mode: SearchMode
    query: str = ""
    path: str | None = None
    category: str | None = None
    scope: str | None = None
    limit: int = SEARCH_DEFAULT_LIMIT


@dataclass(frozen=True)
class SearchHit:
    """One memory found: where it sits, how it was found, and what of it to show.

    `excerpt` None: no body is shown (shallow, explore). `score`: the ranker's,
    None for a memory the ranker did not score (a network find, a memory listed
    by place or by path); a network find's `reached` holds its activation.
    """

    doc: MemoryDocument
    category: str
    source: HitSource
    score: float | None = None
    excerpt: Excerpt | None = None
    reached: Reached | None = None
    stale: str | None = None

    @property
    def body(self) -> str | None:
        return (
            None if self.excerpt is None else self.doc.body[self.excerpt.start : self.excerpt.end]
        )

    @property
    def truncated(self) -> bool:
        return self.excerpt is not None and (self.excerpt.start, self.excerpt.end) != (
            0,
            len(self.doc.body),
        )


@dataclass(frozen=True)
class SearchSubtree:
    """A place on the topic tree, how many memories (in scope) sit under it, its children."""

    slug: str
    label: str
    count: int
    children: tuple[SearchSubtree, ...] = ()


@dataclass(frozen=True)
class SearchOutcome:
    """A search's answer: the hits (at most `limit`), how many there were in all."""

    mode: SearchMode
    query: str
    hits: tuple[SearchHit, ...]
    total: int
    subtree: SearchSubtree | None = None
    elapsed_ms: float = 0.0
    network_used: bool = False  # False: no network was given (deep, explore)
    # The relative path of every memory on a hit's network path (what an agent reads).
    names: Mapping[str, str] = field(default_factory=dict)

    def describe(self, reached: Reached) -> str:
        """A network path in words, memories by their relative paths."""
        text = reached.describe()
        for path in sorted(self.names, key=len, reverse=True):
            text = text.replace(path, self.names[path])
        return text


@dataclass
class MemorySearch:
    """Answers `memory/search` over one session's memories with its ranker."""

    ranker: RankerSpec
    topics: TopicTree = field(default_factory=TopicTree)
    activation: ActivationParams = DEFAULT_ACTIVATION
    join: JoinParams = DEFAULT_JOIN

    def search(
        self,
        view: CorpusView,
        request: SearchRequest,
        *,
        network: MemoryNetwork | None = None,
        stale_check: StaleCheck | None = None,
    ) -> SearchOutcome:
        """The answer to `request` over `view`; raises SearchError when it has none."""
        started = time.perf_counter()
        limit = max(1, min(request.limit, SEARCH_MAX_LIMIT))
        request = replace(request, limit=limit)
        if request.mode == "get":
            outcome = self._get(view, request)
        elif request.mode == "shallow":
            outcome = self._shallow(view, request)
        elif request.mode == "deep":
            outcome = self._deep(view, request, network)
        elif request.mode == "explore":
            outcome = self._explore(view, request, network)
        else:
            raise SearchError(f"unknown mode {request.mode!r}: one of {', '.join(SEARCH_MODES)}")
        if stale_check is not None and outcome.hits:
            outcome = _mark_stale(outcome, stale_check)
        names = {
            path: doc.relative_path
            for hit in outcome.hits
            if hit.reached is not None
            for hop in hit.reached.hops
            for path in (hop.source, hop.target)
            if (doc := _document(view, path)) is not None
        }
        if names:
            outcome = replace(outcome, names=names)
        return replace(outcome, elapsed_ms=round((time.perf_counter() - started) * 1000, 3))

    # -- the modes ----------------------------------------------------------------------

    def _get(self, view: CorpusView, request: SearchRequest) -> SearchOutcome:
        if not request.path:
            raise SearchError("mode get needs `path`: a memory's path or relative path")
        doc = find_memory(view, request.path, request.scope)
        hit = SearchHit(doc, self._place(doc), "path", excerpt=Excerpt(0, len(doc.body)))
        return SearchOutcome("get", request.query, (hit,), 1)

    def _shallow(self, view: CorpusView, request: SearchRequest) -> SearchOutcome:
        query = _needs_query(request)
        keep = _scope_filter(request.scope)
        if isinstance(self.ranker.rank, Bm25Ranker):
            shallow = Bm25Ranker(SHALLOW_PARAMS, self.ranker.rank.index_kind)
            tokens = self.ranker.tokenize(query)
            ranked = [
                (s.document, float(s.score))
                for s in shallow.ranking(view, tokens, keep, None).ranked
            ]
        else:
            ranked = _spec_summary_scan(view, self.ranker.tokenize(query), keep)
        hits = tuple(
            SearchHit(doc, self._place(doc), "lexical", score)
            for doc, score in ranked[: request.limit]
        )
        return SearchOutcome("shallow", query, hits, len(ranked))

    def _deep(
        self, view: CorpusView, request: SearchRequest, network: MemoryNetwork | None
    ) -> SearchOutcome:
        query = _needs_query(request)
        keep = _scope_filter(request.scope)
        ranked_query = self.ranker.query(view, query)
        ranking = ranked_query.ranking
        lexical = [s for s in ranking.ranked if keep(s.document)]
        reached: list[Reached] = []
        if network is not None and lexical:
            seeds = [(s.document.path, float(s.score)) for s in lexical[:SEEDS]]
            reached = [
                r
                for r in spread_activation(network, seeds, self.activation)
                if _kept(view, r.path, keep)
            ]
        joined = join_candidates(
            [(s.document.path, float(s.score)) for s in lexical], reached, self.join
        )
        by_path = {s.document.path: s.document for s in lexical}
        hits = []
        for item in joined[: request.limit]:
            doc = by_path.get(item.path) or _document(view, item.path)
            if doc is None:  # the network knows a memory this view no longer holds
                continue
            hits.append(
                SearchHit(
                    doc,
                    self._place(doc),
                    "lexical" if item.reached is None else "network",
                    item.score if item.reached is None else None,
                    ranking.excerpt(doc),
                    item.reached,
                )
            )
        return SearchOutcome(
            "deep", query, tuple(hits), len(joined), network_used=network is not None
        )

    def _explore(
        self, view: CorpusView, request: SearchRequest, network: MemoryNetwork | None
    ) -> SearchOutcome:
        keep = _scope_filter(request.scope)
        query = request.query.strip()
        if not (request.category or request.path or query):
            raise SearchError(
                "mode explore needs `category` (a topic-tree slug such as "
                f"{_slug_examples()}), `path` (a memory) or `query`"
            )
        place = _parse_category(request.category) if request.category else None
        seeds: list[tuple[str, float]] = []
        start: MemoryDocument | None = None
        scores: dict[str, float] = {}
        if request.path:
            start = find_memory(view, request.path, request.scope)
            seeds = [(start.path, 1.0)]
        if query:
            ranked = self.ranker.query(view, query).ranking.ranked
            scores = {s.document.path: float(s.score) for s in ranked if keep(s.document)}
            if not seeds:
                seeds = [(s.document.path, float(s.score)) for s in ranked if keep(s.document)][
                    :SEEDS
                ]
        if place is None:
            anchor = start or (_document(view, seeds[0][0]) if seeds else None)
            if anchor is None:  # a query that matches nothing, and nothing else to go on
                return SearchOutcome("explore", query, (), 0)
            place = CategoryPath.of(self._place(anchor))
        members = [d for d in view.documents if keep(d) and _under(self._place(d), place.slug)]
        subtree = self._subtree(place, members)
        out: list[SearchHit] = []
        seen: set[str] = set()
        if start is not None:
            out.append(SearchHit(start, self._place(start), "path"))
            seen.add(start.path)
        network_hits = 0
        if network is not None and seeds:
            for r in spread_activation(network, seeds, self.activation):
                doc = _document(view, r.path)
                if doc is None or not keep(doc) or r.path in seen:
                    continue
                out.append(
                    SearchHit(doc, self._place(doc), "network", scores.get(r.path), reached=r)
                )
                seen.add(r.path)
                network_hits += 1
        if scores:
            members.sort(key=lambda d: (-scores.get(d.path, 0.0), -d.mtime_ms, input_order_key(d)))
        else:
            members.sort(key=lambda d: (-d.mtime_ms, input_order_key(d)))
        for doc in members:
            if doc.path not in seen:
                out.append(SearchHit(doc, self._place(doc), "tree", scores.get(doc.path)))
                seen.add(doc.path)
        return SearchOutcome(
            "explore",
            query,
            tuple(out[: request.limit]),
            len(out),
            subtree,
            network_used=network is not None,
        )

    # -- helpers ------------------------------------------------------------------------

    def _place(self, doc: MemoryDocument) -> str:
        return self.topics.place(doc).path.slug

    def _subtree(self, place: CategoryPath, members: Sequence[MemoryDocument]) -> SearchSubtree:
        category = next(c for c in CATEGORIES if c.slug == place.top)
        counts: dict[str, int] = {}
        for doc in members:
            counts[self._place(doc)] = counts.get(self._place(doc), 0) + 1
        if place.sub is not None:
            return SearchSubtree(place.slug, place.label, counts.get(place.slug, 0))
        children = tuple(
            SearchSubtree(s.slug, CategoryPath.of(s.slug).label, counts.get(s.slug, 0))
            for s in category.subcategories
        )
        return SearchSubtree(place.slug, place.label, len(members), children)


def find_memory(view: CorpusView, path: str, scope: str | None = None) -> MemoryDocument:
    """The memory at `path` (as recall gives it) or with that relative path; SearchError
    when there is none, or when a relative path names memories in several roots."""
    keep = _scope_filter(scope)
    exact = _document(view, path)
    if exact is not None and keep(exact):
        return exact
    wanted = path.replace("\\", "/").removeprefix("./")
    found = [d for d in view.documents if d.relative_path == wanted and keep(d)]
    if len(found) == 1:
        return found[0]
    if found:
        raise SearchError(
            f"{path!r} names {len(found)} memories (one per root): pass the full path, one of "
            + ", ".join(d.path for d in found[:5])
        )
    raise SearchError(f"no memory at {path!r}", "notFound")


def render_search(outcome: SearchOutcome) -> str:
    """The outcome as markdown for an agent: one section per hit, how it was found."""
    if not outcome.hits:
        if outcome.subtree is not None:
            return f"## Memory: {outcome.subtree.label}\n\nNo memories here.\n"
        return ""
    heading = {
        "shallow": "Memory search",
        "deep": "Memory search",
        "explore": "Memory: "
        + (outcome.subtree.label if outcome.subtree is not None else "explore"),
        "get": "Memory",
    }[outcome.mode]
    parts = [f"## {heading}"]
    if outcome.total > len(outcome.hits):
        parts.append(f"_{len(outcome.hits)} of {outcome.total} shown_")
    for hit in outcome.hits:
        doc = hit.doc
        section = [
            f"### {one_line(doc.title, PROMPT_TITLE_CHARS)} "
            f"({one_line(doc.relative_path, PROMPT_TITLE_CHARS * 2)})",
            f"_{doc.type}, {hit.category}_"
            + (
                f" · found through the memory network: {outcome.describe(hit.reached)}"
                if hit.reached
                else ""
            ),
        ]
        if hit.stale:
            section.append(f"_May be outdated: it {hit.stale}._")
        if doc.description:
            section.append(one_line(doc.description, PROMPT_DESCRIPTION_CHARS))
        body = hit.body
        if body:
            assert hit.excerpt is not None
            before = "… " if hit.excerpt.start > 0 else ""
            after = " …" if hit.excerpt.end < len(doc.body) else ""
            section.append(before + body + after)
        parts.append("\n\n".join(section))
    if outcome.subtree is not None and outcome.subtree.children:
        below = ", ".join(f"`{c.slug}` ({c.count})" for c in outcome.subtree.children if c.count)
        if below:
            parts.append(f"Subcategories: {below}")
    return "\n\n".join(parts) + "\n"


def _needs_query(request: SearchRequest) -> str:
    query = request.query.strip()
    if not query:
        raise SearchError(f"mode {request.mode} needs a `query`")
    return request.query


def _scope_filter(scope: str | None) -> Callable[[MemoryDocument], bool]:
    if scope is None:
        return lambda _doc: True
    return lambda doc: doc.scope.wire == scope


_BY_PATH: dict[int, tuple[CorpusView, dict[str, MemoryDocument]]] = {}
_BY_PATH_LOCK = threading.Lock()


def _document(view: CorpusView, path: str) -> MemoryDocument | None:
    """The view's memory at `path` (the path map of the last view asked is kept)."""
    with _BY_PATH_LOCK:
        kept = _BY_PATH.get(0)
        if kept is None or kept[0] is not view:
            kept = _BY_PATH[0] = (view, {d.path: d for d in view.documents})
    return kept[1].get(path)


def _kept(view: CorpusView, path: str, keep: Callable[[MemoryDocument], bool]) -> bool:
    doc = _document(view, path)
    return doc is not None and keep(doc)


def _under(slug: str, place: str) -> bool:
    return slug == place or slug.startswith(place + "/")


def _parse_category(slug: str) -> CategoryPath:
    try:
        return CategoryPath.of(slug.strip().strip("/").lower())
    except ValueError:
        raise SearchError(
            f"category {slug!r} is not on the topic tree: one of {_slug_examples(every=True)}"
        ) from None


def _slug_examples(every: bool = False) -> str:
    if not every:
        return "`lessons` or `lessons/errors`"
    return ", ".join(
        slug for c in CATEGORIES for slug in (c.slug, *(s.slug for s in c.subcategories))
    )


def _spec_summary_scan(
    view: CorpusView, tokens: Sequence[str], keep: Callable[[MemoryDocument], bool]
) -> list[tuple[MemoryDocument, float]]:
    """The reference scorer's substring scoring, title and description only, in
    its order."""
    if not tokens:
        return []
    out = []
    for doc in view.documents:
        if not keep(doc):
            continue
        score = sum(
            SPEC_TITLE * (t in doc.norm_title) + SPEC_DESCRIPTION * (t in doc.norm_description)
            for t in tokens
        )
        if score:
            out.append((doc, float(score)))
    order = {d.path: i for i, d in enumerate(view.documents)}
    out.sort(key=lambda item: (-item[1], -item[0].mtime_ms, order[item[0].path]))
    return out


def _mark_stale(outcome: SearchOutcome, check: StaleCheck) -> SearchOutcome:
    stale = check([h.doc for h in outcome.hits])
    if not stale:
        return outcome
    return replace(
        outcome,
        hits=tuple(replace(h, stale=stale.get(h.doc.path)) for h in outcome.hits),
    )
