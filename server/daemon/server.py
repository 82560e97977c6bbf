"""The shared daemon: one process per user, on a Unix socket (docs/hooks.md, "One daemon").

Every connection speaks JSON-RPC with LSP framing (`protocol/framing.py`). Its first
message says who it is:

- a hook process (`hook/event`, or the daemon's own `daemon/status`, `daemon/stop`):
  plain requests answered at once, no `initialize` — a hook has 100 ms from its
  start to its exit;
- anything else is an editor or an agent host speaking the memory protocol: the
  connection is handed to the LSP face (`MemoryServer`), which takes its
  workspace's core from the registry instead of building one.

Exactly one daemon per user: a lock file in the runtime folder (0700) is held for
the daemon's life; a second start finds it held, says where the first listens, and
exits. The socket is 0600. The daemon stops after `idleMinutes` without a request
and with no client connected; each workspace's core is dropped after its own idle
time. Optionally, a loopback HTTP listener with a per-user token serves the same
hook events to hosts whose hooks POST (`http.py`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import stat
import sys
import time
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout
from memory_recall.protocol import methods
from memory_recall.protocol.endpoint import HOOK_METHOD, MAX_SOCKET_PATH_BYTES
from memory_recall.protocol.framing import FrameReader, FramingError, frame
from memory_recall.server.daemon.http import HookHttpServer
from memory_recall.server.daemon.registry import CoreRegistry
from memory_recall.server.daemon.settings import DaemonSettings, http_token
from memory_recall.server.hooks.hosts import host_named
from memory_recall.server.hooks.service import HookService
from memory_recall.server.lsp.server import MemoryServer
from memory_recall.server.release import version

log = logging.getLogger("memory_recall.daemon")

STATUS_METHOD = "daemon/status"
STOP_METHOD = "daemon/stop"
LIGHT_METHODS = (HOOK_METHOD, STATUS_METHOD, STOP_METHOD)
# A hook that names no deadline gets this one; none waits longer than the ceiling.
DEFAULT_DEADLINE_S = 0.08
DEADLINE_CEILING_S = 10.0
LOCK_NAME = "daemon.lock"
INFO_NAME = "daemon.json"


class RuntimeFolderError(Exception):
    """The runtime folder is not safe to listen in (another user's, or open to others)."""


def secure_folder(folder: Path) -> None:
    """Create the runtime folder 0700, or check that an existing one is ours and closed."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    st = folder.stat()
    if hasattr(os, "getuid") and st.st_uid != os.getuid():
        raise RuntimeFolderError(f"{folder} belongs to another user (uid {st.st_uid})")
    if stat.S_IMODE(st.st_mode) & 0o077:
        os.chmod(folder, 0o700)


class _Replay:
    """A connection's reader that keeps what it read until the connection's kind is known,
    so the LSP face can read the stream from its first byte."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader
        self._seen = bytearray()
        self._recording = True
        self._replay = b""

    async def read(self, n: int) -> bytes:
        if self._replay:
            out, self._replay = self._replay[:n], self._replay[n:]
            return out
        data = await self._reader.read(n)
        if self._recording:
            self._seen += data
        return data

    def rewind(self) -> None:
        self._replay, self._seen, self._recording = bytes(self._seen), bytearray(), False

    def forget(self) -> None:
        self._seen, self._recording = bytearray(), False


class _SocketWriter:
    """pygls' writer interface over a connection."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    def write(self, data: bytes) -> None:
        if not self._writer.is_closing():
            self._writer.write(data)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self._writer.close()


class SharedDaemon:
    """The daemon's connections, cores and hooks."""

    def __init__(
        self,
        socket_file: Path,
        settings: DaemonSettings,
        *,
        env: dict[str, str] | None = None,
    ) -> None:
        self.socket_file = socket_file
        self.settings = settings
        self.registry = CoreRegistry(
            env=env,
            host_memory=settings.host_memory,
            host_memory_writable=settings.host_memory_writable,
            idle_s=settings.workspace_idle_s,
        )
        self.hooks = HookService(self.registry.get, extract=settings.extract)
        self.started = time.time()
        self.last_activity = time.monotonic()
        self.connections = 0  # open connections (an editor keeps the daemon up)
        self.requests = 0
        self.http: HookHttpServer | None = None
        self._stop = asyncio.Event()
        self._lock: FileLock | None = None
        self._server: asyncio.AbstractServer | None = None

    # -- lifetime ------------------------------------------------------------------------------

    def acquire(self) -> bool:
        """Take the one-per-user lock; False when another daemon holds it."""
        folder = self.socket_file.parent
        secure_folder(folder)
        lock = FileLock(str(folder / LOCK_NAME), timeout=0)
        try:
            lock.acquire()
        except Timeout:
            return False
        self._lock = lock
        return True

    async def start(self) -> None:
        if len(os.fsencode(str(self.socket_file))) > MAX_SOCKET_PATH_BYTES:
            raise RuntimeFolderError(
                f"{self.socket_file}: a socket path must be at most {MAX_SOCKET_PATH_BYTES} "
                "bytes; set MEMORY_RECALL_RUNTIME_DIR to a shorter folder"
            )
        # We hold the lock: a socket file left behind is a crashed daemon's.
        with contextlib.suppress(FileNotFoundError):
            self.socket_file.unlink()
        old_mask = os.umask(0o177)  # the socket is born 0600: no moment open to others
        try:
            self._server = await asyncio.start_unix_server(
                self._connection, path=str(self.socket_file)
            )
        finally:
            os.umask(old_mask)
        os.chmod(self.socket_file, 0o600)
        if self.settings.http:
            token = http_token()
            assert token is not None
            self.http = HookHttpServer(self.hooks, token, self._touch)
            try:
                await self.http.start(self.settings.http_port)
            except OSError as exc:
                log.warning(
                    "the HTTP listener could not start on 127.0.0.1:%d (%s): hooks of type "
                    "http get nothing; command hooks still work",
                    self.settings.http_port,
                    exc.strerror or exc,
                )
                self.http = None
        self._write_info()
        for problem in self.settings.problems:
            log.warning("settings: %s", problem)
        log.info("memory-recall %s listening on %s", version(), self.socket_file)

    def _write_info(self) -> None:
        info = {
            "pid": os.getpid(),
            "socket": str(self.socket_file),
            "http": self.http.address if self.http else None,
            "version": version(),
            "started": self.started,
        }
        path = self.socket_file.parent / INFO_NAME
        temp = path.with_name(f".{INFO_NAME}.tmp")
        temp.write_text(json.dumps(info) + "\n", "utf-8")
        os.replace(temp, path)

    async def run(self) -> None:
        """Serve until stopped: `daemon/stop`, a signal, or idle."""
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._stop.set)
        watch = asyncio.ensure_future(self._idle_watch())
        try:
            await self._stop.wait()
        finally:
            watch.cancel()
            await self.close()

    def stop(self) -> None:
        self._stop.set()

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
        if self.http is not None:
            await self.http.close()
        self.hooks.close()
        await self.registry.stop_all()
        with contextlib.suppress(FileNotFoundError):
            self.socket_file.unlink()
        with contextlib.suppress(FileNotFoundError):
            (self.socket_file.parent / INFO_NAME).unlink()
        if self._lock is not None:
            self._lock.release()

    async def _idle_watch(self) -> None:
        step = max(0.05, min(30.0, self.settings.idle_s / 4, self.settings.workspace_idle_s / 4))
        while True:
            await asyncio.sleep(step)
            await self.registry.evict_idle()
            idle = time.monotonic() - self.last_activity
            if self.connections == 0 and idle > self.settings.idle_s:
                log.info("idle for %.0f s: stopping", idle)
                self._stop.set()
                return

    def _touch(self) -> None:
        self.last_activity = time.monotonic()
        self.requests += 1

    # -- connections -----------------------------------------------------------------------

    async def _connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        self._touch()
        source = _Replay(reader)
        frames = FrameReader(source)
        try:
            first = await frames.next()
            if first is None:
                return
            if isinstance(first, bytes) and _method(first) in LIGHT_METHODS:
                source.forget()
                await self._light(first, frames, writer)
            else:
                source.rewind()
                server = MemoryServer(shared_cores=self.registry.get)
                await server.serve_on(source, _SocketWriter(writer))
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        except Exception as exc:  # one client's trouble never takes the daemon down
            log.error("connection failed: %s: %s", type(exc).__name__, exc)
        finally:
            self.connections -= 1
            self._touch()
            with contextlib.suppress(Exception):
                writer.close()

    async def _light(self, first: bytes, frames: FrameReader, writer: asyncio.StreamWriter) -> None:
        """Requests answered one by one: hook events, status, stop."""
        body: bytes | FramingError | None = first
        while body is not None:
            self._touch()
            reply: dict[str, Any] | None
            if isinstance(body, FramingError):
                reply = _error(body.id, methods.INVALID_REQUEST, body.message)
            else:
                reply = await self._answer(body)
            if reply is not None:
                writer.write(frame(json.dumps(reply, ensure_ascii=False).encode("utf-8")))
                await writer.drain()
            body = await frames.next()

    async def _answer(self, body: bytes) -> dict[str, Any] | None:
        try:
            message = json.loads(body)
        except ValueError:
            return _error(None, methods.PARSE_ERROR, "parse error: body is not JSON")
        if not isinstance(message, dict):
            return _error(None, methods.INVALID_REQUEST, "invalid request: expected an object")
        msg_id = message.get("id")
        method = message.get("method")
        given = message.get("params")
        params: dict[str, Any] = given if isinstance(given, dict) else {}
        if method == HOOK_METHOD:
            result: Any = {"stdout": await self.hook(params)}
        elif method == STATUS_METHOD:
            result = self.status()
        elif method == STOP_METHOD:
            asyncio.get_running_loop().call_soon(self._stop.set)
            result = {"stopping": True}
        else:
            return _error(msg_id, methods.METHOD_NOT_FOUND, f"unknown method {method!r}")
        if msg_id is None:
            return None
        return {"jsonrpc": "2.0", "id": msg_id, "result": result}

    async def hook(self, params: dict[str, Any]) -> str:
        """One hook event: what the hook prints ('' for nothing)."""
        host = host_named(str(params.get("host", "")))
        if host is None:
            return ""
        deadline = params.get("deadlineMs")
        deadline_s = (
            min(DEADLINE_CEILING_S, max(0.0, deadline / 1000))
            if isinstance(deadline, (int, float)) and not isinstance(deadline, bool)
            else DEFAULT_DEADLINE_S
        )
        project = params.get("projectDir")
        return await self.hooks.serve(
            host,
            str(params.get("event", "")),
            params.get("input"),
            deadline_s,
            project if isinstance(project, str) else None,
        )

    def status(self) -> dict[str, Any]:
        return {
            "pid": os.getpid(),
            "version": version(),
            "socket": str(self.socket_file),
            "http": self.http.address if self.http else None,
            "uptimeSeconds": round(time.time() - self.started, 1),
            "connections": self.connections,
            "requests": self.requests,
            "idleStopSeconds": self.settings.idle_s,
            "extract": self.hooks.extract_mode,
            "pendingRecalls": self.hooks.pending,
            "hooks": self.hooks.counters.wire(),
            "workspaces": self.registry.status(),
        }


