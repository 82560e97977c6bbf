"""The MCP face's opening (`server/opening.py`): `initialize` and the tool, prompt and
resource lists answered before the MCP SDK loads.

Importing the SDK alone takes longer than a host waits (docs/performance.md,
"Start-up"), and a host that lists tools before the server answers starts its first
turn without them. The replies are the SDK's own for this face, recorded in
`data/opening.json` (tests/e2e/test_opening.py records them again from the real server
and fails when they drift; `python tests/e2e/test_opening.py --write` rewrites the
file). Only what the SDK answers the same for every client is answered early:
`initialize` offering a protocol version the SDK accepts as is, then the four lists
without a cursor.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from memory_recall.server import opening
from memory_recall.server.release import version

DATA = Path(__file__).parent / "data" / "opening.json"


class MCPResponder:
    """`initialize` first, then the lists; notifications are held for the server."""

    def __init__(self, recorded: dict[str, Any]) -> None:
        self.recorded = recorded
        self.initialized = False

    def __call__(self, message: dict[str, Any]) -> dict[str, Any] | None:
        if message.get("jsonrpc") != "2.0" or not isinstance(message.get("method"), str):
            return opening.STOP
        if "id" not in message:
            return None  # a notification (`notifications/initialized`): the server's
        method, params = message["method"], message.get("params")
        if not self.initialized:
            if method != "initialize":
                return opening.STOP
            self.initialized = True
            return self._initialize(message) or opening.STOP
        if method in self.recorded["lists"] and params in (None, {}):
            return {"jsonrpc": "2.0", "id": message["id"], "result": self.recorded["lists"][method]}
        return opening.STOP

    def _initialize(self, message: dict[str, Any]) -> dict[str, Any] | None:
        params = message.get("params")
        if not isinstance(params, dict) or not isinstance(params.get("capabilities"), dict):
            return None
        info = params.get("clientInfo")
        if not isinstance(info, dict) or not isinstance(info.get("name"), str):
            return None
        if not isinstance(info.get("version"), str):
            return None
        offered = params.get("protocolVersion")
        if offered not in self.recorded["handshakeVersions"]:
            return None  # the SDK's counter-offer (or refusal) is its own to make
        result = dict(self.recorded["initialize"])
        result["protocolVersion"] = offered
        result["serverInfo"] = {**result["serverInfo"], "version": version()}
        return {"jsonrpc": "2.0", "id": message["id"], "result": result}


def start(prepare: Any) -> BaseException | None:
    """Run the opening for `memory-recall mcp` on stdio while `prepare` imports."""
    try:
        recorded = json.loads(DATA.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        recorded = None
    if recorded is None:  # no recorded replies (a broken install): no early answers
        return opening.run(
            prepare, opening.split_lines, lambda _m: opening.STOP, opening.frame_line
        )
    return opening.run(prepare, opening.split_lines, MCPResponder(recorded), opening.frame_line)
