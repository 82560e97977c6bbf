"""protocol/README.md errors and the process lifecycle, through the real process."""

from __future__ import annotations

import asyncio
import json
import os
import select
import subprocess
import sys

import pytest
from memory_recall.protocol import limits, methods
from memory_recall.protocol.client import MemoryRecallClient, RpcError
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import SERVER_COMMAND, WAIT, request, start


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({}, "query"),
        ({"query": "x" * (limits.MAX_QUERY_CHARS + 1)}, "query"),
        ({"query": 42}, "query"),
        ({"query": "ok", "recentTools": "bash"}, "recentTools"),
        ({"query": "ok", "excludePaths": [1]}, "excludePaths.0"),
        ({"query": "ok", "limit": 9}, "limit"),
        ({"query": "ok", "token": {"a": 1}}, "token"),
    ],
)
async def test_invalid_params_name_the_field(client, tmp_path, params, field):
    await start(client, [(tmp_path, "project")])
    with pytest.raises(JsonRpcException) as err:
        await request(client, methods.RECALL, params)
    assert err.value.code == methods.INVALID_PARAMS
    assert field in str(err.value)
    # and the daemon keeps serving
    ok = await request(client, methods.RECALL, {"query": "x" * limits.MAX_QUERY_CHARS})
    assert ok["refined"]["status"] == "no_relevant_results"


async def test_requests_before_initialize_get_32002(tmp_path):
    process = await _raw_process()
    assert process.stdout and process.stdin
    # The client waits for the process on close, so no transport outlives the loop.
    client = MemoryRecallClient(process.stdout, process.stdin, process=process)
    try:
        with pytest.raises(RpcError) as err:
            await asyncio.wait_for(client.request(methods.RECALL, {"query": "x"}), WAIT)
        assert err.value.code == methods.SERVER_NOT_INITIALIZED
        await client.initialize({"roots": [{"path": str(tmp_path), "scope": "project"}]})
        status = await asyncio.wait_for(client.status(), WAIT)
        assert status.protocol_version == methods.PROTOCOL_VERSION
    finally:
        await client.close()


async def _raw_process():
    process = await asyncio.create_subprocess_exec(
        *SERVER_COMMAND, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )  # fmt: skip
    return process


async def test_malformed_bodies_get_json_rpc_errors_and_daemon_survives(tmp_path):
    client = await MemoryRecallClient.start(
        SERVER_COMMAND, roots=[(str(tmp_path), "project")], watch=False
    )
    replies: asyncio.Queue = asyncio.Queue()
    original = client._dispatch

    def spy(message):
        if "id" in message and message["id"] is None:
            replies.put_nowait(message)
        original(message)

    client._dispatch = spy  # type: ignore[method-assign]
    try:
        for body, code in (
            (b"{not json", methods.PARSE_ERROR),
            (b"\xff\xfe\x00", methods.PARSE_ERROR),
            (b"[1, 2]", methods.INVALID_REQUEST),
            (b'"just a string"', methods.INVALID_REQUEST),
            (b'{"jsonrpc": "2.0"}', methods.INVALID_REQUEST),
            # 100,000 levels deep, in params and as the whole body (issue 33)
            (
                b'{"jsonrpc":"2.0","id":7,"method":"memory/status","params":{"a":'
                + b"[" * 100_000
                + b"]" * 100_000
                + b"}}",
                methods.PARSE_ERROR,
            ),
            (b"[" * 100_000 + b"]" * 100_000, methods.PARSE_ERROR),
            (b'{"a":' * 100_000 + b"1" + b"}" * 100_000, methods.PARSE_ERROR),
        ):
            client.send_raw(body)
            reply = await asyncio.wait_for(replies.get(), WAIT)
            assert reply["error"]["code"] == code, body
        with pytest.raises(RpcError) as err:
            await asyncio.wait_for(client.request("memory/nope", {}), WAIT)
        assert err.value.code == methods.METHOD_NOT_FOUND
        result = await asyncio.wait_for(client.request(methods.RECALL, {"query": "hello"}), WAIT)
        assert result["refined"]["status"] == "no_relevant_results"
    finally:
        await client.close()


async def test_initialize_advertises_protocol_version(client, tmp_path):
    result = await client.initialize_session(
        __import__("lsprotocol").types.InitializeParams(
            capabilities=__import__("lsprotocol").types.ClientCapabilities(),
            initialization_options={"roots": [{"path": str(tmp_path)}]},
        )
    )
    assert result.capabilities.experimental["memory"]["protocolVersion"] == 2


async def test_invalid_options_fall_back_and_tell_the_user(client, tmp_path):
    await start(client, [(tmp_path, "project")], selector={"kind": "telepathy"})
    # The warning is sent at `initialized`; a request answered after it is the barrier.
    status = await request(client, methods.STATUS, {})
    messages = [m.message for m in client.messages]
    assert any("selector" in m and "invalid" in m for m in messages), messages
    assert status["selector"] == "none"
    assert status["roots"][0]["path"] == str(tmp_path)


async def test_clean_shutdown_and_exit(tmp_path):
    client = await MemoryRecallClient.start(SERVER_COMMAND, roots=[(str(tmp_path), "project")])
    assert await client.close() == 0


