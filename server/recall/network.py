"""The memory network in one recall (docs/network.md): what it adds to the fast result and to
the model's candidates, with the path that reached each find.

The rules are `network.join`'s, the ones `memory-recall dev network-eval` measures:
the seeds are the ranker's best hits; a memory reached only through the network
joins the candidates at the place its activation earns, and the fast result only
under the conservative fast rule. Every find passes the recall's own filter
(`excludePaths`, active-tool noise) like a lexical hit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from memory_recall.protocol.limits import FAST_LIMIT, MAX_CANDIDATES, REFINED_LIMIT
from memory_recall.protocol.messages import NetworkHop
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.network.activation import DEFAULT_ACTIVATION, Reached, spread
from memory_recall.server.network.graph import MemoryNetwork
from memory_recall.server.network.join import DEFAULT_JOIN, JoinParams, join_candidates, join_fast
from memory_recall.server.ranking.shortlist import Keep, Shortlist, interleave_candidates
from memory_recall.server.ranking.spec import ScoredDocument


class RecallNetwork(Protocol):
    """What a recall asks of the memory network (the daemon's `NetworkSide`)."""

    seeds: int  # how many of the ranker's best hits spread

    def reach(self, seeds: Sequence[tuple[str, float]]) -> list[Reached]:
        """The memories reached from the seeds ((path, score), best first), best first."""
        ...

    def document(self, path: str) -> MemoryDocument | None: ...


def hops_wire(reached: Reached) -> list[NetworkHop]:
    """The path on the wire: `[{from, to, kind, direction, keyword?}]`."""
    return [
        NetworkHop.model_validate(
            {
                "from": h.source,
                "to": h.target,
                "kind": h.kind,
                "direction": h.direction,
                "keyword": h.keyword if h.kind == "keyword" else None,
            }
        )
        for h in reached.hops
    ]


@dataclass
class NetworkRecall:
    """The network's part of one recall: reached once from the ranker's best hits."""

    network: RecallNetwork
    keep: Keep
    join: JoinParams = DEFAULT_JOIN
    reached: list[Reached] | None = None
    # Network finds that were delivered or offered: path → how they were reached.
    via: dict[str, Reached] | None = None

    def __post_init__(self) -> None:
        self.via = {}

    def spread(self, ranked: Sequence[ScoredDocument]) -> list[Reached]:
        if self.reached is None:
            seeds = [(s.document.path, float(s.score)) for s in ranked[: self.network.seeds]]
            found = self.network.reach(seeds)
            kept = []
            for r in found:
                doc = self.network.document(r.path)
                if doc is not None and self.keep(doc):
                    kept.append(r)
            self.reached = kept
        return self.reached

    def _scored(self, r: Reached, top: float) -> ScoredDocument | None:
        doc = self.network.document(r.path)
        if doc is None:
            return None
        assert self.via is not None
        self.via[r.path] = r
        return ScoredDocument(doc, max(1, round(r.activation * top)))

    def fast(
        self, top: Sequence[ScoredDocument], seeds: Sequence[ScoredDocument]
    ) -> list[ScoredDocument]:
        """The fast result: the ranker's top 2, changed only under the fast rule."""
        if not top:
            return list(top)
        reached = self.spread(seeds)
        paths, added = join_fast(
            [(s.document.path, float(s.score)) for s in top[:FAST_LIMIT]], reached, self.join
        )
        if added is None:
            return list(top)
        by_path = {s.document.path: s for s in top}
        found = self._scored(added, float(top[0].score))
        out = [by_path[p] for p in paths if p in by_path]
        if found is not None:
            out.insert(paths.index(added.path), found)
        return out[:FAST_LIMIT]

    def fallback(self, shortlist: Shortlist, limit: int = REFINED_LIMIT) -> list[ScoredDocument]:
        """Without a model: the fast result's (network) choice first, then the lexical top 5."""
        fallback = shortlist.fallback
        fast = self.fast(fallback[:FAST_LIMIT], shortlist.ranked)
        seen = {s.document.path for s in fast}
        return [*fast, *(s for s in fallback if s.document.path not in seen)][:limit]

    def candidates(self, shortlist: Shortlist) -> Shortlist:
        """The model's manifest with the network's finds placed among the lexical hits."""
        ranked = shortlist.ranked
        if not ranked:
            return shortlist
        reached = self.spread(ranked)
        lexical = [(s.document.path, float(s.score)) for s in ranked]
        joined = join_candidates(lexical, reached, self.join)
        if len(joined) == len(lexical):
            return shortlist
        by_path = {s.document.path: s.document for s in ranked}
        scores = dict(shortlist.scores)
        docs: list[MemoryDocument] = []
        top = float(ranked[0].score)
        for j in joined:
            if j.reached is None:
                docs.append(by_path[j.path])
                continue
            found = self._scored(j.reached, top)
            if found is not None:
                docs.append(found.document)
                scores[j.path] = found.score
        in_joined = {d.path for d in docs}
        recent = [
            d for d in shortlist.candidates if d.path not in by_path and d.path not in in_joined
        ]
        room = max(0, MAX_CANDIDATES - len(docs))
        return replace(
            shortlist, candidates=interleave_candidates(docs, recent[:room]), scores=scores
        )


@dataclass
class FixedNetwork:
    """A `RecallNetwork` over a network built once (the command line, evaluations)."""

    network: MemoryNetwork
    docs: dict[str, MemoryDocument]
    seeds: int = DEFAULT_ACTIVATION.max_seeds

    @classmethod
    def of(cls, network: MemoryNetwork, docs: Sequence[MemoryDocument]) -> FixedNetwork:
        return cls(network, {d.path: d for d in docs})

    def reach(self, seeds: Sequence[tuple[str, float]]) -> list[Reached]:
        return spread(self.network, seeds, DEFAULT_ACTIVATION)

    def document(self, path: str) -> MemoryDocument | None:
        return self.docs.get(path)
