"""The daemon: pygls wiring for protocol v1 (SPEC §5).

Handlers here are thin: validate params with the protocol's pydantic models,
call the catalog or the recall service, serialize. The stdio framing loop is
our own (pygls' loop answers nothing to a body that is not JSON, or to an
array), so that every malformed message gets the right error and the daemon
keeps serving.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
import logging
import os
import re
import sys
import uuid
from collections.abc import Awaitable, Iterator
from concurrent.futures import Future
from typing import Any, BinaryIO

import attrs
from cattrs import transform_error
from cattrs.errors import BaseValidationError
from lsprotocol import types
from memory_recall.protocol import methods
from memory_recall.protocol.messages import (
    CatalogCountersStatus,
    InitializationOptions,
    PhaseNotification,
    RecallParams,
    RecallTelemetry,
    RootStatus,
    RuntimeStatus,
    SelectorOptions,
    SkippedFileStatus,
    StatusResult,
    WatcherStatus,
)
from memory_recall.server.catalog import CatalogSnapshot, MemoryCatalog, MemoryRoot
from memory_recall.server.config import default_roots
from memory_recall.server.rankers import DEFAULT_RANKER, RANKERS
from memory_recall.server.recall import RecallRequest, RecallService
from memory_recall.server.selectors import Selector
from memory_recall.server.selectors.client import ClientSelector
from memory_recall.server.selectors.http import HttpSelector
from memory_recall.server.snapshot_cache import snapshot_cache
from memory_recall.server.watcher import CatalogWatcher
from pydantic import BaseModel, ValidationError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import (
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    LanguageServerProtocol,
    default_converter,
    lsp_method,
)

log = logging.getLogger("memory_recall")

SERVER_NAME = "memory-recall"
SERVER_VERSION = "0.1.0"

# The largest message body read. A recall is at most a 32,768-character query
# (≤ 128 KiB in UTF-8) plus tool names and excluded paths; 4 MiB leaves room
# for thousands of excluded paths without letting one message exhaust memory.
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
MAX_HEADER_LINE_BYTES = 8 * 1024
# Ids of server→client requests we gave up on, remembered so that a late
# reply is dropped quietly; a host that never replies cannot grow this.
MAX_ABANDONED_IDS = 1024


# -- wire helpers ---------------------------------------------------------------


def _plain_params(obj: dict[str, Any], cls: type) -> Any:
    """Keep params/results of our own methods as plain dicts (pygls would build
    namedtuples with `rename=True`, silently mangling keys).

    Members JSON-RPC does not define are ignored, as lsprotocol's types ignore them.
    """
    known = attrs.fields_dict(cls)
    fields = {key: value for key, value in obj.items() if key in known}
    fields.setdefault("result" if cls is JsonRPCResponseMessage else "params", None)
    return cls(**fields)


def make_converter() -> Any:
    converter = default_converter()
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, _plain_params)
    return converter


def validate(model: type[BaseModel], params: Any) -> Any:
    """Params as `model`, or -32602 with a message naming each bad field."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams(
            f"invalid params: expected an object, got {type(params).__name__}"
        )
    try:
        return model.model_validate(params)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            field = ".".join(str(p) for p in err["loc"]) or "params"
            problems.append(f"{field}: {err['msg']}")
        raise JsonRpcInvalidParams("invalid params: " + "; ".join(problems)) from None


