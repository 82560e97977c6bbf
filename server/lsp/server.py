"""The LSP face: one `MemoryServer` per editor session, served over stdio.

It adapts the memory core (`server/core/core.py`) to JSON-RPC with LSP framing and
owns nothing but the connection: `initialize` builds the core from the
`initializationOptions`; handlers (`handlers.py`) validate and serialize; the
transport (`transport.py`) reads frames; pygls internals stay in `adapter.py`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
import uuid
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, BinaryIO

from lsprotocol import types
from memory_recall.protocol import methods
from memory_recall.server import opening
from memory_recall.server.catalog.snapshot_cache import discard_unfinished
from memory_recall.server.core.config import load_settings
from memory_recall.server.core.core import MemoryCore
from memory_recall.server.core.rehearsal import rehearse_recall_path
from memory_recall.server.core.session import CatalogSession
from memory_recall.server.lsp import handlers
from memory_recall.server.lsp.adapter import MemoryProtocol, make_converter
from memory_recall.server.lsp.framing import HeldReader, OpenedWriter, StdoutWriter, open_reader
from memory_recall.server.lsp.transport import read_frames
from memory_recall.server.models import HostModel
from memory_recall.server.opening import Opening
from memory_recall.server.release import version
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

log = logging.getLogger("memory_recall")

SERVER_NAME = "memory-recall"
# How long `shutdown` and `exit` wait for the replies to requests sent before them (a
# status, a recall in flight): bounded, so a stuck handler never holds the way out.
EXIT_GRACE_S = 2.0

# Requests the face serves as (params, core) → result; recall and status also read the
# protocol (the request's id, the requests pending to the client).
CORE_REQUESTS: tuple[tuple[str, Any], ...] = (
    (methods.SEARCH, handlers.search),
    (methods.EXPLAIN, handlers.explain),
    (methods.TREE, handlers.tree),
    (methods.CONTEXT, handlers.context),
    (methods.CONSOLIDATE, handlers.consolidate),
    (methods.REMEMBER, handlers.remember),
    (methods.UPDATE, handlers.update),
    (methods.FORGET, handlers.forget),
    (methods.RESTORE, handlers.restore),
    (methods.UNDO, handlers.undo),
    (methods.HISTORY, handlers.history),
    (methods.LIST, handlers.list_memories),
    (methods.EXTRACT, handlers.extract),
    (methods.PROPOSALS, handlers.proposals),
    (methods.CONFIRM, handlers.confirm),
    (methods.REJECT, handlers.reject),
)


class MemoryServer(LanguageServer):
    """The LSP face of one editor session: builds the `MemoryCore` at `initialize` and
    serves every request through it."""

    protocol: MemoryProtocol

    def __init__(
        self,
        *,
        selector_ceiling_s: float | None = None,
        shared_cores: Callable[[str | None], MemoryCore] | None = None,
    ) -> None:
        super().__init__(
            SERVER_NAME,
            version(),
            protocol_cls=MemoryProtocol,
            converter_factory=make_converter,
        )
        self.initialized_at_protocol = False
        self.selector_ceiling_s = selector_ceiling_s
        self.core: MemoryCore | None = None  # built at `initialize`; nothing runs before
        # The shared daemon (docs/hooks.md) hands out its workspace's core instead: built
        # from the user's settings, started and stopped by the daemon, not by this session.
        self.shared_cores = shared_cores
        self._initialized = False  # the client's `initialized` arrived (once is enough)
        self._untold_faults: list[str] = []  # found before `initialized`: shown at it
        self._exit = asyncio.Event()
        self.exit_code = 0
        self._register()

    @property
    def served(self) -> MemoryCore:
        """The core; requests before `initialize` are refused by the protocol (-32002)."""
        assert self.core is not None
        return self.core

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
            # The requests sent before it are answered first, then the core stops.
            await self.protocol.answered(EXIT_GRACE_S, self.protocol.current_request_id())
            if self.core is not None and self.shared_cores is None:
                await self.core.stop()

        @self.feature(methods.RECALL)
        async def recall(params: Any) -> dict[str, Any]:
            return await handlers.recall(params, self.served, self.protocol)

        @self.feature(methods.STATUS)
        async def status(params: Any) -> dict[str, Any]:
            return await handlers.status(params, self.served, self.protocol)

        for method, handler in CORE_REQUESTS:
            self._register_request(method, handler)

        # Notifications (and feedback, which may also be a request): plain functions, so
        # nothing is left behind; the work runs in tasks of the core's own.
        @self.feature(methods.OBSERVE)
        def observe(params: Any) -> None:
            handlers.observe(params, self.served)

        @self.feature(methods.FEEDBACK)
        def feedback(params: Any) -> Any:
            return handlers.feedback(params, self.served)

    def _register_request(self, method: str, handler: Any) -> None:
        @self.feature(method)
        async def request(params: Any) -> Any:
            return await handler(params, self.served)

    # lifecycle ------------------------------------------------------------------

    def request_exit(self, code: int) -> None:
        self.exit_code = code
        self._exit.set()

    def on_initialize(self, params: types.InitializeParams) -> None:
        # The user's config file and environment, then what the editor sends.
        given = params.initialization_options
        problems = []
        if given is not None and not isinstance(given, dict):
            problems.append(f"expected an object, got {type(given).__name__}")
            given = None
        if self.shared_cores is not None:
            # One core per workspace for every client of the daemon: the editor's options
            # are not applied to it (the user's config file is), and it is already started.
            self.core = self.shared_cores(workspace_path(params))
            return
        settings = load_settings(given, workspace=workspace_path(params))
        self.core = MemoryCore(
            settings.options,
            settings.workspace,
            problems=problems + settings.problems,
            host=HostModel(self._send_select_request, self._cancel_request),
            notify=self.protocol.notify,
            on_fault=self._show_fault,
            selector_ceiling_s=self.selector_ceiling_s,
        )
        self.core.start()

    def on_initialized(self, _params: types.InitializedParams) -> None:
        if self._initialized or self.core is None:  # a repeated `initialized`: told once
            return
        self._initialized = True
        for problem in self.core.problems:
            self._show(
                types.MessageType.Warning,
                f"memory-recall: invalid initializationOptions, using defaults: {problem}",
            )
        for fault in self._untold_faults:
            self._show(types.MessageType.Warning, f"memory-recall: {fault}")
        self._untold_faults.clear()
        caps = self.client_capabilities.window
        session = self.core.session
        if caps and caps.work_done_progress and not session.ready.is_set():
            self.core.tasks.spawn(
                report_index_progress(session, self.work_done_progress, str(uuid.uuid4())),
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

    async def serve(self, stdin: BinaryIO, stdout: BinaryIO, early: Opening | None = None) -> int:
        reader = await open_reader(stdin)
        if early is None:
            return await self.serve_on(reader, StdoutWriter(stdout))
        # The opening answered `initialize` already (server/opening.py): pygls reads the
        # stream from its first byte all the same, and its own reply is dropped.
        return await self.serve_on(HeldReader(early.held, reader), OpenedWriter(stdout, early))

    async def serve_on(self, reader: Any, writer: Any) -> int:
        """Serve one client on any pair of streams: `reader.read(n)` (async) and
        `writer.write(data)` / `writer.close()` (stdio, or a connection to the daemon)."""
        self.protocol.set_writer(writer)
        read = asyncio.ensure_future(read_frames(reader, self.protocol))
        exit_wait = asyncio.ensure_future(self._exit.wait())
        await asyncio.wait({read, exit_wait}, return_when=asyncio.FIRST_COMPLETED)
        for task in (read, exit_wait):
            task.cancel()
        if self._exit.is_set():
            await self.protocol.answered(EXIT_GRACE_S)
        if self.core is not None and self.shared_cores is None:
            self.core.tasks.cancel_all()
            self.core.session.stop()
            self.core.write.flush()  # the last deliveries counted, before the process ends
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

    early = opening.taken()
    # Before the first message is read: what a first recall would otherwise pay for.
    rehearse_recall_path()

    async def main() -> int:
        server = MemoryServer(selector_ceiling_s=selector_ceiling_s)
        log.addHandler(_WindowLogHandler(server))
        return await server.serve(sys.stdin.buffer, sys.stdout.buffer, early)

    # Not asyncio.run: on the way out it joins the default executor, where an
    # index build of a large tree may still be running, and a client that went
    # away must not keep the daemon alive for the rest of the scan.
    code = asyncio.new_event_loop().run_until_complete(main())
    discard_unfinished()  # a snapshot still being written is not waited for
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def workspace_path(params: types.InitializeParams) -> str | None:
    """The first workspace folder, else the root URI, else the root path."""
    if params.workspace_folders:
        return to_fs_path(params.workspace_folders[0].uri)
    if params.root_uri:
        return to_fs_path(params.root_uri)
    return params.root_path


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
