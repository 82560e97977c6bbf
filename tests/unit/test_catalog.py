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


# -- issue 21: roots and names that cannot be read, changes applied in steps ----------------------


def test_a_root_that_is_not_a_usable_path_is_reported_not_raised(tmp_path):
    fine = tmp_path / "fine"
    write(fine / "a.md", memory("A"))
    catalog = MemoryCatalog(
        [
            MemoryRoot.of(str(tmp_path / "nul\x00root"), "project"),
            MemoryRoot.of(tmp_path / ("x" * 300) / "memory", "project"),
            MemoryRoot.of(fine, "user"),
        ]
    )
    catalog.scan()
    assert len(catalog) == 1
    problems = catalog.root_problems()
    assert len(problems) == 2
    assert "not a usable path" in problems[0] and "File name too long" in problems[1]
    catalog.refresh(str(tmp_path / "nul\x00root"))  # a change there: still no exception
    assert len(catalog) == 1


def test_a_file_name_that_is_not_utf8_is_skipped_with_a_printable_path(tmp_path):
    root = tmp_path / "memory"
    write(root / "good.md", memory("Good"))
    bad = os.fsencode(root) + b"/caf\xe9.md"
    with open(bad, "w") as f:
        f.write(memory("Latin"))
    os.mkdir(os.fsencode(root) + b"/dir\xff")
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")])
    catalog.scan()
    assert [d.title for d in catalog.snapshot().documents] == ["Good"]
    skipped = {s.path: s.reason for s in catalog.skipped}
    assert skipped == {
        f"{root}/caf\\xe9.md": "file name is not valid UTF-8 (rename it to read it)",
        f"{root}/dir\\xff": "file name is not valid UTF-8 (rename it to read it)",
    }
    for path in skipped:
        path.encode("utf-8")  # printable anywhere
    catalog.refresh(os.fsdecode(bad))
    assert len(catalog.skipped) == 2
    os.unlink(bad)
    catalog.refresh(os.fsdecode(bad))
    assert len(catalog.skipped) == 1


def test_a_directory_change_is_read_without_touching_the_catalog_then_applied_in_steps(tmp_path):
    root = tmp_path / "memory"
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")])
    catalog.scan()
    for i in range(600):
        write(root / "many" / f"m{i}.md", memory(f"M{i}"))
    change = catalog.read_change(root / "many")
    assert change.kind == "tree" and len(change.files) == 600
    assert len(catalog) == 0  # reading changed nothing
    steps = 0
    for _ in catalog.apply_change(change):
        steps += 1
        # Between steps the catalog is consistent: its snapshot has what it counts.
        assert len(catalog.snapshot().documents) == len(catalog)
    assert steps >= 2 and len(catalog) == 600
    (root / "many").rename(tmp_path / "away")
    gone = catalog.read_change(root / "many")
    assert gone.kind == "gone"
    assert sum(1 for _ in catalog.apply_change(gone)) >= 2
    assert len(catalog) == 0


def test_an_unreadable_directory_clears_when_it_reads_again(tmp_path):
    root = tmp_path / "memory"
    write(root / "closed" / "a.md", memory("A"))
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")])
    catalog.scan()
    # What a walk records when it cannot enter: the directory, with the reason.
    change = catalog.read_change(root / "closed")
    change.skipped[str(root / "closed")] = "permission denied"
    change.files.clear()
    for _ in catalog.apply_change(change):
        pass
    assert [s.reason for s in catalog.skipped] == ["permission denied"]
    catalog.refresh(root / "closed")  # readable again: the entry goes
    assert catalog.skipped == [] and len(catalog) == 1


def test_a_snapshot_cache_that_cannot_be_written_is_a_fault_not_an_exception(tmp_path):
    from memory_recall.server.catalog.snapshot_cache import SnapshotCache

    root = tmp_path / "memory"
    write(root / "a.md", memory("A"))
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    roots = [MemoryRoot.of(root, "project")]
    catalog = MemoryCatalog(roots)
    catalog.scan(SnapshotCache(blocker / "cache" / "x.snapshot", roots))
    assert len(catalog) == 1
    assert catalog.cache_fault and "cannot be written" in catalog.cache_fault


