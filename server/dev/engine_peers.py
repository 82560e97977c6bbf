"""Search engines beside today's index, on the same memories and queries (`memory-recall
dev bench --peers`): what issue 33 asked to measure before choosing an engine.

Each peer indexes the project's own terms per field (bm25f's: `document_terms`, acronyms,
CJK pairs and folded forms included), so tokenisation is not what is compared; each term
is written as an opaque word (`t` + its number in one shared vocabulary), which every
engine's simplest tokenizer keeps whole. A query is bm25f's scored tokens, matched:

- **exact**: as whole terms (what the engines do natively; bm25f matches a token inside
  longer words too, `deploy` in `deployment`, so this is less work than bm25f's);
- **expanded** (tantivy only): each token and every vocabulary word that holds it (today's
  index's own gram lookup, timed in), the engine's top 200 then re-scored with bm25f's
  definition document by document (`bm25f.scan`) — the "candidates from the engine, exact
  scores on them" design. Its time is a floor: exact scores would also need the
  corpus-wide statistics (IDF, average length) plumbed into the scan, which this does not.

Figures: build time, query p50 / p95 (in process, the same rounds for all), the
process's RSS growth while the engine is held, its size on disk where it has one, and
the time to open it again from disk (a warm start). Today's index (`bm25f`) is timed as a
recall ranks: the shortlist of `RecallQuery`, silence and confidence included.
Figures are printed, never asserted. The peers are the `engines` extra, never the default
install; a peer that is not installed is reported as missing.
"""

from __future__ import annotations

import gc
import os
import shutil
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.bm25f.index import Bm25Index
from memory_recall.server.ranking.bm25f.query import function_words, scored_tokens
from memory_recall.server.ranking.bm25f.scan import rank_scan
from memory_recall.server.ranking.bm25f.terms import document_terms, whole_body
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.shortlist import RecallQuery
from memory_recall.server.ranking.view import CorpusView

CANDIDATES = 200  # the engine's candidates re-scored: the model's manifest size
FIELD_BOOSTS = (4.0, 3.0, 1.0)  # title, description, body: the spec ranker's weights


@dataclass
class PeerResult:
    engine: str
    docs: int
    build_s: float
    p50_ms: float
    p95_ms: float
    rss_mb: float  # the process's RSS growth while the engine is held
    disk_mb: float | None
    open_ms: float | None  # open the persisted index again (a warm start)
    note: str = ""


def rss_mb() -> float:
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):
        return float("nan")


def _percentiles(samples: Sequence[float]) -> tuple[float, float]:
    ordered = sorted(samples)
    if not ordered:
        return float("nan"), float("nan")
    return ordered[len(ordered) // 2], ordered[
        min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))
    ]


def _disk_mb(path: Path) -> float:
    if path.is_file():
        return path.stat().st_size / 2**20
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) / 2**20


class Vocabulary:
    """Every term an opaque word: `t` and its number (base 36)."""

    def __init__(self) -> None:
        self.words: dict[str, str] = {}

    def word(self, term: str) -> str:
        found = self.words.get(term)
        if found is None:
            found = self.words[term] = "t" + _base36(len(self.words))
        return found

    def fields(self, doc: MemoryDocument) -> list[str]:
        """Title, description and body as opaque words (body words repeated by count)."""
        terms = document_terms(doc, whole_body)
        title, description, body = terms.fields
        return [
            " ".join(self.word(t) for t in title),
            " ".join(self.word(t) for t in description),
            " ".join(" ".join([self.word(t)] * max(1, n)) for t, n in body.items()),
        ]


def _base36(n: int) -> str:
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def query_terms(text: str) -> list[str]:
    tokens = RANKERS["bm25f"].tokenize(text)
    return scored_tokens(tokens, stem=True, functions=function_words(tokens))


def _timed_queries(run: Callable[[str], Any], queries: Sequence[str], repeats: int) -> list[float]:
    for q in queries:  # one round unrecorded: first-call costs are the start's
        run(q)
    samples = []
    for _ in range(repeats):
        for q in queries:
            started = time.perf_counter()
            run(q)
            samples.append((time.perf_counter() - started) * 1000)
    return samples


# -- today's index -----------------------------------------------------------------------


def bench_today(docs: list[MemoryDocument], queries: Sequence[str], repeats: int) -> PeerResult:
    ranker = RANKERS["bm25f"]
    before = rss_mb()
    started = time.perf_counter()
    view = CorpusView.of(docs, version=1)
    view.index(ranker.index_kind)
    build_s = time.perf_counter() - started

    def run(q: str) -> Any:
        return RecallQuery.build(view, q, ranker=ranker.rank, tokenizer=ranker.tokenize).shortlist()

    samples = _timed_queries(run, queries, repeats)
    grown = rss_mb() - before
    p50, p95 = _percentiles(samples)
    return PeerResult(
        "bm25f (today's index)",
        len(docs),
        build_s,
        p50,
        p95,
        grown,
        None,
        None,
        "exact BM25F, substrings, silence and confidence; one thread",
    )


