"""`memory-recall demo DIR`: a real stdio session against a memory tree.

Starts the daemon as an editor would (a child process speaking JSON-RPC on
stdio), sends recalls in several languages and one with no answer, and prints
what arrives in each phase and when. The host side plays the part of an agent
whose model answers `memory/select` after a delay (a network round trip).
No model is called: the stand-in reads the manifest as a model would — the
query and each candidate's description — and picks what the daemon's own
BM25F ranker finds relevant among them, silent when nothing is. That is a
fair stand-in for a good model on a demo, not a claim about any real one.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from pathlib import Path

from memory_recall.protocol.client import MemoryRecallClient, RecallHandle
from memory_recall.protocol.messages import PhaseNotification, SelectParams
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.shortlist import build_shortlist
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.roots import Scope

# The stand-in model's reading of the manifest: the lexical ranker that knows
# every script and stays silent when a query's rare words match nothing.
STAND_IN_RANKER = RANKERS["bm25f"]
# A good model picks what clearly answers the question, not everything that
# shares a word (or a stem: "redis" in "vendredi") with it: only candidates
# scoring close to the best match are kept.
STAND_IN_RELATIVE_CUT = 0.9

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


def _count(n: int, noun: str, plural: str | None = None) -> str:
    """`1 doc`, `2 docs`: what the demo says is read by newcomers first."""
    return f"{n} {noun if n == 1 else plural or noun + 's'}"


def _roots(directory: Path) -> list[tuple[str, str]]:
    project, user = directory / "project", directory / "user"
    if project.is_dir() or user.is_dir():
        return [(str(p), s) for p, s in ((project, "project"), (user, "user")) if p.is_dir()]
    return [(str(directory), "project")]


def stand_in_selection(params: SelectParams) -> list[str]:
    """What the demo's stand-in model selects from a `memory/select` manifest.

    It reads what a model reads there: each candidate's path (its file name
    usually names the subject) and description.
    """
    manifest = [
        MemoryDocument(
            path=c.path,
            relative_path=c.path,
            scope=Scope.PROJECT,
            type=c.type,
            title=c.path.replace("/", " ").replace("-", " ").replace("_", " "),
            description=c.description,
            body="",
            mtime_ms=c.mtime_ms,
        )
        for c in params.candidates
    ]
    shortlist = build_shortlist(
        CorpusView.of(manifest),
        params.query,
        ranker=STAND_IN_RANKER.rank,
        tokenizer=STAND_IN_RANKER.tokenize,
    )
    best = sorted(shortlist.ranked, key=lambda scored: -scored.score)
    if not best:
        return []
    floor = STAND_IN_RELATIVE_CUT * best[0].score
    return [s.document.path for s in best[: params.limit] if s.score >= floor]


def _print_phase(label: str, note: PhaseNotification | None, at_ms: float) -> None:
    if note is None:
        print(f"  {label:8} nothing ({at_ms:.0f} ms)")
        return
    extra = f", fallback because {note.failure}" if note.failure else ""
    print(
        f"  {label:8} {at_ms:6.1f} ms  {note.strategy}/{note.status}{extra}, "
        f"{_count(len(note.docs), 'doc')}"
    )
    for doc in note.docs:
        print(f"             - [{doc.scope}/{doc.type}] {doc.title}  ({doc.relative_path})")


async def run_demo(directory: Path, queries: Sequence[str], model_delay_ms: float) -> int:
    async def simulated_model(params: SelectParams) -> list[str]:
        await asyncio.sleep(model_delay_ms / 1000)
        return stand_in_selection(params)

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
        f"{_count(status.documents, 'memory', 'memories')} in "
        f"{_count(len(status.roots), 'root')}, "
        f"{len(status.skipped)} skipped, watcher {status.watcher.state}"
    )
    for skipped in status.skipped:
        print(f"  skipped {skipped.path}: {skipped.reason}")
    print(
        f"host waits at most 100 ms; no model is called: a stand-in (BM25F over the "
        f"manifest's paths and descriptions) answers memory/select after {model_delay_ms:.0f} ms\n"
    )
    for query in queries:
        sent = time.perf_counter()
        handle: RecallHandle = await client.recall(query)
        initial_ms = 1000 * (time.perf_counter() - sent)
        print(f"» {query}")
        if handle.initial is not None and handle.initial.docs:
            label = "fast" if handle.initial_reason == "fast" else handle.initial_reason
            _print_phase(label, handle.initial, handle.initial.elapsed_ms)
        else:
            print(
                f"  initial  nothing matched; after {initial_ms:.0f} ms "
                "the host sends its prompt without memory"
            )
        refined = await handle.refined
        _print_phase("refined", refined, refined.elapsed_ms if refined else 0)
        print()
    await client.close()
    return 0


def main(directory: Path, model_delay_ms: float = 300) -> int:
    return asyncio.run(run_demo(directory, DEMO_QUERIES, model_delay_ms))
