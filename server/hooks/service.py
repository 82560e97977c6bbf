"""One hook event served with the memory core (docs/hooks.md): the host adapters' one job.

The two delivery points of the recall design map onto every host's hooks:

- the **prompt hook** starts a recall of the prompt and answers with its fast result
  (at most 2 memories) as soon as it exists, within the hook's deadline; the recall
  stays pending here, keyed by the host's session;
- the **first tool hook** after it answers with the refined result (at most 5,
  never one the fast phase sent — the core's exclusion set of that recall), once
  it is ready; a tool hook that comes before it is ready answers nothing and the
  next one tries again. A fast result that missed the prompt hook's deadline is
  not lost: it goes with the refined one;
- **session start** answers with the always-loaded context;
- **turn end / session end** answer nothing at once and extract, in the
  background, the transcript's turns not read before, through the core (the same
  gate, conflict rules and journal as every write), as writes or as proposals.

Without a model the fast phase is still sent (`fast_without_model`): the refined one
is then the lexical top 5 minus it. A prompt that is empty (qwen-code's second
UserPromptSubmit when a tool result goes back) changes nothing.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections import Counter, OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_recall.protocol.limits import MAX_QUERY_CHARS
from memory_recall.protocol.messages import (
    MAX_TRANSCRIPT_TURNS,
    ContextParams,
    ExtractParams,
    ExtractTurn,
    PhaseNotification,
    RecallParams,
    RecallTelemetry,
)
from memory_recall.server.core.core import MemoryCore
from memory_recall.server.core.errors import refusal
from memory_recall.server.hooks.hosts import HookEvent, Host, Point, output, read_event
from memory_recall.server.hooks.transcript import read_transcript

log = logging.getLogger("memory_recall.hooks")

# A recall waiting for its tool hook is forgotten after this long, and at most this many wait
# (one per live session of every agent the user runs).
PENDING_TTL_S = 3600.0
MAX_PENDING = 512
# How long a session's extraction bookkeeping is kept.
EXTRACTED_MAX = 4096

CoreFor = Callable[[str | None], MemoryCore]
EXTRACT_MODES = ("write", "propose", "off")


@dataclass
class _Pending:
    """One prompt's recall, waiting for the session's first tool hook."""

    prompt: str
    task: asyncio.Task[Any]
    fast: asyncio.Future[PhaseNotification | None]
    refined: asyncio.Future[PhaseNotification | None]
    started: float
    fast_sent: bool = False
    refined_sent: bool = False


class _Listener:
    """A hook recall's listener: resolves the futures the hooks wait on."""

    def __init__(self, pending: _Pending) -> None:
        self._pending = pending

    def fast_result(self, note: PhaseNotification) -> None:
        if not self._pending.fast.done():
            self._pending.fast.set_result(note)

    def refined_result(self, note: PhaseNotification) -> None:
        if not self._pending.fast.done():
            self._pending.fast.set_result(None)  # no fast phase: nothing matched
        if not self._pending.refined.done():
            self._pending.refined.set_result(note)

    def telemetry(self, event: RecallTelemetry) -> None:
        return None


@dataclass
class HookCounters:
    """What the hooks did, for `memory-recall daemon status`."""

    events: Counter[str] = field(default_factory=Counter)  # "host event" → count
    fast_sent: int = 0
    refined_sent: int = 0
    context_sent: int = 0
    missed_deadline: int = 0
    extractions: int = 0
    extracted_written: int = 0
    extracted_proposed: int = 0
    extraction_refused: int = 0
    last_extraction: str | None = None

    def wire(self) -> dict[str, Any]:
        out = dict(vars(self))
        out["events"] = dict(self.events)
        return out


def workspace_of(cwd: str | None, project_dir: str | None = None) -> str | None:
    """The workspace a hook names: the host's project folder when it says it, else the
    nearest folder above `cwd` with a `.memory` folder, else with `.git`, else `cwd`."""
    if project_dir and os.path.isabs(project_dir) and os.path.isdir(project_dir):
        return os.path.abspath(project_dir)
    if not cwd or not os.path.isabs(cwd) or not os.path.isdir(cwd):
        return None
    here = Path(os.path.abspath(cwd))
    for marker in (".memory", ".git"):
        for folder in (here, *here.parents):
            if (folder / marker).exists():
                return str(folder)
    return str(here)


