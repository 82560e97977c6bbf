"""Reflection (docs/network.md): what recalls considered and delivered, what the host's model
used, and what that feeds — retention, co-use links, per-category statistics.

- Every recall is recorded once, after its refined phase: its candidates count as
  `recalled` (in memory, written with the deliveries in the periodic batch), and
  the recall is remembered by token and request id (the most recent
  `RECENT_RECALLS`) so `memory/explain {token}` and `memory/feedback` can name it.
- `memory/feedback`: each `used` memory gets a use (and the time of its last
  use, which is what renews retention: being recalled is not being used), each
  `ignored` one a mark; the memories used in one feedback are linked as used
  together, in the network at once and in the state store.
"""

from __future__ import annotations

import asyncio
import logging
import sqlite3
import time
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from memory_recall.protocol.messages import CategoryUsage, FeedbackParams, FeedbackResult
from memory_recall.server.core.background import (
    FRESH_WAIT_S,
    SECONDS_PER_MEMORY,
    Refreshed,
)
from memory_recall.server.core.networking import NetworkSide
from memory_recall.server.core.writing import WriteSide
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.network.activation import Reached
from memory_recall.server.organise.retention import UsageStats
from memory_recall.server.pacing import paced
from memory_recall.server.ranking.shortlist import Shortlist
from memory_recall.server.recall.network import NetworkRecall
from memory_recall.server.recall.service import RecallRequest, RecallResult
from memory_recall.server.store.errors import WriteFailed
from memory_recall.server.store.state import MemoryKey, MemoryStats

log = logging.getLogger("memory_recall.reflection")

RECENT_RECALLS = 256  # recalls memory/explain and memory/feedback can name by token
# memory/status is polled (hosts wait for `ready`, benches for the watcher): the
# per-category sums and the staleness of every memory are worked out again (in a
# thread: server.daemon.background) only when the memories or the statistics
# changed, and staleness (files in the workspace) at most this often.
STATUS_STALE_TTL_S = 5.0
# The usage per category follows recalls and feedback at most this often.
STATUS_USAGE_TTL_S = 5.0


@dataclass(frozen=True)
class RecallTrace:
    """What one recall was asked and what it sent, for memory/explain {token}."""

    query: str
    recent_tools: tuple[str, ...]
    exclude_paths: tuple[str, ...]
    fast: tuple[str, ...]
    refined: tuple[str, ...]
    refined_strategy: str
    refined_status: str
    failure: str | None
    candidates: frozenset[str]
    via: Mapping[str, Reached] = field(default_factory=dict)


