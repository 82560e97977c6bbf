"""docs/recall.md through the real process: every branch of one recall."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from memory_recall.protocol import methods
from memory_recall.protocol.client import MemoryRecallClient, RpcError
from pygls.exceptions import JsonRpcException
from pytest_lsp.client import captured_exception_key

from tests.e2e.conftest import CEILING_MS, SERVER_COMMAND, WAIT, request, start
from tests.memory_files import write_memory


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write_memory(root, "deploy.md", title="Deploy steps", description="how we deploy the api",
                 body="Run make deploy from the release branch.")  # fmt: skip
    write_memory(root, "freeze.md", title="Deploy freeze", description="no deploy on Friday")
    write_memory(root, "dash.md", title="Grafana dashboard", description="latency panels",
                 type="reference")  # fmt: skip
    write_memory(root, "tz.md", title="Timezone", description="user works from London",
                 type="user")  # fmt: skip
    write_memory(root, "review.md", title="Review rules", description="small PRs, deploy notes",
                 type="feedback")  # fmt: skip
    return root


def paths(phase: dict) -> list[str]:
    return [d["path"] for d in phase["docs"]]


async def test_fast_then_refined_without_repeats(client, memory):
    asked = {}

    @client.feature(methods.SELECT)
    async def select(params):
        asked.update(params)
        await asyncio.sleep(0.2)
        # The model picks a fast doc again and a new one: only the new one is sent.
        return {"selected": [params["candidates"][0]["path"], str(memory / "review.md")]}

    await start(client, [(memory, "project")], selector={"kind": "client"})
    result = await request(client, methods.RECALL, {"query": "deploy", "token": "t1"})
    rec = client.recorder
    assert rec.methods_for("t1") == [methods.FAST_RESULT, methods.REFINED_RESULT, methods.TELEMETRY]
    fast, refined = rec.of("t1", methods.FAST_RESULT)[0], rec.of("t1", methods.REFINED_RESULT)[0]
    assert fast["strategy"] == "heuristic" and len(fast["docs"]) == 2
    assert fast["prompt"].startswith("## Relevant memory")
    assert refined["strategy"] == "model" and refined["status"] == "delivered"
    assert paths(refined) == [str(memory / "review.md")]
    assert not set(paths(fast)) & set(paths(refined))
    assert result["fast"]["docs"] == fast["docs"] and result["refined"]["docs"] == refined["docs"]
    assert result["requestId"] == fast["requestId"] == refined["requestId"]
    assert result["docsScanned"] == 5
    assert asked["limit"] == 5 and asked["query"] == "deploy"
    assert {c["path"] for c in asked["candidates"]} == {str(p) for p in memory.glob("*.md")}
    telemetry = rec.of("t1", methods.TELEMETRY)[0]
    assert telemetry["outcome"] == "completed" and telemetry["docsSelected"] == 3
    assert telemetry["selectorLatencyMs"] >= 200 and telemetry["failure"] is None


async def test_already_delivered_when_model_picks_only_fast_docs(client, memory):
    @client.feature(methods.SELECT)
    def select(params):
        return {"selected": [c["path"] for c in params["candidates"][:1]]}

    await start(client, [(memory, "project")], selector={"kind": "client"})
    result = await request(client, methods.RECALL, {"query": "deploy", "token": "t"})
    assert result["refined"]["status"] == "already_delivered"
    assert result["refined"]["docs"] == [] and result["refined"]["strategy"] == "model"


async def test_no_relevant_results_when_model_picks_nothing(client, memory):
    @client.feature(methods.SELECT)
    def select(params):
        return {"selected": []}

    await start(client, [(memory, "project")], selector={"kind": "client"})
    result = await request(client, methods.RECALL, {"query": "deploy", "token": "t"})
    assert result["refined"]["status"] == "no_relevant_results"
    assert result["fast"]["status"] == "delivered"


@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        ("hang", f"timed out after {CEILING_MS} ms"),
        ("error", "client declined"),
        ("malformed", "malformed answer"),
        ("unknown", "not in its manifest"),
        ("too_many", "more than the limit"),
    ],
)
async def test_selector_failures_fall_back_to_heuristic(client, memory, answer, reason):
    @client.feature(methods.SELECT)
    async def select(params):
        if answer == "hang":
            await asyncio.sleep(60)
        if answer == "error":
            raise JsonRpcException("no model available", code=-32803)
        if answer == "malformed":
            return {"chosen": "deploy.md"}
        if answer == "unknown":
            return {"selected": ["/etc/passwd"]}
        return {"selected": [c["path"] for c in params["candidates"]][:6] * 1 + ["x"] * 3}

    await start(client, [(memory, "project")], selector={"kind": "client"})
    result = await request(client, methods.RECALL, {"query": "deploy", "token": "t", "limit": 3})
    if answer == "error":
        # pytest-lsp reports any exception in a client handler as a test error;
        # here declining with an error is the behaviour under test.
        client._pytest_item.stash[captured_exception_key] = None
    refined = result["refined"]
    assert refined["strategy"] == "heuristic"
    assert reason in refined["failure"]
    # fallback = lexical top 3 (the limit) minus the two fast docs
    assert len(refined["docs"]) == 1 and refined["status"] == "delivered"
    assert not set(paths(result["fast"])) & set(paths(refined))
    telemetry = client.recorder.of("t", methods.TELEMETRY)[0]
    assert reason in telemetry["failure"]


async def test_no_selector_means_no_fast_phase_and_fallback(client, memory):
    await start(client, [(memory, "project")])
    result = await request(client, methods.RECALL, {"query": "deploy", "token": "n"})
    assert result["fast"] is None
    assert result["refined"]["strategy"] == "heuristic"
    assert result["refined"]["status"] == "delivered"
    assert len(result["refined"]["docs"]) == 3  # every doc mentioning "deploy"
    assert client.recorder.methods_for("n") == [methods.REFINED_RESULT, methods.TELEMETRY]


async def test_no_tokens_or_no_match_gives_silence(client, memory):
    await start(client, [(memory, "project")], selector={"kind": "client"})
    for token, query in (("a", ""), ("b", "is it ok"), ("c", "猫")):
        result = await request(client, methods.RECALL, {"query": query, "token": token})
        assert result["fast"] is None
        assert result["refined"]["status"] == "no_relevant_results"
        assert result["refined"]["strategy"] == "none"
        assert client.recorder.methods_for(token) == [methods.REFINED_RESULT, methods.TELEMETRY]


async def test_exclude_paths_are_never_returned(client, memory):
    await start(client, [(memory, "project")])
    excluded = str(memory / "deploy.md")
    result = await request(client, methods.RECALL, {"query": "deploy", "excludePaths": [excluded]})
    assert excluded not in paths(result["refined"])


async def test_cancel_while_selector_pending(memory):
    # Driven with the protocol client: pytest-lsp's client cannot observe a
    # server-initiated $/cancelRequest of a request it is still answering.
    selecting = asyncio.Event()

    async def select(params):
        selecting.set()
        await asyncio.sleep(30)
        return []

    client = await MemoryRecallClient.start(
        SERVER_COMMAND, roots=[(str(memory), "project")], selector={"kind": "client"},
        select_handler=select, watch=False,
    )  # fmt: skip
    try:
        # The daemon itself, not its opening (server/opening.py answers `initialize`
        # while it imports): a recall sent before then waits for the imports.
        await asyncio.wait_for(client.status(), WAIT)
        handle = await client.recall("deploy", token="c")
        assert handle.initial_reason == "fast"
        await asyncio.wait_for(selecting.wait(), WAIT)
        handle.cancel()
        with pytest.raises(RpcError) as err:
            await asyncio.wait_for(handle.response, WAIT)
        assert err.value.code == methods.REQUEST_CANCELLED
        assert await handle.refined is None
        await asyncio.sleep(0.3)
        seen = [
            (m, p.get("token"))
            for m, p in client.notifications
            if m.startswith(("memory/", "telemetry"))
        ]
        assert seen == [(methods.FAST_RESULT, "c"), (methods.TELEMETRY, "c")]
        assert client.notifications[-1][1]["outcome"] == "cancelled"
        # The in-flight memory/select was abandoned: the host was told to stop.
        assert any(m == "$/cancelRequest" for m, _ in client.notifications)
        status = await client.status()
        assert status.recall.cancelled == 1 and status.recall.active == 0
    finally:
        await client.close()


async def test_concurrent_recalls_keep_separate_exclusion_sets(client, memory):
    @client.feature(methods.SELECT)
    async def select(params):
        # Answer the first recall last, so both are in flight together.
        await asyncio.sleep(0.4 if params["query"] == "deploy" else 0.05)
        return {"selected": [c["path"] for c in params["candidates"]][:5]}

    await start(client, [(memory, "project")], selector={"kind": "client"})
    first, second = await asyncio.gather(
        request(client, methods.RECALL, {"query": "deploy", "token": "one"}),
        request(client, methods.RECALL, {"query": "deploy freeze", "token": "two"}),
    )
    everything = {str(p) for p in memory.glob("*.md")}
    for result in (first, second):
        fast, refined = set(paths(result["fast"])), set(paths(result["refined"]))
        # The fast phase delivers what it is sure of (1 or 2 here), each with its confidence.
        assert 1 <= len(fast) <= 2
        assert all(0 < doc["confidence"] <= 1 for doc in result["fast"]["docs"])
        assert not fast & refined
        # Each request removed exactly its own fast docs from the model's five.
        assert refined == everything - fast


async def test_limit_bounds_refined_docs(client, memory):
    await start(client, [(memory, "project")])
    result = await request(client, methods.RECALL, {"query": "deploy", "limit": 1})
    assert len(result["refined"]["docs"]) == 1