class MemoryProtocol(LanguageServerProtocol):
    """pygls' LSP protocol with the behaviour protocol v1 needs."""

    _server: MemoryServer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._abandoned: dict[Any, None] = {}  # insertion-ordered, bounded

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams) -> Any:
        result = yield from super().lsp_initialize(params)
        # pygls advertises document sync by default; the daemon reads no documents.
        result.capabilities.text_document_sync = None
        result.capabilities.experimental = {
            "memory": {
                "protocolVersion": methods.PROTOCOL_VERSION,
                "fastLimit": 2,
                "refinedLimit": 5,
                "maxQueryChars": methods.MAX_QUERY_CHARS,
            }
        }
        self._server.initialized_at_protocol = True
        return result

    @lsp_method(types.EXIT)
    def lsp_exit(self, *args: Any) -> Any:
        self._server.request_exit(0 if self._shutdown else 1)
        yield from ()

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        is_request = method is not None and hasattr(message, "id")
        if not self._server.initialized_at_protocol and method not in (
            types.INITIALIZE,
            types.EXIT,
        ):
            if is_request:
                send_error(
                    self,
                    message.id,
                    methods.SERVER_NOT_INITIALIZED,
                    f"server not initialized: 'initialize' must come before {method!r}",
                )
            return
        if method == types.INITIALIZE and self._server.initialized_at_protocol:
            # A second `initialize` would silently replace the roots and selector.
            if is_request:
                send_error(
                    self,
                    message.id,
                    methods.INVALID_REQUEST,
                    "invalid request: 'initialize' may only be sent once per session",
                )
            return
        if self._shutdown and is_request and method != types.EXIT:
            send_error(
                self,
                message.id,
                methods.INVALID_REQUEST,
                f"server is shutting down: {method!r} refused",
            )
            return
        super().handle_message(message)

    def abandon_request(self, msg_id: Any) -> None:
        """Forget a server→client request whose answer no longer matters."""
        self._request_futures.pop(msg_id, None)
        self._result_types.pop(msg_id, None)
        self._abandoned[msg_id] = None
        while len(self._abandoned) > MAX_ABANDONED_IDS:
            self._abandoned.pop(next(iter(self._abandoned)))

    def _handle_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:
        # A late reply to a request we already abandoned (cancelled recall,
        # selector timeout) is expected: drop it quietly.
        if msg_id in self._abandoned:
            del self._abandoned[msg_id]
            return
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            self._request_futures.pop(msg_id, None)
            return
        super()._handle_response(msg_id, result, error)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        # A cancel that crosses the answer on the wire is normal, not a warning.
        if msg_id in self._request_futures:
            super()._handle_cancel_notification(msg_id)

    def _send_handler_result(self, future: Any, *, msg_id: Any) -> None:
        # Expected client errors (-32602 …) are answered without a traceback in the log.
        if not future.cancelled() and isinstance(future.exception(), JsonRpcException):
            self._request_futures.pop(msg_id, None)
            self._send_response(msg_id, error=future.exception().to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)


def send_error(protocol: MemoryProtocol, msg_id: Any, code: int, message: str) -> None:
    protocol._send_data(
        {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}
    )


# -- the daemon -----------------------------------------------------------------


