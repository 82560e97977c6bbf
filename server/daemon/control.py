"""Talking to a running daemon from the command line: `memory-recall daemon status | stop`."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

from memory_recall.protocol.framing import blocking_frames, frame


class NotRunning(Exception):
    """No daemon answers on that socket."""


def request(socket_file: Path, method: str, params: dict[str, Any] | None = None,
            timeout_s: float = 5.0) -> Any:  # fmt: skip
    """One request to the daemon; its result (raises NotRunning, or RuntimeError on an error)."""
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(timeout_s)
    try:
        conn.connect(str(socket_file))
    except OSError as exc:
        conn.close()
        raise NotRunning(f"no daemon on {socket_file} ({exc.strerror or exc})") from None
    with conn:
        body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}
        conn.sendall(frame(json.dumps(body).encode("utf-8")))
        with conn.makefile("rb") as stream:
            for reply in blocking_frames(stream):
                if not isinstance(reply, bytes):
                    break
                message = json.loads(reply)
                if "error" in message:
                    raise RuntimeError(message["error"].get("message", "error"))
                return message.get("result")
    raise NotRunning(f"the daemon on {socket_file} closed the connection")
