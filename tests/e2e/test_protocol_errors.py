"""SPEC §5 errors and the process lifecycle, through the real process."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time

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
        assert status.protocol_version == 1
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
    assert result.capabilities.experimental["memory"]["protocolVersion"] == 1


async def test_invalid_options_fall_back_and_tell_the_user(client, tmp_path):
    await start(client, [(tmp_path, "project")], selector={"kind": "telepathy"})
    await asyncio.sleep(0.2)
    messages = [m.message for m in client.messages]
    assert any("selector" in m and "invalid" in m for m in messages), messages
    status = await request(client, methods.STATUS, {})
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
    started = time.monotonic()
    process.stdin.close()
    try:
        process.wait(timeout=5)
    finally:
        process.kill()
    assert time.monotonic() - started < 2.0
    assert process.returncode == 1  # no shutdown before the stream ended (LSP: exit code 1)


def test_python_m_server_runs_the_daemon():
    out = subprocess.run(
        [sys.executable, "-m", "memory_recall.server", "--help"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert "serve" in out.stdout
