"""The benchmark's building blocks (the benchmark itself prints figures, it asserts nothing)."""

from __future__ import annotations

from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.dev.bench import Percentiles, scan_every_recall, sizes_up_to
from memory_recall.server.dev.synthetic import synthetic_documents, write_tree
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.shortlist import build_shortlist
from memory_recall.server.roots import MemoryRoot


def test_sizes_up_to_a_limit():
    assert sizes_up_to(None) == [1_000, 10_000, 100_000]
    assert sizes_up_to(10_000) == [1_000, 10_000]
    assert sizes_up_to(300) == [300]


def test_percentiles():
    p = Percentiles.of([float(i) for i in range(1, 101)])
    assert (p.p50, p.p95, p.n) == (50.5, 95.0, 100)


def test_the_synthetic_corpus_is_deterministic_and_multilingual():
    docs = synthetic_documents(200, seed=3)
    assert [d.body for d in docs] == [d.body for d in synthetic_documents(200, seed=3)]
    assert {d.type for d in docs} == {"user", "feedback", "project", "reference"}
    assert any(not d.body.isascii() for d in docs)
    lengths = sorted(len(d.body) for d in docs)
    assert 1200 <= lengths[len(lengths) // 2] <= 1900  # median ~1,500
    assert lengths[0] >= 200 and lengths[-1] <= 20_000 + 200  # a sentence may overshoot
    assert sum(length > 6000 for length in lengths) >= 2  # long session logs exist


def test_scan_every_recall_answers_like_the_warm_catalog(tmp_path):
    project, user = write_tree(tmp_path, 60)
    roots = [MemoryRoot.of(project, "project"), MemoryRoot.of(user, "user")]
    catalog = MemoryCatalog(roots)
    catalog.scan()
    bm25f = RANKERS["bm25f"]
    for query in ("deploy the service", "本番環境", "nothing-matches-zzqx"):
        fast = [s.document.path for s in build_shortlist(catalog.snapshot(), query).fast]
        assert scan_every_recall(roots, query) == fast
        shortlist = build_shortlist(
            catalog.snapshot(), query, ranker=bm25f.rank, tokenizer=bm25f.tokenize
        )
        assert scan_every_recall(roots, query, bm25f) == [s.document.path for s in shortlist.fast]
