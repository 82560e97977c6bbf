"""One warm memory core per workspace, shared by every agent and editor of the user
(docs/hooks.md, "One daemon").

The first hook or editor that names a workspace builds its core — the settings
every face reads (`core/config.py`) for that workspace, plus the hosts' own memory
folders found for it (read-only unless the user opts in) — and starts it: its
index, its watcher, its background work. Everyone who names the same workspace
after that gets the same core, so its catalog is in memory once. A core nobody
used for a while is stopped and dropped; the next request builds it again (from
the snapshot cache: milliseconds).

Roots that several workspaces share (the user's own) are watched by each of their
cores; a write through one core is passed at once to every other core that reads
the same root, so the others see it at their next recall without waiting for
their watcher.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_recall.protocol.messages import RootOption
from memory_recall.server.core.config import load_settings
from memory_recall.server.core.core import MemoryCore
from memory_recall.server.core.options import choose_roots
from memory_recall.server.hooks.host_memory import HostMemory, host_memories
from memory_recall.server.hooks.mirror import refresh
from memory_recall.server.roots import MemoryRoot, user_data_dir

log = logging.getLogger("memory_recall.daemon")

# A host's free-text memory is looked at again (a few stats) at most this often.
MIRROR_CHECK_S = 5.0
NO_WORKSPACE = ""  # the key of the core for hooks that name no folder (user roots only)


@dataclass
class _Entry:
    core: MemoryCore
    hosts: list[tuple[HostMemory, Path]]  # each host memory and the root it is read from
    used: float
    mirrors_checked: float


class CoreRegistry:
    """The daemon's cores, by workspace."""

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        host_memory: bool = True,
        host_memory_writable: bool = False,
        idle_s: float = 1800.0,
        data_dir: Path | None = None,
        clock: Any = time.monotonic,
    ) -> None:
        self._env = dict(os.environ if env is None else env)
        self._host_memory = host_memory
        self._host_writable = host_memory_writable
        self.idle_s = idle_s
        self._data_dir = data_dir or user_data_dir()
        self._clock = clock
        self._entries: dict[str, _Entry] = {}

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, workspace: str | None) -> MemoryCore:
        """The workspace's core, built and started on first use (inside the running loop)."""
        key = os.path.abspath(workspace) if workspace else NO_WORKSPACE
        entry = self._entries.get(key)
        now = self._clock()
        if entry is None:
            entry = self._build(key)
            self._entries[key] = entry
        elif entry.hosts and now - entry.mirrors_checked > MIRROR_CHECK_S:
            entry.mirrors_checked = now
            for memory, _root in entry.hosts:
                if memory.mirrored:
                    self._mirror(memory)
        entry.used = now
        return entry.core

    def _mirror(self, memory: HostMemory) -> Path | None:
        try:
            return refresh(self._data_dir, memory)
        except OSError as exc:
            log.warning("could not mirror %s memory %s: %s", memory.host, memory.source, exc)
            return None

    def _build(self, key: str) -> _Entry:
        workspace = key or None
        settings = load_settings(None, workspace=workspace, env=self._env)
        options = settings.options
        roots = list(choose_roots(options, settings.workspace))
        hosts: list[tuple[HostMemory, Path]] = []
        if self._host_memory and workspace is not None:
            for memory in host_memories(workspace, self._env):
                path = self._mirror(memory) if memory.mirrored else memory.source
                if path is None or any(r.path == path for r in roots):
                    continue
                hosts.append((memory, path))
                roots.append(MemoryRoot.of(path, memory.scope, read_only=not self._host_writable))
        options.roots = [
            RootOption(
                path=str(r.path), scope=r.scope.wire,
                follow_symlinks=r.follow_symlinks_outside, read_only=r.read_only,
            )
            for r in roots
        ]  # fmt: skip
        core = MemoryCore(
            options,
            settings.workspace,
            problems=settings.problems,
            on_fault=lambda message: log.warning("%s: %s", key or "(no workspace)", message),
        )
        for problem in core.problems:
            log.warning("%s: settings: %s", key or "(no workspace)", problem)
        loop = asyncio.get_running_loop()
        writer = getattr(core.write, "writer", None)
        if writer is not None:
            writer.own_writes.listeners.append(
                lambda path: loop.call_soon_threadsafe(self._written, core, path)
            )
        core.start()
        log.info("workspace %s: %d roots", key or "(none)", len(core.roots))
        now = self._clock()
        return _Entry(core, hosts, now, now)

    def _written(self, source: MemoryCore, path: str) -> None:
        """A write through `source`: every other core reading that root re-reads the file now."""
        for entry in self._entries.values():
            core = entry.core
            if core is source:
                continue
            if any(_inside(path, root.path) for root in core.roots):
                core.session.apply_changes({path})

    async def evict_idle(self) -> list[str]:
        """Stop the cores nobody used for `idle_s`; the workspaces dropped."""
        now = self._clock()
        gone = [k for k, e in self._entries.items() if now - e.used > self.idle_s]
        for key in gone:
            entry = self._entries.pop(key)
            await entry.core.stop()
            log.info("workspace %s: idle, dropped", key or "(none)")
        return gone

    async def stop_all(self) -> None:
        for key in list(self._entries):
            await self._entries.pop(key).core.stop()

    def status(self) -> list[dict[str, Any]]:
        """Each warm workspace: its roots (host memory marked), documents, last use."""
        now = self._clock()
        out = []
        for key, entry in self._entries.items():
            core = entry.core
            host_of = {str(root): memory for memory, root in entry.hosts}
            roots = []
            for root, count in zip(core.catalog.roots, core.catalog.count_by_root(), strict=True):
                memory = host_of.get(str(root.path))
                roots.append(
                    {
                        "path": str(root.path),
                        "scope": root.scope.wire,
                        "documents": count,
                        "readOnly": root.read_only,
                        "host": memory.host if memory else None,
                        "source": str(memory.source) if memory else None,
                    }
                )
            out.append(
                {
                    "workspace": key or None,
                    "ready": core.session.ready.is_set(),
                    "documents": len(core.catalog),
                    "roots": roots,
                    "idleSeconds": round(now - entry.used, 1),
                }
            )
        return out


def _inside(path: str, root: Path) -> bool:
    try:
        Path(path).relative_to(root)
    except ValueError:
        return False
    return True