# -- tantivy -------------------------------------------------------------------------------


def _tantivy_build(docs: list[MemoryDocument], vocabulary: Vocabulary, where: Path) -> Any:
    import tantivy

    schema_builder = tantivy.SchemaBuilder()
    for name in ("title", "description", "body"):
        schema_builder.add_text_field(name, stored=False, tokenizer_name="whitespace")
    schema_builder.add_integer_field("slot", stored=True, indexed=False)
    schema = schema_builder.build()
    index = tantivy.Index(schema, path=str(where))
    writer = index.writer(heap_size=200_000_000, num_threads=1)
    for slot, doc in enumerate(docs):
        title, description, body = vocabulary.fields(doc)
        writer.add_document(
            tantivy.Document(title=title, description=description, body=body, slot=slot)
        )
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def _tantivy_query(index: Any, words: Sequence[str]) -> Any:
    import tantivy

    schema = index.schema
    clauses = [
        (
            tantivy.Occur.Should,
            tantivy.Query.boost_query(tantivy.Query.term_query(schema, field, word), boost),
        )
        for field, boost in zip(("title", "description", "body"), FIELD_BOOSTS, strict=True)
        for word in words
    ]
    return tantivy.Query.boolean_query(clauses)


def bench_tantivy(
    docs: list[MemoryDocument], queries: Sequence[str], repeats: int, work: Path
) -> list[PeerResult]:
    try:
        import tantivy
    except ImportError:
        return [PeerResult("tantivy", len(docs), 0, 0, 0, 0, None, None, "not installed")]
    where = work / "tantivy"
    shutil.rmtree(where, ignore_errors=True)
    where.mkdir(parents=True)
    vocabulary = Vocabulary()
    before = rss_mb()
    started = time.perf_counter()
    index = _tantivy_build(docs, vocabulary, where)
    build_s = time.perf_counter() - started
    searcher = index.searcher()
    words = vocabulary.words

    def exact(q: str) -> list[int]:
        terms = [words[t] for t in query_terms(q) if t in words]
        if not terms:
            return []
        hits = searcher.search(_tantivy_query(index, terms), 2).hits
        return [searcher.doc(address)["slot"][0] for _score, address in hits]

    samples = _timed_queries(exact, queries, repeats)
    grown = rss_mb() - before
    p50, p95 = _percentiles(samples)
    started = time.perf_counter()
    reopened = tantivy.Index.open(str(where))
    reopened.searcher().search(tantivy.Query.all_query(), 1)
    open_ms = (time.perf_counter() - started) * 1000
    results = [
        PeerResult(
            "tantivy, exact terms, top 2",
            len(docs),
            build_s,
            p50,
            p95,
            grown,
            _disk_mb(where),
            open_ms,
            "BM25 per field, boosted; no substrings",
        ),
    ]
    # Candidates from the engine, bm25f's definition on them.
    grams = Bm25Index.of(docs)

    def expanded(q: str) -> list[str]:
        tokens = query_terms(q)
        held = {w for t in tokens for w in (t, *grams.words_containing(t)) if w in words}
        if not held:
            return []
        hits = searcher.search(_tantivy_query(index, [words[w] for w in held]), CANDIDATES).hits
        chosen = [docs[searcher.doc(address)["slot"][0]] for _score, address in hits]
        ranked = rank_scan(chosen, RANKERS["bm25f"].tokenize(q), body=whole_body, limit=2)
        return [s.document.path for s in ranked]

    samples = _timed_queries(expanded, queries, repeats)
    p50, p95 = _percentiles(samples)
    results.append(
        PeerResult(
            "tantivy top 200 + bm25f re-scored",
            len(docs),
            build_s,
            p50,
            p95,
            grown,
            _disk_mb(where),
            open_ms,
            "substring expansion + per-document scan of the candidates (a floor)",
        )
    )
    gc.collect()
    return results


# -- bm25s ---------------------------------------------------------------------------------


