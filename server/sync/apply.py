"""Bringing this machine's files to a merged (or pulled) commit, through the write side
(docs/sync.md, "Applying").

The files change as every write changes them: one journal operation (kind `sync`),
under the root's write lock, each file atomically, a file that changed meanwhile never
overwritten (store/commit.py) — so a pull can be undone like any write. A file whose
version here is not the one last committed (a private memory, one held back for a
credential, one edited a moment ago) is left as it is: that version is this machine's
newest and the next sync commits it on top.

MEMORY.md is the merged commit's, plus the lines of the memories that stay on this
machine. HEAD moves to the commit only once the files are there; a process killed in
between leaves a note (`.git/memory-recall/applying`) that the next sync settles.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from memory_recall.server.documents import INDEX_FILE_NAME
from memory_recall.server.pacing import paced
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.commit import Committer, Plan, PlannedChange
from memory_recall.server.store.conflicts import MAYBE_SUPERSEDES
from memory_recall.server.store.edits import archive_changes, title_of
from memory_recall.server.store.files import read_or_none
from memory_recall.server.store.index_file import (
    IndexEntry,
    IndexReport,
    file_changed_ms,
    index_target,
    plan_index,
)
from memory_recall.server.store.journal import Change, Journal
from memory_recall.server.store.memory_file import MemoryFile
from memory_recall.server.sync.git import Git, GitError, index_info
from memory_recall.server.sync.history import Removal
from memory_recall.server.sync.ledger import SYNC_KIND
from memory_recall.server.sync.outgoing import is_synced_path
from memory_recall.server.sync.repo import HeldFiles, SyncRepo


class StaleApply(Exception):
    """Another write touched these files while the sync was deciding: try again."""


@dataclass
class Applied:
    operation: str | None = None
    changed: list[str] = field(default_factory=list)
    kept_here: list[str] = field(default_factory=list)  # this machine's newer version stayed


class Applier:
    """Applies commits to one root's files."""

    def __init__(
        self,
        repo: SyncRepo,
        committer: Committer,
        journal: Journal,
        *,
        root_index: int,
        index_cap: int,
    ) -> None:
        self.repo = repo
        self.git: Git = repo.git
        self.root: MemoryRoot = repo.root
        self.committer = committer
        self.journal = journal
        self.root_index = root_index
        self.index_cap = index_cap

    def apply(
        self,
        ours: str | None,
        target: str,
        changes: Mapping[str, str | None],
        *,
        contents: Mapping[str, bytes],
        removals: Mapping[str, Removal],
        held: HeldFiles,
        note: str,
        operation: str | None = None,
    ) -> Applied:
        """Change the files from `ours` to `target` (`changes`: path → blob, None removed),
        then move HEAD and the index."""
        if ours is None:
            first = self.checkout(target)
            if first is not None:
                return first
        nested = self.repo.nested
        paths = [p for p in sorted(changes) if p != INDEX_FILE_NAME and is_synced_path(p, nested)]
        expected = self.git.tree_entries(ours, paths) if ours else {}
        wanted = [changes[p] for p in paths if changes[p] and p not in contents]
        blobs = self.git.read_blobs(
            [*(e.sha for e in expected.values()), *[w for w in wanted if w]]
        )
        out = Applied()
        planned: list[PlannedChange] = []
        purge: list[str] = []
        for path in paced(paths):  # in the daemon: recalls go first
            disk = read_or_none(self.root.path / path)
            before = blobs.get(expected[path].sha) if path in expected else None
            if disk != before:
                out.kept_here.append(path)
                continue
            sha = changes[path]
            new = contents.get(path) if path in contents else (blobs.get(sha) if sha else None)
            if sha is not None and new is None:
                raise StaleApply(f"the object for {path} is missing")
            if new == disk:
                continue
            out.changed.append(path)
            if new is not None:
                action = "created" if disk is None else "updated"
                planned.append(PlannedChange(Change(path, action, disk, new, title_of(new, path))))
                continue
            assert disk is not None
            how = removals.get(path, "archive")
            title = title_of(disk, path)
            if how == "archive":
                planned += archive_changes(path, disk, title)
            else:
                keep = how == "delete"
                planned.append(
                    PlannedChange(Change(path, "deleted", disk, None, title, keep_content=keep))
                )
                if not keep:
                    purge.append(path)
        index_change, report = self._index(target, changes, contents, held)
        if index_change is not None:
            planned.append(index_change)
        if planned:
            plan = Plan(self.root_index, self.root, SYNC_KIND, "sync", planned, uses_view=False)
            if operation:
                plan.operation_id = operation
            plan.note = note
            plan.purge = purge
            plan.index = report
            plan.seen_seq = self.journal.last_seq()
            self.repo.mark_applying(target, ours or "-", plan.operation_id)
            try:
                committed = self.committer.commit(plan)
            except BaseException:
                self.repo.clear_applying()
                raise
            if committed.stale:
                self.repo.clear_applying()
                raise StaleApply(", ".join(committed.stale[:5]))
            out.operation = plan.operation_id
        self.move_head(ours, target, changes)
        return out

    def checkout(self, target: str) -> Applied | None:
        """The first pull into a root that has committed nothing: git's own checkout (seconds
        for 10,000 memories, where writing each through the journal takes minutes; there is
        nothing here to undo). None when a file of this machine stands in the way (a private
        memory under the same name): then the journaled way, which keeps it."""
        with self.committer.lock(self.root).held():
            done = self.git.run("read-tree", "-m", "-u", target, check=False)
        if done.returncode != 0:
            if b"would be overwritten" in done.stderr:
                self.git.run("read-tree", "--empty")
                return None
            raise GitError(
                ["read-tree", target], done.returncode, done.stderr.decode("utf-8", "replace")
            )
        self.move_head(None, target, {})
        paths = self.git.tree_entries(target)
        return Applied(changed=sorted(p for p in paths if is_synced_path(p, self.repo.nested)))

    def move_head(self, ours: str | None, target: str, changes: Mapping[str, str | None]) -> None:
        """HEAD and the index at `target`: the files are there."""
        if ours is None:
            self.git.run("update-ref", "HEAD", target)
        else:
            self.git.run("update-ref", "HEAD", target, ours)
        if changes:
            self.git.run("update-index", "-z", "--index-info", input=index_info(changes.items()))
        self.git.run("update-index", "-q", "--refresh", check=False)
        self.repo.clear_applying()

    def _index(
        self,
        target: str,
        changes: Mapping[str, str | None],
        contents: Mapping[str, bytes],
        held: HeldFiles,
    ) -> tuple[PlannedChange | None, IndexReport]:
        """MEMORY.md as the target has it, with the lines of what stays on this machine."""
        path = self.root.path / INDEX_FILE_NAME
        disk = read_or_none(path)
        if INDEX_FILE_NAME in contents:
            text = contents[INDEX_FILE_NAME]
        else:
            entry = self.git.tree_entries(target, [INDEX_FILE_NAME]).get(INDEX_FILE_NAME)
            text = self.git.read_blobs([entry.sha]).get(entry.sha, b"") if entry else b""
        local_lines = {
            target_path: line
            for line in (disk or b"").decode("utf-8", "replace").splitlines()
            if (target_path := index_target(line)) is not None and target_path in held.all()
        }
        entries = {}
        for rel in local_lines:
            found = _entry(self.root.path / rel, rel)
            if found is not None:
                entries[rel] = found
        planned = plan_index(
            text.decode("utf-8", "replace"),
            entries,
            exists=lambda rel: (self.root.path / rel).is_file(),
            changed_ms=file_changed_ms(self.root.path),
            cap=self.index_cap,
            fresh=list(entries),
        )
        new = planned.text.encode("utf-8") if entries else text
        report = IndexReport(
            str(path), new.count(b"\n"), self.index_cap, planned.listed,
            planned.omitted, planned.omitted_count, changed=new != disk,
        )  # fmt: skip
        if new == disk or (disk is None and not new):
            return None, report
        return PlannedChange(Change(INDEX_FILE_NAME, "updated", disk, new, None)), report


def _entry(path: Path, rel: str) -> IndexEntry | None:
    data = read_or_none(path)
    if data is None:
        return None
    try:
        memory = MemoryFile.parse(data.decode("utf-8", "replace"))
    except ValueError:
        return None
    title = memory.get("name") or memory.get("title") or rel
    corrects = tuple(memory.get_list(MAYBE_SUPERSEDES))
    return IndexEntry(rel, title, memory.get("description") or "", False, float("inf"), corrects)