class MemoryServer(LanguageServer):
    """Owns the catalog, the watcher and the recall service of one editor session."""

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
        self.catalog = MemoryCatalog([])
        self.service = RecallService(None, RANKERS[DEFAULT_RANKER], ceiling_s=selector_ceiling_s)
        self.ready = asyncio.Event()
        self.watcher: CatalogWatcher | None = None
        self.watcher_state = WatcherStatus(state="off")
        self._pending_changes: set[str] = set()
        self._option_problems: list[str] = []
        self._tasks: set[asyncio.Task[Any]] = set()
        self._exit = asyncio.Event()
        self.exit_code = 0
        self._register()

    # lifecycle ------------------------------------------------------------

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
            await self.on_shutdown(params)

        @self.feature(methods.RECALL)
        async def recall(params: Any) -> dict[str, Any]:
            return await self.on_recall(params)

        @self.feature(methods.STATUS)
        def status(params: Any) -> dict[str, Any]:
            return self.on_status(params)

    def request_exit(self, code: int) -> None:
        self.exit_code = code
        self._exit.set()

    def spawn(self, coro: Awaitable[Any], name: str) -> asyncio.Task[Any]:
        """Run background work; failures are logged, never lost."""
        task = asyncio.ensure_future(coro)
        task.set_name(name)
        self._tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self._tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("background task %s failed: %r", name, t.exception())

        task.add_done_callback(done)
        return task

    def on_initialize(self, params: types.InitializeParams) -> None:
        self.options, self._option_problems = parse_options(params.initialization_options)
        workspace = _workspace_path(params)
        roots = (
            [
                MemoryRoot.of(r.path, r.scope, follow_symlinks_outside=r.follow_symlinks)
                for r in self.options.roots
            ]
            if self.options.roots
            else default_roots(workspace)
        )
        self.catalog = MemoryCatalog(roots)
        ranker_name = self.options.ranker or DEFAULT_RANKER
        if ranker_name not in RANKERS:
            self._option_problems.append(
                f"ranker: unknown {ranker_name!r} (known: {', '.join(sorted(RANKERS))}); "
                f"using {DEFAULT_RANKER!r}"
            )
            ranker_name = DEFAULT_RANKER
        selector_options = self.options.selector
        self.service = RecallService(
            self._build_selector(selector_options),
            RANKERS[ranker_name],
            ceiling_s=self.selector_ceiling_s,
            timeout_s=selector_options.timeout_ms / 1000 if selector_options.timeout_ms else None,
        )
        if self.options.watch:
            self._start_watcher()
        self.spawn(self._build_index(), "index")

    def on_initialized(self, _params: types.InitializedParams) -> None:
        for problem in self._option_problems:
            self.window_show_message(
                types.ShowMessageParams(
                    type=types.MessageType.Warning,
                    message="memory-recall: invalid initializationOptions, "
                    f"using defaults: {problem}",
                )
            )
        caps = self.client_capabilities.window
        if caps and caps.work_done_progress and not self.ready.is_set():
            self.spawn(self._report_index_progress(), "index-progress")

    async def on_shutdown(self, _params: Any) -> None:
        if self.watcher:
            self.watcher.stop()

    async def _build_index(self) -> None:
        # A large tree takes seconds to parse: do it off the event loop so
        # the daemon keeps answering (recalls wait for `ready`).
        with _collector_paused():
            await asyncio.to_thread(self.catalog.scan, snapshot_cache(self.catalog.roots))
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
        self._apply_changes(set())
        log.info(
            "indexed %d memories in %.0f ms (%d skipped)",
            len(self.catalog),
            self.catalog.build_ms or 0,
            len(self.catalog.skipped),
        )

    async def _report_index_progress(self) -> None:
        token = str(uuid.uuid4())
        try:
            await asyncio.wait_for(self.work_done_progress.create_async(token), 5)
        except Exception:
            return  # the client did not accept a progress token: nothing to show
        progress = self.work_done_progress
        progress.begin(token, types.WorkDoneProgressBegin(title="Indexing memories"))
        while not self.ready.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.ready.wait(), 0.25)
            progress.report(
                token, types.WorkDoneProgressReport(message=f"{len(self.catalog)} memories")
            )
        progress.end(token, types.WorkDoneProgressEnd(message=f"{len(self.catalog)} memories"))

    def _build_selector(self, options: SelectorOptions) -> Selector | None:
        if options.kind == "client":
            return ClientSelector(self._send_select_request, self._cancel_client_request)
        if options.kind == "http":
            assert options.url  # checked by parse_options
            return HttpSelector(options.url, options.model, options.api_key_env)
        return None

    def _send_select_request(self, method: str, params: dict[str, Any]) -> tuple[str, Future[Any]]:
        msg_id = str(uuid.uuid4())
        return msg_id, self.protocol.send_request(method, params, msg_id=msg_id)

    def _cancel_client_request(self, msg_id: str) -> None:
        self.protocol.abandon_request(msg_id)
        self.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    # watching -------------------------------------------------------------

    def _start_watcher(self) -> None:
        self.watcher_state = WatcherStatus(state="starting")
        self.watcher = CatalogWatcher(
            [r.path for r in self.catalog.roots], self._apply_changes, self._watcher_state
        )
        self.spawn(self.watcher.run(), "watcher")

    def _watcher_state(self, state: str, detail: str | None) -> None:
        self.watcher_state = WatcherStatus(state=state, detail=detail)  # type: ignore[arg-type]

    def _apply_changes(self, paths: set[str]) -> None:
        """Re-read changed paths; while the index is still building, remember them."""
        self._pending_changes |= paths
        if not self.ready.is_set():
            return
        pending, self._pending_changes = self._pending_changes, set()
        for path in sorted(pending):
            try:
                self.catalog.refresh(path)
            except Exception:
                log.exception("could not refresh %s", path)

    # requests ---------------------------------------------------------------

    async def on_recall(self, params: Any) -> dict[str, Any]:
        recall = validate(RecallParams, params)
        request = RecallRequest(
            request_id=self.protocol.msg_id or "",
            query=recall.query,
            token=recall.token,
            recent_tools=recall.recent_tools,
            exclude_paths=recall.exclude_paths,
            limit=recall.limit or 5,
        )
        result = await self.service.recall(request, self._snapshot, _Notifier(self.protocol))
        return result.wire()

    async def _snapshot(self) -> CatalogSnapshot:
        await self.ready.wait()
        return self.catalog.snapshot()

    def on_status(self, _params: Any) -> dict[str, Any]:
        catalog = self.catalog
        counts = catalog.count_by_root()
        return StatusResult(
            protocol_version=methods.PROTOCOL_VERSION,
            ready=self.ready.is_set(),
            roots=[
                RootStatus(
                    path=str(r.path), scope=r.scope.wire, exists=r.path.is_dir(), documents=n
                )
                for r, n in zip(catalog.roots, counts, strict=True)
            ],
            documents=len(catalog),
            skipped=[SkippedFileStatus(path=s.path, reason=s.reason) for s in catalog.skipped],
            index_build_ms=catalog.build_ms,
            ranker=self.service.ranker.name,
            selector=self.service.selector_kind,  # type: ignore[arg-type]
            watcher=self.watcher_state,
            recall=self.service.counters,
            catalog=CatalogCountersStatus(**vars(catalog.counters)),
            runtime=RuntimeStatus(
                tasks=len(asyncio.all_tasks()),
                pending_requests=len(self.protocol._request_futures),
                exclusion_sets=len(self.service.active),
            ),
        ).wire()

    # running --------------------------------------------------------------------

    async def serve(self, stdin: BinaryIO, stdout: BinaryIO) -> int:
        self.protocol.set_writer(_StdoutWriter(stdout))
        reader = await _open_reader(stdin)
        read = asyncio.ensure_future(read_frames(reader, self.protocol))
        exit_wait = asyncio.ensure_future(self._exit.wait())
        await asyncio.wait({read, exit_wait}, return_when=asyncio.FIRST_COMPLETED)
        for task in (read, exit_wait, *self._tasks):
            task.cancel()
        if self.watcher:
            self.watcher.stop()
        if not self._exit.is_set():  # stdin closed without `exit`
            self.exit_code = 0 if self.protocol._shutdown else 1
        return self.exit_code


