"""A synthetic year of use: what retention keeps and archives (`memory-recall dev retention-sim`).

Memories arrive through the year (about two a day) into a root with a
capacity (300 by default). Each has a hidden kind that decides how often
recall delivers it and how often the agent then uses it:

- `rule`: standing rules and preferences, delivered now and then, usually used;
- `seasonal`: project state, much used for a month or three after it is
  written, then delivered now and then but hardly used (the work moved on);
- `noise`: matches many queries and is delivered often, but almost never used
  (a vague note, a tool's usage dump);
- `rare`: a runbook or reference needed a few times a year, used when it comes;
- `pinned`: pinned by the user, needed rarely;
- `stale`: like `seasonal`, and the file it cites is deleted after a while.

Every day recall delivers memories and the host reports which were used;
once a week the root is pruned to its capacity. Four policies run on the same
history (same seed, same deliveries): `retention` (ours), `recalled=used` (the
same score, but every delivery counts as a use: what docs/organisation.md forbids),
`newest` (keep the most recently written) and `random`. A *miss* is a day on
which a memory would have been used but had already been archived: the value
a policy threw away. The report prints, per policy, uses served and misses,
and for ours what was kept and archived per kind, with examples and why.
"""

from __future__ import annotations

import json
import math
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

from memory_recall.server.organise.retention import (
    DAY_MS,
    DEFAULT_CAPACITY,
    RetentionFacts,
    UsageStats,
    plan_capacity,
    retention,
)

DAYS = 365
ARRIVALS_PER_DAY = 2.0
PRUNE_EVERY_DAYS = 7
START_MS = 1_735_689_600_000.0  # 2025-01-01, so dates print as a real year


@dataclass(frozen=True)
class Kind:
    share: float
    type: str
    deliveries_per_day: float  # while it exists
    use_share: float  # share of deliveries used while it matters
    matters_days: float | None = None  # after this many days, use_share drops to late_use_share
    late_use_share: float = 0.0
    stale_after_days: float | None = None


KINDS: dict[str, Kind] = {
    "rule": Kind(0.22, "feedback", 0.12, 0.7),
    "seasonal": Kind(0.24, "project", 0.25, 0.6, matters_days=60, late_use_share=0.03),
    "noise": Kind(0.20, "reference", 0.35, 0.01),
    "rare": Kind(0.20, "reference", 0.02, 0.8),
    "pinned": Kind(0.06, "user", 0.01, 0.5),
    "stale": Kind(
        0.08, "project", 0.2, 0.5, matters_days=90, late_use_share=0.05, stale_after_days=45
    ),
}


@dataclass
class SimMemory:
    id: int
    kind: str
    created_day: int
    description: bool
    uses: int = 0
    deliveries: int = 0
    last_used_day: int | None = None
    last_delivered_day: int | None = None
    archived_day: int | None = None
    misses: int = 0

    def path(self) -> str:
        return f"{self.kind}-{self.id:04d}.md"


@dataclass
class PolicyResult:
    name: str
    served: int = 0
    misses: int = 0
    kept: Counter[str] = field(default_factory=Counter)
    archived: Counter[str] = field(default_factory=Counter)
    memories: list[SimMemory] = field(default_factory=list)


def _facts(m: SimMemory, day: int, *, pinned_protected: bool = True) -> RetentionFacts:
    kind = KINDS[m.kind]
    stale = None
    if kind.stale_after_days is not None and day - m.created_day >= kind.stale_after_days:
        stale = "cites a deleted file"
    return RetentionFacts(
        path=m.path(),
        type=kind.type,
        edited_ms=START_MS + m.created_day * DAY_MS,
        has_description=m.description,
        body_chars=400,
        protected="pinned" if m.kind == "pinned" and pinned_protected else None,
        stale=stale,
    )


def _usage(m: SimMemory, *, recalled_is_used: bool) -> UsageStats:
    if recalled_is_used:
        last = m.last_delivered_day
        return UsageStats(m.deliveries, m.deliveries, _ms(last))
    return UsageStats(m.uses, m.deliveries, _ms(m.last_used_day))


def _ms(day: int | None) -> float | None:
    return None if day is None else START_MS + day * DAY_MS


Ranker = Callable[[list[SimMemory], int, random.Random], list[SimMemory]]  # archive order


def _by_retention(recalled_is_used: bool) -> Ranker:
    def rank(live: list[SimMemory], day: int, _rng: random.Random) -> list[SimMemory]:
        now = START_MS + day * DAY_MS
        scores = [
            retention(_facts(m, day), _usage(m, recalled_is_used=recalled_is_used), now)
            for m in live
        ]
        plan = plan_capacity(scores, 0)  # everything unprotected, lowest first
        order = {r.path: i for i, r in enumerate(plan.archive)}
        return sorted((m for m in live if m.path() in order), key=lambda m: order[m.path()])

    return rank


def _newest(live: list[SimMemory], _day: int, _rng: random.Random) -> list[SimMemory]:
    return sorted((m for m in live if m.kind != "pinned"), key=lambda m: (m.created_day, m.id))


def _random(live: list[SimMemory], _day: int, rng: random.Random) -> list[SimMemory]:
    free = [m for m in live if m.kind != "pinned"]
    rng.shuffle(free)
    return free


POLICIES: dict[str, Ranker] = {
    "retention": _by_retention(False),
    "recalled=used": _by_retention(True),
    "newest": _newest,
    "random": _random,
}


