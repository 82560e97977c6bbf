"""MemoryCatalog over a real directory tree."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.ranking.bm25f.index import Bm25Index
from memory_recall.server.ranking.index import DocumentIndex
from memory_recall.server.roots import MemoryRoot, Scope


def write(path: Path, text: str, mtime: float | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    if mtime is not None:
        os.utime(path, (mtime, mtime))
    return path


def memory(name: str, type: str = "project", body: str = "") -> str:
    return f"---\nname: {name}\ntype: {type}\n---\n{body}\n"


@pytest.fixture
def roots(tmp_path):
    return tmp_path / "project", tmp_path / "user"


def test_scan_is_recursive_and_skips_index_and_invalid(roots):
    project, user = roots
    write(project / "a.md", memory("A"))
    write(project / "deep" / "er" / "b.md", memory("B"))
    write(project / "MEMORY.md", "- [A](a.md)\n")
    write(project / "notes.txt", memory("not markdown"))
    write(project / "bad.md", "---\ntype: todo\n---\n")
    write(user / "u.md", memory("U", "user"))
    catalog = MemoryCatalog([MemoryRoot.of(project, "project"), MemoryRoot.of(user, "user")])
    catalog.scan()
    titles = sorted(d.title for d in catalog.snapshot().documents)
    assert titles == ["A", "B", "U"]
    assert [(s.path, s.reason) for s in catalog.skipped] == [
        (
            str(project / "bad.md"),
            "unknown type 'todo' (expected one of user, feedback, project, reference)",
        )
    ]
    assert catalog.count_by_root() == [2, 1]


def test_input_order_project_first_then_mtime_desc_then_path(roots):
    project, user = roots
    write(user / "u.md", memory("U", "user"), mtime=3000)
    write(project / "old.md", memory("old"), mtime=1000)
    write(project / "b.md", memory("b"), mtime=2000)
    write(project / "a.md", memory("a"), mtime=2000)
    catalog = MemoryCatalog([MemoryRoot.of(user, "user"), MemoryRoot.of(project, "project")])
    catalog.scan()
    snapshot = catalog.snapshot()
    assert [d.title for d in snapshot.documents] == ["a", "b", "old", "U"]
    assert [d.title for d in snapshot.by_recency] == ["U", "a", "b", "old"]


def test_path_is_root_joined_not_symlink_resolved(tmp_path):
    real = tmp_path / "real"
    write(real / "a.md", memory("A"))
    link = tmp_path / "link"
    link.symlink_to(real)
    catalog = MemoryCatalog([MemoryRoot.of(link, "project")])
    catalog.scan()
    (doc,) = catalog.snapshot().documents
    assert doc.path == str(link / "a.md")
    assert doc.relative_path == "a.md"
    assert doc.scope is Scope.PROJECT


def test_upsert_remove_and_refresh(roots):
    project, _ = roots
    catalog = MemoryCatalog([MemoryRoot.of(project, "project")])
    catalog.scan()
    assert len(catalog) == 0
    first = catalog.snapshot()
    path = write(project / "n.md", memory("New"))
    assert catalog.upsert(path).title == "New"
    assert catalog.snapshot() is not first
    write(path, memory("Edited"))
    catalog.refresh(path)
    assert catalog.get(str(path)).title == "Edited"
    path.unlink()
    catalog.refresh(path)
    assert len(catalog) == 0


def test_refresh_of_a_directory_rescans_it_and_its_removal_drops_all(roots):
    project, _ = roots
    catalog = MemoryCatalog([MemoryRoot.of(project, "project")])
    catalog.scan()
    write(project / "sub" / "a.md", memory("A"))
    write(project / "sub" / "b.md", memory("B"))
    catalog.refresh(project / "sub")
    assert len(catalog) == 2
    for f in (project / "sub").iterdir():
        f.unlink()
    (project / "sub").rmdir()
    catalog.refresh(project / "sub")
    assert len(catalog) == 0


def test_a_file_that_becomes_invalid_is_dropped_and_reported(roots):
    project, _ = roots
    path = write(project / "a.md", memory("A"))
    catalog = MemoryCatalog([MemoryRoot.of(project, "project")])
    catalog.scan()
    write(path, "no front matter")
    catalog.refresh(path)
    assert len(catalog) == 0
    assert catalog.skipped[0].reason.startswith("no front matter")
    write(path, memory("A again"))
    catalog.refresh(path)
    assert catalog.skipped == []
    assert len(catalog) == 1


def test_paths_outside_every_root_are_ignored(roots, tmp_path):
    project, _ = roots
    catalog = MemoryCatalog([MemoryRoot.of(project, "project")])
    outside = write(tmp_path / "elsewhere" / "x.md", memory("X"))
    assert catalog.upsert(outside) is None
    assert len(catalog) == 0


def test_missing_root_is_not_an_error(tmp_path):
    catalog = MemoryCatalog([MemoryRoot.of(tmp_path / "nope", "project")])
    catalog.scan()
    assert len(catalog) == 0


def test_symlink_out_of_root_is_skipped_with_reason(tmp_path):
    root = tmp_path / "root"
    write(tmp_path / "secret.md", memory("Secret"))
    root.mkdir()
    (root / "leak.md").symlink_to(tmp_path / "secret.md")
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")])
    catalog.scan()
    assert len(catalog) == 0
    assert "outside the root" in catalog.skipped[0].reason


def test_hidden_entries_and_symlink_loops_are_skipped(tmp_path):
    root = tmp_path / "root"
    write(root / ".git" / "x.md", memory("git"))
    write(root / ".draft.md", memory("draft"))
    write(root / "ok.md", memory("ok"))
    (root / "loop").symlink_to(root)
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")])
    catalog.scan()
    assert [d.title for d in catalog.snapshot().documents] == ["ok"]


def test_snapshot_order_and_index_follow_every_change(roots):
    from memory_recall.server.ranking.spec import rank_scan
    from memory_recall.server.ranking.view import CorpusView

    project, user = roots
    for i in range(6):
        write(project / f"p{i}.md", memory(f"deploy {i}", body="the rule"), mtime=1000 + i % 2)
        write(user / f"u{i}.md", memory(f"deploy user {i}", "user"), mtime=1000 + i)
    catalog = MemoryCatalog([MemoryRoot.of(project, "project"), MemoryRoot.of(user, "user")])
    catalog.scan()
    write(project / "p2.md", memory("deploy edited", body="other"), mtime=5000)
    catalog.refresh(project / "p2.md")
    catalog.remove(user / "u3.md")
    write(project / "sub" / "n.md", memory("new deploy"), mtime=1000)
    catalog.refresh(project / "sub")
    snapshot = catalog.snapshot()
    fresh = CorpusView.of(snapshot.documents)
    assert snapshot.documents == fresh.documents
    assert snapshot.by_recency == fresh.by_recency
    for tokens in (["deploy"], ["the", "user"], ["edited", "deploy"]):
        expected = rank_scan(snapshot.documents, tokens)
        assert snapshot.index().rank(tokens) == expected


def test_an_old_snapshot_does_not_use_the_moved_on_index(roots):
    project, _ = roots
    write(project / "a.md", memory("deploy"))
    catalog = MemoryCatalog([MemoryRoot.of(project, "project")], DocumentIndex)
    catalog.scan()
    old = catalog.snapshot()
    assert old.index() is not None
    write(project / "b.md", memory("deploy"))
    catalog.upsert(project / "b.md")
    assert old.index() is None  # the indexed ranker scans this one instead
    assert len(catalog.snapshot().index().rank(["deploy"])) == 2
    # The catalog keeps the index of one kind only; another kind is built for a view.
    other = catalog.snapshot().index(Bm25Index)
    assert isinstance(other, Bm25Index) and len(other) == 2