class ReflectionSide:
    """Recent recalls, feedback, and the usage statistics built from them."""

    def __init__(
        self, write: WriteSide | None, network: NetworkSide, spawn: Callable[..., object]
    ) -> None:
        self.write = write
        self.network = network
        self._spawn = spawn
        self.recent: OrderedDict[object, RecallTrace] = OrderedDict()
        self.changes = 0  # recalls recorded and feedback received: what usage sums read
        self.feedbacks = 0  # feedback received and stored: the usage figure follows at once
        self._known: dict[MemoryKey, tuple[str, str]] | None = None  # see `_kept`
        self._usage_changes = 0  # the `changes` the usage figure was last worked out for
        self._usage_at = float("-inf")
        self._usage: Refreshed[list[CategoryUsage]] = Refreshed("usage per category")
        self._stale: Refreshed[list[tuple[str, str]]] = Refreshed("the stale memories")

    # -- recalls ---------------------------------------------------------------------------

    def record(
        self,
        request: RecallRequest,
        shortlist: Shortlist,
        result: RecallResult,
        joined: NetworkRecall | None,
    ) -> None:
        """One recall ended (a `recall.RecallRecord`)."""
        self.changes += 1
        lexical = [s.document for s in shortlist.ranked]
        via = dict(joined.via or {}) if joined is not None else {}
        extra = [d for d in shortlist.candidates if d.path in via]
        if self.write is not None:
            keys = [self._key(d) for d in (*lexical, *extra)]
            self.write.deliveries.add_recalled([k for k in keys if k is not None])
        trace = RecallTrace(
            query=request.query,
            recent_tools=tuple(request.recent_tools),
            exclude_paths=tuple(request.exclude_paths),
            fast=tuple(d.path for d in result.fast.docs) if result.fast else (),
            refined=tuple(d.path for d in result.refined.docs) if result.refined else (),
            refined_strategy=result.refined.strategy if result.refined else "none",
            refined_status=result.refined.status if result.refined else "no_relevant_results",
            failure=result.refined.failure if result.refined else None,
            candidates=frozenset(d.path for d in shortlist.candidates),
            via=via,
        )
        for key in {("token", request.token), ("request", request.request_id)}:
            if key[1] is None or key[1] == "":
                continue
            self.recent[key] = trace
            self.recent.move_to_end(key)
        while len(self.recent) > RECENT_RECALLS * 2:
            self.recent.popitem(last=False)

    def trace(self, token: object) -> RecallTrace | None:
        return self.recent.get(("token", token)) or self.recent.get(("request", token))

    def _key(self, doc: MemoryDocument) -> MemoryKey | None:
        return self.network.key_of(doc.path)

    # -- feedback --------------------------------------------------------------------------

    def feedback(self, params: FeedbackParams) -> FeedbackResult:
        """Record `memory/feedback`; the store is written off the event loop."""
        self.changes += 1
        self.feedbacks += 1
        used = list(
            dict.fromkeys([*params.used, *(i.id for i in params.items if i.verdict == "used")])
        )
        ignored = list(
            dict.fromkeys(
                [*params.ignored, *(i.id for i in params.items if i.verdict == "ignored")]
            )
        )
        ignored = [p for p in ignored if p not in used]  # "used" wins when both are said
        unknown: list[str] = []
        used_keys: list[MemoryKey] = []
        ignored_keys: list[MemoryKey] = []
        used_paths: list[str] = []
        for paths, keys in ((used, used_keys), (ignored, ignored_keys)):
            for path in paths:
                key = self.network.key_of(path)
                if key is None:
                    unknown.append(path)
                else:
                    keys.append(key)
                    if keys is used_keys:
                        used_paths.append(path)
        pairs = self.network.used_together(used_paths)
        state = self.write.state if self.write is not None else None
        if state is not None and (used_keys or ignored_keys):
            when = int(time.time() * 1000)

            async def store() -> None:
                try:
                    await asyncio.to_thread(state.add_feedback, used_keys, ignored_keys, when)
                except Exception as exc:
                    log.warning("could not write feedback to the state store: %s", exc)
                self.changes += 1  # the sums read the store: read them again
                self.feedbacks += 1

            self._spawn(store(), "feedback")
        return FeedbackResult(
            recorded=len(used_keys) + len(ignored_keys), unknown=unknown, co_use_links=pairs
        )

    # -- statistics ------------------------------------------------------------------------

    def _stats(self) -> dict[MemoryKey, MemoryStats]:
        state = self.write.state if self.write is not None else None
        if state is None:
            return {}
        out: dict[MemoryKey, MemoryStats] = {}
        for key in dict.fromkeys(self.network.root_keys):
            for path, stats in state.stats(key).items():
                out[(key, path)] = stats
        return out

    def _kept(self) -> dict[MemoryKey, tuple[str, str]]:
        """The categories inferred earlier, by memory: (content hash, category); read from
        the state store once per start, by the thread that works out the figures (tens of
        milliseconds at 10,000), then kept up to date here."""
        if self._known is None:
            self._known = self._known_categories()
        return self._known

    def _known_categories(self) -> dict[MemoryKey, tuple[str, str]]:
        state = self.write.state if self.write is not None else None
        if state is None:
            return {}
        try:
            return {
                (key, path): found
                for key in dict.fromkeys(self.network.root_keys)
                for path, found in state.cached_categories(key).items()
            }
        except (WriteFailed, sqlite3.Error) as exc:
            log.warning("could not read the kept categories: %s", exc)
            return {}

    def _keep_categories(self, learned: Mapping[MemoryKey, tuple[str, str]]) -> None:
        state = self.write.state if self.write is not None else None
        if state is None or not learned:
            return
        by_root: dict[str, dict[str, tuple[str, str]]] = defaultdict(dict)
        for (key, path), placed in learned.items():
            by_root[key][path] = placed
        for key, placed_in_root in by_root.items():
            try:
                state.cache_categories(key, placed_in_root)
            except (WriteFailed, sqlite3.Error) as exc:  # the next start places them again
                log.warning("could not keep the inferred categories: %s", exc)
                return

    def usage(self, paths: Sequence[str]) -> Mapping[str, UsageStats]:
        """Retention's usage source (`organise.organiser.UsageSource`): uses, deliveries,
        the time of the last use."""
        try:
            stats = self._stats()
        except Exception as exc:
            log.warning("could not read usage statistics: %s", exc)
            return {}
        out: dict[str, UsageStats] = {}
        for path in paths:
            key = self.network.key_of(path)
            found = stats.get(key) if key is not None else None
            if found is not None:
                out[path] = UsageStats(found.used, found.delivered, found.last_used_ms)
        return out

    async def status_usage(
        self,
        version: int,
        docs: Sequence[MemoryDocument],
        place: Callable[[MemoryDocument], str],
        wait_s: float = FRESH_WAIT_S,
    ) -> list[CategoryUsage] | None:
        """`category_usage` for `memory/status`, worked out again (off the event loop)
        only when the memories or the statistics changed; None while not yet known."""
        if self.write is None or self.write.state is None:
            return None

        def prepare() -> Callable[[], list[CategoryUsage]]:
            stats = self._stats()  # the state store is read here, on the event loop
            return lambda: self.category_usage(paced(docs), place, stats)

        expected = len(docs) * SECONDS_PER_MEMORY
        # Every recall counts (self.changes): worked out again for each, the figure was a
        # pass over every memory per status while recalls came (docs/performance.md,
        # "Recalls first"). A change of the memories, and feedback (what a host or a
        # person asks for, then looks at), still count at once.
        now = time.monotonic()
        if self.changes != self._usage_changes and now - self._usage_at >= STATUS_USAGE_TTL_S:
            self._usage_changes, self._usage_at = self.changes, now
        key = (version, self.feedbacks, self._usage_changes)
        return await self._usage.get(key, prepare, wait_s, expected_s=expected)

    async def status_stale(
        self,
        version: int,
        docs: Sequence[MemoryDocument],
        check: Callable[[Iterable[MemoryDocument]], list[tuple[str, str]]],
        wait_s: float = FRESH_WAIT_S,
    ) -> list[tuple[str, str]] | None:
        """The stale memories `(path, reason)`, from `check` (off the event loop), at most
        every few seconds; None while not yet known."""
        key = (version, int(time.monotonic() // STATUS_STALE_TTL_S))
        expected = len(docs) * SECONDS_PER_MEMORY

        def prepare() -> Callable[[], list[tuple[str, str]]]:
            return lambda: check(paced(docs))

        return await self._stale.get(key, prepare, wait_s, expected_s=expected)

    def category_usage(
        self,
        docs: Iterable[MemoryDocument],
        place: Callable[[MemoryDocument], str],
        stats: Mapping[MemoryKey, MemoryStats],
    ) -> list[CategoryUsage]:
        """Per category: memories, recalled, delivered, used, ignored (`memory/status`).

        Placing every memory on the tree is seconds of a thread at 10,000 memories, at
        every start: the categories inferred earlier are kept (`_kept`, by content hash;
        the state store keeps them for `memory/list` too), a file whose content is the same
        as then is not placed again, and what is placed anew is kept."""
        known = self._kept()
        learned: dict[MemoryKey, tuple[str, str]] = {}
        totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0])
        for doc in docs:
            key = self.network.key_of(doc.path)
            inferred = key is not None and not (doc.meta("category") or "").strip()
            kept = known.get(key) if inferred and key is not None else None
            if kept is not None and kept[0] == doc.content_hash:
                category = kept[1]
            else:
                category = place(doc)
                if inferred and key is not None:
                    learned[key] = (doc.content_hash, category)
            row = totals[category]
            row[0] += 1
            found = stats.get(key) if key is not None else None
            if found is not None:
                row[1] += found.recalled
                row[2] += found.delivered
                row[3] += found.used
                row[4] += found.ignored
        known.update(learned)
        self._keep_categories(learned)
        return [
            CategoryUsage(category=cat, memories=n, recalled=r, delivered=d, used=u, ignored=i)
            for cat, (n, r, d, u, i) in sorted(totals.items())
        ]
