"""This machine's changes as commits: one per journal operation, then what changed by hand
(docs/sync.md, "Commits").

Every write of the daemon is a journal operation (store/journal.py) with the content of
each file before and after. Sync replays the operations not committed yet, in order,
each as one commit built from the journal's own bytes — its kind, title, id and machine
in the message (messages.py), its time as the commit's time. What the journal does not
know (a memory edited in an editor, a file copied in) is found by `git status` and
committed after them as one `edit` commit, journaled too so that it can be undone here
and on the other machines.

Nothing reaches a commit without passing outgoing.py: memory files only, no private
memory, no credential. A file held back keeps its last committed version in the history
(a private one leaves it: making a memory private takes it off the other machines).

The index is sync's own: it equals HEAD between syncs (a sync killed half way leaves
it otherwise, and the next one puts it back).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass, field

from memory_recall.server.documents import INDEX_FILE_NAME
from memory_recall.server.pacing import paced
from memory_recall.server.store.edits import title_of
from memory_recall.server.store.journal import APPLIED, Change, OperationRecord, new_operation_id
from memory_recall.server.store.state import now_ms
from memory_recall.server.sync.git import EMPTY_TREE, blob_id, index_info
from memory_recall.server.sync.ledger import EDIT_KIND, Ledger
from memory_recall.server.sync.messages import OperationMessage, render
from memory_recall.server.sync.outgoing import held as held_reason
from memory_recall.server.sync.outgoing import is_synced_path, public_index
from memory_recall.server.sync.repo import HeldFiles, SyncRepo


@dataclass
class Recorded:
    """What recording this machine's changes did."""

    commits: int = 0
    operations: int = 0  # journal operations committed
    edits: int = 0  # files committed as changed by hand
    held: HeldFiles = field(default_factory=HeldFiles)
    verified: set[str] = field(default_factory=set)  # blobs that passed the gate this run


