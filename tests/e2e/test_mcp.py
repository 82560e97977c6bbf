"""The MCP face end to end: `memory-recall mcp` driven by the MCP SDK's own stdio client.

Every tool is called and every resource read, over stdio, against a real
process on real memory files; bad input gets a clear error and writes nothing.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from mcp import types
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from tests.e2e.test_http_selector import FakeModel, _handler
from tests.memory_files import write_memory

WAIT = 20  # seconds: every wait in a test is bounded

SECRET = "sk-ant-api03-" + "Q7x" * 30


@asynccontextmanager
async def mcp_session(
    workspace: Path, user_data: Path, *args: str, env: dict[str, str] | None = None
) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_recall.server", "mcp", "--workspace", str(workspace), *args],
        env={**os.environ, "XDG_DATA_HOME": str(user_data), **(env or {})},
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await asyncio.wait_for(session.initialize(), WAIT)
        yield session


async def call(session: ClientSession, tool: str, **arguments: Any) -> types.CallToolResult:
    return await asyncio.wait_for(session.call_tool(tool, arguments), WAIT)


def answer(result: types.CallToolResult) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        data = result.structured_content
        return data.get("result", data) if set(data) == {"result"} else data  # type: ignore[no-any-return]
    return json.loads(result.content[0].text)  # type: ignore[union-attr,no-any-return]


def error_text(result: types.CallToolResult) -> str:
    assert result.is_error
    return " ".join(c.text for c in result.content if isinstance(c, types.TextContent))


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    memory = ws / ".memory"
    write_memory(memory, "deploy.md", "Deploy runbook",
                 "How releases go out", "Run make release, then tag the commit.")  # fmt: skip
    write_memory(memory, "db/postgres.md", "Postgres pooling",
                 "pgbouncer settings", "Use transaction pooling; max 200 connections.")  # fmt: skip
    write_memory(memory / "team", "review.md", "Review rule",
                 "Two approvals", "Every change needs two approvals before merge.")  # fmt: skip
    rules = memory / "style.md"
    rules.write_text(
        "---\nname: Terse answers\ndescription: The user wants short answers\ntype: feedback\n"
        "always: true\n---\nAnswer in three sentences at most.\n",
        encoding="utf-8",
    )
    return ws


async def test_every_tool_and_every_resource_over_stdio(workspace: Path, tmp_path: Path) -> None:
    async with mcp_session(workspace, tmp_path / "xdg", "--no-watch") as session:
        listed = {t.name: t for t in (await session.list_tools()).tools}
        assert set(listed) == {
            "memory_recall", "memory_search", "memory_remember", "memory_update",
            "memory_forget", "memory_undo", "memory_list", "memory_context",
        }  # fmt: skip
        assert listed["memory_recall"].annotations.read_only_hint  # type: ignore[union-attr]
        assert listed["memory_forget"].annotations.destructive_hint  # type: ignore[union-attr]
        assert session.server_info is None or session.server_info.version  # never empty

        # recall_memory: one answer, fast + refined; without a model it says so.
        recalled = answer(await call(session, "memory_recall", query="how do we deploy a release?"))
        assert recalled["memories"][0]["title"] == "Deploy runbook"
        assert recalled["memories"][0]["uri"] == "memory://memories/project/deploy.md"
        assert "### Deploy runbook (deploy.md)" in recalled["prompt"]
        assert "no model configured" in recalled["refined"]
        silent = answer(await call(session, "memory_recall", query="zebra xylophone quokka"))
        assert silent["memories"] == [] and silent["prompt"] == ""

        # The team root by default: <workspace>/.memory/team, its memory in team scope.
        team = answer(await call(session, "memory_recall", query="approvals before merge"))
        assert team["memories"][0]["scope"] == "team"
        assert team["memories"][0]["uri"] == "memory://memories/team/review.md"

        # remember: written, with a URI the resource template reads back.
        written = answer(
            await call(session, "memory_remember",
                       text="The staging database is reset every Monday at 06:00 UTC.")
        )  # fmt: skip
        op = written["operations"][0]
        assert op["action"] == "created" and op["scope"] == "project"
        assert Path(op["path"]).is_file()
        content = await asyncio.wait_for(session.read_resource(op["uri"]), WAIT)
        text = content.contents[0].text  # type: ignore[union-attr]
        assert "reset every Monday" in text and text.startswith("---")
        again = answer(await call(session, "memory_recall", query="when is staging reset?"))
        assert again["memories"][0]["uri"] == op["uri"]

        # search_memory: the four modes of docs/network.md.
        shallow = answer(await call(session, "memory_search", query="pgbouncer", mode="shallow"))
        assert [m["title"] for m in shallow["memories"]] == ["Postgres pooling"]
        assert shallow["memories"][0]["body"] is None  # titles and descriptions only
        deep = answer(
            await call(session, "memory_search", query="transaction pooling", mode="deep")
        )
        assert deep["memories"][0]["uri"] == "memory://memories/project/db/postgres.md"
        assert "transaction pooling" in deep["memories"][0]["body"]
        assert "## Memory search" in deep["prompt"]
        explore = answer(await call(session, "memory_search", mode="explore", category="project"))
        assert explore["subtree"]["slug"] == "project" and explore["subtree"]["children"]
        got = answer(await call(session, "memory_search", mode="get", memory=op["uri"]))
        assert [m["uri"] for m in got["memories"]] == [op["uri"]]
        assert "reset every Monday" in got["memories"][0]["body"]
        team_only = answer(
            await call(session, "memory_search", query="approvals", mode="deep", scope="team")
        )
        assert {m["scope"] for m in team_only["memories"]} == {"team"}

        # memory_update and memory_undo: the edit, then the memory as it was.
        updated = answer(
            await call(session, "memory_update", memory=op["uri"],
                       body="The staging database is reset every Sunday at 06:00 UTC.")
        )  # fmt: skip
        assert updated["operations"][0]["action"] == "updated"
        assert "Sunday" in Path(op["path"]).read_text(encoding="utf-8")
        undone = answer(
            await call(session, "memory_undo", operation=updated["operations"][0]["operation"])
        )
        assert undone["operations"]
        assert "Monday" in Path(op["path"]).read_text(encoding="utf-8")

        # memory_list: every memory, each with its uri.
        listing = answer(await call(session, "memory_list"))
        assert op["uri"] in {m["uri"] for m in listing["memories"]}

        # memory_context: the always-loaded rules.
        context = answer(await call(session, "memory_context"))
        assert [d["title"] for d in context["docs"]] == ["Terse answers"]
        assert "three sentences" in context["prompt"]

        # Resources: the topic tree, and each memory by its URI (template).
        templates = (await session.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["memory://memories/{scope}/{+path}"]
        listed = {str(r.uri) for r in (await session.list_resources()).resources}
        assert "memory://tree" in listed
        tree_result = await asyncio.wait_for(session.read_resource("memory://tree"), WAIT)
        tree = json.loads(tree_result.contents[0].text)  # type: ignore[union-attr]
        assert tree["total"] == 5

        def members(nodes: list[dict[str, Any]]) -> list[dict[str, Any]]:
            return [m for n in nodes for m in n["members"] + members(n["children"])]

        uris = {m["uri"] for m in members(tree["categories"])}
        assert "memory://memories/project/db/postgres.md" in uris
        for uri in uris:  # every memory is readable by its URI
            read = await asyncio.wait_for(session.read_resource(uri), WAIT)
            assert read.contents[0].text.startswith("---")  # type: ignore[union-attr]

        # A delete for good leaves nothing to undo: the agent's waits for the user.
        hard = answer(await call(session, "memory_forget", memory=op["uri"], hard=True))
        assert hard["operations"][0]["action"] == "proposed"
        assert "hard" in hard["operations"][0]["reason"] and Path(op["path"]).exists()

        # forget: archived (not recalled any more), the file gone from the root.
        forgot = answer(await call(session, "memory_forget", memory=op["uri"]))
        assert forgot["operations"][0]["action"] == "archived"
        assert not Path(op["path"]).exists()
        after = answer(await call(session, "memory_recall", query="when is staging reset?"))
        assert op["uri"] not in [m["uri"] for m in after["memories"]]


async def test_bad_input_is_a_clear_error_and_writes_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    before = sorted(p.name for p in (workspace / ".memory").rglob("*.md"))
    async with mcp_session(workspace, tmp_path / "xdg", "--no-watch") as session:
        unknown = error_text(
            await call(session, "memory_forget", memory="memory://memories/project/nope.md")
        )
        assert "no memory" in unknown and "uri" in unknown
        secret = error_text(
            await call(session, "memory_remember", text=f"Use the key {SECRET} in CI.")
        )
        assert "secret" in secret and SECRET not in secret
        team_secret = error_text(
            await call(session, "memory_remember", text=f"Deploy token {SECRET}", scope="team")
        )
        assert "secret" in team_secret and SECRET not in team_secret
        overlong = error_text(await call(session, "memory_recall", query="x" * 40_000))
        assert "query" in overlong
        scope = error_text(await call(session, "memory_remember", text="Anything.", scope="galaxy"))
        assert "scope" in scope
        with pytest.raises(MCPError):
            await asyncio.wait_for(
                session.read_resource("memory://memories/project/missing.md"), WAIT
            )
        no_query = error_text(await call(session, "memory_search", mode="deep"))
        assert "query" in no_query
        bad_mode = error_text(await call(session, "memory_search", query="x", mode="sideways"))
        assert bad_mode.startswith("invalid arguments: mode:"), bad_mode
        assert "pydantic" not in bad_mode and "validation error" not in bad_mode
        unknown_get = error_text(
            await call(session, "memory_search", mode="get", memory="memory://memories/user/x.md")
        )
        assert "no memory" in unknown_get
        # Still serving after every refusal.
        assert answer(await call(session, "memory_recall", query="deploy release"))["memories"]
    assert sorted(p.name for p in (workspace / ".memory").rglob("*.md")) == before


@pytest.fixture
def model() -> Iterator[tuple[FakeModel, str]]:
    fake = FakeModel()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield fake, f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()


async def test_with_a_model_the_answer_is_fast_plus_refined(
    workspace: Path, tmp_path: Path, model: tuple[FakeModel, str]
) -> None:
    fake, url = model
    memory = workspace / ".memory"
    for n in range(4):
        write_memory(memory, f"deploy-{n}.md", f"Deploy step {n}", "release", f"deploy step {n}")
    fake.answer = [str(memory / "db" / "postgres.md")]  # not in the fast two
    flags = ("--no-watch", "--model-url", url, "--model", "tiny", "--api-key-env", "MCP_TEST_KEY")
    async with mcp_session(
        workspace, tmp_path / "xdg", *flags, env={"MCP_TEST_KEY": "sk-mcp-0123456789abcdef"}
    ) as session:
        got = answer(await call(session, "memory_recall", query="deploy release step"))
        phases = [m["phase"] for m in got["memories"]]
        assert phases[:2] == ["fast", "fast"] and phases[2:] == ["refined"]
        assert got["memories"][2]["uri"] == "memory://memories/project/db/postgres.md"
        assert got["refined"].startswith("refined by the model (tiny at http://127.0.0.1")
        assert got["prompt"].count("## Relevant memory") == 1
        assert fake.headers[0]["Authorization"] == "Bearer sk-mcp-0123456789abcdef"
        fake.mode = "error"
        failed = answer(await call(session, "memory_recall", query="deploy release step"))
        assert "the model's answer was not used" in failed["refined"]
        assert "500" in failed["refined"]
        assert len(failed["memories"]) >= 2  # the fast result and the lexical fallback


async def test_files_changed_by_hand_are_served_while_it_runs(
    workspace: Path, tmp_path: Path
) -> None:
    async with mcp_session(workspace, tmp_path / "xdg") as session:
        write_memory(workspace / ".memory" / "team", "oncall.md", "On-call rota",
                     "Who is paged", "The on-call rota lives in PagerDuty, weekly handover.")  # fmt: skip

        async def seen() -> dict[str, Any]:
            while True:
                got = answer(await call(session, "memory_recall", query="on-call rota pagerduty"))
                if got["memories"]:
                    return got
                await asyncio.sleep(0.1)

        got = await asyncio.wait_for(seen(), WAIT)
        assert got["memories"][0]["uri"] == "memory://memories/team/oncall.md"


def test_lines_it_cannot_read_are_answered_and_it_keeps_serving(
    workspace: Path, tmp_path: Path
) -> None:
    """A line that is not JSON, nested 100,000 deep, or no JSON-RPC message gets a -32700 or
    -32600 answer (the SDK alone drops it and the host waits for ever); the face goes on."""
    import select
    import subprocess
    import time

    process = subprocess.Popen(
        [sys.executable, "-m", "memory_recall.server", "mcp", "--workspace", str(workspace)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        env={**os.environ, "XDG_DATA_HOME": str(tmp_path / "data")},
    )  # fmt: skip
    assert process.stdin and process.stdout
    pending = b""

    def send(line: bytes) -> None:
        assert process.stdin
        process.stdin.write(line + b"\n")
        process.stdin.flush()

    def answer_to(msg_id: Any) -> dict[str, Any]:
        nonlocal pending
        deadline = time.monotonic() + WAIT
        while time.monotonic() < deadline:
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                message = json.loads(line)
                if "id" in message and message["id"] == msg_id:
                    return message  # type: ignore[no-any-return]
            ready, _, _ = select.select([process.stdout], [], [], 0.2)
            if ready:
                chunk = os.read(process.stdout.fileno(), 1 << 20)  # type: ignore[union-attr]
                assert chunk, "the MCP face closed its stdout"
                pending += chunk
        raise TimeoutError(f"no answer to id {msg_id!r}")

    deep = 100_000
    try:
        send(json.dumps({
            "jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "test", "version": "1"}},
        }).encode())  # fmt: skip
        assert "result" in answer_to(1)
        send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        for line, code in (
            (b'{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"a":'
             + b"[" * deep + b"]" * deep + b"}}", -32700),
            (b"[" * deep + b"]" * deep, -32700),
            (b'{"a":' * deep + b"1" + b"}" * deep, -32700),
            (b"{not json", -32700),
            (b'{"jsonrpc":"2.0","what":"nothing"}', -32600),
        ):  # fmt: skip
            send(line)
            reply = answer_to(None)
            assert reply["error"]["code"] == code, (line[:60], reply)
        send(b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}')
        tools = answer_to(3)["result"]["tools"]
        assert any(t["name"] == "memory_recall" for t in tools)
    finally:
        process.kill()
        process.wait(timeout=WAIT)
