"""The LSP face's opening (`server/opening.py`): the `initialize` reply, before pygls loads.

The reply is pygls' own for this server (the capabilities of the methods the face
registers, the position encoding the client prefers, the protocol's `experimental.memory`
block the adapter adds), rebuilt from plain values; tests/e2e/test_opening.py compares it
with pygls' on several clients, and the opening compares it again at every start. Only a
first message that is a well-formed `initialize` is answered early.
"""

from __future__ import annotations

import os
from typing import Any

from memory_recall.protocol import limits
from memory_recall.protocol.methods import PROTOCOL_VERSION
from memory_recall.server import opening
from memory_recall.server.release import version

SERVER_NAME = "memory-recall"
# pygls' choice: the client's first encoding it knows, else UTF-16 (the LSP default).
ENCODINGS = ("utf-8", "utf-16", "utf-32")
DEFAULT_ENCODING = "utf-16"


class InitializeResponder:
    """Answers the first message when it is `initialize`; nothing after it but the
    `initialized` notification that follows it, which needs no answer (the server reads
    it from what was held)."""

    def __init__(self) -> None:
        self.done = False
        self.noted = False

    def __call__(self, message: dict[str, Any]) -> dict[str, Any] | None:
        if self.done:
            if not self.noted and message.get("method") == "initialized" and "id" not in message:
                self.noted = True
                return None
            return opening.STOP
        self.done = True
        return initialize_reply(message) or opening.STOP


def initialize_reply(message: dict[str, Any]) -> dict[str, Any] | None:
    """pygls' reply to `message` when it is an `initialize` the face would accept as is;
    None when the real server must judge it."""
    if message.get("jsonrpc") != "2.0" or message.get("method") != "initialize":
        return None
    if set(message) - {"jsonrpc", "id", "method", "params"}:
        return None
    params = message.get("params")
    if not isinstance(params, dict) or not _plain_initialize(params):
        return None
    encoding = _encoding(params["capabilities"])
    if encoding is None:
        return None
    capabilities = {
        "positionEncoding": encoding,
        "executeCommandProvider": {"commands": []},
        "workspace": {
            "workspaceFolders": {"supported": True, "changeNotifications": True},
            "fileOperations": {},
        },
        "experimental": {
            "memory": {
                "protocolVersion": PROTOCOL_VERSION,
                "fastLimit": limits.FAST_LIMIT,
                "refinedLimit": limits.REFINED_LIMIT,
                "maxQueryChars": limits.MAX_QUERY_CHARS,
            }
        },
    }
    return {
        "id": message["id"],
        "jsonrpc": "2.0",
        "result": {
            "capabilities": capabilities,
            "serverInfo": {"name": SERVER_NAME, "version": version()},
        },
    }


def _plain_initialize(params: dict[str, Any]) -> bool:
    """The fields pygls structures, each of a shape it accepts; anything unusual (a field
    it might refuse) is left to it."""
    known = {
        "processId", "clientInfo", "locale", "rootPath", "rootUri", "capabilities",
        "initializationOptions", "trace", "workDoneToken", "workspaceFolders",
    }  # fmt: skip
    if set(params) - known or not isinstance(params.get("capabilities"), dict):
        return False
    if "processId" not in params or "rootUri" not in params:
        return False
    checks = (
        ("processId", lambda v: v is None or (isinstance(v, int) and not isinstance(v, bool))),
        ("rootUri", lambda v: v is None or isinstance(v, str)),
        ("rootPath", lambda v: v is None or isinstance(v, str)),
        ("locale", lambda v: isinstance(v, str)),
        ("trace", lambda v: v in ("off", "messages", "verbose")),
        ("clientInfo", _client_info),
        ("workspaceFolders", _folders),
    )
    return all(check(params[key]) for key, check in checks if key in params)


def _client_info(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and isinstance(value.get("name"), str)
        and set(value) <= {"name", "version"}
        and isinstance(value.get("version", ""), str)
    )


def _folders(value: Any) -> bool:
    if value is None:
        return True
    return isinstance(value, list) and all(
        isinstance(f, dict)
        and set(f) == {"uri", "name"}
        and isinstance(f["uri"], str)
        and isinstance(f["name"], str)
        for f in value
    )


def _encoding(capabilities: dict[str, Any]) -> str | None:
    """The position encoding pygls picks; None for a shape it might refuse."""
    general = capabilities.get("general")
    if general is None:
        return DEFAULT_ENCODING
    if not isinstance(general, dict):
        return None
    encodings = general.get("positionEncodings")
    if encodings is None:
        return DEFAULT_ENCODING
    if not isinstance(encodings, list) or not all(isinstance(e, str) for e in encodings):
        return None
    return next((e for e in encodings if e in ENCODINGS), DEFAULT_ENCODING)


def start(prepare: Any) -> BaseException | None:
    """Run the opening for `memory-recall serve` on stdio while `prepare` imports."""
    return opening.run(
        prepare, opening.split_frames, InitializeResponder(), opening.frame_lsp, gone=_gone
    )


def _gone() -> None:
    """The client closed stdin during the opening, with no request left for the server:
    exit as the server does for a client gone without `exit` (code 1), without waiting for
    the imports."""
    os._exit(1)
