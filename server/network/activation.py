"""Spreading activation: from a recall's lexical hits to the memories linked to them.

Each seed (a lexical hit) starts with its score relative to the best hit. A
step passes on activation x edge weight x `hop_decay`; a memory keeps the best
activation that reaches it (not the sum: a memory linked from ten weak hits
is no better than one linked from a strong one, and its path stays one path).
At most `max_hops` steps; a hop goes from memory to memory, directly or
through one keyword node. What is reached below `min_activation` is dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memory_recall.server.network.graph import Direction, EdgeKind, MemoryNetwork


@dataclass(frozen=True)
class ActivationParams:
    """How far and how strongly activation spreads, chosen before measurement."""

    max_hops: int = 2  # docs/network.md
    hop_decay: float = 0.5  # each hop halves what passes
    # Only the best lexical hits spread, and only those scoring at least this
    # share of the best: a weak match says little about its neighbours.
    max_seeds: int = 10
    seed_floor: float = 0.25
    min_activation: float = 0.1
    # Only the strongest memories reached by one hop spread further: what a
    # hop-2 memory could add beyond them is below `min_activation` or many
    # times weaker than what the first hop found (and it bounds the cost).
    max_spreading: int = 8


DEFAULT_ACTIVATION = ActivationParams()


@dataclass(frozen=True, slots=True)
class Hop:
    """One step of the path that reached a memory."""

    source: str
    target: str
    kind: EdgeKind
    direction: Direction
    keyword: str | None = None

    def describe(self) -> str:
        """`links to`, `is superseded by`, `shares OPS-4127 with`, …"""
        if self.kind == "keyword":
            return f"shares {self.keyword!r} with"
        if self.kind == "coUse":
            return "was used together with"
        if self.kind == "mention":
            return "mentions" if self.direction == "forward" else "is mentioned by"
        if self.kind == "supersedes":
            return "supersedes" if self.direction == "forward" else "is superseded by"
        if self.kind == "related":
            return "is related to"
        verb = "links to" if self.kind == "link" else "wiki-links to"
        return verb if self.direction == "forward" else verb.replace("links to", "is linked from")


@dataclass(frozen=True, slots=True)
class Reached:
    """A memory the network reached: how strongly, and the hops from its seed."""

    path: str
    activation: float
    seed: str
    hops: tuple[Hop, ...]

    def describe(self) -> str:
        """The path in words: `a.md links to b.md, which is superseded by c.md`."""
        parts = [self.hops[0].source]
        for i, hop in enumerate(self.hops):
            parts.append(f"{'which ' if i else ''}{hop.describe()} {hop.target}")
        return ", ".join([f"{parts[0]} {parts[1]}", *parts[2:]])


def spread(
    network: MemoryNetwork,
    seeds: Sequence[tuple[str, float]],
    params: ActivationParams = DEFAULT_ACTIVATION,
) -> list[Reached]:
    """The memories reached from `seeds` ((path, score), best first), best first.

    Seeds themselves are never returned: they are already the recall's hits.
    """
    if not seeds:
        return []
    top = max(score for _path, score in seeds)
    if top <= 0:
        return []
    start: dict[str, float] = {}
    for path, score in seeds[: params.max_seeds]:
        share = score / top
        if share >= params.seed_floor and path in network:
            start[path] = max(start.get(path, 0.0), share)
    # Each memory's best activation and the hops that brought it (a path is
    # copied, never shared, so it is always the one its activation came by).
    best: dict[str, tuple[float, str, tuple[Hop, ...]]] = {
        path: (share, path, ()) for path, share in start.items()
    }
    frontier = list(start)
    for _ in range(params.max_hops):
        reached: dict[str, None] = {}  # in the order reached
        for path in frontier:
            activation, seed, hops = best[path]
            if activation * params.hop_decay < params.min_activation:
                continue  # nothing it passes on could count
            for step in network.neighbours(path):
                passed = activation * step.weight * params.hop_decay
                if passed < params.min_activation or step.path in start:
                    continue
                if step.path in best and passed <= best[step.path][0]:
                    continue
                hop = Hop(path, step.path, step.kind, step.direction, step.keyword)
                best[step.path] = (passed, seed, (*hops, hop))
                reached[step.path] = None
        frontier = sorted(reached, key=lambda p: -best[p][0])[: params.max_spreading]
        if not frontier:
            break
    out = [
        Reached(path, activation, seed, hops)
        for path, (activation, seed, hops) in best.items()
        if path not in start
    ]
    out.sort(key=lambda r: (-r.activation, r.path))
    return out