def bench_bm25s(docs: list[MemoryDocument], queries: Sequence[str], repeats: int) -> PeerResult:
    try:
        import bm25s
    except ImportError:
        return PeerResult("bm25s", len(docs), 0, 0, 0, 0, None, None, "not installed")
    vocabulary = Vocabulary()
    before = rss_mb()
    started = time.perf_counter()
    corpus = [" ".join(vocabulary.fields(doc)).split() for doc in docs]
    # bm25s takes token ids with their vocabulary: the project's terms as they are.
    ids = {word: i for i, word in enumerate(vocabulary.words.values())}
    tokenized = bm25s.tokenization.Tokenized(
        ids=[[ids[w] for w in doc] for doc in corpus], vocab=ids
    )
    retriever = bm25s.BM25()
    retriever.index(tokenized, show_progress=False)
    del corpus, tokenized
    build_s = time.perf_counter() - started
    words = vocabulary.words

    def run(q: str) -> Any:
        terms = [words[t] for t in query_terms(q) if t in words]
        if not terms:
            return []
        query = bm25s.tokenization.Tokenized(ids=[[ids[w] for w in terms]], vocab=ids)
        return retriever.retrieve(query, k=2, show_progress=False, n_threads=1)

    samples = _timed_queries(run, queries, repeats)
    grown = rss_mb() - before
    p50, p95 = _percentiles(samples)
    gc.collect()
    return PeerResult(
        "bm25s, exact terms, top 2",
        len(docs),
        build_s,
        p50,
        p95,
        grown,
        None,
        None,
        "one field (title, description, body together); sparse matrices",
    )


# -- SQLite FTS5 ---------------------------------------------------------------------------


def bench_fts5(
    docs: list[MemoryDocument], queries: Sequence[str], repeats: int, work: Path
) -> PeerResult:
    path = work / "fts5.sqlite3"
    path.unlink(missing_ok=True)
    vocabulary = Vocabulary()
    before = rss_mb()
    started = time.perf_counter()
    db = sqlite3.connect(path)
    db.execute(
        "CREATE VIRTUAL TABLE memories USING fts5(title, description, body, tokenize='ascii')"
    )
    with db:
        db.executemany(
            "INSERT INTO memories(rowid, title, description, body) VALUES (?, ?, ?, ?)",
            ((slot, *vocabulary.fields(doc)) for slot, doc in enumerate(docs)),
        )
    db.execute("INSERT INTO memories(memories) VALUES ('optimize')")
    db.commit()
    build_s = time.perf_counter() - started
    words = vocabulary.words
    boosts = ", ".join(str(b) for b in FIELD_BOOSTS)

    def run(q: str) -> Any:
        terms = [words[t] for t in query_terms(q) if t in words]
        if not terms:
            return []
        match = " OR ".join(terms)
        return db.execute(
            f"SELECT rowid FROM memories WHERE memories MATCH ? "
            f"ORDER BY bm25(memories, {boosts}) LIMIT 2",
            (match,),
        ).fetchall()

    samples = _timed_queries(run, queries, repeats)
    grown = rss_mb() - before
    p50, p95 = _percentiles(samples)
    db.close()
    started = time.perf_counter()
    again = sqlite3.connect(path)
    again.execute("SELECT rowid FROM memories WHERE memories MATCH 't0' LIMIT 1").fetchall()
    open_ms = (time.perf_counter() - started) * 1000
    again.close()
    return PeerResult(
        "SQLite FTS5, exact terms, top 2",
        len(docs),
        build_s,
        p50,
        p95,
        grown,
        _disk_mb(path),
        open_ms,
        "bm25() with field weights; ascii tokenizer",
    )


def bench_peers(
    docs: list[MemoryDocument], queries: Sequence[str], repeats: int = 10
) -> list[PeerResult]:
    """Today's index and every peer, one after the other, on `docs` and `queries`."""
    work = Path(tempfile.mkdtemp(prefix="memory-recall-peers-"))
    try:
        results = [bench_today(docs, queries, repeats)]
        gc.collect()
        results += bench_tantivy(docs, queries, repeats, work)
        results.append(bench_fts5(docs, queries, repeats, work))
        results.append(bench_bm25s(docs, queries, repeats))
        return results
    finally:
        shutil.rmtree(work, ignore_errors=True)


def peers_table(results: Sequence[PeerResult]) -> str:
    lines = [
        "| engine | memories | build | query p50 / p95 (in process) | RSS growth | on disk "
        "| open from disk | |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in results:
        disk = "–" if r.disk_mb is None else f"{r.disk_mb:,.0f} MB"
        opened = "–" if r.open_ms is None else f"{r.open_ms:,.1f} ms"
        lines.append(
            f"| {r.engine} | {r.docs:,} | {r.build_s:,.2f} s | {r.p50_ms:.2f} / {r.p95_ms:.2f} ms "
            f"| {r.rss_mb:,.0f} MB | {disk} | {opened} | {r.note} |"
        )
    return "\n".join(lines)
