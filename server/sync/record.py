"""This machine's changes as commits: one per journal operation, then what changed by hand
(docs/sync.md, "Commits").

Every write of the daemon is a journal operation (store/journal.py) with the content of
each file before and after. Sync replays the operations not committed yet, in order,
each as one commit built from the journal's own bytes — its kind, title, id and machine
in the message (messages.py), its time as the commit's time. What the journal does not
know (a memory edited in an editor, a file copied in) is found by `git status` and
committed after them as one `edit` commit, journaled too so that it can be undone here
and on the other machines. The commits of one sync go into the repository in one
`git fast-import` (git.py): the bytes that passed the gate are the bytes stored.

Nothing reaches a commit without passing outgoing.py: memory files only, no private
memory, no credential. A file held back keeps its last committed version in the history
(a private one leaves it: making a memory private takes it off the other machines).

The index is sync's own: it equals HEAD between syncs (a sync killed half way leaves
it otherwise, and the next one puts it back).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from memory_recall.server.documents import INDEX_FILE_NAME, content_hash
from memory_recall.server.pacing import paced
from memory_recall.server.store.edits import title_of
from memory_recall.server.store.journal import (
    APPLIED,
    HARD_DELETED,
    Change,
    OperationRecord,
    new_operation_id,
)
from memory_recall.server.store.state import now_ms
from memory_recall.server.sync.git import NewCommit, blob_id, import_commits, index_info
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


@dataclass
class _Commit:
    message: OperationMessage
    when_ms: int
    files: dict[str, bytes | None]  # path → new bytes (None: removed)
    edit: bool = False  # changed by hand: journaled once committed
    before: dict[str, bytes | None] = field(default_factory=dict)  # a hand edit's old bytes


class Recorder:
    """Commits this machine's changes of one root."""

    def __init__(self, repo: SyncRepo, ledger: Ledger, root_id: int, machine: str) -> None:
        self.repo = repo
        self.git = repo.git
        self.ledger = ledger
        self.root_id = root_id
        self.machine = machine
        self.out = Recorded()
        self.previous = HeldFiles()  # what the last sync held back
        self.state: dict[str, str] = {}  # path → blob, as the commits so far leave the tree
        self.known: dict[str, bytes | None] = {}  # the bytes this run committed, by path
        self.status: list[str] = []  # what `git status` found changed
        self.hard: dict[str, str] = {}  # content hash → path, of files gone from the disk

    def record(self) -> Recorded:
        head = self.repo.head()
        self._index_as_head(head)
        self.previous = self.repo.held()
        tree = {p: e.sha for p, e in self.git.tree_entries(head).items()} if head else {}
        self.state = dict(tree)
        self.status, gone = self._status()
        self.hard = self._gone_by_hash(gone, tree)
        upto = self.ledger.settled_seq(self.root_id)
        committed = self.ledger.record(self.root_id).committed_seq
        operations = [
            op for seq, op in self.ledger.local_operations(self.root_id, committed) if seq <= upto
        ]
        commits: list[_Commit] = []
        touched: set[str] = set()
        for number, operation in enumerate(operations):
            record = self.ledger.journal.get(operation)
            if record is None or record.state != APPLIED:
                continue
            found = self._operation(record, last=number == len(operations) - 1)
            if found is not None:
                commits.append(found)
                touched.update(found.files)
        edit = self._work_tree(head, touched)
        if edit is not None:
            commits.append(edit)
        if commits:
            self._write(head, commits, tree)
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

    # -- what may be committed ---------------------------------------------------------------

    def _stays(self, path: str) -> bool:
        # What this run held back so far, and (until this run has looked at them) what
        # the last one did: a line too many left out is put back by the next commit.
        return path in self.out.held.all() or path in self.previous.all()

    def _index_content(self) -> bytes | None:
        """MEMORY.md as it may be committed: without the lines of what stays here."""
        data = _read_regular(self.repo.root.path / INDEX_FILE_NAME)
        return None if data is None else public_index(data, self._stays)

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

    def _changes(self, files: dict[str, bytes | None]) -> dict[str, bytes | None]:
        """The files that differ from the tree as the earlier commits leave it; the state
        moves on with them."""
        out: dict[str, bytes | None] = {}
        for path, data in files.items():
            sha = None if data is None else blob_id(data)
            if self.state.get(path) == sha:
                continue
            out[path] = data
            self.known[path] = data
            if sha is None:
                self.state.pop(path, None)
            else:
                self.state[path] = sha
                self.out.verified.add(sha)
        return out

    # -- one journal operation ----------------------------------------------------------------

    def _operation(self, record: OperationRecord, *, last: bool) -> _Commit | None:
        nested = self.repo.nested
        files: dict[str, bytes | None] = {}
        hard: list[str] = []
        title = ""
        for change in record.changes:
            path = change.path
            if path == HARD_DELETED:  # the journal forgot its name: the gone file's it was
                path = self.hard.get(change.before_hash or "", path)
            if path == INDEX_FILE_NAME or not is_synced_path(path, nested):
                continue
            title = title or (change.title or "")
            if change.after is None:
                if change.after_hash is not None:  # a new content the journal did not keep
                    self.out.held.credential[path] = "holds a credential; not committed"
                    continue
                files[path] = None
                if change.action == "deleted" and not change.kept:
                    hard.append(path)
            elif self._gate(path, change.after):
                files[path] = change.after
            elif path in self.out.held.private:
                files[path] = None  # made private: it leaves the shared history
        if last:
            index = self._index_content()
            if index is not None and self._gate(INDEX_FILE_NAME, index):
                files[INDEX_FILE_NAME] = index
        changed = self._changes(files)
        if not changed:
            return None
        when = record.finished_ms or record.started_ms
        message = OperationMessage(
            kind=record.kind,
            title=title,
            operation=record.id,
            trigger=record.trigger,
            machine=self.machine,
            undoes=record.undoes,
            note=record.note,
            time_ms=when,
            hard_deleted=[p for p in hard if p in changed],
        )
        self.out.operations += 1
        return _Commit(message, when, changed)

    # -- what changed by hand -----------------------------------------------------------------

    def _status(self) -> tuple[list[str], list[str]]:
        """What `git status` sees changed, and which of those files are gone."""
        out = self.git.run(
            "status", "--porcelain", "-z", "--untracked-files=all", "--no-renames",
            "--ignore-submodules",
        ).stdout  # fmt: skip
        changed, gone = [], []
        for record in out.split(b"\0"):
            if len(record) > 3:
                path = record[3:].decode("utf-8", "surrogateescape")
                changed.append(path)
                if record[1:2] == b"D":
                    gone.append(path)
        return changed, gone

    def _gone_by_hash(self, gone: Sequence[str], tree: dict[str, str]) -> dict[str, str]:
        """The files gone from the disk by their content hash: a hard delete's journal rows
        keep only that (store/journal.py), and its commit must still name the file."""
        shas = {p: tree[p] for p in gone if p in tree}
        blobs = self.git.read_blobs(shas.values())
        return {content_hash(blobs[s]): p for p, s in shas.items() if s in blobs}

    def _candidates(self, touched: Iterable[str]) -> list[str]:
        """Paths that may differ from the tree: what `git status` sees, what the last sync
        held back, and what this run's operations wrote (a hand edit may have followed)."""
        nested = self.repo.nested
        found = {*touched, *self.status, *self.previous.all()}
        return sorted(p for p in found if p != INDEX_FILE_NAME and is_synced_path(p, nested))

    def _work_tree(self, head: str | None, touched: Iterable[str]) -> _Commit | None:
        files: dict[str, bytes | None] = {}
        for path in paced(self._candidates(touched)):  # in the daemon: recalls go first
            full = self.repo.root.path / path
            data = _read_regular(full)
            if data is None and os.path.lexists(full):
                continue  # a symlink, a folder, a pipe: never committed, never taken as removed
            if data is None:
                files[path] = None
            elif self._gate(path, data):
                files[path] = data
            elif path in self.out.held.private:
                files[path] = None
        self.previous = HeldFiles()  # every file is looked at now: only this run's word counts
        index = self._index_content()
        if index is None:
            files[INDEX_FILE_NAME] = None
        elif self._gate(INDEX_FILE_NAME, index):
            files[INDEX_FILE_NAME] = index
        # What each file held before this edit: this run's commits wrote it, or HEAD has it.
        written = {p: self.known[p] for p in files if p in self.known}
        in_head = {p: self.state[p] for p in files if p not in self.known and p in self.state}
        changed = self._changes(files)
        if not changed:
            return None
        memories = sorted(p for p in changed if p != INDEX_FILE_NAME)
        now = now_ms()
        if head is None and not self.out.operations:
            count = f"{len(memories)} memor{'y' if len(memories) == 1 else 'ies'}"
            message = OperationMessage(
                kind="init", title=f"{count} from {self.machine}", machine=self.machine,
                time_ms=now,
            )  # fmt: skip
            return _Commit(message, now, changed)
        message = OperationMessage(
            kind=EDIT_KIND,
            title=_edit_title(memories),
            operation=new_operation_id(),
            trigger="hand",
            machine=self.machine,
            time_ms=now,
            paths=memories if len(memories) > 1 else [],
        )
        old = self.git.read_blobs(in_head[p] for p in memories if p in in_head)
        before = {p: written[p] if p in written else old.get(in_head.get(p, "")) for p in memories}
        return _Commit(message, now, changed, edit=True, before=before)

    # -- into the repository -----------------------------------------------------------------

    def _write(self, head: str | None, commits: Sequence[_Commit], tree: dict[str, str]) -> None:
        env = self.repo.commit_env
        made = import_commits(
            self.git,
            head,
            [
                NewCommit(render(c.message), env(self.machine, c.when_ms / 1000), c.files)
                for c in commits
            ],
        )
        if head is None:
            self.git.run("update-ref", "HEAD", made[-1])
        else:
            self.git.run("update-ref", "HEAD", made[-1], head)  # only if nothing moved it
        self.out.commits += len(made)
        changed = {
            p: self.state.get(p)
            for p in set(tree) | set(self.state)
            if tree.get(p) != self.state.get(p)
        }
        if changed:
            self.git.run("update-index", "-z", "--index-info", input=index_info(changed.items()))
        for commit, sha in zip(commits, made, strict=True):
            if commit.edit:
                self._journal_edit(commit, sha)

    def _journal_edit(self, commit: _Commit, sha: str) -> None:
        """The hand edit as a journal operation (undoable here; its id travels)."""
        changes = []
        hard = set(self.hard.values())
        for path, new in commit.files.items():
            if path == INDEX_FILE_NAME or (new is None and path in hard):
                continue  # a hard delete is journaled by its own operation, content purged
            old = commit.before.get(path)
            if old == new:
                continue
            action = "created" if old is None else "deleted" if new is None else "updated"
            changes.append(Change(path, action, old, new, title_of(new or old or b"", path)))
        if changes and commit.message.operation:
            self.out.edits += len(changes)
            journal = self.ledger.journal
            done = journal.begin(
                self.root_id, EDIT_KIND, "hand", changes, operation_id=commit.message.operation
            )
            journal.finish(done.seq, APPLIED, result={"commit": sha})


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
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read()
