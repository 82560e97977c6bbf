"""Semantic recall through the real daemon: embeddings from a local OpenAI-compatible
endpoint (the deterministic double of server/dev/embed_server), vectors in the state
store, a memory found that shares no word with the query, a change re-embedded, and a
broken endpoint that costs the recall nothing but its semantic part."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from memory_recall.protocol import methods
from memory_recall.server.dev.embed_server import Behaviour, ConceptEncoder, EmbedServer

from tests.e2e.conftest import WAIT, request, start
from tests.memory_files import write_memory

CONCEPTS = {"replacing": "migrate", "migrating": "migrate", "login": "auth", "auth": "auth",
            "layer": "middleware", "middleware": "middleware"}  # fmt: skip


@pytest.fixture
def endpoint():
    with EmbedServer(ConceptEncoder(CONCEPTS)) as server:
        yield server


async def wait_embedded(client, count: int) -> dict:
    async def poll() -> dict:
        while True:
            status = await request(client, methods.STATUS, {})
            semantic = status.get("semantic") or {}
            if semantic.get("documents") == count and not semantic.get("pending"):
                return status
            await asyncio.sleep(0.05)

    return await asyncio.wait_for(poll(), WAIT)


async def test_semantic_recall_end_to_end(client, tmp_path: Path, endpoint: EmbedServer):
    root = tmp_path / "mem"
    write_memory(root, "auth.md", "Auth middleware migration", "migrating the auth middleware")
    write_memory(root, "deploy.md", "Deploy checklist", "how we deploy the web layer")
    for i in range(4):
        write_memory(root, f"n{i}.md", f"Note {i}", f"about topic{i}")
    asked: list[dict] = []

    @client.feature(methods.SELECT)
    async def select(params):
        asked.append(params)
        found = [c for c in params["candidates"] if c.get("similarity") is not None]
        best = max(found, key=lambda c: c["similarity"], default=None)
        return {"selected": [best["path"]] if best else []}

    # With a selector the refined phase waits for the query vector up to the endpoint's
    # deadline (a loaded test machine may miss the fast phase's 60 ms).
    await start(
        client,
        [(root, "project")],
        watch=True,
        selector={"kind": "client"},
        embeddings={"url": endpoint.url, "model": "double"},
    )
    status = await wait_embedded(client, 6)
    assert status["semantic"]["model"] == "double"

    result = await request(client, methods.RECALL, {"query": "replacing the login layer"})
    # deploy.md matches one word of three: delivered fast only if the calibration is sure
    # enough of it (with its confidence), and the strong semantic hit fills the free slot
    # beside it; a fast phase the gate leaves silent stays silent (docs/ranking.md).
    fast_docs = result["fast"]["docs"] if result["fast"] else []
    fast = {d["path"].rsplit("/", 1)[-1]: d for d in fast_docs}
    assert set(fast) <= {"auth.md", "deploy.md"}
    assert "deploy.md" in fast or not fast
    assert "deploy.md" not in fast or 0 < fast["deploy.md"]["confidence"] <= 1
    delivered = fast_docs + result["refined"]["docs"]
    filled = [d for d in delivered if d["similarity"] is not None]
    assert filled[0]["path"].endswith("auth.md") and filled[0]["similarity"] > 0.5
    similar = {c["path"].rsplit("/", 1)[-1]: c.get("similarity") for c in asked[0]["candidates"]}
    assert similar["auth.md"] > 0.5

    # A change is embedded again, in the background, alone.
    sent = endpoint.texts
    write_memory(root, "n0.md", "Note 0", "about something new")

    async def re_embedded() -> None:
        while endpoint.texts == sent:
            await asyncio.sleep(0.05)

    await asyncio.wait_for(re_embedded(), WAIT)
    assert endpoint.texts == sent + 1

    # A broken endpoint: the lexical result, on time, and the reason.
    endpoint.behaviour = Behaviour(status=500)
    result = await request(client, methods.RECALL, {"query": "replacing the login layer"})
    # The lexical result alone, on time: nothing, or the one-word match if it is sure of it.
    fast_docs = result["fast"]["docs"] if result["fast"] else []
    assert {d["path"].rsplit("/", 1)[-1] for d in fast_docs} <= {"deploy.md"}
    assert "HTTP 500" in result["refined"]["semantic"]["failure"]
    assert all(d["similarity"] is None for d in result["refined"]["docs"])


async def test_without_embeddings_the_wire_has_no_semantic_part(client, tmp_path: Path):
    root = tmp_path / "mem"
    write_memory(root, "deploy.md", "Deploy checklist", "how we deploy the web layer")
    status = await start(client, [(root, "project")])
    assert status["semantic"] is None
    result = await request(client, methods.RECALL, {"query": "deploy layer"})
    assert result["refined"]["semantic"] is None
    assert result["refined"]["docs"][0]["similarity"] is None
