"""A cold scan in worker processes builds what the catalog builds on its own
(server.catalog.cold_build, TermIndex.partial / of_partials)."""

from __future__ import annotations

import os

import pytest
from memory_recall.server.catalog import cold_build
from memory_recall.server.catalog.catalog import MemoryCatalog, input_order_key
from memory_recall.server.catalog.snapshot_cache import SnapshotCache
from memory_recall.server.dev.synthetic import synthetic_documents, write_tree
from memory_recall.server.ranking.bm25f.index import Bm25Index, Bm25WindowIndex
from memory_recall.server.ranking.bm25f.ranker import Bm25Ranker
from memory_recall.server.ranking.bm25f.tokens import recall_tokens
from memory_recall.server.ranking.index import DocumentIndex
from memory_recall.server.roots import MemoryRoot

QUERIES = (
    "deploy the staging service",
    "ci pipeline flaky test",
    "部署 服务",
    "развертывание сервиса",
    "database migration rollback",
    "UI",
)


def postings_by_path(index) -> list[dict[str, list[tuple[str, int]]]]:
    """Every field's postings with slots turned into paths (slots may differ)."""
    out = []
    for field, weighted in zip(index._postings, index.WEIGHTED, strict=True):
        by_term = {}
        for term, values in field.items():
            if weighted:
                pairs = [(index.document(v >> 8).path, v & 0xFF) for v in values]
            else:
                pairs = [(index.document(v).path, 0) for v in values]
            by_term[term] = sorted(pairs)
        out.append(by_term)
    return out


def ranked(index, query: str) -> list[tuple[str, float]]:
    found = Bm25Ranker(index_kind=type(index)).rank(index, recall_tokens(query), limit=10)
    return [(s.document.path, round(s.score, 9)) for s in found]


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    root = tmp_path_factory.mktemp("cold")
    project, user = write_tree(root, 240, seed=7)
    # Files the catalog skips, spread over the runs: each leaves a free slot.
    for i in range(0, 240, 37):
        (project / f"broken-{i:03d}.md").write_text("no front matter here", encoding="utf-8")
    (user / "undecodable.md").write_bytes(b"---\nname: \xff\xfe\n---\nbody\n")
    return [MemoryRoot.of(project, "project"), MemoryRoot.of(user, "user")]


def scanned(roots, monkeypatch, workers: int, kind=Bm25Index) -> MemoryCatalog:
    monkeypatch.setenv(cold_build.WORKERS_VARIABLE, str(workers))
    catalog = MemoryCatalog(roots, kind)
    catalog.scan()
    return catalog


@pytest.mark.parametrize("kind", [Bm25Index, Bm25WindowIndex, DocumentIndex])
def test_workers_build_the_index_the_catalog_builds_alone(tree, monkeypatch, kind):
    alone = scanned(tree, monkeypatch, 1, kind)
    shared = scanned(tree, monkeypatch, 3, kind)
    assert shared.skipped == alone.skipped and len(alone.skipped) >= 7
    assert [d.path for d in shared.snapshot().documents] == [
        d.path for d in alone.snapshot().documents
    ]
    a, b = alone._index, shared._index
    assert b.stats() == a.stats()
    assert postings_by_path(b) == postings_by_path(a)
    assert [d.path for d in b.by_recency()] == [d.path for d in a.by_recency()]
    assert b._grams.keys() == a._grams.keys()
    assert all(sorted(b._grams[g]) == sorted(a._grams[g]) for g in a._grams)
    if kind is not DocumentIndex:
        assert b.average_length() == a.average_length()
        for query in QUERIES:
            assert ranked(b, query) == ranked(a, query), query


def test_a_worker_built_index_keeps_changing_and_saving_like_any_other(tree, monkeypatch, tmp_path):
    catalog = scanned(tree, monkeypatch, 2)
    catalog.unsaved = SnapshotCache(tmp_path / "snapshot", tree)
    cache = catalog.unsaved
    assert catalog.save_snapshot()
    again = MemoryCatalog(tree)
    again.scan(cache)
    assert again.cache_report == "snapshot reused for 248 files, 0 read again"  # skipped too
    assert postings_by_path(again._index) == postings_by_path(catalog._index)
    a, b = again._index, catalog._index
    assert a._word_fields == b._word_fields and a._grams == b._grams
    assert (a._classes, a._length_bits, a._total_length) == (
        b._classes,
        b._length_bits,
        b._total_length,
    )
    index = catalog._index
    holes = len(index._free)
    assert holes > 0  # the skipped files' slots, free for the next documents
    extra = synthetic_documents(3, seed=99)
    for doc in extra:
        index.add(doc)
    assert len(index._free) == holes - 3
    gone = catalog.snapshot().documents[0].path
    assert index.remove(gone)
    alone = Bm25Index.of(
        [*(d for d in catalog.snapshot().documents if d.path != gone), *extra],
        tiebreak=input_order_key,
    )
    assert postings_by_path(index) == postings_by_path(alone)
    for query in QUERIES:
        assert ranked(index, query) == ranked(alone, query), query


def test_a_warm_start_and_a_small_tree_do_not_start_workers(tree, monkeypatch, tmp_path):
    monkeypatch.delenv(cold_build.WORKERS_VARIABLE, raising=False)
    assert cold_build.worker_count(cold_build.MIN_FILES - 1) == 1
    started = []
    monkeypatch.setattr(cold_build, "ProcessPoolExecutor", lambda *a, **k: started.append(a))
    catalog = MemoryCatalog(tree)
    catalog.scan(SnapshotCache(tmp_path / "snapshot", tree))
    assert not started and len(catalog) == 240


def test_when_workers_cannot_start_the_catalog_scans_alone(tree, monkeypatch, caplog):
    def refuse(*_args, **_kwargs):
        raise OSError("no processes in this sandbox")

    monkeypatch.setattr(cold_build, "ProcessPoolExecutor", refuse)
    catalog = scanned(tree, monkeypatch, 2)
    assert len(catalog) == 240
    assert "could not index in 2 worker processes (OSError" in caplog.text


def test_a_bad_worker_count_is_reported_and_the_default_used(monkeypatch, caplog):
    monkeypatch.setenv(cold_build.WORKERS_VARIABLE, "lots")
    assert cold_build.worker_count(10) == 1
    assert "is not a number" in caplog.text
    assert os.environ[cold_build.WORKERS_VARIABLE] == "lots"
