"""`memory-recall dev bench --peers` (server/dev/engine_peers.py) runs on a small corpus:
every engine gives a row, a missing one says so; figures are printed, never asserted."""

from __future__ import annotations

from memory_recall.server.dev.engine_peers import Vocabulary, bench_peers, peers_table
from memory_recall.server.dev.synthetic import synthetic_documents


def test_every_engine_reports_a_row() -> None:
    docs = synthetic_documents(40)
    results = bench_peers(docs, ["deploy the service", "数据库迁移的问题"], repeats=1)
    engines = [r.engine for r in results]
    assert engines[0] == "bm25f (today's index)"
    assert any(e.startswith("SQLite FTS5") for e in engines)
    assert any(e.startswith("tantivy") for e in engines)
    assert any(e.startswith("bm25s") for e in engines)
    for r in results:
        assert r.note == "not installed" or r.p50_ms > 0
    assert peers_table(results).count("\n") == len(results) + 1


def test_terms_become_opaque_words_once() -> None:
    vocabulary = Vocabulary()
    assert vocabulary.word("deploy") == vocabulary.word("deploy") == "t0"
    assert vocabulary.word("数据") == "t1"
    title, _description, body = vocabulary.fields(synthetic_documents(1)[0])
    assert all(word.startswith("t") for word in (title + " " + body).split())
