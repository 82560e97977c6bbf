"""One editor session's warm state: the index build, the watcher, background tasks, progress.

Knows the catalog and the watcher, not JSON-RPC: progress and state changes
are reported through the callables it is given. Whatever the disk does (a
root that cannot be entered, a snapshot cache that cannot be written, a
watcher that dies), the session becomes ready and says what went wrong in
`faults`, in words a user can act on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from typing import Any

from memory_recall.protocol.messages import WatcherStatus
from memory_recall.server.catalog.catalog import MemoryCatalog, PathChange
from memory_recall.server.catalog.snapshot_cache import snapshot_cache
from memory_recall.server.catalog.watcher import CatalogWatcher
from memory_recall.server.core import heap
from memory_recall.server.pacing import foreground, quiet_from_now, until_quiet
from memory_recall.server.ranking.view import CorpusView

log = logging.getLogger("memory_recall")

# Applying a large change (a root of thousands of files coming back) yields to
# the event loop this often, so that status and recalls are never held longer.
APPLY_SLICE_S = 0.005
# The snapshot a scan left unwritten is written once recalls have been quiet this long
# after `ready` (or this much later at the latest: it lets recalls go first anyway); when
# changes came in during the writing, again after a pause that doubles each time (a tree
# that keeps changing is not written over and over).
SAVE_AFTER_QUIET_S = 0.3
SAVE_AFTER_AT_MOST_S = 1.0
SAVE_AGAIN_AFTER_S = 5.0
SAVE_AGAIN_AT_MOST_S = 300.0

FaultSink = Callable[[str], None]


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
        catalog: MemoryCatalog,
        tasks: TaskRegistry,
        *,
        on_fault: FaultSink | None = None,
        ignore: Callable[[set[str]], set[str]] | None = None,
        on_changed: Callable[[], None] | None = None,
        prepare: Callable[[CorpusView], object] | None = None,
    ) -> None:
        self.catalog = catalog
        self.ready = asyncio.Event()
        # Set once the snapshot the first scan left unwritten is written (or put off):
        # the memory network's build waits for it (two CPU-bound threads beside the
        # recalls slowed them twice as much as one).
        self.snapshot_done = asyncio.Event()
        self.changing = False  # a batch of the watcher's changes is being applied
        self.watcher: CatalogWatcher | None = None
        self.watcher_state = WatcherStatus(state="off")
        self.faults: list[str] = []  # what went wrong and stays true for the session
        self._on_fault = on_fault
        self._told: set[str] = set()
        self._tasks = tasks
        self._pending_changes: set[str] = set()
        self._changes_waiting = asyncio.Event()
        # Drops the paths that are this process's own writes (the writer's echo filter).
        self.ignore = ignore
        # Called after each batch of changes is applied (the semantic channel re-embeds).
        self.on_changed = on_changed
        # Run on the first index before `ready` (the ranker's lookups of the commonest words).
        self.prepare = prepare

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

    def fault(self, message: str) -> None:
        """Record a fault that stays true for the session, and tell the user."""
        if message not in self.faults:
            self.faults.append(message)
        self._tell(message)

    def current_faults(self) -> list[str]:
        """What is wrong now, in words: the session's faults, roots that cannot be
        read, a watcher that failed (for `memory/status`)."""
        faults = [*self.faults, *self.catalog.root_problems()]
        if self.watcher_state.state == "failed" and self.watcher_state.detail:
            faults.append(f"the file watcher failed: {self.watcher_state.detail}")
        return faults

    def _tell(self, message: str) -> None:
        """Log and show each distinct problem once."""
        if message in self._told:
            return
        self._told.add(message)
        log.warning("%s", message)
        if self._on_fault:
            self._on_fault(message)

    async def _build_index(self) -> None:
        # A large tree takes seconds to parse: do it off the event loop so
        # the daemon keeps answering (recalls wait for `ready`).
        try:
            with heap.collector_paused():
                # Its snapshot is written after `ready` (`_save_snapshot`): at 100,000
                # memories writing it took 3 s, and every start after a change paid them.
                await asyncio.to_thread(
                    self.catalog.scan,
                    snapshot_cache(self.catalog.roots, self.catalog.index_kind),
                    save=False,
                )
        except Exception as exc:  # our bug: still serve what can be served
            log.error("the index build failed: %s: %s", type(exc).__name__, exc)
            log.debug("traceback of the failed index build", exc_info=True)
            self.fault(
                f"the index build failed ({type(exc).__name__}); "
                "built again without the snapshot cache"
            )
            try:
                await asyncio.to_thread(self.catalog.scan, None)
            except Exception as again:
                self.fault(f"the index could not be built ({type(again).__name__}: {again})")
        else:
            await self._prepare()
        finally:
            # The warm catalog is millions of long-lived objects: keep the cyclic
            # GC from walking them again on every full collection (a pause of
            # milliseconds in the middle of a recall). Collecting the young
            # generations, where everything the scan made is, takes 10 ms at 10,000
            # memories; a full collection took 100 ms and found nothing more to free.
            heap.freeze_young()
            # The start-up work that waits for quiet comes after the first recalls.
            quiet_from_now()
            self.ready.set()
        self._report_disk_faults()
        log.info("snapshot cache: %s", self.catalog.cache_report)
        self._tasks.spawn(self._apply_loop(), "changes")
        self._changes_waiting.set()
        self._tasks.spawn(self._save_snapshot(), "snapshot")
        log.info(
            "indexed %d memories in %.0f ms (%d skipped)",
            len(self.catalog),
            self.catalog.build_ms or 0,
            len(self.catalog.skipped),
        )

    async def _save_snapshot(self) -> None:
        """Write the snapshot the first scan left unwritten (a first start, or files that
        changed since the last one): in a worker thread that lets requests go first, once
        recalls are quiet; again later when changes came in while it was written."""
        pause = SAVE_AGAIN_AFTER_S
        try:
            while self.catalog.unsaved is not None:
                await until_quiet(SAVE_AFTER_QUIET_S, SAVE_AFTER_AT_MOST_S)
                # Its records of every file are made and dropped at once: a full
                # collection among them walked them in the middle of a recall (30-60 ms
                # at 100,000).
                with heap.collector_paused():
                    saved = await asyncio.to_thread(self.catalog.save_snapshot)
                if saved:
                    break
                self.snapshot_done.set()  # the network need not wait for the retries
                log.debug(
                    "the catalog changed while its snapshot was written: again in %.0f s", pause
                )
                await asyncio.sleep(pause)
                pause = min(2 * pause, SAVE_AGAIN_AT_MOST_S)
        finally:  # (a failure is the task's, logged: the network is built all the same)
            self.snapshot_done.set()
        if self.catalog.cache_fault:
            self.fault(self.catalog.cache_fault)

    async def _prepare(self) -> None:
        """What the first recall would otherwise pay, done on the index before `ready`
        (docs/ranking.md, "Ready means ready"); a failure only leaves it to that recall."""
        if self.prepare is None:
            return
        try:
            await asyncio.to_thread(self.prepare, self.catalog.snapshot())
        except Exception as exc:  # our bug: the index is built, serve it
            log.warning("preparing the index failed: %s: %s", type(exc).__name__, exc)

    def _report_disk_faults(self) -> None:
        for problem in self.catalog.root_problems():
            self._tell(f"{problem}; its memories are not served until it can be read")
        if self.catalog.cache_fault:
            self.fault(self.catalog.cache_fault)

    def _start_watcher(self) -> None:
        self.watcher_state = WatcherStatus(state="starting")
        self.watcher = CatalogWatcher(
            [r.path for r in self.catalog.roots], self.apply_changes, self._on_watcher_state
        )
        self._tasks.spawn(self.watcher.run(), "watcher")

    def _on_watcher_state(self, state: str, detail: str | None) -> None:
        self.watcher_state = WatcherStatus(state=state, detail=detail)  # type: ignore[arg-type]
        if state == "failed" and detail:
            # Told once per cause, not once per retry (the detail counts down).
            self._tell(f"the file watcher failed: {detail.split(';')[0]}; rescanning instead")

    def apply_changes(self, paths: set[str]) -> None:
        """Queue changed paths; they are read off the event loop and applied in slices."""
        if self.ignore is not None and paths:
            paths = self.ignore(paths)
        self._pending_changes |= paths
        if paths:
            self._changes_waiting.set()

    async def _apply_loop(self) -> None:
        """Apply queued changes, one batch at a time, in arrival order of batches."""
        while True:
            await self._changes_waiting.wait()
            self._changes_waiting.clear()
            pending, self._pending_changes = self._pending_changes, set()
            if not pending:
                continue
            self.changing = True
            try:
                with foreground():  # a change is for the next recall: background waits
                    changes = await asyncio.to_thread(self._read_changes, sorted(pending))
                    for change in changes:
                        await self._apply(change)
            finally:
                self.changing = False
            self._report_disk_faults()
            if self.on_changed is not None:
                self.on_changed()

    def _read_changes(self, paths: list[str]) -> list[PathChange]:
        changes = []
        for path in paths:
            try:
                changes.append(self.catalog.read_change(path))
            except Exception as exc:  # our bug: the other paths still go in
                log.error("could not read the change of %r: %s: %s", path, type(exc).__name__, exc)
                log.debug("traceback", exc_info=True)
        return changes

    async def _apply(self, change: PathChange) -> None:
        started = time.perf_counter()
        try:
            for _ in self.catalog.apply_change(change):
                if time.perf_counter() - started > APPLY_SLICE_S:
                    await asyncio.sleep(0)
                    started = time.perf_counter()
        except Exception as exc:
            log.error(
                "could not apply the change of %r: %s: %s",
                str(change.path),
                type(exc).__name__,
                exc,
            )
            log.debug("traceback", exc_info=True)
