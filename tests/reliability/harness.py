"""Helpers of the reliability tier: daemons, raw wire access, a fake model server.

The reliability tier attacks the real daemon process on purpose: every test
starts `memory-recall serve` as an editor would and tries to break it with
malformed wire input, hostile memory files, a lying model, load and faults.
Default sizes keep the tier under a minute on a shared 2-core machine;
`MEMORY_RECALL_FULL_LOAD=1` raises them to the published figures, which the
terminal summary prints at the end of the run.
"""

from __future__ import annotations

import asyncio
import contextlib
import http.server
import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memory_recall.protocol.client import MemoryRecallClient
from memory_recall.protocol.framing import FramingError, blocking_frames, frame

FULL_LOAD = os.environ.get("MEMORY_RECALL_FULL_LOAD") == "1"
WAIT = 60.0 if FULL_LOAD else 30.0  # seconds: every wait in this tier is bounded (generous:
# a loaded 2-core machine); a wait that is not met fails, never a wall-clock budget


def sized(default: int, full: int) -> int:
    """A load size: small by default, the issue's figure under MEMORY_RECALL_FULL_LOAD=1."""
    return full if FULL_LOAD else default


# Without root's file-mode override, a mode-000 file is unreadable even to root.
NO_DAC = ["setpriv", "--bounding-set=-dac_override,-dac_read_search"]


def _without_file_mode_override() -> list[str] | None:
    """A command prefix under which mode bits bind this process, or None."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        return None
    probe = os.popen(f"{' '.join(NO_DAC)} cat /proc/self/status 2>/dev/null").read()
    for line in probe.splitlines():
        if line.startswith("CapEff:"):
            effective = int(line.split()[1], 16)
            return NO_DAC if not effective & (1 << 1 | 1 << 2) else None
    return None


# The prefix that makes file modes bind the daemon (as root: setpriv), or None.
MODE_BOUND = _without_file_mode_override()


def serve_command(*, ceiling_ms: int | None = None, log_level: str = "INFO") -> list[str]:
    command = [sys.executable, "-m", "memory_recall.server", "serve", "--log-level", log_level]
    if ceiling_ms is not None:
        command += ["--selector-ceiling-ms", str(ceiling_ms)]
    return command


def error_lines(stderr_log: Path) -> list[str]:
    """The daemon's ERROR (and worse) log lines, and any traceback."""
    text = stderr_log.read_text(encoding="utf-8", errors="replace")
    return [
        line
        for line in text.splitlines()
        if " ERROR " in line or " CRITICAL " in line or line.startswith("Traceback")
    ]


# -- an asyncio client that keeps every message -----------------------------------


class RecordingClient(MemoryRecallClient):
    """The protocol client, also keeping every message the daemon sent, in order."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.received: list[dict[str, Any]] = []
        self.stderr_log: Path | None = None
        super().__init__(*args, **kwargs)

    def _dispatch(self, message: dict[str, Any]) -> None:
        self.received.append(message)
        super()._dispatch(message)

    def notes(self, method: str, token: Any = None) -> list[dict[str, Any]]:
        """Params of every `method` notification (of one recall when `token` is given)."""
        return [
            m["params"]
            for m in self.received
            if m.get("method") == method
            and "id" not in m
            and (token is None or m["params"].get("token") == token)
        ]

    def responses(self, msg_id: Any) -> list[dict[str, Any]]:
        return [m for m in self.received if "method" not in m and m.get("id") == msg_id]

    async def raw_response(self, msg_id: Any, timeout: float = WAIT) -> dict[str, Any]:
        """The response to a request sent with `send_raw`."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.responses(msg_id)
            if found:
                return found[0]
            if time.monotonic() > deadline:
                raise TimeoutError(f"no response to id {msg_id!r} within {timeout} s")
            await asyncio.sleep(0.01)

    def send_message(self, message: dict[str, Any]) -> None:
        self.send_raw(json.dumps(message).encode())


async def start_daemon(
    tmp_path: Path,
    roots: list[tuple[Path | str, str]] | None = None,
    *,
    ceiling_ms: int | None = None,
    log_level: str = os.environ.get("MR_TEST_LOG", "INFO"),
    prefix: Sequence[str] = (),
    client_class: type[RecordingClient] | None = None,
    **kwargs: Any,
) -> RecordingClient:
    """Start `memory-recall serve` (behind `prefix`, e.g. setpriv) with stderr kept in `tmp_path`."""
    log_path = tmp_path / f"daemon-{time.monotonic_ns()}.log"
    stderr = log_path.open("wb")
    try:
        client = await (client_class or RecordingClient).start(
            [*prefix, *serve_command(ceiling_ms=ceiling_ms, log_level=log_level)],
            roots=[(str(p), s) for p, s in roots] if roots is not None else None,
            stderr=stderr,
            **kwargs,
        )
    finally:
        stderr.close()  # the child keeps its own descriptor
    assert isinstance(client, RecordingClient)
    client.stderr_log = log_path
    return client


async def wait_until(
    predicate: Callable[[], Any], timeout: float = WAIT, what: str = "condition"
) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached within {timeout} s")
        await asyncio.sleep(0.02)