class _Notifier:
    """Sends one recall's notifications to the client."""

    def __init__(self, protocol: MemoryProtocol) -> None:
        self._protocol = protocol

    def fast_result(self, note: PhaseNotification) -> None:
        self._protocol.notify(methods.FAST_RESULT, note.wire())

    def refined_result(self, note: PhaseNotification) -> None:
        self._protocol.notify(methods.REFINED_RESULT, note.wire())

    def telemetry(self, event: RecallTelemetry) -> None:
        self._protocol.notify(methods.TELEMETRY, event.wire())


def parse_options(raw: Any) -> tuple[InitializationOptions, list[str]]:
    """Valid options, falling back to the default per invalid key, and what was wrong."""
    if raw is None:
        return InitializationOptions(), []
    if not isinstance(raw, dict):
        return InitializationOptions(), [f"expected an object, got {type(raw).__name__}"]
    problems: list[str] = []
    kept: dict[str, Any] = {}
    for key, value in raw.items():
        try:
            InitializationOptions.model_validate({key: value})
        except ValidationError as exc:
            err = exc.errors()[0]
            where = ".".join(str(p) for p in err["loc"])
            problems.append(f"{where}: {err['msg']}")
            continue
        kept[key] = value
    options = InitializationOptions.model_validate(kept)
    selector = options.selector
    if selector.kind == "http" and not selector.url:
        problems.append("selector.url: required for kind 'http'; using kind 'none'")
        options.selector = SelectorOptions()
    if options.roots == []:
        problems.append("roots: empty list; using the default roots")
        options.roots = None
    return options, problems


