"""The `default` ranker (issue 7) chosen by a host, through the real process."""

from __future__ import annotations

from pathlib import Path

import pytest
from memory_recall.protocol import limits, methods

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


async def test_the_default_ranker_serves_recalls(client, memory):
    ready = await start(client, [(memory, "project")], ranker="default")
    assert ready["ranker"] == "default"

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


async def test_the_longest_query_is_answered(client, memory):
    await start(client, [(memory, "project")], ranker="default")
    # One 32k-letter word once took the default tokenizer 20 s (quadratic backtracking).
    result = await request(client, methods.RECALL, {"query": "x" * limits.MAX_QUERY_CHARS})
    assert result["refined"]["status"] == "no_relevant_results"
    mixed = ("getUserName snake_case_id a/b/c.py " * 1000)[: limits.MAX_QUERY_CHARS]
    result = await request(client, methods.RECALL, {"query": mixed})
    assert result["refined"]["status"] in ("delivered", "no_relevant_results")
