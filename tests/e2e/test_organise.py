"""Organisation through the real daemon: memory/tree, memory/context, stale memories in recall."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from lsprotocol import types
from memory_recall.protocol import methods
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.client import LanguageClient

from tests.e2e.conftest import WAIT, request, wait_ready
from tests.memory_files import write_memory


def memory_with(
    root: Path, name: str, title: str, body: str, front: str = "", type: str = "project"
):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {title}\ndescription: {title}\ntype: {type}\n{front}---\n{body}\n", "utf-8"
    )
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "src" / "pay").mkdir(parents=True)
    (tmp_path / "src" / "pay" / "charge.ts").write_text("one\ntwo\n")
    root = tmp_path / ".memory"
    memory_with(root, "gone.md", "Refund flow for payments", "Refunds live in src/pay/refund.ts")
    memory_with(root, "fresh.md", "Charge flow for payments", "Charges live in src/pay/charge.ts:2")
    memory_with(root, "style.md", "Answer tersely", "Short sentences, no preamble.",
                "always: true\n", type="user")  # fmt: skip
    memory_with(root, "rule.md", "Never force-push main", "Open a pull request instead.",
                "always: true\ncategory: conventions/review\n", type="feedback")  # fmt: skip
    write_memory(
        root, "grafana.md", "Grafana", "https://grafana.example.com/d/api", type="reference"
    )
    return tmp_path


async def start_in(client: LanguageClient, workspace: Path, **extra):
    """A session whose workspace is `workspace` (cited paths are checked against it)."""
    options = {"roots": [{"path": str(workspace / ".memory"), "scope": "project"}], "watch": False,
               **extra}  # fmt: skip
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=workspace.as_uri(),
        initialization_options=options,
    )
    await asyncio.wait_for(client.initialize_session(params), WAIT)
    return await wait_ready(client)


async def test_stale_memories_are_demoted_and_marked_in_a_recall(client: LanguageClient, workspace):
    await start_in(client, workspace)
    result = await request(client, methods.RECALL, {"query": "refund charge flow payments"})
    docs = result["refined"]["docs"]
    by_name = {Path(d["path"]).name: d for d in docs}
    assert by_name["gone.md"]["stale"] == {
        "reason": "cites src/pay/refund.ts, which no longer exists"
    }
    assert by_name["fresh.md"]["stale"] is None
    names = [Path(d["path"]).name for d in docs]
    assert names.index("fresh.md") < names.index("gone.md")
    assert "May be outdated: it cites src/pay/refund.ts" in result["refined"]["prompt"]


async def test_the_tree_counts_and_places_every_memory(client: LanguageClient, workspace):
    await start_in(client, workspace)
    tree = await request(client, methods.TREE, {})
    assert tree["total"] == 5
    assert [c["slug"] for c in tree["categories"]] == [
        "user",
        "project",
        "conventions",
        "lessons",
        "tools",
    ]
    review = next(c for c in tree["categories"] if c["slug"] == "conventions")["children"]
    node = next(c for c in review if c["slug"] == "conventions/review")
    assert [(m["title"], m["source"]) for m in node["members"]] == [
        ("Never force-push main", "declared")
    ]
    assert (await request(client, methods.TREE, {"scope": "user"}))["total"] == 0
    with pytest.raises(JsonRpcInvalidParams, match="scope"):
        await request(client, methods.TREE, {"scope": "everyone"})


async def test_context_carries_always_memories_within_the_budget(client: LanguageClient, workspace):
    await start_in(client, workspace, context={"budgetChars": 150})
    context = await request(client, methods.CONTEXT, {})
    assert context["budgetChars"] == 150
    assert len(context["prompt"]) <= 150
    titles = [d["title"] for d in context["docs"]] + [d["title"] for d in context["truncated"]]
    assert sorted(titles) == ["Answer tersely", "Never force-push main"]
    assert context["truncated"] and all(t["reason"] for t in context["truncated"])
    wide = await request(client, methods.CONTEXT, {"budgetChars": 4000})
    assert [d["title"] for d in wide["docs"]] == ["Answer tersely", "Never force-push main"]
    assert wide["truncated"] == [] and "Open a pull request instead." in wide["prompt"]
