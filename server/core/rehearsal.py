"""Ready means ready: the recall path rehearsed when the daemon starts, before it reads
its first message (docs/ranking.md, "Ready means ready").

A daemon's first recall used to pay for what every later one finds done: the
confidence calibration read from its data file, OpenCC's Traditional→Simplified
table built on the first Han character folded, the first calls of the folding,
passage and prompt code, the wire models' first validation and serialization.
Hook-driven hosts recall once per prompt, so the first turn of every session paid
it; and work done after `ready` (on the real snapshot, or deferred until recalls
are quiet) falls on whichever recall comes then.

`rehearse` runs the lexical part of real recalls — tokens of several scripts, the
ranking, its evidence and confidence, the passages, the prompt, the wire objects
and their JSON — over a small corpus of its own, so it needs no index and runs
before `initialize` is even read: whatever follows `initialize` finds it done. It
sends nothing and records nothing. What depends on the real memories is done on the
first index, before `ready`: the longest lists' bitmaps with the index, then
`prepare_index` looks the commonest words up as a recall would (their count codes).
"""

from __future__ import annotations

import json
import logging
import time

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.organise.categories import infer_category
from memory_recall.server.ranking.bm25f.folding import warm as warm_folding
from memory_recall.server.ranking.bm25f.index import Bm25Index
from memory_recall.server.ranking.bm25f.query import QUERY_STOPWORDS
from memory_recall.server.ranking.bm25f.ranker import Bm25Ranker
from memory_recall.server.ranking.confidence.calibration import default_calibration
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS, RankerSpec
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.service import RecallRequest, lexical_phases
from memory_recall.server.roots import Scope
from memory_recall.server.store.writer import warm_up_rules

log = logging.getLogger("memory_recall")

# Memories and queries that reach every branch of the lexical path: plain words,
# identifiers and dates, accents typed or not, Turkish capitals, Simplified and
# Traditional Chinese, Japanese, Korean, Thai, a long body's passage, and a question
# nothing answers.
_MEMORIES = (
    ("Deploy checklist", "How we deploy the service", "Deploy on Tuesdays. " * 90),
    ("billing-api", "getUserName returns the CI user", "Since 2025-04-06 the PR bot reviews."),
    ("Implantação em produção", "Às terças-feiras", "A implantação passa pela revisão."),
    ("İstanbul ofisi", "Kış lastikleri", "Işıl Hanım randevu verir."),
    ("資料庫連線逾時", "数据库迁移的问题", "先检查慢查询。本番環境へのデプロイ手順。"),
    ("배포 서버 설정", "ฐานข้อมูล", "배포 전에 테스트를 실행합니다."),
)
REHEARSAL_QUERIES = (
    "how do we deploy the service",
    "getUserName in billing-api since 6 April 2025, CI and PR",
    "implantacao em producao",
    "İSTANBUL KIŞ",
    "数据库迁移 資料庫連線",
    "本番環境へのデプロイ手順",
    "배포 서버 설정 ฐานข้อมูล",
    "zyxqv plorbix",
)


def rehearsal_corpus() -> CorpusView:
    return CorpusView.of(
        MemoryDocument(
            path=f"/rehearsal/{i}.md",
            relative_path=f"{i}.md",
            scope=Scope.PROJECT,
            type="project",
            title=title,
            description=description,
            body=body,
            mtime_ms=float(i),
        )
        for i, (title, description, body) in enumerate(_MEMORIES)
    )


def _category(
    memory_type: str, title: str, description: str, body: str, declared: str | None
) -> str:
    return infer_category(
        type=memory_type, title=title, description=description, body=body, declared=declared
    ).slug


def rehearse(ranker: RankerSpec) -> float:
    """Run the lexical recall path once per rehearsal query, and compile the rules that
    work done beside recalls reads (the write side's, the topic tree's: a pattern's
    compilation keeps the interpreter lock for milliseconds, which a recall running
    then would wait out); the milliseconds it took."""
    started = time.perf_counter()
    default_calibration()
    warm_folding()
    warm_up_rules(_category)
    snapshot = rehearsal_corpus()
    for i, query in enumerate(REHEARSAL_QUERIES):
        fast, refined = lexical_phases(snapshot, RecallRequest(f"rehearsal-{i}", query), ranker)
        for phase in (fast, refined):
            if phase is not None:
                json.dumps(phase.model_dump(mode="json", by_alias=True))
    elapsed = (time.perf_counter() - started) * 1000
    log.debug("recall path rehearsed in %.0f ms", elapsed)
    return elapsed


# The commonest words a start looks up in the real index before `ready` (their posting
# lists are the longest, so their first lookup costs most; the index keeps the count
# codes of 64 tokens).
COMMON_WORDS_PREPARED = 48


def prepare_index(snapshot: CorpusView, ranker: RankerSpec) -> float:
    """Look the memories' commonest words up in the first index as a recall would, before
    `ready`: what the rehearsal cannot do without the real memories. A first question
    mostly holds some of them; its rare words cost little to look up. The milliseconds
    it took (~0.1 s at 100,000 memories)."""
    started = time.perf_counter()
    index = snapshot.index(ranker.index_kind)
    if isinstance(index, Bm25Index) and isinstance(ranker.rank, Bm25Ranker):
        common = index.common_terms(2 * COMMON_WORDS_PREPARED)
        words = [w for w in common if w not in QUERY_STOPWORDS][:COMMON_WORDS_PREPARED]
        ranker.rank.prepare(index, ranker.tokenize(" ".join(words)))
    elapsed = (time.perf_counter() - started) * 1000
    log.debug("index prepared in %.0f ms", elapsed)
    return elapsed


def rehearse_recall_path() -> None:
    """What a face runs before it reads its first message: the rehearsal, for the
    default ranker and for `spec` (the one a host may choose instead)."""
    for name in dict.fromkeys((DEFAULT_RANKER, "spec")):
        rehearse(RANKERS[name])