def _workspace_path(params: types.InitializeParams) -> str | None:
    from pygls.uris import to_fs_path

    if params.workspace_folders:
        return to_fs_path(params.workspace_folders[0].uri)
    if params.root_uri:
        return to_fs_path(params.root_uri)
    return params.root_path


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


# -- stdio framing -----------------------------------------------------------------


class _StdoutWriter:
    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    def write(self, data: bytes) -> None:
        self._stream.write(data)
        self._stream.flush()

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._stream.flush()


class _ThreadReader:
    """Fallback when stdin is not a pipe asyncio can watch (a file, a tty)."""

    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream

    async def readline(self) -> bytes:
        return await asyncio.to_thread(self._stream.readline, MAX_HEADER_LINE_BYTES)

    async def readexactly(self, n: int) -> bytes:
        data = await asyncio.to_thread(self._stream.read, n)
        if len(data) < n:
            raise asyncio.IncompleteReadError(data, n)
        return data


async def _open_reader(stdin: BinaryIO) -> Any:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_HEADER_LINE_BYTES, loop=loop)
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
    except (ValueError, OSError):
        return _ThreadReader(stdin)
    return reader


_CONTENT_LENGTH = re.compile(rb"content-length:\s*(\d+)", re.IGNORECASE)


async def read_frames(reader: Any, protocol: MemoryProtocol) -> None:
    """Read `Content-Length` frames until EOF, answering every malformed one."""
    while True:
        length: int | None = None
        while True:  # headers, up to the blank line
            try:
                line = await reader.readline()
            except (ValueError, asyncio.LimitOverrunError):
                log.warning("dropped a header line longer than %d bytes", MAX_HEADER_LINE_BYTES)
                continue
            if not line:
                return  # EOF: the client is gone
            if line in (b"\r\n", b"\n"):
                if length is not None:
                    break
                continue  # a blank line with no header before it: resynchronize
            match = _CONTENT_LENGTH.search(line)
            if match:
                length = int(match.group(1))
        if length > MAX_MESSAGE_BYTES:
            await _discard(reader, length)
            send_error(
                protocol,
                None,
                methods.INVALID_REQUEST,
                f"message of {length} bytes is over the {MAX_MESSAGE_BYTES}-byte limit",
            )
            continue
        try:
            body = await reader.readexactly(length)
        except asyncio.IncompleteReadError:
            return
        try:
            dispatch(body, protocol)
        except Exception:  # a reader that dies leaves the daemon deaf: log and go on
            log.exception("failed to dispatch a message")


async def _discard(reader: Any, length: int) -> None:
    remaining = length
    while remaining:
        chunk = min(remaining, 1 << 16)
        try:
            await reader.readexactly(chunk)
        except asyncio.IncompleteReadError:
            return
        remaining -= chunk