class Recorder:
    """Commits this machine's changes of one root."""

    def __init__(self, repo: SyncRepo, ledger: Ledger, root_id: int, machine: str) -> None:
        self.repo = repo
        self.git = repo.git
        self.ledger = ledger
        self.root_id = root_id
        self.machine = machine
        self.scratch = repo.own_dir / "scratch"
        self.out = Recorded()
        self.previous = HeldFiles()  # what the last sync held back

    def record(self) -> Recorded:
        head = self.repo.head()
        self._index_as_head(head)
        previous = self.previous = self.repo.held()
        upto = self.ledger.settled_seq(self.root_id)
        committed = self.ledger.record(self.root_id).committed_seq
        operations = [
            (seq, op) for seq, op in self.ledger.local_operations(self.root_id, committed)
            if seq <= upto
        ]  # fmt: skip
        for number, (_seq, operation) in enumerate(operations):
            record = self.ledger.journal.get(operation)
            if record is None or record.state != APPLIED:
                continue
            head = self._commit_operation(record, head, last=number == len(operations) - 1)
        self._commit_work_tree(head, previous)
        if upto > committed:
            self.ledger.set_committed(self.root_id, upto)
        self.repo.save_held(self.out.held)
        self.git.run("update-index", "-q", "--refresh", check=False)
        return self.out

    # -- the index ---------------------------------------------------------------------------

    def _index_as_head(self, head: str | None) -> None:
        if head is None:
            self.git.run("read-tree", "--empty")
            return
        if not self.git.ok("diff-index", "--cached", "--quiet", "HEAD", "--"):
            self.git.run("reset", "-q", "--mixed", "HEAD")

    def _tree(self, commit: str | None) -> str:
        return self.git.text("rev-parse", f"{commit}^{{tree}}") if commit else EMPTY_TREE

    def _stage(self, entries: Sequence[tuple[str, str | None]]) -> None:
        if entries:
            self.git.run("update-index", "-z", "--index-info", input=index_info(entries))

    def _commit(self, head: str | None, message: OperationMessage, when_s: float) -> str | None:
        """Commit the index on `head` unless it changes nothing; the new HEAD."""
        tree = self.git.text("write-tree")
        if tree == self._tree(head):
            return None
        env = self.repo.commit_env(self.machine, when_s)
        commit = self.git.commit_tree(tree, [head] if head else [], render(message), env)
        if head is None:
            self.git.run("update-ref", "HEAD", commit)
        else:
            self.git.run("update-ref", "HEAD", commit, head)
        self.out.commits += 1
        return commit

    def _blobs(self, contents: dict[str, bytes]) -> list[tuple[str, str | None]]:
        paths = list(contents)
        shas = self.git.write_blobs([contents[p] for p in paths], self.scratch)
        self.out.verified.update(shas)
        return list(zip(paths, shas, strict=True))

    def _stays(self, path: str) -> bool:
        # What this run held back so far, and (until this run has looked at them) what
        # the last one did: a line too many left out is put back by the next commit.
        return path in self.out.held.all() or path in self.previous.all()

    def _index_content(self) -> bytes | None:
        """MEMORY.md as it may be committed: without the lines of what stays here."""
        try:
            data = (self.repo.root.path / INDEX_FILE_NAME).read_bytes()
        except OSError:
            return None
        return public_index(data, self._stays)

    def _gate(self, path: str, data: bytes) -> bool:
        """Whether `data` may be committed at `path`; a held file is noted."""
        reason = held_reason(data)
        if reason is None:
            self.out.held.private.pop(path, None)
            self.out.held.credential.pop(path, None)
            return True
        target = self.out.held.private if reason.reason == "private" else self.out.held.credential
        target[path] = reason.message
        return False

    # -- one journal operation ----------------------------------------------------------------

    def _commit_operation(
        self, record: OperationRecord, head: str | None, *, last: bool
    ) -> str | None:
        nested = self.repo.nested
        staged: list[tuple[str, str | None]] = []
        contents: dict[str, bytes] = {}
        hard: list[str] = []
        title = ""
        for change in record.changes:
            path = change.path
            if path == INDEX_FILE_NAME or not is_synced_path(path, nested):
                continue
            title = title or (change.title or "")
            if change.after is None:
                if change.after_hash is not None:  # a new content the journal did not keep
                    self.out.held.credential[path] = "holds a credential; not committed"
                    continue
                staged.append((path, None))
                if change.action == "deleted" and not change.kept:
                    hard.append(path)
            elif self._gate(path, change.after):
                contents[path] = change.after
            elif path in self.out.held.private:
                staged.append((path, None))  # made private: it leaves the shared history
        if last:
            index = self._index_content()
            if index is not None and self._gate(INDEX_FILE_NAME, index):
                contents[INDEX_FILE_NAME] = index
        self._stage(staged + self._blobs(contents))
        message = OperationMessage(
            kind=record.kind,
            title=title,
            operation=record.id,
            trigger=record.trigger,
            machine=self.machine,
            undoes=record.undoes,
            note=record.note,
            time_ms=record.finished_ms or record.started_ms,
            hard_deleted=hard,
        )
        commit = self._commit(head, message, message.time_ms / 1000)
        if commit is None:
            return head
        self.out.operations += 1
        return commit

    # -- what changed by hand -----------------------------------------------------------------

    def _changed_paths(self, previous: HeldFiles) -> list[str]:
        out = self.git.run(
            "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames",
            "--ignore-submodules",
        ).stdout  # fmt: skip
        nested = self.repo.nested
        found = set()
        for record in out.split(b"\0"):
            if len(record) < 4:
                continue
            path = record[3:].decode("utf-8", "surrogateescape")
            if path == INDEX_FILE_NAME or is_synced_path(path, nested):
                found.add(path)
        found.update(p for p in previous.all() if is_synced_path(p, nested))
        found.add(INDEX_FILE_NAME)  # its public version depends on what is held
        return sorted(found)

    def _commit_work_tree(self, head: str | None, previous: HeldFiles) -> None:
        paths = self._changed_paths(previous)
        in_head = self.git.tree_entries(head, paths) if head else {}
        staged: list[tuple[str, str | None]] = []
        contents: dict[str, bytes] = {}
        for path in paced(paths):  # in the daemon: recalls go first
            if path == INDEX_FILE_NAME:
                continue  # after the memories: its public lines depend on them
            data = _read_regular(self.repo.root.path / path)
            if data is None:
                if path in in_head:
                    staged.append((path, None))
                continue
            if not self._gate(path, data):
                if path in self.out.held.private and path in in_head:
                    staged.append((path, None))
                continue
            if path not in in_head or in_head[path].sha != blob_id(data):
                contents[path] = data
        self.previous = HeldFiles()  # every file is looked at now: only this run's word counts
        index = self._index_content()
        if index is not None and self._gate(INDEX_FILE_NAME, index):
            found = in_head.get(INDEX_FILE_NAME)
            if found is None or found.sha != blob_id(index):
                contents[INDEX_FILE_NAME] = index
        elif index is None and INDEX_FILE_NAME in in_head:
            staged.append((INDEX_FILE_NAME, None))
        if not staged and not contents:
            return
        self._stage(staged + self._blobs(contents))
        memories = sorted(p for p in [*contents, *(p for p, _ in staged)] if p != INDEX_FILE_NAME)
        if head is None:
            count = f"{len(memories)} memor{'y' if len(memories) == 1 else 'ies'}"
            message = OperationMessage(
                kind="init",
                title=f"{count} from {self.machine}",
                machine=self.machine,
                time_ms=now_ms(),
            )
            self._commit(head, message, message.time_ms / 1000)
            return
        operation = new_operation_id()
        message = OperationMessage(
            kind=EDIT_KIND,
            title=_edit_title(memories),
            operation=operation,
            trigger="hand",
            machine=self.machine,
            time_ms=now_ms(),
            paths=memories if len(memories) > 1 else [],
        )
        before = self.git.read_blobs(in_head[p].sha for p in memories if p in in_head)
        commit = self._commit(head, message, now_ms() / 1000)
        if commit is None:
            return
        self.out.edits += len(memories)
        changes = []
        for path in memories:
            old = before.get(in_head[path].sha) if path in in_head else None
            new = contents.get(path)
            if old == new:
                continue
            action = "created" if old is None else "deleted" if new is None else "updated"
            changes.append(Change(path, action, old, new, title_of(new or old or b"", path)))
        if changes:
            journal = self.ledger.journal
            done = journal.begin(self.root_id, EDIT_KIND, "hand", changes, operation_id=operation)
            journal.finish(done.seq, APPLIED, result={"commit": commit})


def _edit_title(paths: Sequence[str]) -> str:
    if len(paths) == 1:
        return f"{paths[0]} changed outside memory-recall"
    return f"{len(paths)} memories changed outside memory-recall"


def _read_regular(path: os.PathLike[str]) -> bytes | None:
    """A regular file's bytes; None for anything else (absent, a symlink, a folder, a FIFO):
    sync never follows a link out of the root, nor waits on a pipe."""
    try:
        info = os.lstat(path)
    except OSError:
        return None
    if not stat.S_ISREG(info.st_mode):
        return None
    try:
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()
