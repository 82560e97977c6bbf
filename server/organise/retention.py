"""Retention and forgetting (docs/organisation.md): how much a memory is worth keeping, and who goes
when a root is over its capacity.

The score of a memory, from what is known about it:

    renewed     = the later of its last `used` feedback and its last edit
                  (front matter `updated`, else `created`, else the file's mtime)
    half-life   = H[type] × (1 + ln(1 + uses))        H: data/retention.txt
    recency     = 0.5 ^ (days since renewed / half-life)
    usefulness  = (uses + 1) / (deliveries + 2)
    quality     = the product of the factors that apply (no description, a very
                  short body, stale, expired; data/retention.txt)
    retention   = recency × (0.5 + usefulness) × quality

Why each part:

- **Recency of use, not of recall.** A memory the model actually used last week
  is worth more than one it never used; a memory that keeps matching queries and
  being delivered but is never used is noise, however often it is recalled. So
  only `used` feedback (and an edit, which is the user's own renewal) resets the
  clock; a delivery never does (docs/organisation.md, docs/network.md).
- **Deliveries count against, uses for.** `usefulness` is the share of deliveries
  that were used, with one use and two deliveries assumed up front (Laplace's
  rule), so a new memory starts at ½ and a few data points cannot swing it to 0
  or 1. Delivered twenty times and never used: 1/22. It scales the score between
  0.5× and 1.5×, so it reorders memories of the same age without letting one
  lucky use outlive a year of silence.
- **Each use slows forgetting.** Like spaced repetition, the half-life grows with
  the log of the uses: a rule used fifty times fades over years, one used once
  over a season.
- **Type.** Preferences and standing rules stay true longer than the state of a
  project (data/retention.txt says why each half-life is what it is).
- **Quality.** What can be judged from the file alone: without a description a
  memory cannot be chosen from a manifest; a stale memory (a cited file gone)
  is probably wrong; an expired one said itself when it would stop being true.
- **Protected.** `pinned: true` is never forgotten (docs/organisation.md). `always: true`
  memories are in every session's prompt by the user's choice, and team
  memories are never changed by the daemon (docs/writing.md): neither is archived for
  capacity either; they are counted, and reported when they alone fill a root.

Without any usage statistics (no feedback yet, or no state store), uses and
deliveries are 0: the score falls back to the age since the last edit, the type
and the quality, which is the best order the files alone give.

A pure service: facts in, scores and a plan out; the clock is a parameter.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone

from memory_recall.server.datafiles import data_lines
from memory_recall.server.documents import MemoryDocument

DEFAULT_CAPACITY = 300  # memories per root before the lowest-retention ones are archived
DAY_MS = 86_400_000.0


@dataclass(frozen=True)
class UsageStats:
    """What the state store knows of one memory's use (docs/network.md); zeros when nothing."""

    used: int = 0  # `used` feedback received
    delivered: int = 0  # times it was delivered to a host (in a fast or refined phase)
    last_used_ms: float | None = None


NO_USAGE = UsageStats()


@dataclass(frozen=True)
class RetentionFacts:
    """What retention reads of one memory; `of` takes them from a parsed document."""

    path: str
    type: str
    edited_ms: float  # front matter `updated`, else `created`, else the file's mtime
    has_description: bool
    body_chars: int
    protected: str | None = None  # why it is never archived ("pinned", …), or None
    stale: str | None = None  # why it may be outdated, or None
    expired: bool = False

    @classmethod
    def of(
        cls,
        doc: MemoryDocument,
        *,
        stale: str | None = None,
        today: date | None = None,
    ) -> RetentionFacts:
        today = today or datetime.now(timezone.utc).date()
        expires = doc.date_of("expires")
        return cls(
            path=doc.path,
            type=doc.type,
            edited_ms=edited_ms(doc),
            has_description=bool(doc.description.strip()),
            body_chars=len(doc.body),
            protected=protection(doc),
            stale=stale,
            expired=expires is not None and expires < today,
        )


def edited_ms(doc: MemoryDocument) -> float:
    """When the memory was last written, as its front matter says, else its mtime.

    Front matter first: a `git clone` or a copy gives every file a new mtime.
    """
    for key in ("updated", "created"):
        day = doc.date_of(key)
        if day is not None:
            moment = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
            return moment.timestamp() * 1000
    return doc.mtime_ms


