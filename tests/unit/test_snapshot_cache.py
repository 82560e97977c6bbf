"""The persistent snapshot: reused when files are unchanged, never trusted when damaged."""

from __future__ import annotations

import os

import memory_recall.server.catalog.catalog
import memory_recall.server.catalog.snapshot_cache
import pytest
from memory_recall.server.catalog.catalog import MemoryCatalog, input_order_key
from memory_recall.server.catalog.snapshot_cache import SnapshotCache, default_cache_path
from memory_recall.server.ranking.bm25f.index import Bm25Index
from memory_recall.server.ranking.bm25f.ranker import Bm25Ranker
from memory_recall.server.ranking.bm25f.scan import rank_scan as bm25f_scan
from memory_recall.server.ranking.bm25f.tokens import recall_tokens
from memory_recall.server.ranking.index import DocumentIndex
from memory_recall.server.ranking.spec import rank_scan
from memory_recall.server.roots import MemoryRoot


def write(path, text, mtime=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def memory(name, body="", type="project"):
    return f"---\nname: {name}\ntype: {type}\n---\n{body}\n"


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "memory"
    for i in range(5):
        write(root / f"sub{i % 2}" / f"m{i}.md", memory(f"deploy note {i}", "the staging rule"))
    write(root / "bad.md", "no front matter")
    return root


@pytest.fixture
def reads(monkeypatch):
    """Counts the files the catalog actually reads."""
    seen = []
    real = memory_recall.server.catalog.catalog.load_document

    def counting(path, **kw):
        seen.append(path.name)
        return real(path, **kw)

    monkeypatch.setattr(memory_recall.server.catalog.catalog, "load_document", counting)
    return seen


def open_catalog(root, cache_dir, kind=DocumentIndex):
    roots = [MemoryRoot.of(root, "project")]
    catalog = MemoryCatalog(roots, kind)
    catalog.scan(cache=SnapshotCache(default_cache_path(roots, cache_dir, kind), roots))
    return catalog


def ranking(catalog, tokens):
    snapshot = catalog.snapshot()
    got = [(s.document.path, s.score) for s in snapshot.index().rank(tokens)]
    assert got == [(s.document.path, s.score) for s in rank_scan(snapshot.documents, tokens)]
    return got


def test_a_warm_restart_reads_no_file_again(tree, tmp_path, reads):
    cold = open_catalog(tree, tmp_path / "cache")
    assert cold.cache_report == "no snapshot yet"
    assert sorted(reads) == ["bad.md", "m0.md", "m1.md", "m2.md", "m3.md", "m4.md"]
    reads.clear()
    warm = open_catalog(tree, tmp_path / "cache")
    assert reads == []
    assert warm.cache_report == "snapshot reused for 6 files, 0 read again"
    assert warm.snapshot().documents == cold.snapshot().documents
    # Every field, the normal forms too (saved, not worked out again; `==` leaves them out).
    for got, want in zip(warm.snapshot().documents, cold.snapshot().documents, strict=True):
        assert {f: getattr(got, f) for f in want.__slots__} == {
            f: getattr(want, f) for f in want.__slots__
        }
    assert warm.snapshot().by_recency == cold.snapshot().by_recency
    assert [(s.path, s.reason) for s in warm.skipped] == [(s.path, s.reason) for s in cold.skipped]
    assert ranking(warm, ["deploy", "note"]) == ranking(cold, ["deploy", "note"])


def test_an_edited_file_is_read_again_and_a_deleted_one_dropped(tree, tmp_path, reads):
    open_catalog(tree, tmp_path / "cache")
    reads.clear()
    write(tree / "sub0" / "m2.md", memory("incident review", "rollback the release"))
    os.utime(tree / "sub0" / "m2.md", ns=(1, 1_700_000_000_123_456_789))
    (tree / "sub1" / "m3.md").unlink()
    write(tree / "new.md", memory("fresh deploy"))
    warm = open_catalog(tree, tmp_path / "cache")
    assert sorted(reads) == ["m2.md", "new.md"]
    titles = sorted(d.title for d in warm.snapshot().documents)
    assert titles == [
        "deploy note 0",
        "deploy note 1",
        "deploy note 4",
        "fresh deploy",
        "incident review",
    ]
    assert [p for p, _ in ranking(warm, ["rollback"])] == [str(tree / "sub0" / "m2.md")]
    assert len(ranking(warm, ["deploy"])) == 4
    # The rewritten snapshot now vouches for the new state.
    reads.clear()
    again = open_catalog(tree, tmp_path / "cache")
    assert reads == []
    assert again.snapshot().documents == warm.snapshot().documents


def test_same_size_and_mtime_is_all_that_is_compared(tree, tmp_path, reads):
    # Documented limit: an edit that keeps both size and nanosecond mtime is
    # not seen (the watcher sees it while the daemon runs).
    path = tree / "sub0" / "m0.md"
    st = path.stat()
    open_catalog(tree, tmp_path / "cache")
    write(path, path.read_text().replace("deploy", "DEPLOY"))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    reads.clear()
    open_catalog(tree, tmp_path / "cache")
    assert reads == []


@pytest.mark.parametrize(
    "damage",
    [
        lambda data: data[: len(data) // 2],  # truncated
        lambda data: data[:-10] + bytes(10),  # corrupt payload
        lambda data: b"garbage" + data,  # not a snapshot
        lambda data: b"",  # empty
    ],
    ids=["truncated", "corrupt", "foreign", "empty"],
)
def test_a_damaged_snapshot_is_rebuilt_not_trusted(tree, tmp_path, reads, damage):
    cold = open_catalog(tree, tmp_path / "cache")
    (snapshot_file,) = (tmp_path / "cache").iterdir()
    snapshot_file.write_bytes(damage(snapshot_file.read_bytes()))
    reads.clear()
    rebuilt = open_catalog(tree, tmp_path / "cache")
    assert rebuilt.cache_report.startswith("unusable snapshot")
    assert len(reads) == 6
    assert rebuilt.snapshot().documents == cold.snapshot().documents
    reads.clear()
    assert open_catalog(tree, tmp_path / "cache").cache_report.startswith("snapshot reused")
    assert reads == []


def test_another_format_version_is_not_trusted(tree, tmp_path, reads, monkeypatch):
    open_catalog(tree, tmp_path / "cache")
    monkeypatch.setattr(memory_recall.server.catalog.snapshot_cache, "FORMAT_VERSION", 99)
    reads.clear()
    catalog = open_catalog(tree, tmp_path / "cache")
    assert "expected 99" in catalog.cache_report
    assert len(reads) == 6


def test_a_snapshot_belongs_to_its_roots(tree, tmp_path):
    roots = [MemoryRoot.of(tree, "project")]
    other = [MemoryRoot.of(tree, "user")]
    path = tmp_path / "one.snapshot"
    catalog = MemoryCatalog(roots)
    catalog.scan(cache=SnapshotCache(path, roots))
    assert SnapshotCache(path, roots).load(input_order_key) is not None
    assert default_cache_path(roots, tmp_path) != default_cache_path(other, tmp_path)
    cache = SnapshotCache(path, other)
    assert cache.load(input_order_key) is None
    assert "other roots" in cache.last_problem


def test_a_warm_catalog_keeps_changing_incrementally(tree, tmp_path):
    catalog = open_catalog(tree, tmp_path / "cache")
    catalog = open_catalog(tree, tmp_path / "cache")
    write(tree / "late.md", memory("late deploy", "staging"))
    catalog.upsert(tree / "late.md")
    catalog.remove(tree / "sub0" / "m0.md")
    assert len(ranking(catalog, ["deploy"])) == 5


def test_the_daemon_cache_dir_comes_from_the_environment(tmp_path, monkeypatch):
    roots = [MemoryRoot.of(tmp_path / "m", "project")]
    monkeypatch.setenv("MEMORY_RECALL_CACHE_DIR", "off")
    assert memory_recall.server.catalog.snapshot_cache.snapshot_cache(roots) is None
    monkeypatch.setenv("MEMORY_RECALL_CACHE_DIR", str(tmp_path / "c"))
    assert (
        memory_recall.server.catalog.snapshot_cache.snapshot_cache(roots).path.parent
        == tmp_path / "c"
    )
    monkeypatch.delenv("MEMORY_RECALL_CACHE_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    cache = memory_recall.server.catalog.snapshot_cache.snapshot_cache(roots)
    assert cache.path.parent == tmp_path / "data" / "memory-recall" / "cache"


def test_snapshots_of_roots_unused_for_a_month_are_pruned(tree, tmp_path):
    stale = write(tmp_path / "cache" / "catalog-0123456789abcdef.snapshot", "old")
    recent = write(tmp_path / "cache" / "catalog-fedcba9876543210.snapshot", "new")
    os.utime(stale, (1, 1))
    open_catalog(tree, tmp_path / "cache")
    assert not stale.exists()
    assert recent.exists()


def test_bm25f_reloads_its_own_index_from_its_own_snapshot(tree, tmp_path, reads):
    first = open_catalog(tree, tmp_path / "cache", Bm25Index)
    reads.clear()
    again = open_catalog(tree, tmp_path / "cache", Bm25Index)
    assert reads == []  # nothing read again: the coded bodies came from the snapshot
    tokens = recall_tokens("deploy freeze staging")
    for catalog in (first, again):
        snapshot = catalog.snapshot()
        got = Bm25Ranker().ranking(snapshot, tokens, lambda _doc: True).ranked
        want = bm25f_scan(snapshot.documents, tokens)
        assert [(s.document.path, s.score) for s in got] == [
            (s.document.path, s.score) for s in want
        ]


def test_each_kind_of_index_has_its_snapshot_and_refuses_another(tree, tmp_path):
    roots = [MemoryRoot.of(tree, "project")]
    spec_path = default_cache_path(roots, tmp_path, DocumentIndex)
    assert spec_path != default_cache_path(roots, tmp_path, Bm25Index)
    MemoryCatalog(roots, DocumentIndex).scan(cache=SnapshotCache(spec_path, roots))
    wrong = SnapshotCache(spec_path, roots)
    assert wrong.load(input_order_key, Bm25Index) is None
    assert "expected 'bm25f'" in (wrong.last_problem or "")
    assert SnapshotCache(spec_path, roots).load(input_order_key, DocumentIndex) is not None


def _scanned_unsaved(root, cache_dir, kind=Bm25Index):
    roots = [MemoryRoot.of(root, "project")]
    catalog = MemoryCatalog(roots, kind)
    cache = SnapshotCache(default_cache_path(roots, cache_dir, kind), roots)
    catalog.scan(cache, save=False)
    return catalog, cache


def test_a_scan_may_leave_its_snapshot_to_be_written_later(tree, tmp_path, reads):
    """The daemon is ready before its snapshot is written (docs/performance.md): what
    `save_snapshot` writes later is what a restart reuses."""
    catalog, cache = _scanned_unsaved(tree, tmp_path / "cache")
    assert catalog.unsaved is cache and not cache.path.exists()
    write(tree / "later.md", memory("written after the scan", "a fresh deploy rule"))
    catalog.upsert(tree / "later.md")
    assert catalog.save_snapshot() and catalog.unsaved is None and cache.path.exists()
    assert catalog.save_snapshot()  # nothing left to write
    reads.clear()
    warm = open_catalog(tree, tmp_path / "cache", Bm25Index)
    assert reads == []
    assert warm.cache_report == "snapshot reused for 7 files, 0 read again"
    assert warm.snapshot().documents == catalog.snapshot().documents


@pytest.mark.parametrize("how", ["a change", "a change the reading trips on"])
def test_a_snapshot_written_while_the_catalog_changes_is_not_kept(
    tree, tmp_path, reads, monkeypatch, how
):
    """A change applied while the snapshot is written (on the event loop, the writing in
    a worker thread) would make a file of no one state: it is dropped and written again."""
    catalog, cache = _scanned_unsaved(tree, tmp_path / "cache")
    real_paced = memory_recall.server.catalog.snapshot_cache.paced

    def changing_midway(parts):
        for at, part in enumerate(real_paced(parts)):
            yield part
            if at == 2:
                write(tree / "midway.md", memory("written midway", "the staging rule"))
                catalog.upsert(tree / "midway.md")
                if how != "a change":
                    raise RuntimeError("dictionary changed size during iteration")

    monkeypatch.setattr(memory_recall.server.catalog.snapshot_cache, "paced", changing_midway)
    assert not catalog.save_snapshot()
    assert catalog.unsaved is cache and not cache.path.exists()
    assert not list(cache.path.parent.glob("*.tmp"))  # nothing half-written left
    monkeypatch.setattr(memory_recall.server.catalog.snapshot_cache, "paced", real_paced)
    assert catalog.save_snapshot() and cache.path.exists()
    reads.clear()
    warm = open_catalog(tree, tmp_path / "cache", Bm25Index)
    assert reads == []
    assert warm.snapshot().documents == catalog.snapshot().documents


def test_an_unfinished_write_of_the_snapshot_is_pruned_once_old(tree, tmp_path):
    """A daemon that exits while it writes its snapshot (after `ready`) leaves a
    temporary file: the next write removes it once it is an hour old, never a fresh one
    (another daemon of the same roots may be writing it)."""
    catalog, cache = _scanned_unsaved(tree, tmp_path / "cache")
    cache.path.parent.mkdir(parents=True, exist_ok=True)
    old = cache.path.parent / f"{cache.path.name}abc123.tmp"
    fresh = cache.path.parent / f"{cache.path.name}def456.tmp"
    for path in (old, fresh):
        path.write_bytes(b"half a snapshot")
    os.utime(old, (os.path.getmtime(old) - 7200,) * 2)
    assert catalog.save_snapshot()
    assert not old.exists() and fresh.exists()


def test_a_process_leaving_mid_write_removes_its_temporary_file(tree, tmp_path, monkeypatch):
    """The faces exit without waiting for a snapshot still being written (os._exit once
    the host has gone): `discard_unfinished` removes its temporary file first, and the
    write then replaces nothing."""
    catalog, cache = _scanned_unsaved(tree, tmp_path / "cache")
    real_paced = memory_recall.server.catalog.snapshot_cache.paced
    seen: list[list[str]] = []

    def leaving_midway(parts):
        for at, part in enumerate(real_paced(parts)):
            yield part
            if at == 2:
                seen.append([p.name for p in cache.path.parent.glob("*.tmp")])
                memory_recall.server.catalog.snapshot_cache.discard_unfinished()

    monkeypatch.setattr(memory_recall.server.catalog.snapshot_cache, "paced", leaving_midway)
    catalog.save_snapshot()
    assert catalog.cache_fault  # the write failed: nothing was replaced
    assert len(seen[0]) == 1  # it was being written …
    assert not list(cache.path.parent.glob("*.tmp")) and not cache.path.exists()  # … and is gone
    assert not memory_recall.server.catalog.snapshot_cache._WRITING


async def test_the_network_waits_for_the_snapshot_not_for_a_failed_one(tree, tmp_path, monkeypatch):
    """The memory network's build waits for the snapshot written after `ready`
    (`snapshot_done`); a write that fails for a reason of ours ends the task, not the
    wait."""
    from memory_recall.server.core.session import CatalogSession, TaskRegistry

    catalog, cache = _scanned_unsaved(tree, tmp_path / "cache")
    session = CatalogSession(catalog, TaskRegistry())

    def broken() -> bool:
        raise RuntimeError("our bug")

    monkeypatch.setattr(catalog, "save_snapshot", broken)
    with pytest.raises(RuntimeError):
        await session._save_snapshot()
    assert session.snapshot_done.is_set() and not cache.path.exists()

    monkeypatch.undo()
    session = CatalogSession(catalog, TaskRegistry())
    await session._save_snapshot()
    assert session.snapshot_done.is_set() and cache.path.exists() and catalog.unsaved is None
