"""`memory-recall dev delivery`: what a host that waits 100 ms actually gets.

A benchmark, not a test. The eval corpus is written out as a memory tree and
served by the real daemon over stdio with a `client` selector. The host side
answers `memory/select` after a fixed latency with the corpus labels (an
oracle: this measures delivery mechanics, not ranking). Per latency it prints:

- first-turn rate: answerable cases whose 100 ms initial delivery holds a
  relevant memory (on a tool-free turn, that is all the turn ever gets),
  over all answerable cases and over the lexically answerable ones (a
  relevant memory in the lexical top 2);
- any-delivery rate: a relevant memory in either phase;
- duplicates: memories delivered in both phases of one request (must be 0);
- silence: no-result cases with nothing delivered at all.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from memory_recall.protocol.client import MemoryRecallClient
from memory_recall.protocol.messages import SelectParams
from memory_recall.server.dev.evaluation import EvalCorpus, load_corpus
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS
from memory_recall.server.ranking.shortlist import build_shortlist

LATENCIES_MS = (40, 250, 600, 1500, 3000)
INITIAL_WAIT_MS = 100


def write_tree(corpus: EvalCorpus, root: Path) -> dict[str, str]:
    """One file per corpus doc, same mtime for all; returns path → doc id."""
    by_path = {}
    for i, doc in enumerate(corpus.documents):
        path = root / f"{i:04d}.md"
        path.write_text(
            f"---\nname: {doc.title}\ndescription: {doc.description}\ntype: {doc.type}\n---\n"
            f"{doc.body}\n",
            encoding="utf-8",
        )
        by_path[str(path)] = doc.path
    return by_path


async def measure(
    corpus: EvalCorpus, latency_ms: float, root: Path, ids: dict[str, str]
) -> dict[str, Any]:
    labels = {c.query: c for c in corpus.cases}
    path_of = {doc_id: path for path, doc_id in ids.items()}

    async def oracle(params: SelectParams) -> list[str]:
        await asyncio.sleep(latency_ms / 1000)
        case = labels[params.query]
        manifest = {c.path for c in params.candidates}
        return [path_of[i] for i in case.relevant_ids if path_of[i] in manifest][: params.limit]

    spec = RANKERS[DEFAULT_RANKER]
    snapshot = corpus.snapshot
    client = await MemoryRecallClient.start(
        roots=[(str(root), "project")], selector={"kind": "client"}, select_handler=oracle,
        watch=False,
    )  # fmt: skip
    rows = {"answerable": 0, "lexical": 0, "first": 0, "first_lexical": 0, "any": 0,
            "duplicates": 0, "no_result": 0, "silent": 0}  # fmt: skip
    try:
        while not (await client.status()).ready:
            await asyncio.sleep(0.02)
        for case in corpus.cases:
            handle = await client.recall(
                case.query, initial_wait_ms=INITIAL_WAIT_MS, recent_tools=case.recent_tools
            )
            initial = {ids[d.path] for d in handle.initial.docs} if handle.initial else set()
            refined_note = await handle.refined
            refined = [ids[d.path] for d in refined_note.docs] if refined_note else []
            fast_note = (
                handle.fast.result() if handle.fast.done() and not handle.fast.cancelled() else None
            )
            fast = {ids[d.path] for d in fast_note.docs} if fast_note else set()
            rows["duplicates"] += len(fast & set(refined))
            if case.answerable:
                relevant = set(case.relevant_ids)
                top2 = build_shortlist(
                    snapshot, case.query, recent_tools=case.recent_tools,
                    ranker=spec.rank, tokenizer=spec.tokenize,
                ).fast  # fmt: skip
                lexical = bool(relevant & {s.document.path for s in top2})
                rows["answerable"] += 1
                rows["lexical"] += lexical
                rows["first"] += bool(initial & relevant)
                rows["first_lexical"] += lexical and bool(initial & relevant)
                rows["any"] += bool((fast | set(refined)) & relevant)
            else:
                rows["no_result"] += 1
                rows["silent"] += not fast and not refined
    finally:
        await client.close()
    return {"latencyMs": latency_ms, **rows}


async def run(corpus_path: str, latencies: Sequence[float]) -> list[dict[str, Any]]:
    corpus = load_corpus(corpus_path)
    with tempfile.TemporaryDirectory(prefix="memory-recall-delivery-") as tmp:
        ids = write_tree(corpus, Path(tmp))
        return [await measure(corpus, latency, Path(tmp), ids) for latency in latencies]


def pct(n: int, d: int) -> str:
    return f"{100 * n / d:5.1f}%" if d else "  —  "


def main(corpus_path: str, latencies: Sequence[float], as_json: bool) -> int:
    rows = asyncio.run(run(corpus_path, latencies))
    if as_json:
        print(json.dumps(rows, indent=2))
        return 0
    print(f"host initial wait {INITIAL_WAIT_MS} ms; oracle model answers memory/select after L ms")
    print(
        "L ms    first-turn (all)  first-turn (lexical)  any-delivery  duplicates  no-result silent"
    )
    for r in rows:
        print(
            f"{r['latencyMs']:<7.0f} {pct(r['first'], r['answerable']):>16}  "
            f"{pct(r['first_lexical'], r['lexical']):>20}  {pct(r['any'], r['answerable']):>12}  "
            f"{r['duplicates']:>10}  {pct(r['silent'], r['no_result']):>16}"
        )
    return 0
