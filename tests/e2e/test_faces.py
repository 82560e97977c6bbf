"""One core, every face: the editors' daemon and the MCP server, started from the same
config file on the same tree, answer a recall with the same memories — the memory
network's finds (with their path) and the semantic channel's (with their similarity)
included."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp.client.session import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client
from memory_recall.protocol.client import MemoryRecallClient
from memory_recall.server.dev.embed_server import ConceptEncoder, EmbedServer

from tests.e2e.test_network_feedback import write

WAIT = 40  # seconds: every wait is bounded; two daemons share a loaded machine

CONCEPTS = {"replacing": "migrate", "migrating": "migrate", "login": "auth", "auth": "auth",
            "layer": "middleware", "middleware": "middleware"}  # fmt: skip
NETWORK_QUERY = "restructure the invoice module"  # its link reaches the test rules
# One lexical match (the deploy note's "layer"); the auth migration shares no word with
# it and is found by its vector.
SEMANTIC_QUERY = "replacing the login layer"


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("MEMORY_RECALL_STATE_DIR", str(tmp_path / "state"))
    root = tmp_path / "ws" / ".memory"
    write(
        root, "billing/invoice-module.md", "Invoice module layout",
        "services/invoicing: where invoice totals and credit notes are computed",
        "Totals in totals.ts. Before changing anything here read the "
        "[test rules](../conventions/test-rules.md).",
    )  # fmt: skip
    write(
        root, "conventions/test-rules.md", "Test rules",
        "every change ships with property tests; snapshot tests are not accepted",
        "Run the property suite before review.",
    )  # fmt: skip
    write(root, "auth.md", "Auth middleware migration", "migrating the auth middleware", "")
    write(root, "deploy.md", "Deploy checklist", "how we deploy the web layer", "")
    for i in range(4):
        write(root, f"n{i}.md", f"Note {i}", f"about topic{i}", "")
    with EmbedServer(ConceptEncoder(CONCEPTS)) as endpoint:
        config = tmp_path / "config.toml"
        config.write_text(
            f'[[roots]]\npath = "{root}"\nscope = "project"\n\n'
            f'[embeddings]\nurl = "{endpoint.url}"\nmodel = "double"\n',
            encoding="utf-8",
        )
        monkeypatch.setenv("MEMORY_RECALL_CONFIG", str(config))
        yield tmp_path / "ws", root


def shape(docs: list[dict[str, Any]]) -> list[tuple[str, Any, bool]]:
    """What must agree: each memory, the network path that reached it, whether the
    semantic channel found it."""
    return [
        (
            Path(d["path"]).name,
            [(h["kind"], Path(h["from"]).name) for h in d.get("via") or []],
            d.get("similarity") is not None,
        )
        for d in docs
    ]


async def daemon_answers(workspace: Path) -> dict[str, list[tuple[str, Any, bool]]]:
    # No roots or embeddings in initializationOptions: the config file gives both.
    client = await asyncio.wait_for(
        MemoryRecallClient.start(workspace=str(workspace), stderr=sys.stderr), WAIT
    )
    try:

        async def ready() -> None:
            while True:
                status = await client.status()
                network = status.network
                semantic = status.semantic
                if (
                    status.ready
                    and network is not None
                    and network.memories == 8
                    and semantic is not None
                    and semantic.documents == 8
                    and not semantic.pending
                ):
                    return
                await asyncio.sleep(0.05)

        await asyncio.wait_for(ready(), WAIT)
        answers = {}
        for query in (NETWORK_QUERY, SEMANTIC_QUERY):
            handle = await client.recall(query)
            result = await asyncio.wait_for(handle.response, WAIT)
            assert result.fast is None  # no model: the refined phase is the whole answer
            answers[query] = shape([d.wire() for d in result.refined.docs])
        return answers
    finally:
        await client.close()


async def mcp_answers(workspace: Path) -> dict[str, list[tuple[str, Any, bool]]]:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "memory_recall.server", "mcp", "--workspace", str(workspace)],
        env=dict(os.environ),
    )
    async with stdio_client(params) as (read, write_), ClientSession(read, write_) as session:
        await asyncio.wait_for(session.initialize(), WAIT)

        async def recall(query: str) -> list[dict[str, Any]]:
            result = await session.call_tool("memory_recall", {"query": query})
            assert not result.is_error, result.content
            data = result.structured_content or json.loads(result.content[0].text)  # type: ignore[union-attr]
            return data.get("result", data)["memories"]  # type: ignore[no-any-return]

        async def settled() -> dict[str, list[dict[str, Any]]]:
            # The network and the vectors are built in the background, as in the daemon:
            # both answers are taken once both are there (the daemon's were, too).
            while True:
                answers = {q: await recall(q) for q in (NETWORK_QUERY, SEMANTIC_QUERY)}
                if any(m.get("via") for m in answers[NETWORK_QUERY]) and any(
                    m.get("similarity") is not None for m in answers[SEMANTIC_QUERY]
                ):
                    return answers
                await asyncio.sleep(0.1)

        answers = await asyncio.wait_for(settled(), WAIT)
        return {query: shape(memories) for query, memories in answers.items()}


async def test_mcp_and_the_daemon_give_the_same_finds_network_and_semantic_included(
    setup: tuple[Path, Path],
) -> None:
    workspace, _root = setup
    daemon = await daemon_answers(workspace)
    mcp = await mcp_answers(workspace)
    assert mcp == daemon
    # And the finds are there: the test rules through the link, the auth migration by
    # its vector alone.
    assert ("test-rules.md", [("link", "invoice-module.md")], False) in daemon[NETWORK_QUERY]
    assert ("auth.md", [], True) in daemon[SEMANTIC_QUERY]