async def status_until(
    client: MemoryRecallClient,
    predicate: Callable[[Any], Any],
    timeout: float = WAIT,
    what: str = "status",
) -> Any:
    """Poll `memory/status` until `predicate(status)` holds; return that status."""
    deadline = time.monotonic() + timeout
    while True:
        status = await asyncio.wait_for(client.status(), WAIT)
        if predicate(status):
            return status
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached within {timeout} s; last: {status}")
        await asyncio.sleep(0.05)


def child_pids(pid: int) -> list[int]:
    """Direct children of a process, from /proc."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        with contextlib.suppress(OSError):
            stat = Path(f"/proc/{entry}/stat").read_text()
            # the command name may hold spaces or ')': the fields follow the last ')'
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == pid:
                found.append(int(entry))
    return found


# -- a synchronous wire client for property tests -----------------------------------


class WireDaemon:
    """One daemon process driven with raw bytes from synchronous (hypothesis) tests.

    A thread reads frames from the daemon's stdout into `messages`; tests
    write whatever bytes they like to its stdin.
    """

    def __init__(self, stderr_log: Path, command: list[str] | None = None) -> None:
        self.stderr_log = stderr_log
        with stderr_log.open("wb") as err:
            self.proc = subprocess.Popen(
                command or serve_command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
            )
        self.messages: list[dict[str, Any]] = []
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        for body in blocking_frames(out):
            assert not isinstance(body, FramingError), f"the daemon wrote a bad frame: {body}"
            message = json.loads(body.decode("utf-8"))  # strict: UTF-8 JSON
            with self._changed:
                self.messages.append(message)
                self._changed.notify_all()

    def send(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    frame = staticmethod(frame)

    def send_message(self, message: Any) -> None:
        self.send(self.frame(json.dumps(message).encode()))

    def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], start: int = 0, timeout: float = WAIT
    ) -> dict[str, Any]:
        """The first message from index `start` on that satisfies `predicate`."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                for message in self.messages[start:]:
                    if predicate(message):
                        return message
                remaining = deadline - time.monotonic()
                if remaining <= 0 or self.proc.poll() is not None:
                    raise TimeoutError(
                        f"no matching message within {timeout} s "
                        f"(daemon exit code {self.proc.poll()})"
                    )
                self._changed.wait(remaining)

    def response(self, msg_id: Any, start: int = 0, timeout: float = WAIT) -> dict[str, Any]:
        return self.wait_for(
            lambda m: "method" not in m and m.get("id") == msg_id, start=start, timeout=timeout
        )

    def responses_to(self, msg_id: Any, start: int = 0) -> list[dict[str, Any]]:
        with self._changed:
            return [m for m in self.messages[start:] if "method" not in m and m.get("id") == msg_id]

    def request(self, msg_id: Any, method: str, params: Any = None) -> dict[str, Any]:
        start = len(self.messages)
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send_message(message)
        return self.response(msg_id, start=start)

    def initialize(self, options: dict[str, Any]) -> dict[str, Any]:
        reply = self.request("init", "initialize", initialize_params(options))
        self.send_message({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return reply

    def close(self) -> int:
        with contextlib.suppress(Exception):
            self.request("bye", "shutdown")
            self.send_message({"jsonrpc": "2.0", "method": "exit"})
        with contextlib.suppress(Exception):
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        try:
            return self.proc.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            return self.proc.wait()


def initialize_params(options: dict[str, Any]) -> dict[str, Any]:
    return {
        "processId": os.getpid(),
        "rootUri": None,
        "capabilities": {},
        "initializationOptions": options,
    }


# -- a fake OpenAI-compatible model server ---------------------------------------------


# (headers, request JSON) → (status, body) or (status, body, extra response headers)
Behaviour = Callable[[dict[str, str], dict[str, Any]], tuple[Any, ...]]


class FakeModel:
    """A real HTTP server on 127.0.0.1 that answers `/chat/completions` as told.

    `behaviour(headers, request_json) -> (status, body bytes)`; the special body
    `CLOSE` makes it drop the connection without answering, `HANG` makes it
    never answer. Every request's headers and JSON are kept.
    """

    CLOSE = b"<close>"
    HANG = b"<hang>"

    def __init__(self, behaviour: Behaviour) -> None:
        self.behaviour = behaviour
        self.requests: list[tuple[dict[str, str], dict[str, Any]]] = []
        self._release = threading.Event()
        fake = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                payload = json.loads(self.rfile.read(length) or b"{}")
                headers = dict(self.headers.items())
                fake.requests.append((headers, payload))
                status, body, *extra = fake.behaviour(headers, payload)  # type: ignore[misc]
                if body == FakeModel.CLOSE:
                    self.close_connection = True
                    self.connection.shutdown(2)  # socket.SHUT_RDWR
                    return
                if body == FakeModel.HANG:
                    fake._release.wait(WAIT * 3)
                    self.close_connection = True
                    return
                self.send_response(status)
                for name, value in (extra[0] if extra else {}).items():
                    self.send_header(name, value)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._release.set()
        self.server.shutdown()
        self.server.server_close()


def completion(content: str) -> bytes:
    """An OpenAI chat completion whose message content is `content`."""
    return json.dumps(
        {"choices": [{"index": 0, "message": {"role": "assistant", "content": content}}]}
    ).encode()
