"""End-to-end tier: the real daemon process over stdio, driven by pytest-lsp."""

from __future__ import annotations

import asyncio
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest_lsp
from lsprotocol import types
from memory_recall.protocol import methods
from memory_recall.server.lsp.adapter import _plain_params
from pygls.lsp.client import LanguageClient
from pygls.protocol import JsonRPCNotification, JsonRPCRequestMessage, JsonRPCResponseMessage
from pytest_lsp import ClientServerConfig

# A low selector ceiling keeps the timeout tests short; the 30 s default is
# the same constant, lowered by the serve option.
CEILING_MS = 1500
SERVER_COMMAND = [
    sys.executable, "-m", "memory_recall.server", "serve", "--selector-ceiling-ms", str(CEILING_MS),
    "--log-level", "WARNING",
]  # fmt: skip
WAIT = 30  # seconds: every wait in a test is bounded (generous: a loaded 2-core machine)


class Recorder:
    """Every notification of interest, by token, in arrival order."""

    def __init__(self) -> None:
        self.by_token: dict[Any, list[tuple[str, dict[str, Any]]]] = defaultdict(list)
        self.all: list[tuple[str, dict[str, Any]]] = []
        self.changed = asyncio.Event()

    def add(self, method: str, params: dict[str, Any]) -> None:
        self.all.append((method, params))
        self.by_token[params.get("token")].append((method, params))
        self.changed.set()

    def of(self, token: Any, method: str | None = None) -> list[dict[str, Any]]:
        return [p for m, p in self.by_token[token] if method is None or m == method]

    def methods_for(self, token: Any) -> list[str]:
        return [m for m, _ in self.by_token[token]]

    async def wait_for(self, token: Any, method: str, timeout: float = WAIT) -> dict[str, Any]:
        async def poll() -> dict[str, Any]:
            while True:
                found = self.of(token, method)
                if found:
                    return found[0]
                self.changed.clear()
                await self.changed.wait()

        return await asyncio.wait_for(poll(), timeout)


@pytest_lsp.fixture(config=ClientServerConfig(server_command=SERVER_COMMAND))
async def client(lsp_client: LanguageClient):
    converter = lsp_client.protocol._converter
    for cls in (JsonRPCRequestMessage, JsonRPCNotification, JsonRPCResponseMessage):
        converter.register_structure_hook(cls, _plain_params)
    recorder = Recorder()
    for method in (methods.FAST_RESULT, methods.REFINED_RESULT, methods.TELEMETRY):

        def make(m: str) -> Any:
            return lambda params: recorder.add(m, params)

        lsp_client.feature(method)(make(method))
    lsp_client.recorder = recorder  # type: ignore[attr-defined]
    yield
    server = lsp_client._server
    if lsp_client.capabilities is not None and server.returncode is None:
        try:
            await asyncio.wait_for(lsp_client.shutdown_session(), WAIT)
        except asyncio.TimeoutError:
            server.kill()
            raise


async def start(
    client: LanguageClient,
    roots: list[tuple[Path, str]],
    *,
    selector: dict[str, Any] | None = None,
    watch: bool = False,
    **extra: Any,
) -> dict[str, Any]:
    options: dict[str, Any] = {
        "roots": [{"path": str(p), "scope": s} for p, s in roots],
        "watch": watch,
        **extra,
    }
    if selector is not None:
        options["selector"] = selector
    await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(), initialization_options=options
            )
        ),
        WAIT,
    )
    return await wait_ready(client)


async def wait_ready(client: LanguageClient) -> dict[str, Any]:
    async def poll() -> dict[str, Any]:
        while True:
            status = await request(client, methods.STATUS, {})
            if status["ready"]:
                return status  # type: ignore[no-any-return]
            await asyncio.sleep(0.02)

    return await asyncio.wait_for(poll(), WAIT)


async def request(client: LanguageClient, method: str, params: Any) -> Any:
    return await asyncio.wait_for(client.protocol.send_request_async(method, params), WAIT)
