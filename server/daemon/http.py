"""Hook events over loopback HTTP, for hosts whose hooks POST (docs/hooks.md, "HTTP hooks").

Claude Code and qwen-code can send a hook's JSON to a URL instead of running a
command; no process starts, so the whole hook is one local round trip. The
listener binds 127.0.0.1 only and answers only requests that carry the user's
token (`Authorization: Bearer <token>`, compared in constant time; the token lives
0600 in the user data folder and `install-hooks --http` writes it into the host's
user settings). `POST /hook/<host>/<event>` with the host's JSON as the body is
answered with exactly what the command hook would print (`{}` for nothing).

A minimal HTTP/1.1 server on asyncio streams (one route, keep-alive, bodies up to
4 MiB): the standard library's `http.server` is thread-per-request and blocking,
and a web framework would be a dependency for one route.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
from collections.abc import Callable
from typing import Any

from memory_recall.protocol.framing import MAX_MESSAGE_BYTES
from memory_recall.server.hooks.hosts import host_named
from memory_recall.server.hooks.service import HookService

log = logging.getLogger("memory_recall.daemon")

HOST = "127.0.0.1"
# What an HTTP hook may take inside the daemon: the host waits for the answer, and its
# prompt must not wait on us longer than a command hook's budget.
HTTP_DEADLINE_S = 0.08
MAX_HEADER_BYTES = 16 * 1024
_REASONS = {200: "OK", 400: "Bad Request", 401: "Unauthorized", 404: "Not Found",
            405: "Method Not Allowed", 413: "Payload Too Large"}  # fmt: skip


class HookHttpServer:
    def __init__(self, hooks: HookService, token: str, touch: Callable[[], None]) -> None:
        self._hooks = hooks
        self._token = token.encode("utf-8")
        self._touch = touch
        self._server: asyncio.AbstractServer | None = None
        self.address: str | None = None

    async def start(self, port: int) -> None:
        self._server = await asyncio.start_server(self._connection, HOST, port)
        bound = self._server.sockets[0].getsockname()[1]
        self.address = f"http://{HOST}:{bound}"
        log.info("hooks over HTTP on %s", self.address)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                keep = await self._one(reader, writer)
                if not keep:
                    break
        except (ConnectionError, asyncio.IncompleteReadError, asyncio.LimitOverrunError):
            pass
        except Exception as exc:
            log.error("HTTP hook failed: %s: %s", type(exc).__name__, exc)
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEADER_BYTES:
            await _send(writer, 413, b"{}", close=True)
            return False
        lines = head.decode("latin-1").split("\r\n")
        parts = lines[0].split(" ")
        if len(parts) != 3:
            await _send(writer, 400, b"{}", close=True)
            return False
        verb, target, version = parts
        headers = {}
        for line in lines[1:]:
            name, sep, value = line.partition(":")
            if sep:
                headers[name.strip().lower()] = value.strip()
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            length = -1
        if length < 0 or length > MAX_MESSAGE_BYTES:
            await _send(writer, 413, b"{}", close=True)
            return False
        body = await reader.readexactly(length) if length else b""
        keep = version == "HTTP/1.1" and headers.get("connection", "").lower() != "close"
        self._touch()
        status, answer = await self._route(verb, target, headers, body)
        await _send(writer, status, answer, close=not keep)
        return keep

    async def _route(
        self, verb: str, target: str, headers: dict[str, str], body: bytes
    ) -> tuple[int, bytes]:
        given = headers.get("authorization", "")
        token = given[7:].strip().encode("utf-8") if given.lower().startswith("bearer ") else b""
        if not hmac.compare_digest(token, self._token):
            return 401, b'{"error":"a valid token is required"}'
        path = target.split("?", 1)[0].strip("/").split("/")
        if len(path) != 3 or path[0] != "hook":
            return 404, b"{}"
        if verb != "POST":
            return 405, b"{}"
        host = host_named(path[1])
        if host is None:
            return 404, b"{}"
        try:
            data: Any = json.loads(body.decode("utf-8")) if body else None
        except (UnicodeDecodeError, ValueError):
            return 200, b"{}"  # garbage: nothing to add, never an error the host shows
        text = await self._hooks.serve(host, path[2], data, HTTP_DEADLINE_S)
        return 200, (text.strip() or "{}").encode("utf-8")


async def _send(writer: asyncio.StreamWriter, status: int, body: bytes, *, close: bool) -> None:
    head = (
        f"HTTP/1.1 {status} {_REASONS.get(status, 'OK')}\r\n"
        "Content-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\n"
        f"Connection: {'close' if close else 'keep-alive'}\r\n\r\n"
    )
    writer.write(head.encode("latin-1") + body)
    await writer.drain()
