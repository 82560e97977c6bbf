"""Sync in the core (docs/sync.md, "Automatic"): when the daemon syncs each root set up for
it, the back-off when a remote cannot be reached, and the sync's part of `memory/status`.

A root is synced by the daemon when it was set up with `memory-recall sync init` (and not
set to manual) and the `sync.auto` setting is on: once the first index is built, after
writes once no write has come for `idleS`, and every `intervalS` to bring in what the
other machines pushed. A sync runs in a worker thread and starts only when recalls have
been quiet a moment; its Python loops are paced (server/pacing.py): recalls go first.
A failure is retried after 30 s, then twice as long each time up to 30 min; writes go on
meanwhile — offline work is never blocked.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Sequence

from memory_recall.protocol.messages import (
    SyncHeldFile,
    SyncOptions,
    SyncRootStatus,
    SyncState,
)
from memory_recall.server import pacing
from memory_recall.server.roots import MemoryRoot, Scope
from memory_recall.server.store.state import StateStore
from memory_recall.server.sync.repo import SyncRefused
from memory_recall.server.sync.scan import CommittedSecret
from memory_recall.server.sync.service import RootSync, SyncOutcome, SyncService, classify

log = logging.getLogger("memory_recall.sync")

DEFAULT_INTERVAL_S = 300
DEFAULT_IDLE_S = 5
FIRST_RETRY_S = 30.0
LAST_RETRY_S = 1800.0
QUIET_BEFORE_S = 0.5  # recalls quiet this long before a sync starts
RECHECK_ROOTS_S = 60.0  # how often the daemon looks again for roots newly set up


def retry_delay_s(failures: int) -> float:
    """How long after the last failed attempt the next one is: 30 s, doubling, at most 30 min."""
    if failures <= 0:
        return 0.0
    return min(FIRST_RETRY_S * 2 ** (failures - 1), LAST_RETRY_S)


class SyncSide:
    """The core's sync: its service, its schedule, its status."""

    def __init__(
        self,
        roots: Sequence[MemoryRoot],
        state: StateStore | None,
        options: SyncOptions,
        *,
        index_cap: int,
    ) -> None:
        self.options = options
        self.service = SyncService(roots, state, index_cap=index_cap) if state else None
        self.interval_s = float(options.interval_s or DEFAULT_INTERVAL_S)
        self.idle_s = float(options.idle_s or DEFAULT_IDLE_S)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._nudge: asyncio.Event | None = None
        self._last_write = 0.0
        self._running: set[int] = set()
        self._last: dict[int, SyncOutcome] = {}

    @property
    def roots(self) -> list[MemoryRoot]:
        return self.service.roots if self.service is not None else []

    def require(self) -> SyncService:
        if self.service is None:
            raise SyncRefused(
                "sync needs the state store (its journal): MEMORY_RECALL_STATE_DIR is off or"
                " the store could not be opened"
            )
        return self.service

    # -- what the core tells it ---------------------------------------------------------------

    def wrote(self, _path: str = "") -> None:
        """A memory changed (a write, from any thread; or the watcher's batch): a sync is
        due once writes have been quiet for `idleS`."""
        self._last_write = time.monotonic()
        loop, nudge = self._loop, self._nudge
        if loop is not None and nudge is not None:
            loop.call_soon_threadsafe(nudge.set)

    # -- the daemon's schedule --------------------------------------------------------------

    def automatic(self) -> list[int]:
        """The roots the daemon syncs on its own."""
        if self.service is None or not self.options.auto:
            return []
        found = []
        for index in range(len(self.service.roots)):
            repo = self.service.repo(index)
            if repo.is_set_up and repo.auto and repo.remote_url:
                found.append(index)
        return found

    async def run(self, ready: asyncio.Event) -> None:
        """The background task: sync on start, after writes once idle, every interval."""
        if self.service is None or not self.options.auto:
            return
        self._loop = asyncio.get_running_loop()
        self._nudge = asyncio.Event()
        await ready.wait()
        roots = await asyncio.to_thread(self.automatic)
        checked = time.monotonic()
        due = {index: time.monotonic() for index in roots}  # on start
        handled_write = 0.0
        while True:
            now = time.monotonic()
            if now - checked >= RECHECK_ROOTS_S:
                for index in await asyncio.to_thread(self.automatic):
                    due.setdefault(index, now)
                checked = now
            if self._last_write > handled_write:
                handled_write = self._last_write
                for index in due:
                    due[index] = min(due[index], handled_write + self.idle_s)
            waiting = [i for i in due if due[i] <= now]
            if waiting and now - self._last_write < self.idle_s:
                waiting = []  # writes are still coming: wait for the pause
            for index in waiting:
                due[index] = await self._sync_when_quiet(index)
            if not due:
                await self._sleep(RECHECK_ROOTS_S)
                continue
            wake = min(min(due.values()), self._last_write + self.idle_s, checked + RECHECK_ROOTS_S)
            await self._sleep(max(0.05, wake - time.monotonic()))

    async def _sleep(self, seconds: float) -> None:
        assert self._nudge is not None
        self._nudge.clear()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._nudge.wait(), seconds)

    async def _sync_when_quiet(self, index: int) -> float:
        """Sync one root once recalls are quiet; when the next sync of it is due."""
        service = self.require()
        record = service.ledger.record(service.root_id(index))
        if record.failures and record.last_attempt_ms:
            retry = record.last_attempt_ms / 1000 + retry_delay_s(record.failures)
            if retry > time.time():
                return time.monotonic() + (retry - time.time())
        await pacing.until_quiet(QUIET_BEFORE_S)
        outcome = await self.sync(index, wait_s=0.0)
        if outcome.state in ("offline", "error"):
            log.warning("sync of %s: %s", outcome.root, outcome.error)
            failures = service.ledger.record(service.root_id(index)).failures
            return time.monotonic() + retry_delay_s(failures)
        return time.monotonic() + self.interval_s

    # -- requests ---------------------------------------------------------------------------------

    async def sync(self, index: int, *, wait_s: float = 30.0) -> SyncOutcome:
        """One sync of one root, in a worker thread."""
        service = self.require()
        self._running.add(index)
        try:
            outcome = await asyncio.to_thread(service.sync, index, wait_s=wait_s)
        finally:
            self._running.discard(index)
        if outcome.state != "busy":
            self._last[index] = outcome
        return outcome

    async def sync_all(self, scope: str | None = None) -> list[SyncOutcome]:
        service = self.require()
        indexes = await asyncio.to_thread(service.synced)
        if scope is not None:
            indexes = [i for i in indexes if service.roots[i].scope.value == scope]
        return [await self.sync(i) for i in indexes]

    def root_for(self, scope: str) -> int:
        """The root a `--scope` names: the first configured root of that scope."""
        wanted = Scope(scope)
        for index, root in enumerate(self.roots):
            if root.scope is wanted:
                return index
        raise SyncRefused(f"no {scope} root is configured")

    async def init(
        self, scope: str, remote: str | None, *, auto: bool = True
    ) -> tuple[list[str], SyncOutcome]:
        service = self.require()
        index = self.root_for(scope)
        return await asyncio.to_thread(service.init, index, remote, auto=auto)

    async def check(self, scope: str) -> list[CommittedSecret]:
        service = self.require()
        return await asyncio.to_thread(service.check, self.root_for(scope))

    async def rewrite_history(self, scope: str) -> tuple[str, int]:
        service = self.require()
        return await asyncio.to_thread(service.rewrite_history, self.root_for(scope))

    async def set_auto(self, scope: str, auto: bool) -> None:
        service = self.require()
        repo = service.repo(self.root_for(scope))
        if not repo.is_set_up:
            raise SyncRefused(f"{repo.root.path} is not set up: memory-recall sync init")
        await asyncio.to_thread(repo.set_auto, auto)

    # -- status -----------------------------------------------------------------------------------

    def status(self) -> list[SyncRootStatus]:
        """Every root set up for sync (a worker thread: it asks git for ahead and behind)."""
        if self.service is None:
            return []
        found = []
        for index in range(len(self.service.roots)):
            try:
                if not self.service.repo(index).is_set_up:
                    continue
                found.append(self._wire(index, self.service.status(index)))
            except OSError:  # the root's own fault is in the roots' status; skip it here
                continue
        return found

    def _wire(self, index: int, root: RootSync) -> SyncRootStatus:
        retry = None
        if root.failures and root.last_attempt_ms:
            retry = int(root.last_attempt_ms + 1000 * retry_delay_s(root.failures))
        state: SyncState
        last = self._last.get(index)
        if index in self._running:
            state = "syncing"
        elif not (root.auto and self.options.auto and root.remote):
            state = "off"
        elif last is not None and last.state in ("offline", "error", "blocked"):
            state = last.state
        else:
            state = classify(root.last_error)
        return SyncRootStatus(
            path=root.path,
            remote=root.remote,
            branch=root.branch or "",
            auto=root.auto and self.options.auto,
            state=state,
            ahead=root.ahead,
            behind=root.behind,
            pending=root.pending,
            last_sync_ms=root.last_sync_ms,
            last_error=root.last_error,
            retry_at_ms=retry,
            held=[SyncHeldFile(path=p, reason=r) for p, r in sorted(root.held.items())],
            secrets=root.secrets,
        )