def dispatch(body: bytes, protocol: MemoryProtocol) -> None:
    """Parse one body and hand it to pygls, answering what pygls would not."""
    try:
        text = body.decode("utf-8")  # strictly: json.loads(bytes) would also take UTF-16/32
    except UnicodeDecodeError as exc:
        send_error(
            protocol,
            None,
            methods.PARSE_ERROR,
            f"parse error: body is not UTF-8 (byte {exc.start}: {exc.reason})",
        )
        return
    try:
        data = json.loads(text)
    except ValueError as exc:
        send_error(protocol, None, methods.PARSE_ERROR, f"parse error: body is not JSON ({exc})")
        return
    except RecursionError:
        send_error(protocol, None, methods.PARSE_ERROR, "parse error: JSON nested too deeply")
        return
    if isinstance(data, list):
        send_error(
            protocol,
            None,
            methods.INVALID_REQUEST,
            "invalid request: batches are not supported (LSP has no batches)",
        )
        return
    if not isinstance(data, dict):
        send_error(
            protocol,
            None,
            methods.INVALID_REQUEST,
            f"invalid request: expected an object, got {type(data).__name__}",
        )
        return
    msg_id = data.get("id")
    id_ok = (
        "id" not in data
        or (isinstance(msg_id, (str, int)) and not isinstance(msg_id, bool))
        or msg_id is None
    )
    if not id_ok:
        msg_id = None  # never echo an id that is not one
    problem = None
    if data.get("jsonrpc") != "2.0":
        problem = "'jsonrpc' must be \"2.0\""
    elif not id_ok:
        problem = "'id' must be a string, a number or null"
    elif "method" in data:
        if not isinstance(data["method"], str):
            problem = "'method' must be a string"
        elif "params" in data and not isinstance(data["params"], (dict, list)):
            if "id" in data:
                send_error(
                    protocol,
                    msg_id,
                    methods.INVALID_PARAMS,
                    "invalid params: 'params' must be an object or an array",
                )
            return
    elif "id" not in data or ("result" not in data and "error" not in data):
        problem = "neither a request, a notification nor a response"
    if problem:
        send_error(protocol, msg_id, methods.INVALID_REQUEST, f"invalid request: {problem}")
        return
    if "method" not in data and "error" in data and not isinstance(data["error"], dict):
        return  # a malformed error reply to one of our requests: nothing to answer
    if "id" in data and _is_lsp_notification(data.get("method")):
        # JSON-RPC owes every id a response; a notification has no result to give.
        send_error(
            protocol,
            msg_id,
            methods.INVALID_REQUEST,
            f"invalid request: {data['method']!r} is a notification and must not carry an 'id'",
        )
        return
    if "id" not in data and data.get("method") in (methods.RECALL, methods.STATUS):
        # Nobody could receive the result; running it would only spend a selector
        # call, and bad params would pop an error up in the editor.
        log.warning("ignored %s sent as a notification: it is a request, add an id", data["method"])
        return
    if data.get("method") == types.CANCEL_REQUEST and not _is_cancel_target(data.get("params")):
        problem = "invalid params: id: expected the string or integer id of a request"
        if "id" in data:
            send_error(protocol, msg_id, methods.INVALID_PARAMS, problem)
        else:
            log.warning("ignored a $/cancelRequest: %s", problem)
        return
    try:
        message = protocol.structure_message(data)
    except JsonRpcException as exc:
        if "method" in data and "id" in data:
            cause = exc.__cause__
            if isinstance(cause, BaseValidationError):  # name the fields, e.g. `@ $.params.value`
                detail = "; ".join(transform_error(cause))
            else:
                detail = str(cause or exc).splitlines()[0]
            send_error(protocol, msg_id, methods.INVALID_PARAMS, f"invalid params: {detail}")
        return
    if data.get("method") == types.CANCEL_REQUEST:
        # Let a just-started recall reach its first await before it is
        # cancelled, so it always ends with its telemetry event.
        asyncio.get_running_loop().call_soon(_handle, protocol, message, msg_id)
        return
    _handle(protocol, message, msg_id)


def _is_lsp_notification(method: Any) -> bool:
    entry = types.METHOD_TO_TYPES.get(method) if isinstance(method, str) else None
    return entry is not None and entry[1] is None  # no result type: a notification


def _is_cancel_target(params: Any) -> bool:
    target = params.get("id") if isinstance(params, dict) else None
    return isinstance(target, (str, int)) and not isinstance(target, bool)


def _handle(protocol: MemoryProtocol, message: Any, msg_id: Any) -> None:
    try:
        protocol.handle_message(message)
    except Exception:
        log.exception("failed to handle a message")
        if getattr(message, "method", None) and msg_id is not None:
            send_error(protocol, msg_id, methods.INTERNAL_ERROR, "internal error")


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
