"""The daemon: one `MemoryServer` per editor session, served over stdio.

It wires the pieces together and owns nothing but their lifetime: options
(`options.py`) decide roots, ranker and selector; the session (`session.py`)
keeps the catalog warm; handlers (`handlers.py`) answer requests; the
transport (`transport.py`) reads frames; pygls internals stay in `adapter.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import uuid
from concurrent.futures import Future
from typing import Any, BinaryIO

from lsprotocol import types
from memory_recall.protocol import methods
from memory_recall.protocol.messages import InitializationOptions
from memory_recall.server import pacing
from memory_recall.server.daemon import handlers
from memory_recall.server.daemon.adapter import MemoryProtocol, make_converter
from memory_recall.server.daemon.extracting import ExtractionService
from memory_recall.server.daemon.framing import StdoutWriter, open_reader
from memory_recall.server.daemon.networking import NetworkSide
from memory_recall.server.daemon.options import (
    build_completer,
    build_selector,
    build_semantic,
    choose_ranker,
    choose_roots,
    completer_problem,
    parse_options,
    selector_timeout_s,
    workspace_path,
)
from memory_recall.server.daemon.organising import OrganiseSide
from memory_recall.server.daemon.reflecting import ReflectionSide
from memory_recall.server.daemon.searching import SearchSide
from memory_recall.server.daemon.session import CatalogSession, TaskRegistry, report_index_progress
from memory_recall.server.daemon.suggesting import SuggestionSide
from memory_recall.server.daemon.transport import read_frames
from memory_recall.server.daemon.writing import WriteSide
from memory_recall.server.organise.dream import CHECK_EVERY_S
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS
from memory_recall.server.recall import RecallService
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer

log = logging.getLogger("memory_recall")

SERVER_NAME = "memory-recall"
SERVER_VERSION = "0.1.0"
# The write side's rules are compiled once recalls have been quiet this long.
WARM_UP_AFTER_QUIET_S = 1.0


class MemoryServer(LanguageServer):
    """Owns the session, the recall service and the background tasks of one editor session."""

    protocol: MemoryProtocol

    def __init__(self, *, selector_ceiling_s: float | None = None) -> None:
        super().__init__(
            SERVER_NAME,
            SERVER_VERSION,
            protocol_cls=MemoryProtocol,
            converter_factory=make_converter,
        )
        self.initialized_at_protocol = False
        self.selector_ceiling_s = selector_ceiling_s
        self.options = InitializationOptions()
        self.tasks = TaskRegistry()
        self.session = CatalogSession([], self.tasks)
        self.service = RecallService(None, RANKERS[DEFAULT_RANKER], ceiling_s=selector_ceiling_s)
        self.organise = OrganiseSide([], None)
        self.write: WriteSide | None = None
        self.extraction: ExtractionService | None = None
        self.searching = SearchSide(RANKERS[DEFAULT_RANKER])
        self.suggestions: SuggestionSide | None = None
        self._option_problems: list[str] = []
        self._initialized = False  # the client's `initialized` arrived (once is enough)
        self._untold_faults: list[str] = []  # found before `initialized`: shown at it
        self._exit = asyncio.Event()
        self.exit_code = 0
        self._register()

    def _register(self) -> None:
        # pygls registers plain functions (it tags them), so wrap the methods.
        @self.feature(types.INITIALIZE)
        def initialize(params: types.InitializeParams) -> None:
            self.on_initialize(params)

        @self.feature(types.INITIALIZED)
        def initialized(params: types.InitializedParams) -> None:
            self.on_initialized(params)

        @self.feature(types.SHUTDOWN)
        async def shutdown(params: Any) -> None:
            self.session.stop()
            if self.service.semantic is not None:
                await self.service.semantic.aclose()

        @self.feature(methods.RECALL)
        async def recall(params: Any) -> dict[str, Any]:
            return await handlers.recall(params, **self._services())

        @self.feature(methods.STATUS)
        async def status(params: Any) -> dict[str, Any]:
            return await handlers.status(params, **self._services())

        # Organisation (SPEC §10): the topic tree, the always-loaded context, consolidation.
        organise_handlers: tuple[tuple[str, Any], ...] = (
            (methods.TREE, handlers.tree),
            (methods.CONTEXT, handlers.context),
            (methods.CONSOLIDATE, handlers.consolidate),
        )
        for method, handler in organise_handlers:
            self._register_organise(method, handler)

        # The write side (SPEC §8): one handler per request, all through the session's writer.
        for method, handler in (
            (methods.REMEMBER, handlers.remember),
            (methods.UPDATE, handlers.update),
            (methods.FORGET, handlers.forget),
            (methods.RESTORE, handlers.restore),
            (methods.UNDO, handlers.undo),
            (methods.HISTORY, handlers.history),
            (methods.LIST, handlers.list_memories),
            (methods.PROPOSALS, handlers.proposals),
            (methods.CONFIRM, handlers.confirm),
            (methods.REJECT, handlers.reject),
        ):
            self._register_write(method, handler)

        # Search and suggestions (SPEC §11–12): the agent's memory tool, and what it is doing.
        @self.feature(methods.SEARCH)
        async def search(params: Any) -> Any:
            self.organise.touch()
            return await handlers.search(params, session=self.session, searching=self.searching)

        @self.feature(methods.OBSERVE)
        def observe(params: Any) -> None:
            # A plain function (a notification): the matching runs in its own task.
            if self.suggestions is not None:
                handlers.observe(params, suggestions=self.suggestions)

        # Retrieval v2 and reflection (SPEC §11–12).
        @self.feature(methods.EXPLAIN)
        async def explain(params: Any) -> Any:
            self.organise.touch()
            return await handlers.explain(
                params,
                service=self.service,
                session=self.session,
                network=self.network,
                reflection=self.reflection,
                organise=self.organise,
            )

        # A notification (SPEC §12) or a request: a plain function, so nothing is left
        # behind either way (the store is written by a task of its own).
        @self.feature(methods.FEEDBACK)
        def feedback(params: Any) -> Any:
            self.organise.touch()
            return handlers.feedback(params, reflection=self.reflection)

        @self.feature(methods.EXTRACT)
        async def extract(params: Any) -> Any:
            assert self.write is not None and self.extraction is not None
            return await handlers.extract(
                params, write=self.write, session=self.session, extraction=self.extraction
            )

    async def _build_network(self) -> None:
        await self.session.ready.wait()
        await self.network.build()

    async def _warm_writer(self) -> None:
        """Compile the write side's rules ahead of the first `remember` — once recalls
        have been quiet for a moment: a pattern's compilation is one C call that keeps
        the interpreter lock for tens of milliseconds, which a recall would wait out."""
        await self.session.ready.wait()
        while pacing.quiet_for() < WARM_UP_AFTER_QUIET_S:
            await asyncio.sleep(WARM_UP_AFTER_QUIET_S / 4)
        if self.write is not None:
            await asyncio.to_thread(self.write.writer.warm_up)

    def _register_write(self, method: str, handler: Any) -> None:
        @self.feature(method)
        async def write(params: Any) -> Any:
            assert self.write is not None  # requests before `initialize` are refused
            self.organise.touch()
            return await handler(params, write=self.write, session=self.session)

    def _register_organise(self, method: str, handler: Any) -> None:
        @self.feature(method)
        async def organise(params: Any) -> Any:
            self.organise.touch()
            return await handler(params, session=self.session, organise=self.organise)

    async def _consolidate_when_idle(self) -> None:
        """`organise.autoConsolidate`: every minute, consolidate what is due if idle."""
        await self.session.ready.wait()
        while True:
            await asyncio.sleep(CHECK_EVERY_S)
            try:
                await self.organise.auto_tick()
            except Exception as exc:  # a failed run is logged; the next tick tries again
                log.warning("automatic consolidation failed: %s", exc)

    def _services(self) -> dict[str, Any]:
        self.organise.touch()  # recall and status: the host is active
        return {
            "protocol": self.protocol,
            "service": self.service,
            "session": self.session,
            "write": self.write,
            "extraction": self.extraction,
            "suggestions": self.suggestions,
            "network": self.network,
            "reflection": self.reflection,
            "organise": self.organise,
        }

    # lifecycle ------------------------------------------------------------------

    def request_exit(self, code: int) -> None:
        self.exit_code = code
        self._exit.set()

    def on_initialize(self, params: types.InitializeParams) -> None:
        self.options, self._option_problems = parse_options(params.initialization_options)
        workspace = workspace_path(params)
        roots = choose_roots(self.options, workspace)
        ranker, problem = choose_ranker(self.options.ranker)
        if problem:
            self._option_problems.append(problem)
        self.session = CatalogSession(
            roots, self.tasks, ranker.index_kind, on_fault=self._show_fault
        )
        selector_options = self.options.selector
        self.service = RecallService(
            build_selector(selector_options, self._send_select_request, self._cancel_request),
            ranker,
            ceiling_s=self.selector_ceiling_s,
            timeout_s=selector_timeout_s(selector_options),
        )
        self.write = WriteSide.open(self.session.catalog, ranker, self.options.write)
        # Extraction and consolidation's merges ask the selector's model (or the host's,
        # memory/complete) within the selector's deadline.
        completer = build_completer(self.options, self._send_select_request, self._cancel_request)
        self.organise = OrganiseSide(
            roots, workspace, self.options, self.write, completer, self.service.deadline_s
        )
        self.service.staleness = self.organise.staleness.for_recall
        # The memory network (SPEC §11) and reflection (§12): built after the first index.
        self.network = NetworkSide(self.session.catalog, self.write.state)
        self.reflection = ReflectionSide(self.write, self.network, self.tasks.spawn)
        self.service.network = self.network.current
        self.service.record = self.reflection.record
        self.organise.organiser.usage = self.reflection.usage
        self.tasks.spawn(self._build_network(), "network")
        if self.options.embeddings is not None:
            self._start_semantic()
        self.searching = SearchSide(
            ranker, topics=self.organise.organiser.topics, staleness=self.organise.staleness
        )
        self.suggestions = SuggestionSide(
            self.session, self.tasks, self.protocol.notify,
            staleness=self.organise.staleness, topics=self.organise.organiser.topics,
        )  # fmt: skip
        self.extraction = ExtractionService(completer, self.service.deadline_s, workspace)
        problem = completer_problem(self.options)
        if problem:
            self._option_problems.append(problem)
        # The watcher's echo of the daemon's own writes is not a change to re-read.
        self.session.ignore = self.write.writer.own_writes.filter
        self.tasks.spawn(self.write.flush_periodically(), "delivery-statistics")
        self.tasks.spawn(self._warm_writer(), "writer-warm-up")
        if self.organise.auto is not None:
            self.tasks.spawn(self._consolidate_when_idle(), "auto-consolidation")
        self.session.start(watch=self.options.watch)

    def _start_semantic(self) -> None:
        """Semantic recall (opt-in): vectors embedded in the background, after the first
        index and after every change; recalls use what exists."""
        assert self.options.embeddings is not None and self.write is not None
        channel, problem = build_semantic(self.options.embeddings, self.write.state)
        if problem:
            self._option_problems.append(problem)
        if channel is None:
            return
        self.service.semantic = channel
        self.session.on_changed = channel.changed.set
        self.tasks.spawn(channel.run(self.session.view), "embeddings")

    def on_initialized(self, _params: types.InitializedParams) -> None:
        if self._initialized:  # a repeated `initialized` must not repeat every message
            return
        self._initialized = True
        for problem in self._option_problems:
            self._show(
                types.MessageType.Warning,
                f"memory-recall: invalid initializationOptions, using defaults: {problem}",
            )
        for fault in self._untold_faults:
            self._show(types.MessageType.Warning, f"memory-recall: {fault}")
        self._untold_faults.clear()
        caps = self.client_capabilities.window
        if caps and caps.work_done_progress and not self.session.ready.is_set():
            self.tasks.spawn(
                report_index_progress(self.session, self.work_done_progress, str(uuid.uuid4())),
                "index-progress",
            )

    def _show_fault(self, message: str) -> None:
        """A fault of the session (an unreadable root, an unwritable cache): shown once."""
        if self._initialized:
            self._show(types.MessageType.Warning, f"memory-recall: {message}")
        else:
            self._untold_faults.append(message)

    def _show(self, kind: types.MessageType, message: str) -> None:
        with contextlib.suppress(Exception):  # a client gone away: nothing to tell
            self.window_show_message(types.ShowMessageParams(type=kind, message=message))

    def report_server_error(self, error: Exception, source: Any) -> None:
        # pygls would pop "Error in server" up in the editor for any failed
        # notification handler; a bug of ours belongs in the log. A failed
        # request was answered already (an unknown method is the client's).
        if source is FeatureRequestError:
            return
        log.error("internal error: %s: %s", type(error).__name__, error)

    # server → client requests (selector kind `client`) ----------------------------

    def _send_select_request(self, method: str, params: dict[str, Any]) -> tuple[str, Future[Any]]:
        msg_id = str(uuid.uuid4())
        return msg_id, self.protocol.send_request(method, params, msg_id=msg_id)

    def _cancel_request(self, msg_id: str) -> None:
        self.protocol.abandon_request(msg_id)
        self.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    # running --------------------------------------------------------------------

    async def serve(self, stdin: BinaryIO, stdout: BinaryIO) -> int:
        self.protocol.set_writer(StdoutWriter(stdout))
        reader = await open_reader(stdin)
        read = asyncio.ensure_future(read_frames(reader, self.protocol))
        exit_wait = asyncio.ensure_future(self._exit.wait())
        await asyncio.wait({read, exit_wait}, return_when=asyncio.FIRST_COMPLETED)
        for task in (read, exit_wait):
            task.cancel()
        self.tasks.cancel_all()
        self.session.stop()
        if self.write is not None:
            self.write.flush()  # the last deliveries counted, before the process ends
        if not self._exit.is_set():  # stdin closed without `exit`
            self.exit_code = 0 if self.protocol.is_shut_down() else 1
        return self.exit_code


class _WindowLogHandler(logging.Handler):
    """Forward warnings and errors to the editor (`window/logMessage`)."""

    def __init__(self, server: MemoryServer) -> None:
        super().__init__(level=logging.WARNING)
        self._server = server

    def emit(self, record: logging.LogRecord) -> None:
        if not self._server.initialized_at_protocol:
            return
        error = record.levelno >= logging.ERROR
        kind = types.MessageType.Error if error else types.MessageType.Warning
        with contextlib.suppress(Exception):  # never let logging break the daemon
            self._server.window_log_message(
                types.LogMessageParams(type=kind, message=self.format(record))
            )


def run_stdio(*, selector_ceiling_s: float | None = None, log_level: str = "INFO") -> int:
    """Serve on stdin/stdout until the client exits or goes away."""
    logging.basicConfig(
        stream=sys.stderr, level=log_level, format="memory-recall %(levelname)s %(message)s"
    )
    logging.getLogger("pygls").setLevel(logging.WARNING)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    logging.getLogger("watchfiles").setLevel(logging.WARNING)

    async def main() -> int:
        server = MemoryServer(selector_ceiling_s=selector_ceiling_s)
        log.addHandler(_WindowLogHandler(server))
        return await server.serve(sys.stdin.buffer, sys.stdout.buffer)

    # Not asyncio.run: on the way out it joins the default executor, where an
    # index build of a large tree may still be running, and a client that went
    # away must not keep the daemon alive for the rest of the scan.
    code = asyncio.new_event_loop().run_until_complete(main())
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
