"""The opening (server/opening.py): `serve` and `mcp` answer their first requests before
the daemon is imported, with exactly the replies the real server gives — checked here
against the real server started with the opening off, on several clients — and the
server that takes over serves the rest of the stream as if it had read it all.

`python tests/e2e/test_opening.py --write` records the MCP face's replies again
(server/mcp/data/opening.json) after a change to its tools.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from memory_recall.server.mcp.opening import DATA

COMMAND = [sys.executable, "-m", "memory_recall.server"]
WAIT = 60  # seconds: a loaded machine imports slowly

LISTS = ("tools/list", "prompts/list", "resources/list", "resources/templates/list")


def _env(tmp: Path, opening: bool) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        MEMORY_RECALL_STATE_DIR=str(tmp / "state"),
        MEMORY_RECALL_CACHE_DIR="off",
        MEMORY_RECALL_CONFIG=str(tmp / "no-config.toml"),
        MEMORY_RECALL_OPENING="on" if opening else "off",
    )
    return env


def _lsp_frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def _read_lsp(stream: Any) -> dict[str, Any]:
    length = 0
    while True:
        line = stream.readline()
        if not line:
            raise EOFError("the server closed stdout")
        if not line.strip():
            break
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    reply: dict[str, Any] = json.loads(stream.read(length))
    return reply


def _talk(args: list[str], env: dict[str, str], cwd: Path, messages: list[bytes],
          replies: int, read: Any, then: list[bytes] = (),  # type: ignore[assignment]
          ) -> tuple[list[dict[str, Any]], str, int]:  # fmt: skip
    """Send `messages`, read `replies` replies, send `then`, read until the end."""
    proc = subprocess.Popen(
        [*COMMAND, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, env=env, cwd=cwd,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    try:
        proc.stdin.write(b"".join(messages))
        proc.stdin.flush()
        got = []
        while len(got) < replies:
            message = read(proc.stdout)
            if "id" in message and "method" not in message:
                got.append(message)
        proc.stdin.write(b"".join(then))
        proc.stdin.close()
        while True:
            try:
                message = read(proc.stdout)
            except EOFError:
                break
            if "id" in message and "method" not in message:
                got.append(message)
        proc.wait(timeout=WAIT)
        assert proc.stderr is not None
        err = proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return got, err.decode(errors="replace"), proc.returncode


# -- LSP -----------------------------------------------------------------------------

CLIENTS = {
    "bare": {"processId": None, "rootUri": None, "capabilities": {}},
    "utf-8 first": {
        "processId": 1234, "rootUri": None, "clientInfo": {"name": "nvim", "version": "0.11"},
        "capabilities": {"general": {"positionEncodings": ["utf-8", "utf-16"]},
                         "window": {"workDoneProgress": True}},
    },
    "unknown encodings": {
        "processId": None, "rootUri": None, "trace": "off",
        "capabilities": {"general": {"positionEncodings": ["utf-7"]}},
    },
    "odd: no rootUri": {"processId": None, "capabilities": {}},
    "odd: capabilities not an object": {"processId": None, "rootUri": None, "capabilities": 3},
}  # fmt: skip


def _serve(tmp: Path, params: dict[str, Any], opening: bool) -> tuple[list[dict], str, int]:
    (tmp / "ws" / ".memory").mkdir(parents=True, exist_ok=True)
    params = {**params, "initializationOptions": {
        "roots": [{"path": str(tmp / "ws" / ".memory"), "scope": "project"}], "watch": False}}  # fmt: skip
    messages = [
        _lsp_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}),
        _lsp_frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}),
        _lsp_frame(
            {"jsonrpc": "2.0", "id": 2, "method": "memory/recall", "params": {"query": "deploy"}}
        ),
    ]
    then = [
        _lsp_frame({"jsonrpc": "2.0", "id": 3, "method": "shutdown"}),
        _lsp_frame({"jsonrpc": "2.0", "method": "exit"}),
    ]
    return _talk(["serve"], _env(tmp, opening), tmp, messages, 2, _read_lsp, then)


@pytest.mark.parametrize("client", sorted(CLIENTS))
def test_serve_answers_as_the_real_server_does(tmp_path: Path, client: str) -> None:
    real, _, real_code = _serve(tmp_path / "real", CLIENTS[client], opening=False)
    early, err, code = _serve(tmp_path / "early", CLIENTS[client], opening=True)
    assert [r["id"] for r in early] == [1, 2, 3]  # each request answered once
    assert early[0] == real[0]
    assert early[1].keys() == real[1].keys()  # the recall after the take-over: served
    assert early[2] == real[2]
    assert code == real_code
    assert "differs" not in err


# -- MCP -----------------------------------------------------------------------------


def _mcp_messages(version: str, requests: tuple[str, ...] = LISTS) -> list[bytes]:
    init = {"protocolVersion": version, "capabilities": {},
            "clientInfo": {"name": "test", "version": "1"}}  # fmt: skip
    lines = [{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": init},
             {"jsonrpc": "2.0", "method": "notifications/initialized"}]  # fmt: skip
    lines += [{"jsonrpc": "2.0", "id": i, "method": m} for i, m in enumerate(requests, 1)]
    return [json.dumps(m).encode() + b"\n" for m in lines]


def _read_line(stream: Any) -> dict[str, Any]:
    line = stream.readline()
    if not line:
        raise EOFError("the server closed stdout")
    reply: dict[str, Any] = json.loads(line)
    return reply


def _mcp(tmp: Path, version: str, opening: bool, requests: tuple[str, ...] = LISTS):
    (tmp / "ws").mkdir(parents=True, exist_ok=True)
    args = ["mcp", "--workspace", str(tmp / "ws"), "--no-watch"]
    return _talk(args, _env(tmp, opening), tmp, _mcp_messages(version, requests),
                 1 + len(requests), _read_line)  # fmt: skip


def record(tmp: Path) -> dict[str, Any]:
    """The MCP face's replies, from the real server with the opening off."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    replies, err, _ = _mcp(tmp, HANDSHAKE_PROTOCOL_VERSIONS[-1], opening=False)
    by_id = {r["id"]: r for r in replies}
    assert all("result" in r for r in replies), err
    initialize = dict(by_id[0]["result"])
    initialize.pop("protocolVersion")
    initialize["serverInfo"] = {k: v for k, v in initialize["serverInfo"].items() if k != "version"}
    return {
        "handshakeVersions": list(HANDSHAKE_PROTOCOL_VERSIONS),
        "initialize": initialize,
        "lists": {m: by_id[i]["result"] for i, m in enumerate(LISTS, 1)},
    }


