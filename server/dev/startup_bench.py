"""`memory-recall dev startup-bench`: how soon `serve` and `mcp` answer a host that just
started them (prints figures).

Each round spawns the real command, as a host does, writes its first messages at once
and times, from the spawn: the `initialize` reply; for MCP the `tools/list` reply (what
a host has to offer its model's first turn); and the first request that needs the
daemon itself (`memory/status` on LSP, the `memory_context` tool on MCP), answered once
the imports are done. Rounds alternate the opening on and off
(`MEMORY_RECALL_OPENING`, docs/performance.md "Start-up"), so both columns share the
machine's mood. Figures are printed, never asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from memory_recall.server.dev.bench import Percentiles

COMMAND = [sys.executable, "-m", "memory_recall.server"]


def _lsp(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _line(message: dict[str, Any]) -> bytes:
    return json.dumps(message).encode() + b"\n"


def _messages(face: str, root: Path) -> list[bytes]:
    if face == "serve":
        roots = [{"path": str(root), "scope": "project"}]
        init: dict[str, Any] = {"processId": None, "rootUri": None, "capabilities": {},
                "initializationOptions": {"roots": roots}}  # fmt: skip
        return [
            _lsp({"jsonrpc": "2.0", "id": "initialize", "method": "initialize", "params": init}),
            _lsp({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
            _lsp({"jsonrpc": "2.0", "id": "daemon", "method": "memory/status"}),
        ]
    params: dict[str, Any] = {"protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "startup-bench", "version": "1"}}  # fmt: skip
    call = {"name": "memory_context", "arguments": {}}
    return [
        _line({"jsonrpc": "2.0", "id": "initialize", "method": "initialize", "params": params}),
        _line({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        _line({"jsonrpc": "2.0", "id": "tools/list", "method": "tools/list"}),
        _line({"jsonrpc": "2.0", "id": "daemon", "method": "tools/call", "params": call}),
    ]


def _ids(data: bytes) -> list[str]:
    """The ids of the replies in `data` (either framing: every JSON object it holds)."""
    found = []
    for piece in data.replace(b"\r\n\r\n", b"\n").split(b"\n"):
        if piece.startswith(b"{"):
            try:
                message = json.loads(piece)
            except ValueError:
                continue
            if isinstance(message, dict) and "method" not in message and "id" in message:
                found.append(str(message["id"]))
    return found


def one_round(face: str, opening: bool, work: Path, timeout_s: float = 60) -> dict[str, float]:
    """Milliseconds from the spawn to each reply of one start."""
    root = work / "ws" / ".memory"
    root.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, MEMORY_RECALL_OPENING="on" if opening else "off",
               MEMORY_RECALL_STATE_DIR=str(work / "state"), MEMORY_RECALL_CACHE_DIR="off",
               MEMORY_RECALL_CONFIG=str(work / "none.toml"))  # fmt: skip
    args = ["serve"] if face == "serve" else ["mcp", "--workspace", str(work / "ws")]
    started = time.perf_counter()
    proc = subprocess.Popen(
        [*COMMAND, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, env=env, cwd=work,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    times: dict[str, float] = {}
    try:
        proc.stdin.write(b"".join(_messages(face, root)))
        proc.stdin.flush()
        buffer = b""
        fd = proc.stdout.fileno()
        while "daemon" not in times and time.perf_counter() - started < timeout_s:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                continue
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                break
            now = (time.perf_counter() - started) * 1000
            buffer += chunk
            for msg_id in _ids(buffer):
                times.setdefault(msg_id, now)
    finally:
        proc.kill()
        proc.wait()
    return times


def run(args: argparse.Namespace) -> dict[str, Any]:
    rows: dict[str, dict[str, list[float]]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.rounds):
            for face in args.face or ("serve", "mcp"):
                for opening in (True, False):
                    times = one_round(face, opening, Path(tmp) / f"{face}-{i}-{opening}")
                    row = rows.setdefault(f"{face} (opening {'on' if opening else 'off'})", {})
                    for what, ms in times.items():
                        row.setdefault(what, []).append(ms)
    return {
        name: {what: asdict(Percentiles.of(ms)) for what, ms in sorted(row.items())}
        for name, row in rows.items()
    }


def main(argv: Sequence[str]) -> int:
    parser = argparse.ArgumentParser(prog="memory-recall dev startup-bench", description=__doc__)
    parser.add_argument("--rounds", type=int, default=10, help="starts per face and mode")
    parser.add_argument("--face", action="append", choices=("serve", "mcp"))
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    figures = run(args)
    if args.json:
        print(json.dumps(figures, indent=2))
        return 0
    print(f"{'start':<22} {'reply':<12} {'p50 ms':>8} {'p95 ms':>8} {'n':>4}")
    for name, row in figures.items():
        for what, p in row.items():
            print(f"{name:<22} {what:<12} {p['p50']:>8.0f} {p['p95']:>8.0f} {p['n']:>4}")
    return 0
