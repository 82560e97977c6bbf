"""watchfiles batches → the paths whose state the catalog must re-read.

The watcher trusts no change kind (editors save by rename, vim renames the old
file away): it only says which paths changed, and the catalog stats each one.
Roots that do not exist yet are checked for every second and watched from the
moment they appear; a root that is deleted is dropped and watched again when
it comes back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable, Sequence
from pathlib import Path

import watchfiles

log = logging.getLogger("memory_recall.watcher")

# watchfiles defaults (1,600 ms debounce) would make an edit take seconds to
# show; 50 ms still groups an editor's temp-write-rename into one batch.
DEBOUNCE_MS = 50
STEP_MS = 10
# How often the set of existing roots is re-checked while watching.
ROOT_CHECK_MS = 500
POLL_DELAY_MS = 100

ChangeSink = Callable[[set[str]], None]
StateSink = Callable[[str, str | None], None]


class CatalogWatcher:
    def __init__(
        self,
        roots: Sequence[Path],
        on_changes: ChangeSink,
        on_state: StateSink,
        *,
        force_polling: bool | None = None,
    ) -> None:
        self.roots = list(roots)
        self._on_changes = on_changes
        self._on_state = on_state
        self._stop = asyncio.Event()
        env = os.environ.get("WATCHFILES_FORCE_POLLING")
        self._polling = bool(force_polling) or bool(env and env.lower() not in {"0", "false"})
        # Why files are polled rather than watched natively, for memory/status.
        self._polling_reason = "WATCHFILES_FORCE_POLLING is set" if env and self._polling else None

    def stop(self) -> None:
        self._stop.set()

    def _existing(self) -> tuple[Path, ...]:
        return tuple(r for r in self.roots if r.is_dir())

    def _to_root_paths(self, raw: set[str]) -> set[str]:
        """Map reported paths back under the configured (unresolved) root paths."""
        out = set()
        for path in raw:
            for root in self.roots:
                real = os.path.realpath(root)
                if path == real or path.startswith(real + os.sep):
                    path = str(root) + path[len(real) :]
                    break
            out.add(path)
        return out

    async def run(self) -> None:
        failures = 0
        known = self._existing()  # the initial scan covers the roots that exist now
        while not self._stop.is_set():
            existing = self._existing()
            if existing != known:
                # A root appeared or vanished: rescan or drop it.
                self._on_changes({str(r) for r in set(existing) ^ set(known)})
                known = existing
            if not existing:
                self._on_state("watching", "no memory root exists yet; waiting for one")
                await self._sleep(ROOT_CHECK_MS / 1000)
                continue
            self._on_state("polling" if self._polling else "watching", self._polling_reason)
            try:
                async for changes in watchfiles.awatch(
                    *existing,
                    debounce=DEBOUNCE_MS,
                    step=STEP_MS,
                    stop_event=self._stop,
                    rust_timeout=ROOT_CHECK_MS,
                    yield_on_timeout=True,
                    force_polling=self._polling,
                    poll_delay_ms=POLL_DELAY_MS,
                    ignore_permission_denied=True,
                ):
                    if changes:
                        self._on_changes(self._to_root_paths({path for _, path in changes}))
                    if self._existing() != existing:
                        break  # re-watch the new set of roots
                failures = 0
            except Exception as exc:  # the OS watcher failed (limits, permissions…)
                failures += 1
                if not self._polling:
                    self._polling = True
                    self._polling_reason = f"native watcher failed: {exc}"
                    log.warning("file watcher failed (%s); falling back to polling", exc)
                    self._on_state("polling", self._polling_reason)
                else:
                    self._on_state("failed", str(exc))
                    log.error("file watcher failed: %s; retrying", exc)
                    await self._sleep(min(30.0, 0.5 * 2**failures))
        self._on_state("stopped", None)

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)