def test_mcp_recorded_replies_are_current(tmp_path: Path) -> None:
    recorded = json.loads(DATA.read_text(encoding="utf-8"))
    assert record(tmp_path) == recorded, (
        "the MCP face's tools changed: python tests/e2e/test_opening.py --write"
    )


@pytest.mark.parametrize("version", ["2024-11-05", "2025-06-18", "1999-01-01"])
def test_mcp_answers_as_the_real_server_does(tmp_path: Path, version: str) -> None:
    real, _, _ = _mcp(tmp_path / "real", version, opening=False)
    early, err, code = _mcp(tmp_path / "early", version, opening=True)
    key = lambda r: r["id"]  # noqa: E731
    assert sorted(early, key=key) == sorted(real, key=key)
    assert code == 0
    assert "differs" not in err


def test_mcp_serves_a_tool_call_after_the_lists(tmp_path: Path) -> None:
    """A tool call ends the early answers; the SDK answers it and every later list."""
    requests = ("tools/list", "tools/call", "tools/list")
    (tmp_path / "ws").mkdir()
    messages = _mcp_messages("2025-06-18", ())
    call = {"name": "memory_recall", "arguments": {"query": "deploy"}}
    messages += [json.dumps(m).encode() + b"\n" for m in (
        {"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call},
        {"jsonrpc": "2.0", "id": 3, "method": "tools/list"},
    )]  # fmt: skip
    args = ["mcp", "--workspace", str(tmp_path / "ws"), "--no-watch"]
    replies, err, _ = _talk(args, _env(tmp_path, True), tmp_path, messages,
                            1 + len(requests), _read_line)  # fmt: skip
    by_id = {r["id"]: r for r in replies}
    assert sorted(by_id) == [0, 1, 2, 3]
    assert by_id[1]["result"] == by_id[3]["result"]
    assert "result" in by_id[2], by_id[2]
    assert "differs" not in err


def test_serve_left_by_its_host_during_the_opening_exits(tmp_path: Path) -> None:
    """stdin closed right after `initialize`: answered early, then the server reads the
    end of the stream and exits (1: no `shutdown` came)."""
    (tmp_path / "ws").mkdir()
    params = {**CLIENTS["bare"], "initializationOptions": {"watch": False}}
    messages = [_lsp_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params})]
    replies, err, code = _talk(["serve"], _env(tmp_path, True), tmp_path, messages, 1, _read_lsp)
    assert [r["id"] for r in replies] == [1] and "result" in replies[0]
    assert code == 1
    assert "differs" not in err


def test_a_malformed_first_message_is_the_servers_to_answer(tmp_path: Path) -> None:
    """Not JSON: the opening answers nothing and the real server says -32700; then a
    well-formed `initialize` is served as usual."""
    params = {**CLIENTS["bare"], "initializationOptions": {"watch": False}}
    body = b"{not json"
    messages = [
        b"Content-Length: %d\r\n\r\n" % len(body) + body,
        _lsp_frame({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}),
    ]
    then = [
        _lsp_frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}),
        _lsp_frame({"jsonrpc": "2.0", "method": "exit"}),
    ]
    replies, err, code = _talk(
        ["serve"], _env(tmp_path, True), tmp_path, messages, 2, _read_lsp, then
    )
    assert replies[0]["id"] is None and replies[0]["error"]["code"] == -32700
    assert replies[1]["id"] == 1 and "result" in replies[1]
    assert replies[2]["id"] == 2
    assert code == 0
    assert "differs" not in err


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        data = record(Path(tmp))
    DATA.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {DATA}")
