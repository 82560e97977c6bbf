"""The memory network, memory/feedback and memory/explain through the real daemon."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from memory_recall.protocol.client import MemoryRecallClient, RpcError
from memory_recall.protocol.messages import SelectParams

WAIT = 30  # generous: seven test runs share this 2-core machine


def write(root: Path, rel: str, title: str, description: str, body: str, **front: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    extra = "".join(f"{k}: {v}\n" for k, v in front.items())
    path.write_text(
        f"---\nname: {title}\ndescription: {description}\ntype: project\n{extra}---\n{body}\n",
        encoding="utf-8",
    )
    return path


@pytest.fixture
def memories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MEMORY_RECALL_STATE_DIR", str(tmp_path / "state"))
    root = tmp_path / "mem"
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
    write(
        root, "infra/deploys.md", "Deploy freeze", "no deploys on Friday afternoons",
        "Production deploys stop on Friday at 15:00.",
    )  # fmt: skip
    return root


async def start(root: Path, **kwargs: Any) -> MemoryRecallClient:
    client = await asyncio.wait_for(
        MemoryRecallClient.start(
            roots=[(str(root), "project")], watch=True, stderr=sys.stderr, **kwargs
        ),
        WAIT,
    )
    for _ in range(1500):
        status = await client.status()
        if status.ready and status.network is not None and status.network.memories:
            return client
        await asyncio.sleep(0.02)
    raise AssertionError("daemon and its network never ready")


QUERY = "restructure the invoice module"


async def test_a_network_find_reaches_the_models_candidates_with_its_path(memories: Path) -> None:
    seen: list[SelectParams] = []

    async def select(params: SelectParams) -> list[str]:
        seen.append(params)
        return [c.path for c in params.candidates if c.via]

    client = await start(memories, selector={"kind": "client"}, select_handler=select)
    try:
        handle = await client.recall(QUERY, token="t-net")
        result = await asyncio.wait_for(handle.response, WAIT)
        (manifest,) = seen
        by_path = {c.path: c for c in manifest.candidates}
        rules = str(memories / "conventions/test-rules.md")
        via = by_path[rules].via
        assert via is not None
        assert via[0].from_ == str(memories / "billing/invoice-module.md")
        assert (via[0].kind, via[0].direction) == ("link", "forward")
        assert by_path[str(memories / "billing/invoice-module.md")].via is None  # lexical hit
        # One lexical hit leaves the fast result a free place: the memory it links to
        # fills it (the conservative fast rule), with its path.
        assert result.fast is not None
        assert [d.path for d in result.fast.docs] == [
            str(memories / "billing/invoice-module.md"),
            rules,
        ]
        assert result.fast.docs[1].via is not None and result.fast.docs[0].via is None
        assert result.refined is not None and result.refined.status == "already_delivered"
        # explain by token: the network-only find
        e = await client.explain(rules, token="t-net")
        assert e.network is not None and e.network.seed.endswith("invoice-module.md")
        assert e.phases[0].delivered and "network" in e.summary
        hit = await client.explain("billing/invoice-module.md", token="t-net")
        assert hit.rank == 1 and hit.phases[0].phase == "fast" and hit.phases[0].delivered
        assert sum(p.value for p in hit.parts) == pytest.approx(hit.score)
        miss = await client.explain(str(memories / "infra/deploys.md"), token="t-net")
        assert not any(p.delivered for p in miss.phases) and miss.summary.startswith("Not sent")
    finally:
        await client.close()


async def test_feedback_feeds_status_statistics_and_co_use_links(memories: Path) -> None:
    client = await start(memories)
    try:
        handle = await client.recall(QUERY, token="t1")
        result = await asyncio.wait_for(handle.response, WAIT)
        assert result.refined is not None
        delivered = [d.path for d in result.refined.docs]
        assert str(memories / "billing/invoice-module.md") in delivered
        deploys = str(memories / "infra/deploys.md")
        # the docs/network.md notification, then the same as a request (answered)
        client.feedback("t1", used=[delivered[0]], ignored=delivered[1:])
        answer = await client.feedback_request(
            "t1", used=[delivered[0], deploys], ignored=["/nowhere.md"]
        )
        assert answer.recorded == 2 and answer.unknown == ["/nowhere.md"]
        assert answer.co_use_links == 1
        status = None
        for _ in range(200):  # the store is written by a task of its own
            status = await client.status()
            if status.usage and sum(c.used for c in status.usage) >= 3:
                break
            await asyncio.sleep(0.05)
        assert status is not None and status.usage is not None
        assert sum(c.used for c in status.usage) == 3
        assert sum(c.recalled for c in status.usage) >= len(delivered)
        assert sum(c.delivered for c in status.usage) >= len(delivered)
        assert sum(c.memories for c in status.usage) == 3
        assert status.network is not None and status.network.co_use_pairs == 1
        # co-use is an edge: the deploy freeze is now reached from the invoice module
        e = await client.explain(deploys, query=QUERY)
        assert e.network is not None and e.network.via[0].kind == "coUse"
    finally:
        await client.close()
    # a restart loads the co-use links back from the state store
    again = await start(memories)
    try:
        status = await again.status()
        assert status.network is not None
        assert status.network.co_use_pairs == 1 and status.network.loaded_from_state
    finally:
        await again.close()


async def test_the_network_follows_file_changes(memories: Path) -> None:
    client = await start(memories)
    try:
        write(
            memories, "infra/deploys.md", "Deploy freeze", "no deploys on Friday afternoons",
            "Production deploys stop on Friday at 15:00.",
            related="[conventions/test-rules.md]",
        )  # fmt: skip
        deploys = str(memories / "infra/deploys.md")
        for _ in range(200):
            e = await client.explain(deploys, query=QUERY)
            if e.network is not None:
                break
            await asyncio.sleep(0.05)
        assert e.network is not None and e.rank is None  # reached, not matched
        assert [h.kind for h in e.network.via] == ["link", "related"]
        assert e.network.via[1].to == deploys
    finally:
        await client.close()


async def test_explain_and_feedback_reject_bad_params_clearly(memories: Path) -> None:
    client = await start(memories)
    try:
        with pytest.raises(RpcError) as err:
            await client.request("memory/explain", {"path": "x.md"})
        assert err.value.code == -32602 and "token" in err.value.message
        with pytest.raises(RpcError) as err:
            await client.request("memory/explain", {"path": "x.md", "token": "never"})
        assert err.value.code == -32602 and "never" in err.value.message
        with pytest.raises(RpcError) as err:
            await client.request("memory/feedback", {"used": "not-a-list"})
        assert err.value.code == -32602 and "used" in err.value.message
        gone = await client.explain("nothing-here.md", query=QUERY)
        assert not gone.found
        assert (await client.status()).ready  # the daemon is still serving
    finally:
        await client.close()
