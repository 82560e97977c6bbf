"""Python client for the memory-recall daemon, with the 100 ms initial wait.

    async with await MemoryRecallClient.start(roots=[("~/notes/memory", "user")]) as client:
        handle = await client.recall("how do we deploy?")
        if handle.initial:                 # fast (or refined) result within 100 ms
            inject(handle.initial.prompt)
        refined = await handle.refined     # the model's choice, fast docs removed

A host has about 100 ms before it must send a turn's first prompt; `recall`
returns after the first of {fast result, refined result, cancel, 100 ms}, and
the refined phase stays awaitable for a later safe point in the turn.

It is long because it is the whole protocol seen from a host, one method per request
(recall, the writes, extraction, organisation, search, feedback, explain) over one
connection and one reader; splitting it would split that connection's state.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import os
import sys
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_recall.protocol import methods
from memory_recall.protocol.framing import FrameReader, FramingError, frame
from memory_recall.protocol.messages import (
    CompleteParams,
    ConsolidateResult,
    ContextResult,
    ExplainParams,
    ExplainResult,
    ExtractParams,
    ExtractResult,
    FeedbackParams,
    FeedbackResult,
    ForgetParams,
    HistoryResult,
    ListParams,
    ListResult,
    ObserveParams,
    PhaseNotification,
    RecallResult,
    RememberParams,
    RestoreParams,
    SearchParams,
    SearchResult,
    SelectParams,
    StatusResult,
    SuggestionNotification,
    TreeResult,
    UndoParams,
    UpdateParams,
    WireModel,
    WriteResult,
)

DEFAULT_INITIAL_WAIT_MS = 100

SelectHandler = Callable[[SelectParams], Awaitable[Sequence[str]]]
# Answers `memory/complete` (protocol v2) with the model's text; raising declines.
CompleteHandler = Callable[[CompleteParams], Awaitable[str]]


class RpcError(Exception):
    """An error response from the daemon."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(f"{message} ({code})")
        self.code = code
        self.message = message
        self.data = data


def default_server_command() -> list[str]:
    """The daemon of this Python environment."""
    return [sys.executable, "-m", "memory_recall.server", "serve"]


@dataclass
class RecallHandle:
    """One recall in flight."""

    request_id: int
    token: str
    initial: PhaseNotification | None = None
    # "fast", "refined", "timeout" or "cancelled": what ended the initial wait
    initial_reason: str = "timeout"
    fast: asyncio.Future[PhaseNotification] = field(default_factory=asyncio.Future)
    refined_future: asyncio.Future[PhaseNotification | None] = field(default_factory=asyncio.Future)
    response: asyncio.Future[RecallResult] = field(default_factory=asyncio.Future)
    _cancel: Callable[[], None] | None = None

    @property
    def refined(self) -> asyncio.Future[PhaseNotification | None]:
        """The refined phase; None when the recall was cancelled or failed."""
        return self.refined_future

    def cancel(self) -> None:
        if self._cancel:
            self._cancel()


