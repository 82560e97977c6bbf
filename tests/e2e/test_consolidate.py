"""memory/consolidate through the real daemon: the messy year, dry run then real, recall, undo."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import pytest
from lsprotocol import types
from memory_recall.protocol import methods
from memory_recall.server.dev.messy_year import generate
from memory_recall.server.store.files import ROOT_LOCK_NAME, RootLock
from pygls.exceptions import JsonRpcException
from pygls.lsp.client import LanguageClient

from tests.e2e.conftest import WAIT, request, wait_ready

MESSY_SIZE = 600 if os.environ.get("MEMORY_RECALL_FULL_LOAD") else 120
SLOW = 120  # seconds: a consolidation at full size on a loaded machine


def files(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and p.name != ROOT_LOCK_NAME  # the root's write lock lives there
    }


async def start_on(client: LanguageClient, workspace: Path, capacity: int) -> None:
    options = {
        "roots": [{"path": str(workspace / ".memory"), "scope": "project"}],
        "watch": False,
        "organise": {"capacity": capacity},
    }
    params = types.InitializeParams(
        capabilities=types.ClientCapabilities(),
        root_uri=workspace.as_uri(),
        initialization_options=options,
    )
    await asyncio.wait_for(client.initialize_session(params), WAIT)
    await wait_ready(client)


async def consolidate(client: LanguageClient, **params):
    return await asyncio.wait_for(
        client.protocol.send_request_async(methods.CONSOLIDATE, params), SLOW
    )


def matches_labels(report: dict, labels: dict, root: Path) -> list[str]:
    """What the wire report gets wrong against the fixture's labels (empty: all right)."""
    rel = lambda p: os.path.relpath(p, root)  # noqa: E731
    archived = {rel(a["path"]): a for a in report["archived"]}
    merges = {rel(m["into"]): {rel(p) for p in m["mergedFrom"]} for m in report["merges"]}
    stale = {rel(n["path"]) for n in report["notices"] if n["kind"] == "stale"}
    problems = []
    for cluster in labels["clusters"]:
        others = set(cluster["members"]) - {cluster["newest"]}
        if merges.get(cluster["newest"]) != others:
            problems.append(f"cluster {cluster['newest']} not merged")
    for correction in labels["corrections"]:
        for old in correction["superseded"]:
            got = archived.get(old)
            if not got or got["cause"] != "superseded" or rel(got["into"]) != correction["newer"]:
                problems.append(f"{old} not superseded by {correction['newer']}")
    touched = set(archived) | set(merges)
    problems += [
        f"protected {p} touched" for p in labels["pinned"] + labels["always"] if p in touched
    ]
    problems += [f"{p} not flagged stale" for p in labels["stale"] if p not in stale]
    problems += [f"{p} flagged stale" for p in stale - set(labels["stale"])]
    if report["after"] > labels["capacity"]:
        problems.append(f"{report['after']} memories over the capacity {labels['capacity']}")
    return problems


async def test_the_messy_year_through_the_daemon(client: LanguageClient, tmp_path: Path):
    year = generate(tmp_path / "year", memories=MESSY_SIZE)
    root, labels = year.root, year.labels
    await start_on(client, year.workspace, labels["capacity"])
    before = files(root)

    dry = await consolidate(client, dryRun=True)
    assert dry["dryRun"] is True and dry["operations"] == []
    (report,) = dry["reports"]
    assert matches_labels(report, labels, root) == []
    assert files(root) == before

    real = await consolidate(client)
    (done,) = real["reports"]
    assert matches_labels(done, labels, root) == []
    operation = done["operation"]
    assert operation and {o["operation"] for o in real["operations"]} == {operation}
    (index,) = real["indexes"]
    assert index["lines"] <= index["cap"] == 200
    assert (root / "MEMORY.md").read_text().startswith("# Project memory\n")  # the user's line

    for correction in labels["corrections"]:
        result = await request(client, methods.RECALL, {"query": correction["question"]})
        delivered = result["refined"]["docs"]
        paths = {d["path"] for d in delivered}
        assert not paths & {str(root / p) for p in correction["superseded"]}
        assert all(correction["oldFact"] not in d["body"] for d in delivered)

    undone = await request(client, methods.UNDO, {"operation": operation})
    assert undone["operations"]
    assert files(root) == before  # every file, MEMORY.md and the archive included
    assert not (root / ".archive").exists()


async def test_two_daemons_never_consolidate_one_root_at_once(client: LanguageClient, tmp_path):
    year = generate(tmp_path / "year", memories=40)
    await start_on(client, year.workspace, year.labels["capacity"])
    state = Path(os.environ["MEMORY_RECALL_STATE_DIR"])
    lock = RootLock(state / "locks", f"consolidate {os.path.realpath(year.root)}")
    before = files(year.root)
    busy = pytest.raises(JsonRpcException, match="another process is consolidating")
    with lock.held(), busy:  # this test process plays the other daemon
        await consolidate(client)
    assert files(year.root) == before
    assert (await consolidate(client))["reports"][0]["operation"]


async def test_the_hosts_model_rewords_merges_and_is_overruled_when_it_drops_a_fact(
    client: LanguageClient, tmp_path: Path
):
    """`memory/complete` (task consolidate) writes the merged text, unless it loses an anchor."""
    year = generate(tmp_path / "year", memories=40)
    asked: list[dict] = []

    @client.feature("memory/complete")
    async def complete(params: dict) -> dict:
        params = params if isinstance(params, dict) else vars(params)
        asked.append(params)
        notes = json.loads(params["messages"][-1]["content"].split("\n", 1)[1])
        if len(asked) % 2:  # faithful: every line of every note, as one paragraph
            lines = dict.fromkeys(
                line.strip() for n in notes for line in n["body"].splitlines() if line.strip()
            )
            return {"content": json.dumps({"body": "Merged: " + " ".join(lines)})}
        return {"content": json.dumps({"body": "Merged, briefly."})}  # drops every anchor

    options = {
        "roots": [{"path": str(year.root), "scope": "project"}],
        "watch": False,
        "organise": {"capacity": year.labels["capacity"]},
        "selector": {"kind": "client"},
        "capabilities": {"complete": True},
    }
    await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                root_uri=year.workspace.as_uri(),
                initialization_options=options,
            )
        ),
        WAIT,
    )
    await wait_ready(client)
    before = files(year.root)

    dry = await consolidate(client, dryRun=True)
    assert asked == []  # a dry run never asks the model
    assert {m["mergedBy"] for m in dry["reports"][0]["merges"]} == {"rules"}

    (report,) = (await consolidate(client))["reports"]
    assert asked and all(a["task"] == "consolidate" for a in asked)
    merges = [m for m in report["merges"] if Path(m["into"]).exists()]
    by_model = [m for m in merges if m["mergedBy"] == "model"]
    overruled = [m for m in merges if m["note"] and "drops" in m["note"]]
    assert by_model and (overruled or len(asked) == 1)
    for merge in by_model:
        assert "Merged: " in Path(merge["into"]).read_text("utf-8")
    for merge in overruled:
        assert "Merged, briefly." not in Path(merge["into"]).read_text("utf-8")

    await request(client, methods.UNDO, {"operation": report["operation"]})
    assert files(year.root) == before
