"""A host that answers `memory/select` badly, or reuses ids: no recall may wait past its
deadline, and the client's ids and the daemon's never cross (issue 21).

The host here is the real protocol client with its `memory/select` answers
replaced by raw bodies: the daemon must fail the selection at once on a reply
it cannot use (it would otherwise wait the whole selector deadline), and keep
the requests it sent apart from the requests it received.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from memory_recall.protocol import methods

from tests.memory_files import write_memory
from tests.reliability.harness import WAIT, RecordingClient, error_lines, start_daemon, status_until

CEILING_MS = 8000  # far above the "at once" bound below, so a wait shows
AT_ONCE_S = 1.5
REPRODUCE = "(reproduce: .venv/bin/pytest tests/reliability/test_replies.py)"

_answered_ms: dict[str, float] = {}


@pytest.fixture(scope="module", autouse=True)
def _report(figures: dict[str, str]) -> Iterator[None]:
    yield
    if _answered_ms:
        worst = max(_answered_ms.values())
        figures["malformed memory/select replies"] = (
            f"{len(_answered_ms)} kinds ({', '.join(sorted(_answered_ms))}): each failed the "
            f"selection at once, lexical fallback with the reason, worst recall {worst:.0f} ms "
            f"against a {CEILING_MS} ms deadline {REPRODUCE}"
        )


def make_root(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    for i in range(6):
        write_memory(root, f"deploy-{i}.md", f"deploy note {i}", f"how we deploy, part {i}")
    return root


ReplyBody = Callable[[Any], dict[str, Any]]


class RawHost(RecordingClient):
    """Answers every `memory/select` with `reply(select_id)`, written as it is."""

    reply: ReplyBody | None = None
    on_select: Callable[[dict[str, Any]], None] | None = None

    async def _answer(self, message: dict[str, Any]) -> None:
        if message["method"] == methods.SELECT and self.on_select is not None:
            self.on_select(message)
            return
        if message["method"] == methods.SELECT and self.reply is not None:
            self.send_raw(json.dumps(self.reply(message["id"])).encode())
            return
        await super()._answer(message)


async def raw_host(tmp_path: Path, **kwargs: Any) -> RawHost:
    root = make_root(tmp_path)
    client = await start_daemon(tmp_path, [(root, "project")], client_class=RawHost, **kwargs)
    assert isinstance(client, RawHost)
    await status_until(client, lambda s: s.ready)
    return client


BAD_REPLIES: dict[str, ReplyBody] = {
    "error is text": lambda i: {"jsonrpc": "2.0", "id": i, "error": "boom"},
    "error without a numeric code": lambda i: {
        "jsonrpc": "2.0",
        "id": i,
        "error": {"code": "E42", "message": "no"},
    },
    "error without a code": lambda i: {"jsonrpc": "2.0", "id": i, "error": {"message": "no"}},
    "empty error": lambda i: {"jsonrpc": "2.0", "id": i, "error": {}},
    "no result and no error": lambda i: {"jsonrpc": "2.0", "id": i},
    "jsonrpc 1.0": lambda i: {"jsonrpc": "1.0", "id": i, "result": {"selected": []}},
    "lone surrogate in the result": lambda i: {
        "jsonrpc": "2.0",
        "id": i,
        "result": {"selected": ["\ud800.md"]},
    },
}


@pytest.mark.parametrize("kind", sorted(BAD_REPLIES))
async def test_a_malformed_select_reply_fails_the_selection_at_once(
    tmp_path: Path, kind: str
) -> None:
    client = await raw_host(tmp_path, selector={"kind": "client"}, ceiling_ms=CEILING_MS)
    client.reply = BAD_REPLIES[kind]
    try:
        started = time.perf_counter()
        handle = await client.recall("how do we deploy", initial_wait_ms=0)
        result = await asyncio.wait_for(handle.response, WAIT)
        took_s = time.perf_counter() - started
        refined = result.refined
        assert refined.strategy == "heuristic" and refined.docs, refined
        assert refined.failure and refined.failure.startswith("malformed reply"), refined.failure
        assert took_s < AT_ONCE_S, f"{kind}: the recall waited {took_s:.1f} s"
        status = await client.status()
        assert status.recall.selector_failures == 1
        assert status.runtime and status.runtime.pending_requests == 0
        # The host was not answered with an error about its own reply.
        assert not [m for m in client.received if "error" in m and "method" not in m]
        assert not error_lines(client.stderr_log), error_lines(client.stderr_log)
    finally:
        await client.close()
    _answered_ms[kind] = took_s * 1000


async def test_a_client_reply_with_an_in_flight_recall_id_does_not_break_its_cancel(
    tmp_path: Path,
) -> None:
    """The host's stray reply whose id equals its own recall's id must not unhook the recall."""
    client = await raw_host(tmp_path, selector={"kind": "client"}, ceiling_ms=CEILING_MS)
    selects: list[dict[str, Any]] = []
    client.on_select = selects.append  # the model never answers
    try:
        handle = await client.recall("how do we deploy", initial_wait_ms=0)
        deadline = time.monotonic() + WAIT
        while not selects:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        client.send_raw(
            json.dumps({"jsonrpc": "2.0", "id": handle.request_id, "result": {}}).encode()
        )
        await asyncio.sleep(0.1)
        started = time.perf_counter()
        handle.cancel()
        with pytest.raises(Exception) as cancelled:
            await asyncio.wait_for(handle.response, WAIT)
        assert getattr(cancelled.value, "code", None) == methods.REQUEST_CANCELLED
        assert time.perf_counter() - started < AT_ONCE_S
        status = await client.status()
        assert status.recall.cancelled == 1 and status.recall.active == 0
    finally:
        await client.close()


async def test_a_client_request_reusing_a_pending_select_id_does_not_break_the_select(
    tmp_path: Path,
) -> None:
    """The host may number its requests as it likes, even as the daemon's pending one."""
    client = await raw_host(tmp_path, selector={"kind": "client"}, ceiling_ms=CEILING_MS)
    selects: list[dict[str, Any]] = []

    def on_select(message: dict[str, Any]) -> None:
        selects.append(message)
        if len(selects) > 1:  # the host's own recall's selection: answered at once
            client.send_message({"jsonrpc": "2.0", "id": message["id"], "result": {"selected": []}})

    client.on_select = on_select
    try:
        handle = await client.recall("how do we deploy", initial_wait_ms=0)
        deadline = time.monotonic() + WAIT
        while not selects:
            assert time.monotonic() < deadline
            await asyncio.sleep(0.01)
        select = selects[0]
        chosen = select["params"]["candidates"][-1]["path"]
        # A recall of the host's own, under the id of the daemon's pending select.
        client.send_message(
            {
                "jsonrpc": "2.0",
                "id": select["id"],
                "method": methods.RECALL,
                "params": {"query": "deploy note 3", "token": "same-id"},
            }
        )
        same = await client.raw_response(select["id"])
        assert same["result"]["token"] == "same-id", same
        client.send_message(
            {"jsonrpc": "2.0", "id": select["id"], "result": {"selected": [chosen]}}
        )
        result = await asyncio.wait_for(handle.response, WAIT)
        assert result.refined.strategy == "model", result.refined
        assert [d.path for d in result.refined.docs] == [chosen]
    finally:
        await client.close()
