"""One editor session's warm state: the index build, the watcher, background tasks, progress.

Knows the catalog and the watcher, not JSON-RPC: progress and state changes
are reported through the callables it is given.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
from collections.abc import Awaitable, Callable, Iterator
from typing import Any

from lsprotocol import types
from memory_recall.protocol.messages import WatcherStatus
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.catalog.snapshot_cache import snapshot_cache
from memory_recall.server.catalog.watcher import CatalogWatcher
from memory_recall.server.ranking.bm25f.index import Bm25Index
from memory_recall.server.ranking.postings import TermIndex
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.roots import MemoryRoot

log = logging.getLogger("memory_recall")


class TaskRegistry:
    """Background tasks of the daemon; a failure is logged, never lost."""

    def __init__(self) -> None:
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("background task %s failed: %r", name, t.exception())

        task.add_done_callback(done)
        return task

    def cancel_all(self) -> None:
        for task in list(self._tasks):
            task.cancel()


class CatalogSession:
    """The catalog of one session, its first index build and the watcher that keeps it warm."""

    def __init__(
        self,
        roots: list[MemoryRoot],
        tasks: TaskRegistry,
        index_kind: type[TermIndex] = Bm25Index,
    ) -> None:
        self.catalog = MemoryCatalog(roots, index_kind)
        self.ready = asyncio.Event()
        self.watcher: CatalogWatcher | None = None
        self.watcher_state = WatcherStatus(state="off")
        self._tasks = tasks
        self._pending_changes: set[str] = set()
        # Drops the paths that are this process's own writes (the writer's echo filter).
        self.ignore: Callable[[set[str]], set[str]] | None = None

    def start(self, *, watch: bool) -> None:
        """Start watching (when asked) and building the index, both in the background."""
        if watch:
            self._start_watcher()
        self._tasks.spawn(self._build_index(), "index")

    def stop(self) -> None:
        if self.watcher:
            self.watcher.stop()

    async def view(self) -> CorpusView:
        """The current view of the memories, once the first index exists."""
        await self.ready.wait()
        return self.catalog.snapshot()

    async def _build_index(self) -> None:
        # A large tree takes seconds to parse: do it off the event loop so
        # the daemon keeps answering (recalls wait for `ready`).
        with _collector_paused():
            cache = snapshot_cache(self.catalog.roots, self.catalog.index_kind)
            await asyncio.to_thread(self.catalog.scan, cache)
        # The warm catalog is millions of long-lived objects: keep the cyclic
        # GC from walking them again on every full collection (a pause of
        # milliseconds in the middle of a recall). Collect the young
        # generations first, where everything the scan made is: at 10,000
        # memories that takes 10 ms; a full collection took 100 ms and found
        # nothing more to free.
        gc.collect(1)
        gc.freeze()
        self.ready.set()
        log.info("snapshot cache: %s", self.catalog.cache_report)
        self.apply_changes(set())
        log.info(
            "indexed %d memories in %.0f ms (%d skipped)",
            len(self.catalog),
            self.catalog.build_ms or 0,
            len(self.catalog.skipped),
        )

    def _start_watcher(self) -> None:
        self.watcher_state = WatcherStatus(state="starting")
        self.watcher = CatalogWatcher(
            [r.path for r in self.catalog.roots], self.apply_changes, self._on_watcher_state
        )
        self._tasks.spawn(self.watcher.run(), "watcher")

    def _on_watcher_state(self, state: str, detail: str | None) -> None:
        self.watcher_state = WatcherStatus(state=state, detail=detail)  # type: ignore[arg-type]

    def apply_changes(self, paths: set[str]) -> None:
        """Re-read changed paths; while the index is still building, remember them."""
        if self.ignore is not None and paths:
            paths = self.ignore(paths)
        self._pending_changes |= paths
        if not self.ready.is_set():
            return
        pending, self._pending_changes = self._pending_changes, set()
        for path in sorted(pending):
            try:
                self.catalog.refresh(path)
            except Exception:
                log.exception("could not refresh %s", path)


async def report_index_progress(session: CatalogSession, progress: Any, token: str) -> None:
    """Work-done progress while the first index builds (`progress` is pygls' helper)."""
    try:
        await asyncio.wait_for(progress.create_async(token), 5)
    except Exception:
        return  # the client did not accept a progress token: nothing to show
    progress.begin(token, types.WorkDoneProgressBegin(title="Indexing memories"))
    while not session.ready.is_set():
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(session.ready.wait(), 0.25)
        progress.report(
            token, types.WorkDoneProgressReport(message=f"{len(session.catalog)} memories")
        )
    progress.end(token, types.WorkDoneProgressEnd(message=f"{len(session.catalog)} memories"))


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """No cyclic GC while the initial scan builds the warm catalog.

    The scan allocates objects that live as long as the daemon and make no
    cycles; each full collection during it walks all of them again (55 ms of
    a 10,000-memory scan, more with every memory). The event loop keeps
    serving meanwhile: its garbage is freed by reference counts, and its rare
    cycles wait for the collector to resume.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
