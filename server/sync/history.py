"""The other machines' commits, read back as the operations they record (docs/sync.md,
"Undo across machines").

Each commit another machine pushed is recorded in this machine's journal under the
operation id its message carries (messages.py), with the machine that did it and the
content of each file before and after: `memory-recall undo <id>` then works here as it
does there, and an undo that arrives marks the operation it undid as undone here too
(ledger.py). A commit made outside memory-recall (by hand, with git) is recorded as an
`edit` under an id made from its hash.

How a memory another machine removed leaves this one follows what removed it: a
forget, a consolidation or a hand deletion moves it into this root's `.archive/` (as a
forget does here); an undo deletes it (the journal keeps its content); a hard delete
deletes it and purges it from this journal too.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from memory_recall.server.documents import INDEX_FILE_NAME
from memory_recall.server.store.edits import title_of
from memory_recall.server.store.journal import Change
from memory_recall.server.sync.git import DiffEntry, Git
from memory_recall.server.sync.ledger import EDIT_KIND, Ledger
from memory_recall.server.sync.messages import OperationMessage, parse

Removal = Literal["archive", "delete", "purge"]
# Kinds whose removals are a forget's: the memory goes to the archive, restorable.
ARCHIVING_KINDS = frozenset({"forget", "consolidate", EDIT_KIND, "init"})


@dataclass
class RemoteCommit:
    commit: str
    parents: list[str]
    when_s: int
    message: OperationMessage
    changes: list[DiffEntry]

    @property
    def operation(self) -> str:
        return self.message.operation or f"git-{self.commit[:12]}"


def remote_commits(git: Git, ours: str | None, theirs: str) -> list[RemoteCommit]:
    """The commits of `theirs` that `ours` does not have, oldest first, with their changes."""
    span = [theirs] + ([f"^{ours}"] if ours else [])
    out = git.run(
        "log", "--reverse", "--topo-order", "-z", "--no-renames", "--raw", "--no-abbrev",
        "--format=%x02%H%x01%P%x01%ct%x01%B", *span,
    ).stdout.decode("utf-8", "surrogateescape")  # fmt: skip
    commits = []
    for block in out.split("\x02"):
        if not block:
            continue
        header, _, raw = block.partition("\0")
        commit, parents, when, body = header.split("\x01", 3)
        tokens = raw.split("\0")
        changes, at = [], 0
        while at + 1 < len(tokens):
            meta = tokens[at].lstrip("\n")
            if not meta.startswith(":"):
                at += 1
                continue
            fields = meta[1:].split()
            old = None if set(fields[2]) == {"0"} else fields[2]
            new = None if set(fields[3]) == {"0"} else fields[3]
            changes.append(DiffEntry(fields[4][0], tokens[at + 1], None, old, new))
            at += 2
        commits.append(RemoteCommit(commit, parents.split(), int(when), parse(body), changes))
    return commits


def removals(commits: Sequence[RemoteCommit]) -> dict[str, Removal]:
    """How each path the commits removed leaves this machine (the last commit decides)."""
    found: dict[str, Removal] = {}
    for commit in commits:
        hard = set(commit.message.hard_deleted)
        for change in commit.changes:
            if change.new_sha is not None:
                found.pop(change.path, None)
                continue
            if change.path in hard:
                found[change.path] = "purge"
            elif commit.message.kind in ARCHIVING_KINDS or not commit.message.operation:
                found[change.path] = "archive"
            else:
                found[change.path] = "delete"
    return found


def record_operations(
    git: Git, ledger: Ledger, root_id: int, commits: Sequence[RemoteCommit]
) -> list[str]:
    """Each commit (merges aside) as an operation in this machine's journal; the ids
    recorded (those it already had are left as they are)."""
    wanted = [c for c in commits if len(c.parents) <= 1 and not ledger.known(c.operation)]
    shas = {
        sha
        for c in wanted
        for change in c.changes
        if change.path != INDEX_FILE_NAME
        for sha in (change.old_sha, change.new_sha)
        if sha
    }
    blobs = git.read_blobs(shas)
    recorded = []
    for commit in wanted:
        changes = []
        for entry in commit.changes:
            if entry.path == INDEX_FILE_NAME:
                continue  # each machine keeps its own index: never undone from afar
            before = blobs.get(entry.old_sha) if entry.old_sha else None
            after = blobs.get(entry.new_sha) if entry.new_sha else None
            action = "created" if before is None else "deleted" if after is None else "updated"
            changes.append(
                Change(
                    entry.path, action, before, after, title_of(after or before or b"", entry.path)
                )
            )
        message = commit.message
        done = ledger.record_remote(
            root_id,
            operation=commit.operation,
            kind=message.kind,
            trigger=message.trigger or "git",
            machine=message.machine or "elsewhere",
            when_ms=commit.when_s * 1000,
            changes=changes,
            undoes=message.undoes,
            note=message.title,
            hard_deleted=message.hard_deleted,
        )
        if done:
            recorded.append(commit.operation)
    return recorded
