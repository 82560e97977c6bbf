"""The suggestion side of a session: `memory/observe` in, `memory/suggestion` out (docs/network.md).

An observed event is matched (off the event loop) against the lessons and
conventions of the current memories (`organise.suggestions.SuggestionIndex`, read
on the first event, then kept up to date per changed memory); what matches waits
while a recall's fast window is open, then passes the session's rules (each memory
once, rate limit: `SuggestionSession`) and goes out as one notification.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from memory_recall.protocol import methods
from memory_recall.protocol.messages import (
    ObserveParams,
    SuggestedDoc,
    SuggestionNotification,
    SuggestionTrigger,
)
from memory_recall.server.core.session import CatalogSession, TaskRegistry
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.organise.categories import CategoryPath
from memory_recall.server.organise.staleness import StalenessChecker
from memory_recall.server.organise.suggestions import (
    ObservedEvent,
    Suggestion,
    SuggestionIndex,
    SuggestionSession,
)
from memory_recall.server.organise.tree import TopicTree
from memory_recall.server.ranking.passage import opening
from memory_recall.server.ranking.spec import ScoredDocument
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.prompt import render_prompt
from memory_recall.server.recall.service import to_wire

log = logging.getLogger("memory_recall")

TRIGGER_TEXT_CHARS = 200  # the trigger echoed back names the event, it does not repeat it
# Observed events waiting to be matched at once; past it the oldest are dropped: a
# host flooding observes must not grow the daemon without bound.
MAX_PENDING_EVENTS = 64

Notify = Callable[[str, dict[str, Any]], None]


@dataclass
class SuggestionCounters:
    observed: int = 0
    matched: int = 0  # events that matched at least one memory
    sent: int = 0  # memory/suggestion notifications
    deferred: int = 0  # waited for a recall's fast window to close
    dropped: int = 0  # events dropped because too many were waiting
    settled: int = 0  # events whose handling is over: a host knows nothing more will come


class SuggestionSide:
    """Observed events of one session, and the suggestions they bring."""

    def __init__(
        self,
        session: CatalogSession,
        tasks: TaskRegistry,
        notify: Notify,
        *,
        staleness: StalenessChecker | None = None,
        topics: TopicTree | None = None,
        decisions: SuggestionSession | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.session = session
        self.tasks = tasks
        self.notify = notify
        self.staleness = staleness
        # The session's topic tree: placements cached per file version, shared with
        # memory/tree and memory/search.
        self.topics = topics or TopicTree()
        self.decisions = decisions or SuggestionSession()
        self.clock = clock
        self.counters = SuggestionCounters()
        self._index: SuggestionIndex | None = None
        self._index_version: int | None = None
        self._building: asyncio.Lock | None = None
        self._window_closed = asyncio.Event()
        self._pending = 0

    def place(self, doc: MemoryDocument) -> CategoryPath:
        return self.topics.place(doc).path

    # -- recall windows (called by the recall handler) --------------------------------------

    def recall_started(self, key: object) -> None:
        self.decisions.recall_started(key, self.clock())

    def recall_answered(self, key: object) -> None:
        self.decisions.recall_answered(key)
        self._window_closed.set()

    # -- observed events --------------------------------------------------------------------

    def observe(self, params: ObserveParams) -> None:
        """Take one observed event; what it brings is sent later, from a task."""
        self.counters.observed += 1
        if self._pending >= MAX_PENDING_EVENTS:
            self.counters.dropped += 1
            return
        self._pending += 1
        event = ObservedEvent(params.event, params.text or "", params.path)
        self.tasks.spawn(self._settled(event), "observe")

    async def _settled(self, event: ObservedEvent) -> None:
        try:
            await self._handle(event)
        finally:
            self.counters.settled += 1

    async def _handle(self, event: ObservedEvent) -> None:
        try:
            view = await self.session.view()
            index = await self._index_for(view)
            found = self.decisions.fresh(await asyncio.to_thread(index.match, event))
        finally:
            self._pending -= 1
        if not found:
            return
        self.counters.matched += 1
        waited = False
        while True:
            self._window_closed.clear()
            wait = self.decisions.wait_s(self.clock())
            if wait <= 0:
                break
            waited = True
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._window_closed.wait(), wait)
        self.counters.deferred += waited
        admitted = self.decisions.admit(found, self.clock())
        if not admitted:
            return
        note = self._notification(event, admitted, view)
        if note.docs:
            self.counters.sent += 1
            self.notify(methods.SUGGESTION, note.wire())

    async def _index_for(self, view: CorpusView) -> SuggestionIndex:
        """The lessons and conventions of `view`: read once, then per changed memory."""
        if self._building is None:
            self._building = asyncio.Lock()
        async with self._building:  # one build or update at a time; later events use it
            if self._index is None:
                self._index = await asyncio.to_thread(
                    SuggestionIndex.build, view.documents, None, self.place
                )
                self._index_version = view.version
            elif self._index_version != view.version:
                await asyncio.to_thread(self._index.follow, view.documents)
                self._index_version = view.version
            return self._index

    def _notification(
        self, event: ObservedEvent, suggestions: list[Suggestion], view: CorpusView
    ) -> SuggestionNotification:
        by_path = {d.path: d for d in view.documents}
        docs: list[MemoryDocument] = []
        why: list[Suggestion] = []
        for s in suggestions:
            doc = by_path.get(s.path)
            if doc is not None:
                docs.append(doc)
                why.append(s)
        stale = self.staleness.for_recall()(docs) if self.staleness is not None and docs else {}
        excerpts = [opening(d.body) for d in docs]
        wire_docs = [
            SuggestedDoc(
                **to_wire(ScoredDocument(d, len(s.evidence)), e, stale.get(d.path)).model_dump(),
                category=s.category,
                evidence=list(s.evidence),
            )
            for d, s, e in zip(docs, why, excerpts, strict=True)
        ]
        text = event.text[:TRIGGER_TEXT_CHARS] if event.text else None
        return SuggestionNotification(
            trigger=SuggestionTrigger(event=event.kind, path=event.path, text=text),
            docs=wire_docs,
            prompt=render_prompt(docs, excerpts=excerpts, stale=stale),
        )