class HookService:
    """Serves hook events over the cores the daemon keeps (`cores(workspace)`)."""

    def __init__(self, cores: CoreFor, *, extract: str = "write") -> None:
        self._cores = cores
        self.extract_mode = extract if extract in EXTRACT_MODES else "write"
        self.counters = HookCounters()
        self._pending: OrderedDict[tuple[str, str], _Pending] = OrderedDict()
        self._extracted: OrderedDict[tuple[str, str], int] = OrderedDict()  # turns read
        self._background: set[asyncio.Task[Any]] = set()
        self._serial = 0

    @property
    def pending(self) -> int:
        return len(self._pending)

    async def serve(
        self, host: Host, event: str, data: Any, deadline_s: float, project_dir: str | None = None
    ) -> str:
        """What the hook prints: the host's JSON, or '' (nothing to add, or not in time)."""
        found = read_event(host, event, data)
        if found is None:
            return ""
        self.counters.events[f"{host.name} {found.event}"] += 1
        workspace = workspace_of(found.cwd, project_dir)
        key = (host.name, found.session or f"cwd:{found.cwd or ''}")
        started = time.monotonic()
        try:
            text = await self._serve(found, workspace, key, deadline_s, started)
        except Exception as exc:  # a hook never fails the agent: logged, nothing printed
            log.error("hook %s %s failed: %s: %s", host.name, found.event, type(exc).__name__, exc)
            return ""
        return output(host, found.event, text)

    async def _serve(
        self,
        event: HookEvent,
        workspace: str | None,
        key: tuple[str, str],
        deadline_s: float,
        started: float,
    ) -> str:
        if event.point is Point.PROMPT:
            return await self._prompt(event, workspace, key, deadline_s)
        if event.point is Point.TOOL:
            return await self._tool(key, deadline_s)
        if event.point is Point.START:
            return await self._context(workspace, deadline_s)
        self._spawn(self._extract(event, workspace, key, final=event.point is Point.END))
        return ""

    # -- the prompt hook: the fast result ------------------------------------------------------

    async def _prompt(
        self, event: HookEvent, workspace: str | None, key: tuple[str, str], deadline_s: float
    ) -> str:
        prompt = event.prompt.strip()[:MAX_QUERY_CHARS]
        if not prompt:
            return ""  # qwen-code's UserPromptSubmit for a tool result: the same turn
        self._drop(key)
        core = self._cores(workspace)
        loop = asyncio.get_running_loop()
        self._serial += 1
        request_id = f"hook:{key[0]}:{self._serial}"
        fast: asyncio.Future[PhaseNotification | None] = loop.create_future()
        refined: asyncio.Future[PhaseNotification | None] = loop.create_future()
        pending = _Pending(prompt, None, fast, refined, time.monotonic())  # type: ignore[arg-type]
        pending.task = asyncio.ensure_future(self._recall(core, pending, request_id))
        self._pending[key] = pending
        self._trim()
        try:
            note = await asyncio.wait_for(asyncio.shield(fast), max(0.0, deadline_s))
        except asyncio.TimeoutError:
            self.counters.missed_deadline += 1
            return ""
        if note is None or not note.docs:
            return ""
        pending.fast_sent = True
        self.counters.fast_sent += 1
        return note.prompt

    async def _recall(self, core: MemoryCore, pending: _Pending, request_id: str) -> None:
        try:
            await core.recall(
                RecallParams(query=pending.prompt),
                request_id,
                _Listener(pending),
                fast_without_model=True,
            )
        except Exception as exc:
            log.warning("hook recall failed: %s: %s", type(exc).__name__, exc)
        finally:
            for future in (pending.fast, pending.refined):
                if not future.done():
                    future.set_result(None)

    # -- the tool hook: the refined result -----------------------------------------------------

    async def _tool(self, key: tuple[str, str], deadline_s: float) -> str:
        pending = self._pending.get(key)
        if pending is None or pending.refined_sent:
            return ""
        try:
            note = await asyncio.wait_for(asyncio.shield(pending.refined), max(0.0, deadline_s))
        except asyncio.TimeoutError:
            return ""  # the model is still choosing: the next tool hook delivers it
        if pending.refined_sent:  # another tool hook of the session took it meanwhile
            return ""
        pending.refined_sent = True
        parts = []
        if not pending.fast_sent and pending.fast.done():
            late = pending.fast.result()
            if late is not None and late.docs:  # it missed the prompt hook: not lost
                parts.append(late.prompt)
                pending.fast_sent = True
        if note is not None and note.docs:
            parts.append(note.prompt)
        if not parts:
            return ""
        self.counters.refined_sent += 1
        return "\n".join(p.rstrip("\n") for p in parts) + "\n"

    # -- session start: the always-loaded context ----------------------------------------------

    async def _context(self, workspace: str | None, deadline_s: float) -> str:
        core = self._cores(workspace)
        try:
            found = await asyncio.wait_for(core.context(ContextParams()), max(0.0, deadline_s))
        except asyncio.TimeoutError:
            self.counters.missed_deadline += 1
            return ""
        prompt = found.get("prompt") or ""
        if prompt:
            self.counters.context_sent += 1
        return str(prompt)

    # -- turn end, session end: extraction -----------------------------------------------------

    async def _extract(
        self, event: HookEvent, workspace: str | None, key: tuple[str, str], *, final: bool
    ) -> None:
        if self.extract_mode == "off" or not event.transcript_path:
            return
        turns = await asyncio.to_thread(read_transcript, event.transcript_path)
        seen = self._extracted.get(key, 0)
        fresh = turns[seen:] if seen <= len(turns) else turns
        if final:
            self._extracted.pop(key, None)
        else:
            self._extracted[key] = len(turns)
            self._extracted.move_to_end(key)
            while len(self._extracted) > EXTRACTED_MAX:
                self._extracted.popitem(last=False)
        if not any(t.role == "user" for t in fresh):
            return  # nothing new the user said
        core = self._cores(workspace)
        params = ExtractParams(
            trigger="sessionEnd",
            transcript=[
                ExtractTurn(role=t.role, content=t.content)  # type: ignore[arg-type]
                for t in fresh[-MAX_TRANSCRIPT_TURNS:]
            ],
            apply=self.extract_mode == "write",
        )
        self.counters.extractions += 1
        try:
            result = await core.extract(params)
        except Exception as exc:
            found = refusal(exc)
            if found is None:
                raise
            self.counters.extraction_refused += 1
            self.counters.last_extraction = f"refused: {found[1]}"
            log.info("extraction for %s not run: %s", workspace, found[1])
            return
        operations = result.get("operations", [])
        written = sum(o.get("action") in ("created", "updated", "merged") for o in operations)
        proposed = sum(o.get("action") == "proposed" for o in operations)
        self.counters.extracted_written += written
        self.counters.extracted_proposed += proposed
        self.counters.last_extraction = (
            f"{workspace}: {written} written, {proposed} proposed, "
            f"{len(result.get('skipped', []))} skipped"
            + (f", model failure: {result['failure']}" if result.get("failure") else "")
        )
        for op in operations:
            log.info("extracted (%s): %s %s", op.get("action"), op.get("title"), op.get("path"))

    # -- bookkeeping ---------------------------------------------------------------------------

    def _spawn(self, coro: Awaitable[Any]) -> None:
        task = asyncio.ensure_future(coro)
        self._background.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._background.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("hook background work failed: %r", t.exception())

        task.add_done_callback(done)

    def _drop(self, key: tuple[str, str]) -> None:
        old = self._pending.pop(key, None)
        if old is not None and not old.task.done():
            old.task.cancel()  # a new prompt: the old one's model answer reaches no one

    def _trim(self) -> None:
        now = time.monotonic()
        for key in [k for k, p in self._pending.items() if now - p.started > PENDING_TTL_S]:
            self._drop(key)
        while len(self._pending) > MAX_PENDING:
            self._drop(next(iter(self._pending)))

    async def settle(self) -> None:
        """Wait for the background extractions (tests, the daemon's stop)."""
        while self._background:
            await asyncio.gather(*list(self._background), return_exceptions=True)

    def close(self) -> None:
        for key in list(self._pending):
            self._drop(key)
        for task in list(self._background):
            task.cancel()
