"""How memories reached only through the network join a recall.

- Candidates (what the model sees): the memories the network reached that the
  ranker did not return join the lexical list, each at the place its
  activation (x the best lexical score) earns among the lexical scores, never
  above the fast ones, at most `max_candidates` of them; each carries the path
  that reached it.
- The fast result (what a host injects before any model answers, no model to
  correct it): only under a conservative rule (`FastRule`), measured by
  `memory-recall dev network-eval` on every corpus:
  - `never`: the ranker's top 2, as without the network;
  - `free-slot`: when the ranker returned a single memory, the one it links to
    most strongly (one explicit hop: a link, `related`, or the memory that
    supersedes it) fills the second place;
  - `weak-second`: also replaces a second memory scoring less than
    `weak_second` of the first;
  - `superseded`: `free-slot`, and a fast memory that another memory
    supersedes brings that memory (into a free place, or in place of the second).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from memory_recall.protocol.limits import FAST_LIMIT
from memory_recall.server.network.activation import Reached

FastRule = Literal["never", "free-slot", "weak-second", "superseded"]
FAST_RULES: tuple[FastRule, ...] = ("never", "free-slot", "weak-second", "superseded")


@dataclass(frozen=True)
class JoinParams:
    # The model's manifest is bounded (200): the network's share of it is small.
    max_candidates: int = 20
    fast_rule: FastRule = "superseded"
    # What a memory must be to enter the fast result: reached in one explicit
    # hop from the first fast memory, with at least this activation.
    fast_min_activation: float = 0.25
    weak_second: float = 0.5


DEFAULT_JOIN = JoinParams()
_EXPLICIT = frozenset({"link", "wikilink", "related", "supersedes"})


@dataclass(frozen=True, slots=True)
class Joined:
    """One candidate: a lexical hit (`reached` None) or a memory the network reached."""

    path: str
    score: float
    reached: Reached | None = None


def network_only(lexical_paths: Sequence[str], reached: Sequence[Reached]) -> list[Reached]:
    known = set(lexical_paths)
    return [r for r in reached if r.path not in known]


def join_candidates(
    lexical: Sequence[tuple[str, float]],
    reached: Sequence[Reached],
    params: JoinParams = DEFAULT_JOIN,
) -> list[Joined]:
    """The lexical list (best first) with the network's finds placed among it."""
    out = [Joined(path, score) for path, score in lexical]
    if not out:
        return out
    top = max(score for _path, score in lexical)
    extra = network_only([p for p, _ in lexical], reached)[: params.max_candidates]
    placed = out[:FAST_LIMIT]
    rest = out[FAST_LIMIT:]
    network = [Joined(r.path, r.activation * top, r) for r in extra]
    # A stable merge by score: on a tie the lexical hit comes first.
    i = j = 0
    while i < len(rest) or j < len(network):
        if j == len(network) or (i < len(rest) and rest[i].score >= network[j].score):
            placed.append(rest[i])
            i += 1
        else:
            placed.append(network[j])
            j += 1
    return placed


def _leads_on(r: Reached) -> bool:
    """One explicit hop the way its author meant it: a link followed forward,
    `related`, or from an outdated memory to the one that superseded it."""
    if len(r.hops) != 1:
        return False
    hop = r.hops[0]
    if hop.kind == "supersedes":
        return hop.direction == "backward"
    return hop.kind == "related" or (hop.kind in _EXPLICIT and hop.direction == "forward")


def _one_explicit_hop_from(seed: str, reached: Sequence[Reached], floor: float) -> Reached | None:
    for r in reached:  # best first
        if r.activation < floor:
            return None
        if r.seed == seed and _leads_on(r):
            return r
    return None


def join_fast(
    fast: Sequence[tuple[str, float]],
    reached: Sequence[Reached],
    params: JoinParams = DEFAULT_JOIN,
) -> tuple[list[str], Reached | None]:
    """The fast result's paths under `params.fast_rule`, and the network find it took."""
    paths = [path for path, _score in fast]
    rule = params.fast_rule
    if rule == "never" or not fast:
        return paths, None
    extra = network_only(paths, reached)
    if rule == "superseded":
        for r in extra:
            if r.activation < params.fast_min_activation:
                break
            hop = r.hops[0]
            kept = paths[: FAST_LIMIT - 1]
            # The newer memory joins the one it corrects, never in its place: a correction
            # the writer only leaned to, or one of a single line of a long memory, leaves
            # the older holding the answer ("Deploys need two approvals" beside the line
            # about Postgres a newer note perhaps corrects).
            if _leads_on(r) and hop.kind == "supersedes" and hop.source in kept:
                return [*kept, r.path], r
    best = _one_explicit_hop_from(paths[0], extra, params.fast_min_activation)
    if best is None:
        return paths, None
    if len(paths) < FAST_LIMIT:
        return [*paths, best.path], best
    if rule == "weak-second" and fast[1][1] < params.weak_second * fast[0][1]:
        return [paths[0], best.path], best
    return paths, None
