"""The `bm25f` ranker, the daemon's default, through the real process: its answers, the
passage it delivers of a long memory, and the CLI printing what it sends."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from memory_recall.protocol import limits, methods
from memory_recall.server.recall.prompt import quoted

from tests.e2e.conftest import request, start
from tests.memory_files import write_memory


@pytest.fixture
def memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    write_memory(root, "owner.md", title="billing-api owner",
                 description="Julien owns billing-api while Jihoon is on leave")  # fmt: skip
    write_memory(root, "retry.md", title="Retries", description="how jobs retry",
                 body="`retryWithBackoff` in services/jobs/retry.ts caps at 5 attempts.")  # fmt: skip
    write_memory(root, "billing.md", title="Billing notes", description="invoices and the api",
                 body="The billing service exports invoices nightly; its api is internal.")  # fmt: skip
    write_memory(root, "cert.md", title="Сертификат", description="продление сертификата",
                 body="Сертификат для api.example.com продлевает Ирина.")  # fmt: skip
    write_memory(root, "deploy.md", title="部署流程", description="发布前先跑迁移")
    return root


def paths(phase: dict, root: Path) -> list[str]:
    return [str(Path(d["path"]).relative_to(root)) for d in phase["docs"]]


async def test_bm25f_is_the_default_and_serves_recalls(client, memory):
    ready = await start(client, [(memory, "project")])
    assert ready["ranker"] == "bm25f"

    async def recall(query: str) -> list[str]:
        result = await request(client, methods.RECALL, {"query": query})
        return paths(result["refined"], memory)

    # A compound identifier outweighs its common parts.
    assert (await recall("who owns billing-api now?"))[0] == "owner.md"
    # camelCase parts, inflected Russian, Chinese pairs.
    assert (await recall("where is the retry with backoff helper"))[0] == "retry.md"
    assert (await recall("кто продлевает сертификаты?"))[0] == "cert.md"
    assert (await recall("部署之前要做什么"))[0] == "deploy.md"
    # Function words alone, or a question whose specific words are nowhere: silence.
    assert await recall("what did you say about that?") == []
    assert await recall("what is the wifi password of the office") == []


async def test_the_old_name_is_accepted(client, memory):
    ready = await start(client, [(memory, "project")], ranker="default")
    assert ready["ranker"] == "bm25f"


async def test_the_longest_query_is_answered(client, memory):
    await start(client, [(memory, "project")])
    # One 32k-letter word once took the default tokenizer 20 s (quadratic backtracking).
    result = await request(client, methods.RECALL, {"query": "x" * limits.MAX_QUERY_CHARS})
    assert result["refined"]["status"] == "no_relevant_results"
    mixed = ("getUserName snake_case_id a/b/c.py " * 1000)[: limits.MAX_QUERY_CHARS]
    result = await request(client, methods.RECALL, {"query": mixed})
    assert result["refined"]["status"] in ("delivered", "no_relevant_results")


LOG_START = "Session log of the release week.\n\n"
FILLER = "".join(f"Day {i}: standup, reviews and a quiet deploy.\n" for i in range(60))
EVIDENCE = "The flaky checkout test was fixed by pinning the xdist worker count to 4."


@pytest.fixture
def long_memory(tmp_path: Path) -> Path:
    root = tmp_path / "memory"
    body = LOG_START + FILLER + EVIDENCE + "\n" + FILLER
    write_memory(root, "log.md", title="Release week log", description="daily notes", body=body)
    write_memory(
        root, "short.md", title="Coffee", description="the office machine", body="Descale it."
    )
    return root


async def test_a_long_memory_delivers_the_passage_that_matched(client, long_memory):
    await start(client, [(long_memory, "project")])
    result = await request(
        client, methods.RECALL, {"query": "how was the flaky checkout test fixed"}
    )
    doc = result["refined"]["docs"][0]
    assert doc["relativePath"] == "log.md" and doc["truncated"]
    assert EVIDENCE in doc["body"] and len(doc["body"]) <= limits.BODY_WINDOW_CHARS
    whole = (long_memory / "log.md").read_text(encoding="utf-8").split("---\n", 2)[2].strip()
    start_, end = doc["excerpt"]["start"], doc["excerpt"]["end"]
    assert whole[start_:end] == doc["body"] and start_ > 0
    assert whole[start_ - 1] == "\n"  # cut on a line boundary
    assert doc["body"].startswith(EVIDENCE)  # opening with what matched, then what follows
    assert quoted(f"… {doc['body']} …") in result["refined"]["prompt"]  # quoted as data


async def test_spec_keeps_its_exact_window(client, long_memory):
    ready = await start(client, [(long_memory, "project")], ranker="spec")
    assert ready["ranker"] == "spec"
    result = await request(client, methods.RECALL, {"query": "release week log"})
    doc = result["refined"]["docs"][0]
    assert doc["excerpt"] == {"start": 0, "end": limits.BODY_WINDOW_CHARS}
    assert len(doc["body"]) == limits.BODY_WINDOW_CHARS


CLI = [sys.executable, "-m", "memory_recall.server", "recall"]


async def test_the_cli_prints_what_the_daemon_sends(client, memory, long_memory, tmp_path):
    roots = [(long_memory, "project"), (memory, "user")]
    await start(client, roots, selector={"kind": "client"})

    @client.feature(methods.SELECT)
    def select(_params):
        return {"selected": []}

    query = "how was the flaky checkout test fixed, and who owns billing-api"
    daemon = await request(client, methods.RECALL, {"query": query})
    args = [arg for path, scope in roots for arg in ("--root", f"{path}:{scope}")]
    printed = subprocess.run(
        [*CLI, query, *args, "--json"], capture_output=True, text=True, timeout=60, check=True
    )
    cli = json.loads(printed.stdout)

    def sent(phase):
        return [(d["path"], d["body"], d["excerpt"], d["score"]) for d in phase["docs"]]

    assert daemon["fast"] is not None
    assert sent(cli["fast"]) == sent(daemon["fast"])
    assert cli["fast"]["prompt"] == daemon["fast"]["prompt"]
