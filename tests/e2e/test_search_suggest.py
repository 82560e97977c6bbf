"""memory/search and memory/observe → memory/suggestion through the real daemon."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from memory_recall.protocol import methods
from memory_recall.protocol.client import MemoryRecallClient, RpcError
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.client import LanguageClient

from tests.e2e.conftest import SERVER_COMMAND, WAIT, request, start

# How long "nothing more arrives" is watched for: long against a match (milliseconds).


def memory_file(root: Path, name: str, title: str, description: str, body: str, front: str = ""):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {title}\ndescription: {description}\ntype: feedback\n{front}---\n{body}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "mem"
    memory_file(
        root, "billing/invoice-module.md", "Invoice module", "How invoices are built",
        "Invoices are assembled in billing/invoice.py. Before changing it read "
        "[the testing rules](../conventions/test-rules.md).",
        "category: project/architecture\n",
    )  # fmt: skip
    memory_file(
        root, "conventions/test-rules.md", "Testing rules", "Every change ships with a test",
        "Run the golden-file suite with `make golden`.", "category: conventions/testing\n",
    )  # fmt: skip
    memory_file(
        root, "lessons/redis.md", "ioredis ECONNRESET behind the NAT gateway",
        "Idle Redis connections are cut by the NAT after 350 seconds",
        "ioredis logs `Error: read ECONNRESET` every six minutes. Fix: `keepAlive: 30000` in "
        "`src/lib/redis.ts`.",
        "category: lessons/errors\n",
    )  # fmt: skip
    memory_file(
        root, "lessons/migrations.md", "Applied migrations are never edited",
        "db/migrations/ is append-only: write a new migration instead",
        "Checksums break every environment.", "category: conventions/code\n",
    )  # fmt: skip
    return root


def flood_memories(root: Path, n: int) -> list[str]:
    """`n` lessons, each citing its own file: an edit of each brings its lesson."""
    edited = []
    for i in range(n):
        memory_file(
            root, f"lessons/module-{i}.md", f"Module {i} pitfall",
            f"Editing src/mod{i}/core_{i}.py breaks the nightly import",
            f"The fix: run the import tests after changing `src/mod{i}/core_{i}.py`.",
            "category: lessons/pitfalls\n",
        )  # fmt: skip
        edited.append(f"src/mod{i}/core_{i}.py")
    return edited


def record_suggestions(client: LanguageClient) -> list[dict[str, Any]]:
    got: list[dict[str, Any]] = []

    @client.feature(methods.SUGGESTION)
    def suggestion(params: dict[str, Any]) -> None:
        got.append(params)
        client.recorder.add(methods.SUGGESTION, params)  # type: ignore[attr-defined]

    return got


async def settled(client: LanguageClient, observed: int) -> None:
    """Every event observed so far is handled (its suggestion sent, or nothing to send):
    the barrier after which nothing more can arrive for them. A status request answered
    after the notifications also proves every one was taken (or refused as invalid)."""

    async def poll() -> None:
        while True:
            status = await request(client, methods.STATUS, {})
            counts = status["suggestions"]
            if counts["observed"] >= observed and counts["settled"] == counts["observed"]:
                return
            await asyncio.sleep(0.02)

    await asyncio.wait_for(poll(), WAIT)


async def wait_count(items: list[Any], n: int, timeout: float = WAIT) -> None:
    async def poll() -> None:
        while len(items) < n:
            await asyncio.sleep(0.01)

    await asyncio.wait_for(poll(), timeout)


def names(result: dict[str, Any]) -> list[str]:
    return [d["relativePath"] for d in result["docs"]]


# -- memory/search ---------------------------------------------------------------------------


async def test_search_in_each_mode(client: LanguageClient, memory: Path):
    await start(client, [(memory, "project")])
    shallow = await request(client, methods.SEARCH, {"mode": "shallow", "query": "invoices built"})
    assert names(shallow) == ["billing/invoice-module.md"]
    assert shallow["docs"][0]["body"] is None and shallow["docs"][0]["source"] == "lexical"
    assert shallow["prompt"].startswith("## Memory search")

    deep = await request(client, methods.SEARCH, {"mode": "deep", "query": "restructure invoice"})
    assert deep["network"] is True
    assert names(deep)[0] == "billing/invoice-module.md"
    found = {d["relativePath"]: d for d in deep["docs"]}
    rules = found["conventions/test-rules.md"]
    assert rules["source"] == "network" and rules["score"] is None
    assert rules["via"] == [
        {
            "from": str(memory / "billing/invoice-module.md"),
            "to": str(memory / "conventions/test-rules.md"),
            "kind": "link",
            "direction": "forward",
            "keyword": None,
        }
    ]
    assert "golden" in rules["body"]

    explore = await request(client, methods.SEARCH, {"mode": "explore", "category": "lessons"})
    assert names(explore) == ["lessons/redis.md"]
    assert explore["subtree"]["slug"] == "lessons" and explore["subtree"]["count"] == 1
    assert {c["slug"]: c["count"] for c in explore["subtree"]["children"]}["lessons/errors"] == 1
    around = await request(
        client, methods.SEARCH, {"mode": "explore", "path": "billing/invoice-module.md"}
    )
    assert [d["source"] for d in around["docs"]][:2] == ["path", "network"]

    got = await request(client, methods.SEARCH, {"mode": "get", "path": "lessons/redis.md"})
    (doc,) = got["docs"]
    assert doc["path"] == str(memory / "lessons/redis.md") and doc["source"] == "path"
    assert doc["body"].endswith("`src/lib/redis.ts`.") and doc["truncated"] is False
    assert doc["contentHash"]


async def test_search_errors_name_what_to_change(client: LanguageClient, memory: Path):
    await start(client, [(memory, "project")])
    with pytest.raises(JsonRpcInvalidParams, match="needs a `query`"):
        await request(client, methods.SEARCH, {"mode": "deep"})
    with pytest.raises(JsonRpcInvalidParams, match="mode"):
        await request(client, methods.SEARCH, {"mode": "wide", "query": "x"})
    with pytest.raises(JsonRpcInvalidParams, match="not on the topic tree"):
        await request(client, methods.SEARCH, {"mode": "explore", "category": "gossip"})
    with pytest.raises(JsonRpcException) as missing:
        await request(client, methods.SEARCH, {"mode": "get", "path": "nope.md"})
    assert missing.value.code == methods.REQUEST_FAILED
    # The daemon is still there.
    assert (await request(client, methods.STATUS, {}))["ready"]


# -- memory/observe → memory/suggestion --------------------------------------------------


async def test_an_observe_brings_one_suggestion_once_per_session(
    client: LanguageClient, memory: Path
):
    got = record_suggestions(client)
    await start(client, [(memory, "project")])
    error = "[ioredis] Unhandled error event: Error: read ECONNRESET at TCP.onStreamRead"
    client.protocol.notify(methods.OBSERVE, {"event": "error", "text": error})
    await wait_count(got, 1)
    (note,) = got
    assert note["trigger"] == {"event": "error", "path": None, "text": error}
    (doc,) = note["docs"]
    assert doc["relativePath"] == "lessons/redis.md" and doc["category"] == "lessons/errors"
    assert any("econnreset" in e for e in doc["evidence"])
    assert note["prompt"].startswith("## Relevant memory")

    # The same event again brings nothing; another memory's event still does.
    client.protocol.notify(methods.OBSERVE, {"event": "error", "text": error})
    client.protocol.notify(methods.OBSERVE, {"event": "edit", "path": "src/lib/redis.ts"})
    await settled(client, 3)
    assert len(got) == 1
    client.protocol.notify(
        methods.OBSERVE, {"event": "edit", "path": "db/migrations/0042_orders.sql"}
    )
    await wait_count(got, 2)
    await settled(client, 4)
    assert [d["relativePath"] for n in got for d in n["docs"]] == [
        "lessons/redis.md",
        "lessons/migrations.md",
    ]


async def test_events_that_match_nothing_and_bad_params_bring_nothing(
    client: LanguageClient, memory: Path
):
    got = record_suggestions(client)
    await start(client, [(memory, "project")])
    for params in (
        {"event": "error", "text": "TypeError: unsupported operand type(s) for +"},
        {"event": "edit", "path": "README.md"},
        {"event": "command", "text": "ls -la"},
        {"event": "sneeze", "text": "ECONNRESET"},  # invalid: logged, ignored
        {"event": "error", "text": 42},
    ):
        client.protocol.notify(methods.OBSERVE, params)
    await settled(client, 3)  # the two invalid ones are refused before they are taken
    assert got == []
    assert (await request(client, methods.STATUS, {}))["ready"]


async def test_a_flood_of_observes_is_rate_limited(client: LanguageClient, memory: Path):
    edited = flood_memories(memory, 10)
    got = record_suggestions(client)
    await start(client, [(memory, "project")])
    for path in edited:
        client.protocol.notify(methods.OBSERVE, {"event": "edit", "path": path})
    await wait_count(got, 3)
    await settled(client, len(edited))
    # Three notifications a minute at most (each a memory never suggested before).
    assert len(got) == 3
    suggested = [d["relativePath"] for n in got for d in n["docs"]]
    assert len(set(suggested)) == len(suggested)


async def test_a_suggestion_waits_for_the_fast_result_not_the_model(
    client: LanguageClient, memory: Path
):
    release = asyncio.Event()

    @client.feature(methods.SELECT)
    async def select(params: dict[str, Any]) -> dict[str, Any]:
        if params["query"] != "warm up":
            await asyncio.wait_for(release.wait(), WAIT)
        return {"selected": []}

    record_suggestions(client)
    await start(client, [(memory, "project")], selector={"kind": "client"})
    # A suggestion waits for a recall's fast result at most a few seconds (a recall stuck
    # elsewhere must not hold suggestions back for good): the first recall of a daemon
    # does its first-use work, which on a loaded machine can take that long.
    await request(client, methods.RECALL, {"query": "warm up", "token": "w"})
    # The recall on the wire first, the observe right after it: pygls' own `send_request`
    # writes as it is called. (pytest-lsp's `send_request_async` is a coroutine, and
    # `request` runs it in a task of its own: the recall was written after the observe,
    # and when the daemon matched the edit before the recall arrived, the suggestion
    # rightly went first — this test failed one CI run in three on a loaded machine.)
    recall = asyncio.wrap_future(
        client.protocol.send_request(methods.RECALL, {"query": "ioredis redis NAT", "token": "r"})
    )
    client.protocol.notify(methods.OBSERVE, {"event": "edit", "path": "src/lib/redis.ts"})
    rec = client.recorder  # type: ignore[attr-defined]
    await rec.wait_for(None, methods.SUGGESTION)
    release.set()
    await asyncio.wait_for(recall, WAIT)
    phases = (methods.FAST_RESULT, methods.REFINED_RESULT)
    order = [m for m, p in rec.all
             if m == methods.SUGGESTION or (m in phases and p.get("token") == "r")]  # fmt: skip
    assert order == [methods.FAST_RESULT, methods.SUGGESTION, methods.REFINED_RESULT]


async def test_the_python_client_searches_and_hears_suggestions(memory: Path):
    client = await MemoryRecallClient.start(
        SERVER_COMMAND, roots=[(str(memory), "project")], watch=False
    )
    try:
        heard = asyncio.Event()
        client.on_suggestion = lambda _note: heard.set()
        found = await client.search("deep", "restructure invoice", limit=3)
        assert found.mode == "deep" and found.docs[0].relative_path == "billing/invoice-module.md"
        assert any(d.via for d in found.docs)
        got = await client.search("get", path="conventions/test-rules.md")
        assert got.docs[0].body == "Run the golden-file suite with `make golden`."
        with pytest.raises(RpcError) as bad:
            await client.search("explore")
        assert bad.value.code == methods.INVALID_PARAMS
        client.observe("edit", path="db/migrations/0001_init.sql")
        await asyncio.wait_for(heard.wait(), WAIT)
        (note,) = client.suggestions
        assert note.trigger.event == "edit" and note.docs[0].category == "conventions/code"
    finally:
        await client.close()