def test_exits_promptly_on_stdin_eof(tmp_path):
    process = subprocess.Popen(
        SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    body = json.dumps({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"capabilities": {}, "initializationOptions": {
            "roots": [{"path": str(tmp_path)}], "watch": True}},
    }).encode()  # fmt: skip
    assert process.stdin and process.stdout
    process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    process.stdin.flush()
    process.stdout.readline()  # the initialize answer has started: the daemon is up
    process.stdin.close()
    try:
        process.wait(timeout=WAIT)  # it ends on its own: a hang fails here
    finally:
        process.kill()
    assert process.returncode == 1  # no shutdown before the stream ended (LSP: exit code 1)


def test_python_m_server_runs_the_daemon():
    out = subprocess.run(
        [sys.executable, "-m", "memory_recall.server", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert "serve" in out.stdout


# -- issue 13: what third-party clients send, and a daemon started by hand ---------------


def _raw_session(tmp_path, messages, *, stdin_stays_open=True):
    """Send raw messages to a fresh daemon; return (exit code or None, replies by id)."""
    process = subprocess.Popen(
        SERVER_COMMAND, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert process.stdin and process.stdout
    for message in messages:
        body = json.dumps(message).encode()
        process.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    process.stdin.flush()
    try:
        code = process.wait(timeout=WAIT)
    except subprocess.TimeoutExpired:
        code = None
        process.kill()
        process.wait()
    out = process.stdout.read()
    stderr = process.stderr.read().decode(errors="replace") if process.stderr else ""
    replies = {}
    for chunk in out.split(b"Content-Length: ")[1:]:
        body = chunk.split(b"\r\n\r\n", 1)[1]
        message = json.loads(body)
        if "id" in message and "method" not in message:
            replies[message["id"]] = message
    return code, replies, stderr


def _init(tmp_path, msg_id=1):
    return {"jsonrpc": "2.0", "id": msg_id, "method": "initialize", "params": {
        "capabilities": {}, "initializationOptions": {"roots": [{"path": str(tmp_path)}],
                                                      "watch": False}}}  # fmt: skip


def test_null_params_are_absent_params_on_shutdown_and_exit(tmp_path):
    """vscode-jsonrpc and others send `"params": null`: shutdown answers, exit ends with 0."""
    code, replies, stderr = _raw_session(tmp_path, [
        _init(tmp_path),
        {"jsonrpc": "2.0", "method": "initialized", "params": None},
        {"jsonrpc": "2.0", "id": 2, "method": "memory/status", "params": None},
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ])  # fmt: skip
    assert replies[2]["result"]["ready"] in (True, False), replies[2]
    assert replies[3] == {"jsonrpc": "2.0", "id": 3, "result": None}
    assert code == 0, stderr


@pytest.mark.parametrize("params", [None, {}, [], "bye", 7])
def test_exit_without_shutdown_always_ends_the_process_with_1(tmp_path, params):
    code, _, stderr = _raw_session(
        tmp_path, [_init(tmp_path), {"jsonrpc": "2.0", "method": "exit", "params": params}]
    )
    assert code == 1, stderr


def test_exit_before_initialize_and_exit_with_an_id_end_the_process(tmp_path):
    assert _raw_session(tmp_path, [{"jsonrpc": "2.0", "method": "exit"}])[0] == 1
    code, replies, _ = _raw_session(tmp_path, [
        _init(tmp_path), {"jsonrpc": "2.0", "id": 4, "method": "shutdown"},
        {"jsonrpc": "2.0", "id": 5, "method": "exit"},
    ])  # fmt: skip
    assert code == 0
    assert replies[5]["error"]["code"] == methods.INVALID_REQUEST  # told, then gone


def test_serve_with_stdin_from_dev_null_exits_at_once_without_a_traceback():
    with open("/dev/null", "rb") as devnull:
        out = subprocess.run(  # it ends on its own: a hang fails on the timeout
            SERVER_COMMAND, stdin=devnull, capture_output=True, text=True, timeout=WAIT
        )
    assert out.returncode == 1  # like a closed pipe: no shutdown came
    assert "Traceback" not in out.stderr and "Error" not in out.stderr, out.stderr


def test_serve_on_a_terminal_says_what_it_is_on_stderr():
    """Started by hand, the daemon says in one line that it speaks JSON-RPC on stdio."""
    import pty

    controller, terminal = pty.openpty()
    try:
        process = subprocess.Popen(
            SERVER_COMMAND, stdin=terminal, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert process.stderr
        ready, _, _ = select.select([process.stderr], [], [], 10)  # never wait for ever
        line = process.stderr.readline().decode() if ready else ""
        process.kill()
        process.wait()
    finally:
        os.close(controller)
        os.close(terminal)
    assert "JSON-RPC" in line and "memory-recall --help" in line and "recall" in line, line


def test_serve_on_a_pipe_says_nothing(tmp_path):
    code, _, stderr = _raw_session(
        tmp_path, [_init(tmp_path), {"jsonrpc": "2.0", "id": 2, "method": "shutdown"},
                   {"jsonrpc": "2.0", "method": "exit"}]
    )  # fmt: skip
    assert code == 0 and "JSON-RPC" not in stderr