def protection(doc: MemoryDocument) -> str | None:
    """Why a memory is never archived for capacity or changed by consolidation, if it is."""
    if doc.flag("pinned"):
        return "pinned"
    if doc.scope.value == "team":
        return "team memory"
    if doc.flag("always"):
        return "always loaded"
    return None


@dataclass(frozen=True)
class Retention:
    """A memory's retention score and its parts (what `retention-sim` and reports print)."""

    path: str
    score: float  # math.inf when protected
    recency: float
    usefulness: float
    quality: float
    half_life_days: float
    protected: str | None = None

    @property
    def why(self) -> str:
        if self.protected:
            return f"{self.protected}: never archived"
        return (
            f"retention {self.score:.3f} = recency {self.recency:.3f}"
            f" (half-life {self.half_life_days:.0f} d) × (0.5 + usefulness {self.usefulness:.2f})"
            f" × quality {self.quality:.2f}"
        )


@dataclass(frozen=True)
class RetentionRules:
    half_life_days: Mapping[str, float]
    quality: Mapping[str, float]


@functools.cache
def rules() -> RetentionRules:
    """The half-lives and quality factors of data/retention.txt."""
    half_life: dict[str, float] = {}
    quality: dict[str, float] = {}
    for line in data_lines("memory_recall.server.organise", "retention.txt"):
        key, value = line.split()
        group, _, name = key.partition(".")
        {"half_life": half_life, "quality": quality}[group][name] = float(value)
    return RetentionRules(half_life, quality)


def quality_of(facts: RetentionFacts) -> float:
    """The product of the quality factors that apply to the memory."""
    q = rules().quality
    factor = 1.0
    if not facts.has_description:
        factor *= q["no_description"]
    if facts.body_chars < q["short_body_chars"]:
        factor *= q["short_body"]
    if facts.stale:
        factor *= q["stale"]
    if facts.expired:
        factor *= q["expired"]
    return factor


def retention(facts: RetentionFacts, usage: UsageStats, now_ms: float) -> Retention:
    """The retention score of one memory at `now_ms` (see the module docstring)."""
    uses = max(0, usage.used)
    deliveries = max(uses, usage.delivered)  # a use implies a delivery
    half_life = rules().half_life_days.get(facts.type, 90.0) * (1 + math.log1p(uses))
    renewed = max(facts.edited_ms, usage.last_used_ms or 0.0)
    age_days = max(0.0, (now_ms - renewed) / DAY_MS)
    recency = 0.5 ** (age_days / half_life)
    usefulness = (uses + 1) / (deliveries + 2)
    quality = quality_of(facts)
    score = math.inf if facts.protected else recency * (0.5 + usefulness) * quality
    return Retention(
        facts.path, score, recency, usefulness, quality, half_life, protected=facts.protected
    )


def score_all(
    facts: Iterable[RetentionFacts], usage: Mapping[str, UsageStats], now_ms: float
) -> list[Retention]:
    """Retention of every memory; memories without statistics get NO_USAGE."""
    return [retention(f, usage.get(f.path, NO_USAGE), now_ms) for f in facts]


# -- Capacity ------------------------------------------------------------------------


@dataclass(frozen=True)
class CapacityPlan:
    """Which memories of one root stay and which go to the archive."""

    capacity: int
    keep: tuple[Retention, ...]  # highest retention first
    archive: tuple[Retention, ...]  # lowest retention first
    # Protected memories alone exceed the capacity by this many (nothing more can go).
    protected_over: int = 0

    @property
    def over_by(self) -> int:
        return len(self.archive)


def plan_capacity(scores: Sequence[Retention], capacity: int) -> CapacityPlan:
    """Archive the lowest-retention unprotected memories until at most `capacity` remain.

    Order, lowest first: score; on a tie (memories of the same age with no
    statistics) the shorter half-life goes first, then the path (deterministic).
    Protected memories always stay, even past the capacity (then `protected_over`).
    """
    if capacity < 0:
        raise ValueError("capacity must be at least 0")
    ranked = sorted(scores, key=lambda r: (-r.score, -r.half_life_days, r.path))
    protected = [r for r in ranked if r.protected]
    free = [r for r in ranked if not r.protected]
    room = max(0, capacity - len(protected))
    keep = protected + free[:room]
    archive = free[room:]
    archive.reverse()  # lowest first: what goes first
    return CapacityPlan(
        capacity=capacity,
        keep=tuple(keep),
        archive=tuple(archive),
        protected_over=max(0, len(protected) - capacity),
    )
