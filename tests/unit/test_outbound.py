"""What leaves for a model is redacted, whoever built the request (store/outbound.py)."""

from __future__ import annotations

import asyncio

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.models import SelectionRequest
from memory_recall.server.models.complete import CompletionRequest
from memory_recall.server.roots import Scope
from memory_recall.server.store.outbound import GuardedCompleter, GuardedSelector

TOKEN = "ghp_" + "a1B2c3D4e5" * 3 + "a1B2c3"


class Recorder:
    kind = "recording"

    def __init__(self) -> None:
        self.seen: list[object] = []

    async def complete(self, request: CompletionRequest) -> str:
        self.seen.append(request)
        return "{}"

    async def select(self, request: SelectionRequest) -> list[str]:
        self.seen.append(request)
        return [doc.path for doc in request.candidates]


def test_a_completion_never_carries_a_credential() -> None:
    inner = Recorder()
    request = CompletionRequest(
        "extract", [{"role": "user", "content": f"the token is {TOKEN}"}], {}, 10
    )
    asyncio.run(GuardedCompleter(inner).complete(request))
    (sent,) = inner.seen
    assert TOKEN not in str(sent) and "[REDACTED:github_token]" in str(sent)


def test_a_selection_never_carries_a_credential_and_keeps_its_paths() -> None:
    inner = Recorder()
    doc = MemoryDocument("/r/a.md", "a.md", Scope.PROJECT, "project", "CI", f"uses {TOKEN}", "", 0)
    chosen = asyncio.run(
        GuardedSelector(inner).select(SelectionRequest(f"why {TOKEN}", [doc], 5, []))
    )
    assert chosen == ["/r/a.md"]
    assert TOKEN not in str(inner.seen[0])
