"""Team scope (docs/writing.md) through the real daemon, on the default layout: the team root
`<workspace>/.memory/team` inside the project root `<workspace>/.memory`.

The daemon never writes team memories on its own: extraction proposes, consolidation
reports; an explicit remember writes; a credential is refused whatever is asked.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from lsprotocol import types
from memory_recall.protocol import methods
from memory_recall.server.dev.scripted_model import content_for
from pygls.lsp.client import LanguageClient

from tests.e2e.conftest import WAIT, request, wait_ready
from tests.memory_files import write_memory

SESSION = [
    {"role": "user", "content": "Set up the integration tests. Always use pnpm here, never npm."},
    {"role": "assistant", "content": "They fail with ECONNREFUSED 5432."},
    {"role": "user", "content": "Start postgres first."},
]
CREDENTIAL = "ghp_" + "Zq7Lm2Xv9K" * 3 + "Zq7Lm2"


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
    }


async def start_team(client: LanguageClient, workspace: Path, **options: Any) -> None:
    memory = workspace / ".memory"

    @client.feature("memory/complete")
    async def complete(params: dict[str, Any]) -> dict[str, Any]:
        return {"content": content_for("good")}

    @client.feature("memory/select")
    async def select(params: dict[str, Any]) -> dict[str, Any]:
        return {"selected": []}

    opts = {
        "roots": [{"path": str(memory), "scope": "project"},
                  {"path": str(memory / "team"), "scope": "team"}],
        "watch": False, "selector": {"kind": "client"}, "capabilities": {"complete": True},
        **options,
    }  # fmt: skip
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=workspace.as_uri(),
        initialization_options=opts,
    )
    await asyncio.wait_for(client.initialize_session(params), WAIT)
    await wait_ready(client)


async def test_team_memories_are_written_only_when_asked(client, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "package.json").parent.mkdir(parents=True)
    (workspace / "package.json").write_text('{"name": "shop", "scripts": {"test": "vitest"}}')
    team = workspace / ".memory" / "team"
    write_memory(team, "review.md", "Review rule", "Two approvals",
                 "Every change needs two approvals before merge.")  # fmt: skip
    await start_team(client, workspace)
    status = await request(client, methods.STATUS, {})
    assert [(r["scope"], r["documents"]) for r in status["roots"]] == [("project", 0), ("team", 1)]
    before = tree_bytes(team)

    # Extraction into team scope: proposals, even with apply; nothing written anywhere.
    for params in (
        {"trigger": "sessionEnd", "transcript": SESSION, "scope": "team"},
        {"trigger": "sessionEnd", "transcript": SESSION, "scope": "team", "apply": True},
        {"trigger": "projectInit", "scope": "team"},
    ):
        result = await request(client, methods.EXTRACT, params)
        assert result["operations"] and {o["action"] for o in result["operations"]} == {
            "proposed"
        }, params
    assert tree_bytes(team) == before
    assert [p for p in (workspace / ".memory").rglob("*.md") if "team" not in p.parts] == []

    # Without a scope a remember never lands in team.
    mine = await request(client, methods.REMEMBER, {"text": "Run the linters with pnpm lint."})
    assert mine["operations"][0]["scope"] == "project"
    assert Path(mine["operations"][0]["path"]).parent == workspace / ".memory"

    # An explicit remember writes into the team root, as a team memory.
    ours = await request(
        client, methods.REMEMBER,
        {"text": "Release notes are written in CHANGELOG.md before tagging.", "scope": "team"},
    )  # fmt: skip
    op = ours["operations"][0]
    assert (op["action"], op["scope"]) == ("created", "team")
    assert Path(op["path"]).parent == team and Path(op["path"]).is_file()
    recalled = await request(client, methods.RECALL, {"query": "release notes changelog"})
    assert recalled["fast"]["docs"][0]["path"] == op["path"]
    assert recalled["fast"]["docs"][0]["scope"] == "team"

    # A credential is refused for team as for any scope, and never echoed.
    refused = await request(
        client, methods.REMEMBER,
        {"text": f"The deploy token is {CREDENTIAL}", "scope": "team", "force": True},
    )  # fmt: skip
    assert refused["operations"] == [] and refused["skipped"][0]["reason"] == "secret"
    assert CREDENTIAL not in str(refused)
    assert all(CREDENTIAL not in p.read_text() for p in team.rglob("*.md"))


async def test_consolidation_only_reports_on_team_memories(client, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    team = workspace / ".memory" / "team"
    body = "Deploys go out on Tuesdays after the release train; never deploy on Fridays."
    write_memory(team, "deploy-days.md", "Deploy days", "When we deploy", body)
    write_memory(team, "deploy-days-2.md", "Deploy days", "When we deploy", body)
    for n in range(3):
        write_memory(team, f"topic-{n}.md", f"Topic {n} owner", "Who owns it", f"Team {n} owns it.")
    await start_team(client, workspace, organise={"capacity": 2})
    before = tree_bytes(team)
    result = await asyncio.wait_for(
        client.protocol.send_request_async(methods.CONSOLIDATE, {"scope": "team"}), 60
    )
    assert {o["action"] for o in result["operations"]} <= {"unchanged"}
    (report,) = result["reports"]
    assert report["scope"] == "team" and report["merges"] == [] and report["archived"] == []
    # What it would have done is said: the duplicate, the memories over capacity.
    kinds = [n["kind"] for n in report["notices"]]
    assert "protected" in kinds and "over-capacity" in kinds
    assert any("team memory" in n["reason"] for n in report["notices"])
    assert tree_bytes(team) == before
