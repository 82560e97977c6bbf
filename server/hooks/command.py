"""`memory-recall hook HOST EVENT`: what a host runs at each hook (docs/hooks.md).

It reads the host's JSON on stdin, hands it to the user's shared daemon over its
Unix socket, prints what the daemon answers (exactly what that host reads), and
exits 0 — always: a hook that fails or exits 2 blocks the user's prompt in several
hosts, so garbage, an empty stdin, an unknown event, a daemon that is down or slow
all end the same way, printing nothing, within the budget.

The budget counts from the process's start: a prompt hook has 100 ms for the
interpreter, this module and the daemon's answer. So this module imports the
standard library (json, socket) and the daemon's address only — no pydantic, no
pygls, no daemon, not even the frame reader's logging and dataclasses:
`python -X importtime -m memory_recall.server hook …` shows it.
A daemon that is not running is started in the background (the first prompt of
the day gets nothing; the next gets its memories); a session-start hook waits for it.
"""

from __future__ import annotations

import _socket  # the C module: `socket` itself imports selectors and enum, milliseconds more
import json
import os
import sys
import time

from memory_recall.protocol.endpoint import HOOK_METHOD, runtime_dir, socket_path, supported

ENV_BUDGET = "MEMORY_RECALL_HOOK_BUDGET_MS"
# From the process's start to its exit (docs/hooks.md): a prompt or tool hook must not delay
# the agent's first request; a session-start hook may wait for a daemon it had to start;
# the end of a turn or session only hands the transcript over.
PROMPT_BUDGET_MS = 100.0
START_BUDGET_MS = 3000.0
END_BUDGET_MS = 500.0
# Kept back from the budget for printing and exiting.
EXIT_MARGIN_MS = 8.0
# What the interpreter's start cost when the system cannot say (no /proc).
ASSUMED_START_MS = 40.0
MAX_REPLY_BYTES = 8 * 1024 * 1024
MAX_LOG_BYTES = 5 * 1024 * 1024


def frame(body: bytes) -> bytes:
    """One LSP frame, as `protocol/framing.py` writes it: that module's imports (logging,
    dataclasses, re) cost a loaded machine tens of milliseconds of the hook's budget."""
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


# What the daemon reads of a host's JSON; the rest (a tool's whole input and output, which
# can be megabytes) stays here.
KEPT_FIELDS = ("session_id", "sessionId", "cwd", "prompt", "initialPrompt", "tool_name",
               "toolName", "transcript_path", "transcriptPath", "hook_event_name", "source",
               "reason")  # fmt: skip
# Where a project's folder is named to hooks (Claude Code, Gemini CLI, qwen-code).
PROJECT_DIR_VARIABLES = ("CLAUDE_PROJECT_DIR", "GEMINI_PROJECT_DIR", "QWEN_PROJECT_DIR")


def budget_ms(event: str) -> float:
    """The event's budget from process start to exit."""
    configured = os.environ.get(ENV_BUDGET)
    if configured:
        try:
            return max(1.0, float(configured))
        except ValueError:
            pass
    name = event.lower()
    if "start" in name:
        return START_BUDGET_MS
    if "end" in name or "stop" in name or name == "afteragent":
        return END_BUDGET_MS
    return PROMPT_BUDGET_MS


def started_ms_ago() -> float:
    """How long ago this process started (Linux: /proc), else an estimate."""
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        with open("/proc/uptime", "rb") as f:
            uptime = float(f.read().split()[0])
        ticks = os.sysconf("SC_CLK_TCK")
        return max(0.0, (uptime - int(fields[19]) / ticks) * 1000)
    except (OSError, ValueError, IndexError):
        return ASSUMED_START_MS


def _read_reply(conn: _socket.socket) -> bytes | None:
    """One framed reply's body."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        buf += chunk
        if len(buf) > 65536 and b"\r\n\r\n" not in buf:
            return None
    head, _, rest = buf.partition(b"\r\n\r\n")
    length = None
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    if length is None or length > MAX_REPLY_BYTES:
        return None
    while len(rest) < length:
        chunk = conn.recv(65536)
        if not chunk:
            return None
        rest += chunk
    return rest[:length]


def start_daemon() -> None:
    """Start the shared daemon in the background, detached from this hook."""
    import subprocess  # only on this path: the common one never pays for it

    folder = runtime_dir()
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / "daemon.log"
    try:
        if path.stat().st_size > MAX_LOG_BYTES:  # one old log is kept, never more
            os.replace(path, folder / "daemon.log.1")
    except OSError:
        pass
    log = open(path, "ab")  # noqa: SIM115 - handed to the child
    try:
        subprocess.Popen(
            [sys.executable, "-m", "memory_recall.server", "daemon"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
            close_fds=True,
            cwd=folder,  # not the project's folder: the daemon outlives the session
        )
    finally:
        log.close()


def _connect(path: str, timeout_s: float) -> _socket.socket | None:
    conn = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
    conn.settimeout(max(0.001, timeout_s))
    try:
        conn.connect(path)
    except OSError:
        conn.close()
        return None
    return conn


def ask(host: str, event: str, data: object, deadline: float, waits_for_start: bool) -> str:
    """The daemon's answer for this event ('' for nothing, or when it is not there in time);
    `deadline` is a `time.monotonic()` value."""
    path = str(socket_path())
    conn = _connect(path, deadline - time.monotonic())
    if conn is None:
        start_daemon()
        if not waits_for_start:
            return ""
        while conn is None and time.monotonic() < deadline - 0.05:
            time.sleep(0.05)
            conn = _connect(path, deadline - time.monotonic())
        if conn is None:
            return ""
    project = next((os.environ[v] for v in PROJECT_DIR_VARIABLES if os.environ.get(v)), None)
    try:
        # The daemon gets the time left, less the way back.
        left_ms = (deadline - time.monotonic()) * 1000 - EXIT_MARGIN_MS
        if left_ms <= 0:
            return ""
        params = {"host": host, "event": event, "input": data, "deadlineMs": left_ms}
        if project:
            params["projectDir"] = project
        body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": HOOK_METHOD, "params": params})
        conn.settimeout(max(0.001, deadline - time.monotonic()))
        conn.sendall(frame(body.encode("utf-8")))
        reply = _read_reply(conn)
    finally:
        conn.close()
    if reply is None:
        return ""
    result = json.loads(reply).get("result")
    stdout = result.get("stdout") if isinstance(result, dict) else None
    return stdout if isinstance(stdout, str) else ""


def main(argv: list[str]) -> int:
    """Exit 0 whatever happens; print the host's JSON or nothing."""
    try:
        if len(argv) != 2 or not supported():
            return 0
        host, event = argv
        budget = budget_ms(event)
        deadline = time.monotonic() + (budget - started_ms_ago() - EXIT_MARGIN_MS) / 1000
        if sys.stdin is None or sys.stdin.isatty():
            return 0
        raw = sys.stdin.buffer.read()
        if not raw.strip():
            return 0
        given = json.loads(raw)
        if not isinstance(given, dict):
            return 0
        data = {k: given[k] for k in KEPT_FIELDS if k in given}
        out = ask(host, event, data, deadline, waits_for_start="start" in event.lower())
        if out:
            sys.stdout.write(out)
            sys.stdout.flush()
    except Exception:  # a hook never fails the agent (module docstring)
        # Nothing half-written may reach the host, and the exit's flush must not fail either.
        try:  # noqa: SIM105 - contextlib would be one more import on the hook's path
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
