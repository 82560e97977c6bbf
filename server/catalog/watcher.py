"""watchfiles batches → the paths whose state the catalog must re-read.

The watcher trusts no change kind (editors save by rename, vim renames the old
file away): it only says which paths changed, and the catalog stats each one.
Roots that do not exist yet are checked for every half second and watched from
the moment they appear; a root that is deleted is dropped and watched again
when it comes back, and read again once its new watch is in place (files made
between the first look and the watch would be missed otherwise). A root that is
replaced between two looks (`rm -rf root && mkdir root`, or moved away and back)
leaves a path that exists but a watch on a directory that is gone: the OS reports
the root itself as changed (and may give the new directory the old one's inode, so
its identity is checked too), and such a root is watched anew and read again whole
once the new watch is in place (docs/performance.md, "Every change seen").

A watcher that fails never leaves the catalog stale in silence: the native
watcher falls back to polling; when watchfiles cannot go on at all (a symlink
loop, a file name that is not UTF-8, a directory made unreadable) the roots
are rescanned by a plain directory walk of our own until watchfiles is tried
again, with backoff, and the state says what happened in words.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import time
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
# A failed watcher is tried again after 2, 4, 8 … seconds, at most this long.
RETRY_FIRST_S = 2.0
RETRY_MAX_S = 60.0
# A watcher that ran this long without failing starts its backoff afresh.
HEALTHY_AFTER_S = 60.0
# While watchfiles cannot run, the roots are walked this often (at least), and
# never more than a tenth of the time (a walk of a large tree takes a while).
RESCAN_EVERY_S = 2.0
RESCAN_DUTY = 10

ChangeSink = Callable[[set[str]], None]
StateSink = Callable[[str, str | None], None]
TreeState = dict[str, tuple[int, int, int]]  # path → (mode, size, mtime_ns)
Identities = tuple[tuple[Path, tuple[int, int]], ...]  # the existing roots, (device, inode)


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
        self._forced = bool(force_polling) or bool(env and env.lower() not in {"0", "false"})
        self._polling = self._forced
        # Why files are polled rather than watched natively, for memory/status.
        self._polling_reason = "WATCHFILES_FORCE_POLLING is set" if env and self._polling else None

    def stop(self) -> None:
        self._stop.set()

    def _existing(self) -> Identities:
        """The roots that are directories now, each with its identity."""
        found = []
        for root in self.roots:
            identity = _identity(root)
            if identity is not None:
                found.append((root, identity))
        return tuple(found)

    def _watching_detail(self, existing: Identities) -> str | None:
        """What the state `watching` leaves out: the roots that are not there."""
        missing = len(self.roots) - len(existing)
        if not missing:
            return self._polling_reason
        gone = f"{missing} of {len(self.roots)} memory roots do not exist; waiting for them"
        return f"{self._polling_reason}; {gone}" if self._polling_reason else gone

    def _to_root_paths(self, raw: set[str]) -> set[str]:
        """Map reported paths back under the configured (unresolved) root paths."""
        out = set()
        for path in raw:
            for root in self.roots:
                with contextlib.suppress(OSError, ValueError):
                    real = os.path.realpath(root)
                    if path == real or path.startswith(real + os.sep):
                        path = str(root) + path[len(real) :]
                        break
            out.add(path)
        return out

    async def run(self) -> None:
        failures = 0
        known = self._existing()  # the initial scan covers the roots that exist now
        appeared: set[Path] = set()
        while not self._stop.is_set():
            existing = self._existing()
            if existing != known:
                # A root appeared, vanished or was replaced: read it again whole, or drop it.
                changed = {r for r, _ in set(existing) ^ set(known)}
                self._on_changes({str(r) for r in changed})
                appeared |= changed & {r for r, _ in existing}
                known = existing
            if not existing:
                self._on_state("watching", "no memory root exists yet; waiting for one")
                await self._sleep(ROOT_CHECK_MS / 1000)
                continue
            self._on_state(
                "polling" if self._polling else "watching", self._watching_detail(existing)
            )
            started = time.monotonic()
            try:
                async for changes in watchfiles.awatch(
                    *(r for r, _ in existing),
                    debounce=DEBOUNCE_MS,
                    step=STEP_MS,
                    stop_event=self._stop,
                    rust_timeout=ROOT_CHECK_MS,
                    yield_on_timeout=True,
                    force_polling=self._polling,
                    poll_delay_ms=POLL_DELAY_MS,
                    ignore_permission_denied=True,
                ):
                    if appeared:  # the new watch is in place: read again what it missed
                        self._on_changes({str(r) for r in appeared})
                        appeared = set()
                    paths = self._to_root_paths({path for _, path in changes})
                    if paths:
                        self._on_changes(paths)
                    if time.monotonic() - started > HEALTHY_AFTER_S:
                        failures = 0
                    # A root itself changed: its watch may be on a directory that is gone.
                    replaced = {r for r, _ in existing if str(r) in paths}
                    if replaced:
                        appeared |= replaced
                        break
                    if self._existing() != existing:
                        break  # re-watch the new set of roots
            except Exception as exc:  # the OS watcher failed (limits, permissions, loops…)
                failures += 1
                reason = describe_failure(exc)
                # Whatever changed while it was failing is read again.
                self._on_changes({str(r) for r, _ in self._existing()})
                if not self._polling:
                    self._polling = True
                    self._polling_reason = f"native watcher failed: {reason}; polling instead"
                    log.warning("file watcher failed (%s); falling back to polling", reason)
                    continue
                delay = min(RETRY_MAX_S, RETRY_FIRST_S * 2 ** (failures - 1))
                self._on_state(
                    "failed",
                    f"{reason}; changes are found by rescanning the memory roots every "
                    f"{RESCAN_EVERY_S:.0f} s or more until the watcher restarts (next try in "
                    f"{delay:.0f} s)",
                )
                log.warning("file watcher failed (%s); rescanning until it restarts", reason)
                await self._rescan_for(delay)
                # Start again from the native watcher: what broke it may be gone.
                self._polling = self._forced
                self._polling_reason = (
                    f"restarted after a failure ({reason})" if not self._forced else None
                )
        self._on_state("stopped", None)

    async def _rescan_for(self, seconds: float) -> None:
        """Find changes with a directory walk of our own for `seconds`."""
        deadline = time.monotonic() + seconds
        previous = await asyncio.to_thread(tree_state, self.roots)
        while not self._stop.is_set() and time.monotonic() < deadline:
            walk_started = time.monotonic()
            current = await asyncio.to_thread(tree_state, self.roots)
            took = time.monotonic() - walk_started
            changed = {
                p for p in previous.keys() | current.keys() if previous.get(p) != current.get(p)
            }
            if changed:
                self._on_changes(changed)
            previous = current
            await self._sleep(max(RESCAN_EVERY_S, took * RESCAN_DUTY))

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._stop.wait(), seconds)


def describe_failure(exc: BaseException) -> str:
    """A watcher failure in one line: the innermost message (watchfiles wraps it in groups)."""
    while getattr(exc, "exceptions", None):  # an ExceptionGroup (anyio's task group)
        exc = exc.exceptions[0]  # type: ignore[attr-defined]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    text = text.removeprefix("error in underlying watcher: ")
    return text[:300]


def tree_state(roots: Sequence[Path]) -> TreeState:
    """Mode, size and mtime of every visible entry under the roots (symlinks not followed)."""
    state: TreeState = {}
    stack = [str(r) for r in roots]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as entries:
                for entry in entries:
                    if entry.name.startswith("."):
                        continue
                    try:
                        st = entry.stat(follow_symlinks=False)
                    except OSError:
                        continue
                    state[entry.path] = (st.st_mode, st.st_size, st.st_mtime_ns)
                    if stat.S_ISDIR(st.st_mode):
                        stack.append(entry.path)
        except (OSError, ValueError):
            continue
    for root in roots:
        with contextlib.suppress(OSError, ValueError):
            st = os.stat(root)
            state[str(root)] = (st.st_mode, 0, 0)  # a root's own mode: unreadable and back
    return state


def _identity(path: Path) -> tuple[int, int] | None:
    """(device, inode) of a directory we can look at; None when missing, unreachable or not
    a directory."""
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino) if stat.S_ISDIR(st.st_mode) else None