def _arrivals(seed: int) -> list[tuple[int, str, bool]]:
    """(day, kind, has description) of every memory of the year, the same for every policy."""
    rng = random.Random(seed)
    names = list(KINDS)
    weights = [KINDS[k].share for k in names]
    out = []
    for day in range(DAYS):
        count = _poisson(rng, ARRIVALS_PER_DAY)
        for _ in range(count):
            out.append((day, rng.choices(names, weights)[0], rng.random() > 0.15))
    return out


def _poisson(rng: random.Random, mean: float) -> int:
    limit, k, p = math.exp(-mean), 0, 1.0
    while True:
        p *= rng.random()
        if p <= limit:
            return k
        k += 1


def simulate(policy: str, *, capacity: int = DEFAULT_CAPACITY, seed: int = 7) -> PolicyResult:
    """One policy over the year; deliveries and uses come from the same seeded history."""
    arrivals = _arrivals(seed)
    events = random.Random(seed + 1)  # deliveries and uses: same draws for every policy
    order_rng = random.Random(seed + 2)
    ranker = POLICIES[policy]
    memories: list[SimMemory] = []
    result = PolicyResult(policy)
    next_arrival = 0
    for day in range(DAYS):
        while next_arrival < len(arrivals) and arrivals[next_arrival][0] == day:
            _, kind_name, description = arrivals[next_arrival]
            memories.append(SimMemory(len(memories), kind_name, day, description))
            next_arrival += 1
        for m in memories:
            kind = KINDS[m.kind]
            delivered = events.random() < kind.deliveries_per_day
            age = day - m.created_day
            share = kind.use_share
            if kind.matters_days is not None and age > kind.matters_days:
                share = kind.late_use_share
            used = delivered and events.random() < share
            if m.archived_day is not None:
                if used:
                    m.misses += 1
                    result.misses += 1
                continue
            if delivered:
                m.deliveries += 1
                m.last_delivered_day = day
            if used:
                m.uses += 1
                m.last_used_day = day
                result.served += 1
        if day % PRUNE_EVERY_DAYS == PRUNE_EVERY_DAYS - 1 or day == DAYS - 1:
            live = [m for m in memories if m.archived_day is None]
            over = len(live) - capacity
            if over > 0:
                for m in ranker(live, day, order_rng)[:over]:
                    m.archived_day = day
    for m in memories:
        (result.archived if m.archived_day is not None else result.kept)[m.kind] += 1
    result.memories = memories
    return result


def run(capacity: int = DEFAULT_CAPACITY, seed: int = 7) -> dict[str, PolicyResult]:
    return {name: simulate(name, capacity=capacity, seed=seed) for name in POLICIES}


def format_report(results: dict[str, PolicyResult], capacity: int) -> str:
    ours = results["retention"]
    total = len(ours.memories)
    lines = [
        f"a synthetic year: {total} memories written over {DAYS} days, capacity {capacity},"
        f" pruned every {PRUNE_EVERY_DAYS} days",
        "",
        f"{'policy':<15}{'uses served':>12}{'misses':>8}{'miss rate':>11}{'pinned lost':>13}",
    ]
    for name, r in results.items():
        rate = r.misses / (r.served + r.misses) if r.served + r.misses else 0.0
        lines.append(
            f"{name:<15}{r.served:>12}{r.misses:>8}{100 * rate:>10.1f}%{r.archived['pinned']:>13}"
        )
    lines += ["", "retention, at the end of the year, per kind of memory:"]
    lines.append(f"  {'kind':<10}{'written':>8}{'kept':>6}{'archived':>10}{'misses':>8}")
    for kind in KINDS:
        written = ours.kept[kind] + ours.archived[kind]
        misses = sum(m.misses for m in ours.memories if m.kind == kind)
        lines.append(
            f"  {kind:<10}{written:>8}{ours.kept[kind]:>6}{ours.archived[kind]:>10}{misses:>8}"
        )
    day = DAYS - 1
    now = START_MS + day * DAY_MS
    live = [m for m in ours.memories if m.archived_day is None]
    scored = sorted(
        ((retention(_facts(m, day), _usage(m, recalled_is_used=False), now), m) for m in live),
        key=lambda pair: -pair[0].score,
    )
    lines += ["", "kept, the weakest five (next to go):"]
    for score, m in scored[-5:]:
        lines.append(f"  {m.path():<18} {_history(m)}  {score.why}")
    gone = sorted(
        (m for m in ours.memories if m.archived_day is not None),
        key=lambda m: -(m.archived_day or 0),
    )
    lines += ["", "archived, the five most recent:"]
    for m in gone[:5]:
        lines.append(f"  {m.path():<18} {_history(m)}, archived on day {m.archived_day}")
    return "\n".join(lines)


def _history(m: SimMemory) -> str:
    last = "never used" if m.last_used_day is None else f"last used day {m.last_used_day}"
    return f"written day {m.created_day}, {m.uses} uses of {m.deliveries} deliveries, {last}"


def as_json(results: dict[str, PolicyResult]) -> str:
    return json.dumps(
        {
            name: {
                "served": r.served,
                "misses": r.misses,
                "kept": dict(r.kept),
                "archived": dict(r.archived),
            }
            for name, r in results.items()
        },
        indent=2,
    )