def _method(body: bytes) -> str | None:
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message.get("method") if isinstance(message, dict) else None


def _error(msg_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": message}}


def run_daemon(socket_file: Path, settings: DaemonSettings, *, log_level: str = "INFO") -> int:
    """Run the shared daemon in this process until it stops; 0 also when one already runs
    (it says where)."""
    logging.basicConfig(
        stream=sys.stderr,
        level=log_level,
        format="%(asctime)s memory-recall %(levelname)s %(message)s",
    )
    for noisy in ("pygls", "httpx", "watchfiles"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    daemon = SharedDaemon(socket_file, settings)
    try:
        if not daemon.acquire():
            print(f"memory-recall: a daemon already runs on {socket_file}", file=sys.stderr)
            return 0
    except (OSError, RuntimeFolderError) as exc:
        print(f"memory-recall: cannot start the daemon: {exc}", file=sys.stderr)
        return 1

    async def main() -> None:
        try:
            await daemon.start()
        except (OSError, RuntimeFolderError) as exc:
            print(f"memory-recall: cannot start the daemon: {exc}", file=sys.stderr)
            daemon.stop()
            await daemon.close()
            raise SystemExit(1) from None
        await daemon.run()

    # As `serve`: not asyncio.run, which would join an index build still in a thread.
    loop = asyncio.new_event_loop()
    try:
        loop.run_until_complete(main())
    except SystemExit as exit_:
        return int(exit_.code or 0)
    sys.stderr.flush()
    return 0