def test_permission_denied_is_never_remembered_by_the_snapshot(tmp_path, monkeypatch):
    from memory_recall.server import documents

    root = tmp_path / "memory"
    path = write(root / "a.md", memory("A"))
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")])

    def denied(self):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(documents.Path, "read_bytes", denied)
    catalog.scan()
    assert [s.reason for s in catalog.skipped] == ["permission denied"]
    assert str(path) not in catalog._file_stats  # what the snapshot would vouch for


def test_a_write_of_the_daemon_while_a_change_is_read_is_never_undone(tmp_path):
    """A directory change is read off the event loop; a write applied meanwhile (the
    daemon's own, whose watcher echo is ignored) must survive the older reading."""
    root = tmp_path / "memory"
    write(root / "dir" / "old.md", memory("Old"))
    catalog = MemoryCatalog([MemoryRoot.of(root, "project")])
    catalog.scan()
    change = catalog.read_change(root / "dir")  # read now, applied later
    write(root / "dir" / "old.md", memory("Rewritten"))
    catalog.upsert(root / "dir" / "old.md")
    write(root / "dir" / "new.md", memory("Written"))
    catalog.upsert(root / "dir" / "new.md")
    for _ in catalog.apply_change(change):
        pass
    titles = sorted(d.title for d in catalog.snapshot().documents)
    assert titles == ["Rewritten", "Written"]
    gone = catalog.read_change(root / "dir" / "new.md")  # an old "gone" for a path rewritten
    (root / "dir" / "new.md").unlink()
    stale = type(gone)(gone.path, "gone", read_at=gone.read_at)
    write(root / "dir" / "new.md", memory("Again"))
    catalog.upsert(root / "dir" / "new.md")
    for _ in catalog.apply_change(stale):
        pass
    assert catalog.get(str(root / "dir" / "new.md")).title == "Again"


def test_a_team_root_inside_the_project_root_owns_its_files(tmp_path):
    """docs/writing.md: the default team root is `<workspace>/.memory/team`, inside the project
    root; its memories are team memories, once, and changes to either root keep the other's."""
    project = tmp_path / ".memory"
    team = project / "team"
    write(project / "p.md", memory("P"))
    write(team / "t.md", memory("T"))
    write(team / "deep" / "t2.md", memory("T2"))
    catalog = MemoryCatalog([MemoryRoot.of(project, "project"), MemoryRoot.of(team, "team")])
    catalog.scan()
    scopes = {d.title: d.scope for d in catalog.snapshot().documents}
    assert scopes == {"P": Scope.PROJECT, "T": Scope.TEAM, "T2": Scope.TEAM}
    assert catalog.count_by_root() == [1, 2]
    assert catalog.locate(team / "t.md")[0] == 1
    # The whole project root changes (a checkout): the team's memories stay team memories.
    catalog.refresh(project)
    assert {d.title: d.scope for d in catalog.snapshot().documents} == scopes
    catalog.refresh(team / "deep")
    assert catalog.get(str(team / "deep" / "t2.md")).scope is Scope.TEAM
    (team / "t.md").unlink()
    catalog.refresh(team / "t.md")
    assert sorted(d.title for d in catalog.snapshot().documents) == ["P", "T2"]


def test_ties_are_broken_project_then_team_then_user(tmp_path):
    roots = [
        MemoryRoot.of(tmp_path / "u", "user"),
        MemoryRoot.of(tmp_path / "t", "team"),
        MemoryRoot.of(tmp_path / "p", "project"),
    ]
    for root, title in zip(roots, ("U", "T", "P"), strict=True):
        write(root.path / "same.md", memory(title, body="deploy runbook"), mtime=1000)
    catalog = MemoryCatalog(roots)
    catalog.scan()
    assert [d.title for d in catalog.snapshot().documents] == ["P", "T", "U"]