class MemoryRecallClient:
    """A JSON-RPC connection to one daemon process (or any pair of streams)."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter | Any,
        *,
        process: asyncio.subprocess.Process | None = None,
        select_handler: SelectHandler | None = None,
        complete_handler: CompleteHandler | None = None,
    ) -> None:
        self._reader = reader
        self._writer = writer
        self.process = process
        self.select_handler = select_handler
        self.complete_handler = complete_handler
        self._ids = itertools.count(1)
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._recalls: dict[str, RecallHandle] = {}
        self._answering: set[asyncio.Future[None]] = set()
        self.notifications: list[tuple[str, Any]] = []
        self.on_notification: Callable[[str, Any], None] | None = None
        # `memory/suggestion` (docs/network.md), parsed: every one received, and a callback.
        self.suggestions: list[SuggestionNotification] = []
        self.on_suggestion: Callable[[SuggestionNotification], None] | None = None
        self._reader_task = asyncio.ensure_future(self._read_loop())
        self.initialize_result: dict[str, Any] | None = None

    # -- starting ---------------------------------------------------------------

    @classmethod
    async def start(
        cls,
        command: Sequence[str] | None = None,
        *,
        roots: Sequence[tuple[str, str]] | None = None,
        selector: dict[str, Any] | None = None,
        embeddings: dict[str, Any] | None = None,
        watch: bool = True,
        select_handler: SelectHandler | None = None,
        complete_handler: CompleteHandler | None = None,
        workspace: str | None = None,
        env: dict[str, str] | None = None,
        stderr: Any = None,
        initialization_options: dict[str, Any] | None = None,
    ) -> MemoryRecallClient:
        """Start the daemon as an editor would and complete the handshake."""
        process = await asyncio.create_subprocess_exec(
            *(command or default_server_command()),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=stderr if stderr is not None else asyncio.subprocess.DEVNULL,
            env={**os.environ, **(env or {})},
            limit=1 << 24,
        )
        assert process.stdout and process.stdin
        client = cls(
            process.stdout,
            process.stdin,
            process=process,
            select_handler=select_handler,
            complete_handler=complete_handler,
        )
        options = dict(initialization_options or {})
        if complete_handler is not None:  # tell the daemon this host runs a model
            capabilities = dict(options.get("capabilities") or {})
            capabilities["complete"] = True
            options["capabilities"] = capabilities
        if roots is not None:
            options["roots"] = [{"path": os.path.abspath(p), "scope": s} for p, s in roots]
        if selector is not None:
            options["selector"] = selector
        if embeddings is not None:  # semantic recall: {url, model?, apiKeyEnv?, timeoutMs?}
            options["embeddings"] = embeddings
        options.setdefault("watch", watch)
        await client.initialize(options, workspace=workspace)
        return client

    async def initialize(
        self, options: dict[str, Any], *, workspace: str | None = None
    ) -> dict[str, Any]:
        root_uri = f"file://{os.path.abspath(workspace)}" if workspace else None
        result = await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": root_uri,
                "capabilities": {"window": {"workDoneProgress": False}},
                "initializationOptions": options,
            },
        )
        self.notify("initialized", {})
        self.initialize_result = result
        return dict(result or {})

    async def __aenter__(self) -> MemoryRecallClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self, timeout: float = 5.0) -> int | None:
        """shutdown + exit, then wait for the process."""
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.request("shutdown", None), timeout)
            self.notify("exit", None)
        with contextlib.suppress(Exception):
            self._writer.close()
        code = None
        if self.process:
            try:
                code = await asyncio.wait_for(self.process.wait(), timeout)
            except asyncio.TimeoutError:
                self.process.kill()
                code = await self.process.wait()
        self._reader_task.cancel()
        return code

    # -- the protocol -------------------------------------------------------------

    async def recall(
        self,
        query: str,
        *,
        initial_wait_ms: float = DEFAULT_INITIAL_WAIT_MS,
        token: str | None = None,
        recent_tools: Sequence[str] = (),
        exclude_paths: Sequence[str] = (),
        limit: int | None = None,
    ) -> RecallHandle:
        """Send `memory/recall`; return after the first of {fast, refined, cancel, wait}."""
        token = token or uuid.uuid4().hex
        msg_id = next(self._ids)
        handle = RecallHandle(request_id=msg_id, token=token)
        self._recalls[token] = handle
        params: dict[str, Any] = {
            "query": query,
            "token": token,
            "recentTools": list(recent_tools),
            "excludePaths": list(exclude_paths),
        }
        if limit is not None:
            params["limit"] = limit
        response = self._send_request(msg_id, methods.RECALL, params)

        def finished(fut: asyncio.Future[Any]) -> None:
            self._recalls.pop(token, None)
            if fut.cancelled() or fut.exception() is not None:
                exc = fut.exception() if not fut.cancelled() else asyncio.CancelledError()
                _settle(handle.response, exception=exc)
                _settle(handle.refined_future, result=None)
            else:
                result = RecallResult.model_validate(fut.result())
                _settle(handle.response, result=result)
                if result.refined is not None:
                    note = PhaseNotification(
                        **result.refined.model_dump(), request_id=msg_id, token=token
                    )
                    _settle(handle.refined_future, result=note)
            if not handle.fast.done():
                handle.fast.cancel()

        response.add_done_callback(finished)
        handle._cancel = lambda: self.notify("$/cancelRequest", {"id": msg_id})
        first: list[asyncio.Future[Any]] = [handle.fast, handle.refined_future, response]
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(
                asyncio.wait(first, return_when=asyncio.FIRST_COMPLETED), initial_wait_ms / 1000
            )
        if handle.fast.done() and not handle.fast.cancelled():
            handle.initial, handle.initial_reason = handle.fast.result(), "fast"
        elif handle.refined_future.done() and handle.refined_future.result() is not None:
            handle.initial, handle.initial_reason = handle.refined_future.result(), "refined"
        elif response.done():
            handle.initial_reason = "cancelled"
        return handle

    async def status(self) -> StatusResult:
        return StatusResult.model_validate(await self.request(methods.STATUS, {}))

    async def tree(self, scope: str | None = None) -> TreeResult:
        """The topic tree (docs/organisation.md): categories with counts and members."""
        params = {} if scope is None else {"scope": scope}
        return TreeResult.model_validate(await self.request(methods.TREE, params))

    async def consolidate(
        self, scope: str | None = None, *, dry_run: bool = False
    ) -> ConsolidateResult:
        """Consolidate the roots (docs/organisation.md): one undoable operation per root; `dry_run`
        reports."""
        params: dict[str, Any] = {"dryRun": dry_run}
        if scope is not None:
            params["scope"] = scope
        return ConsolidateResult.model_validate(await self.request(methods.CONSOLIDATE, params))

    async def context(self, budget_chars: int | None = None) -> ContextResult:
        """The always-loaded memories within the budget, and what did not fit."""
        params = {} if budget_chars is None else {"budgetChars": budget_chars}
        return ContextResult.model_validate(await self.request(methods.CONTEXT, params))

    # -- search and suggestions (docs/network.md) --------------------------------------------

    async def search(
        self,
        mode: str,
        query: str = "",
        *,
        path: str | None = None,
        category: str | None = None,
        scope: str | None = None,
        limit: int | None = None,
    ) -> SearchResult:
        """`memory/search`: `shallow`/`deep` need a query, `explore` a category, a path or
        a query, `get` a path. Raises RpcError -32602 (what to change), -32803 (not found)."""
        params = SearchParams(
            mode=mode,  # type: ignore[arg-type]
            query=query,
            path=path,
            category=category,
            scope=scope,  # type: ignore[arg-type]
            limit=limit,
        ).model_dump(mode="json", by_alias=True, exclude_none=True)
        return SearchResult.model_validate(await self.request(methods.SEARCH, params))

    def observe(self, event: str, *, path: str | None = None, text: str | None = None) -> None:
        """`memory/observe` (a notification): an `edit` of `path`, an `error` or a
        `toolResult` text, a `command` line. A match arrives later as `memory/suggestion`
        (`suggestions`, `on_suggestion`)."""
        params = ObserveParams(event=event, path=path, text=text)  # type: ignore[arg-type]
        self.notify(methods.OBSERVE, params.model_dump(mode="json", exclude_none=True))

    # -- the write side (docs/writing.md): each raises RpcError (-32602, -32803) when refused --

    async def _write_request(self, method: str, params: WireModel) -> WriteResult:
        payload = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        return WriteResult.model_validate(await self.request(method, payload))

    async def extract(
        self,
        trigger: str,
        transcript: Sequence[tuple[str, str]] | Sequence[dict[str, str]] = (),
        **fields: Any,
    ) -> ExtractResult:
        """`memory/extract`; `transcript` as (role, content) pairs or dicts; `fields`: files
        ([{path, content}]), diff, scope, apply."""
        turns = [t if isinstance(t, dict) else {"role": t[0], "content": t[1]} for t in transcript]
        params = ExtractParams.model_validate(
            {"trigger": trigger, **({"transcript": turns} if turns else {}), **fields}
        )
        payload = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        return ExtractResult.model_validate(await self.request(methods.EXTRACT, payload))

    async def remember(self, text: str, **fields: Any) -> WriteResult:
        """`memory/remember`; `fields`: scope, type, title, description, pinned, always, force."""
        return await self._write_request(methods.REMEMBER, RememberParams(text=text, **fields))

    async def update(self, path: str, **fields: Any) -> WriteResult:
        """`memory/update`; `fields`: if_match (a contentHash), title, description, type, body…"""
        return await self._write_request(methods.UPDATE, UpdateParams(path=path, **fields))

    async def forget(
        self, path: str, *, reason: str | None = None, hard: bool = False
    ) -> WriteResult:
        return await self._write_request(
            methods.FORGET, ForgetParams(path=path, reason=reason, hard=hard)
        )

    async def restore(self, path: str) -> WriteResult:
        return await self._write_request(methods.RESTORE, RestoreParams(path=path))

    async def undo(self, operation: str) -> WriteResult:
        return await self._write_request(methods.UNDO, UndoParams(operation=operation))

    async def history(self, path: str) -> HistoryResult:
        return HistoryResult.model_validate(await self.request(methods.HISTORY, {"path": path}))

    async def list_memories(
        self,
        *,
        scope: str | None = None,
        category: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        every_page: bool = True,
    ) -> ListResult:
        """`memory/list`: one page (`every_page=False`), or every page joined (the default)."""
        memories = []
        while True:
            params = ListParams(scope=scope, category=category, limit=limit, cursor=cursor)  # type: ignore[arg-type]
            payload = params.model_dump(mode="json", by_alias=True, exclude_none=True)
            page = ListResult.model_validate(await self.request(methods.LIST, payload))
            if not every_page:
                return page
            memories += page.memories
            cursor = page.next_cursor
            if cursor is None:
                return ListResult(memories=memories)

    # -- retrieval v2 and reflection (docs/network.md) ------------------------------------------

    def feedback(
        self,
        token: str | int | None,
        used: Sequence[str],
        ignored: Sequence[str] = (),
    ) -> None:
        """`memory/feedback` as docs/network.md sends it: a notification, nothing answered."""
        params = FeedbackParams(token=token, used=list(used), ignored=list(ignored))
        self.notify(
            methods.FEEDBACK, params.model_dump(mode="json", by_alias=True, exclude_none=True)
        )

    async def feedback_request(
        self,
        token: str | int | None,
        used: Sequence[str],
        ignored: Sequence[str] = (),
    ) -> FeedbackResult:
        """`memory/feedback` sent with an id: what was recorded comes back."""
        params = FeedbackParams(token=token, used=list(used), ignored=list(ignored))
        payload = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        return FeedbackResult.model_validate(await self.request(methods.FEEDBACK, payload))

    async def explain(
        self,
        path: str,
        *,
        token: str | int | None = None,
        query: str | None = None,
        recent_tools: Sequence[str] = (),
        ranker: str | None = None,
    ) -> ExplainResult:
        """`memory/explain`: why a memory was or was not delivered, for a recall named by
        its token or for a query."""
        params = ExplainParams(
            path=path, token=token, query=query, recent_tools=list(recent_tools), ranker=ranker
        )
        payload = params.model_dump(mode="json", by_alias=True, exclude_none=True)
        return ExplainResult.model_validate(await self.request(methods.EXPLAIN, payload))

    async def request(self, method: str, params: Any) -> Any:
        return await self._send_request(next(self._ids), method, params)

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    def send_raw(self, body: bytes) -> None:
        """Write one frame with an arbitrary body (for tests of malformed input)."""
        self._writer.write(frame(body))

    def _send_request(self, msg_id: int, method: str, params: Any) -> asyncio.Future[Any]:
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[msg_id] = future
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self._write(message)
        return future

    def _write(self, message: dict[str, Any]) -> None:
        body = json.dumps(message, ensure_ascii=False).encode("utf-8")
        self._writer.write(frame(body))

    # -- reading ------------------------------------------------------------------

    async def _read_loop(self) -> None:
        frames = FrameReader(self._reader)
        try:
            while True:
                body = await frames.next()
                if body is None:
                    return
                if isinstance(body, FramingError):
                    continue  # the daemon never writes one; nothing to answer here
                self._dispatch(json.loads(body))
        except ConnectionError:
            return
        finally:
            for future in self._pending.values():
                _settle(future, exception=ConnectionError("the daemon went away"))

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:
            task = asyncio.ensure_future(self._answer(message))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)
        elif "method" in message:
            self._on_notification(message["method"], message.get("params"))
        else:
            future = self._pending.pop(message.get("id"), None)  # type: ignore[arg-type]
            if future is None:
                return
            if "error" in message:
                err = message["error"]
                _settle(future, exception=RpcError(err["code"], err["message"], err.get("data")))
            else:
                _settle(future, result=message.get("result"))

    def _on_notification(self, method: str, params: Any) -> None:
        self.notifications.append((method, params))
        if self.on_notification:
            self.on_notification(method, params)
        if method == methods.SUGGESTION:
            suggestion = SuggestionNotification.model_validate(params)
            self.suggestions.append(suggestion)
            if self.on_suggestion:
                self.on_suggestion(suggestion)
            return
        if method in (methods.FAST_RESULT, methods.REFINED_RESULT):
            handle = self._recalls.get(str(params.get("token")))
            if handle is None:
                return
            note = PhaseNotification.model_validate(params)
            target = handle.fast if method == methods.FAST_RESULT else handle.refined_future
            _settle(target, result=note)

    async def _answer(self, message: dict[str, Any]) -> None:
        msg_id, method = message["id"], message["method"]
        reply: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id}
        if method == methods.SELECT and self.select_handler is not None:
            try:
                params = SelectParams.model_validate(message.get("params"))
                reply["result"] = {"selected": list(await self.select_handler(params))}
            except Exception as exc:
                reply["error"] = {"code": methods.REQUEST_FAILED, "message": str(exc)}
        elif method == methods.COMPLETE and self.complete_handler is not None:
            try:
                complete = CompleteParams.model_validate(message.get("params"))
                reply["result"] = {"content": await self.complete_handler(complete)}
            except Exception as exc:
                reply["error"] = {"code": methods.REQUEST_FAILED, "message": str(exc)}
        elif method == "window/workDoneProgress/create":
            reply["result"] = None
        else:
            reply["error"] = {"code": methods.METHOD_NOT_FOUND, "message": f"{method} unsupported"}
        self._write(reply)


def _settle(future: asyncio.Future[Any], *, result: Any = None, exception: Any = None) -> None:
    if future.done():
        return
    if exception is not None:
        future.set_exception(exception)
        future.exception()  # mark retrieved: a caller may never await it
    else:
        future.set_result(result)
