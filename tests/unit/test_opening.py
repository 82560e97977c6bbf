"""The opening's pure parts (server/opening.py): framing, which messages it answers, and
the real server's replies it drops. The whole start is tests/e2e/test_opening.py."""

from __future__ import annotations

import json

from memory_recall.server import opening
from memory_recall.server.lsp.opening import InitializeResponder, initialize_reply
from memory_recall.server.mcp.opening import DATA, MCPResponder


def frame(body: dict) -> bytes:
    return opening.frame_lsp(body)


def test_frames_are_cut_whole_and_partial_ones_wait() -> None:
    a, b = frame({"id": 1}), frame({"id": 2})
    data = a + b[:10]
    bodies, rest = opening.split_frames(data)
    assert [json.loads(x) for x in bodies] == [{"id": 1}]
    bodies, rest = opening.split_frames(rest + b[10:])
    assert [json.loads(x) for x in bodies] == [{"id": 2}] and rest == b""
    typed = b"Content-Type: application/vscode-jsonrpc\r\nContent-Length: 2\r\n\r\n{}"
    assert opening.split_frames(typed) == ([b"{}"], b"")


def test_a_header_without_length_ends_the_answers() -> None:
    bodies, _ = opening.split_frames(b"X-Nothing: 1\r\n\r\n{}")
    assert bodies == [b"not a frame"]


def test_lines() -> None:
    assert opening.split_lines(b'{"a":1}\n\n{"b"') == ([b'{"a":1}'], b'{"b"')


def init(params: object, **extra: object) -> dict:
    return {"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": params, **extra}


BARE = {"processId": None, "rootUri": None, "capabilities": {}}


def test_initialize_is_answered_with_the_encoding_pygls_picks() -> None:
    reply = initialize_reply(init(BARE))
    assert reply is not None and reply["id"] == 7
    assert reply["result"]["capabilities"]["positionEncoding"] == "utf-16"
    caps = {"general": {"positionEncodings": ["utf-32", "utf-8"]}}
    reply = initialize_reply(init({**BARE, "capabilities": caps}))
    assert reply is not None
    assert reply["result"]["capabilities"]["positionEncoding"] == "utf-32"


def test_what_pygls_might_refuse_is_left_to_it() -> None:
    for params in (
        None,
        [],
        {"processId": None, "capabilities": {}},  # no rootUri
        {**BARE, "capabilities": 3},
        {**BARE, "processId": "12"},
        {**BARE, "surprise": 1},
        {**BARE, "capabilities": {"general": {"positionEncodings": "utf-8"}}},
        {**BARE, "workspaceFolders": [{"uri": 1, "name": "x"}]},
    ):
        assert initialize_reply(init(params)) is None, params
    assert initialize_reply(init(BARE, extra=1)) is None
    assert initialize_reply({**init(BARE), "method": "memory/recall"}) is None


def test_only_the_first_lsp_message_is_answered() -> None:
    respond = InitializeResponder()
    assert respond(init(BARE)) is not None
    assert respond({"jsonrpc": "2.0", "method": "initialized"}) is None  # no answer needed
    assert respond(init(BARE)) is opening.STOP
    assert InitializeResponder()({"jsonrpc": "2.0", "method": "initialized"}) is opening.STOP


def test_a_client_gone_during_the_opening_ends_it_before_the_imports() -> None:
    """stdin closed after `initialize` and `initialized`: nothing is left for the server,
    so the opening calls `gone` at once; the daemon waited for its imports (a second or
    more) before it noticed. A request held for the server keeps it waiting for them."""
    import os
    import threading

    def run(messages: list[dict]) -> list[str]:
        read, write = os.pipe()
        out_r, out_w = os.pipe()
        os.write(write, b"".join(frame(m) for m in messages))
        os.close(write)
        imported = threading.Event()
        seen: list[str] = []

        def gone() -> None:
            seen.append("gone" if not imported.is_set() else "gone after the imports")
            imported.set()

        def prepare() -> None:
            imported.wait(1)  # the imports end once `gone` was called, else after 1 s
            seen.append("imported")

        opening.run(prepare, opening.split_frames, InitializeResponder(), opening.frame_lsp,
                    stdin_fd=read, stdout_fd=out_w, gone=gone)  # fmt: skip
        for fd in (read, out_r, out_w):
            os.close(fd)
        opening.taken()
        return seen

    initialized = {"jsonrpc": "2.0", "method": "initialized"}
    assert run([init(BARE), initialized]) == ["gone", "imported"]
    recall = {"jsonrpc": "2.0", "id": 2, "method": "memory/recall", "params": {}}
    assert run([init(BARE), initialized, recall]) == ["imported"]


def mcp_init(version: str) -> dict:
    params = {"protocolVersion": version, "capabilities": {},
              "clientInfo": {"name": "host", "version": "1"}}  # fmt: skip
    return {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": params}


def test_mcp_lists_after_initialize_until_a_request_it_cannot_answer() -> None:
    respond = MCPResponder(json.loads(DATA.read_text(encoding="utf-8")))
    assert respond({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}) is opening.STOP
    respond = MCPResponder(json.loads(DATA.read_text(encoding="utf-8")))
    reply = respond(mcp_init("2025-06-18"))
    assert reply is not None and reply["result"]["protocolVersion"] == "2025-06-18"
    assert respond({"jsonrpc": "2.0", "method": "notifications/initialized"}) is None
    tools = respond({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert tools is not None
    assert {t["name"] for t in tools["result"]["tools"]} >= {"memory_recall", "memory_remember"}
    paged = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"cursor": "x"}}
    assert respond(paged) is opening.STOP


def test_mcp_leaves_a_version_it_does_not_know_to_the_sdk() -> None:
    respond = MCPResponder(json.loads(DATA.read_text(encoding="utf-8")))
    assert respond(mcp_init("1999-01-01")) is opening.STOP


def test_the_servers_reply_to_an_early_answer_is_dropped_once() -> None:
    early = opening.Opening(answered={1: {"jsonrpc": "2.0", "id": 1, "result": {}}})
    assert early.drops({"jsonrpc": "2.0", "id": 1, "result": {}})
    assert not early.drops({"jsonrpc": "2.0", "id": 1, "result": {}})  # a second: sent
    assert not early.drops({"jsonrpc": "2.0", "id": 2, "result": {}})
    assert not early.drops({"jsonrpc": "2.0", "id": 1, "method": "x"})  # a request


def test_a_different_reply_is_dropped_and_logged(caplog) -> None:
    early = opening.Opening(answered={"a": {"jsonrpc": "2.0", "id": "a", "result": 1}})
    assert early.drops({"jsonrpc": "2.0", "id": "a", "result": 2})
    assert "differs" in caplog.text
