"""`memory-recall demo DIR`: a real stdio session against a memory tree.

Starts the daemon as an editor would (a child process speaking JSON-RPC on
stdio), sends recalls in several languages and one with no answer, and prints
what arrives in each phase and when. The host side plays the part of an agent
whose model answers `memory/select` after a delay — a stand-in for a network
round trip, clearly not a real model: it keeps the manifest entries whose
description shares a token with the query.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

from memory_recall.protocol.client import MemoryRecallClient, RecallHandle
from memory_recall.protocol.messages import PhaseNotification, SelectParams
from memory_recall.server.tokens import normalize, query_tokens, raw_tokens

DEMO_QUERIES = (
    "Can I deploy the release on Friday afternoon?",
    "Redis 缓存雪崩那次事故是怎么处理的？",
    "本番障害の報告はどこ？",
    "배포 대시보드 링크",
    "Что случилось, когда закончилось место на диске?",
    "règles de rédaction de la documentation",
    "ο πιστοποιητικό έληξε",
    "zebra giraffe",
)


def _roots(directory: Path) -> list[tuple[str, str]]:
    project, user = directory / "project", directory / "user"
    if project.is_dir() or user.is_dir():
        return [(str(p), s) for p, s in ((project, "project"), (user, "user")) if p.is_dir()]
    return [(str(directory), "project")]


def _print_phase(label: str, note: PhaseNotification | None, at_ms: float) -> None:
    if note is None:
        print(f"  {label:8} nothing ({at_ms:.0f} ms)")
        return
    extra = f", fallback because {note.failure}" if note.failure else ""
    print(
        f"  {label:8} {at_ms:6.1f} ms  {note.strategy}/{note.status}{extra}, {len(note.docs)} docs"
    )
    for doc in note.docs:
        print(f"             - [{doc.scope}/{doc.type}] {doc.title}  ({doc.relative_path})")


async def run_demo(directory: Path, queries: Sequence[str], model_delay_ms: float) -> int:
    async def simulated_model(params: SelectParams) -> list[str]:
        await asyncio.sleep(model_delay_ms / 1000)
        wanted = set(query_tokens(params.query))
        return [
            c.path for c in params.candidates if wanted & set(raw_tokens(normalize(c.description)))
        ][: params.limit]

    started = time.perf_counter()
    client = await MemoryRecallClient.start(
        roots=_roots(directory), selector={"kind": "client"}, select_handler=simulated_model
    )
    status = await client.status()
    while not status.ready:
        await asyncio.sleep(0.02)
        status = await client.status()
    print(
        f"daemon ready in {1000 * (time.perf_counter() - started):.0f} ms: "
        f"{status.documents} memories in {len(status.roots)} roots, "
        f"{len(status.skipped)} skipped, watcher {status.watcher.state}"
    )
    for skipped in status.skipped:
        print(f"  skipped {skipped.path}: {skipped.reason}")
    print(
        f"host waits at most 100 ms; the stand-in model (description word overlap) "
        f"answers memory/select after {model_delay_ms:.0f} ms\n"
    )
    for query in queries:
        sent = time.perf_counter()
        handle: RecallHandle = await client.recall(query)
        initial_ms = 1000 * (time.perf_counter() - sent)
        print(f"» {query}")
        if handle.initial_reason == "fast":
            _print_phase("fast", handle.initial, handle.initial.elapsed_ms if handle.initial else 0)
        else:
            print(f"  initial  {handle.initial_reason} after {initial_ms:.0f} ms")
        refined = await handle.refined
        _print_phase("refined", refined, refined.elapsed_ms if refined else 0)
        print()
    await client.close()
    return 0


def main(directory: str, model_delay_ms: float = 300) -> int:
    return asyncio.run(run_demo(Path(directory), DEMO_QUERIES, model_delay_ms))
