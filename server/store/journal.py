"""The journal: every change to a memory file, recorded before it happens (docs/writing.md).

An operation (one `remember`, one `forget`, one undo …) is a row with its id,
time, trigger and state, and one change row per file it touches with the
content before and after. The operation is written as `pending` before any
file changes and marked `applied` after the last one, so a process killed in
between leaves a record that `recover` settles under the root's lock:

- every file already holds its new content: the operation is marked applied;
- some do, the others still hold their old content: the rest is applied
  (the operation is replayed to its end);
- none does: nothing happened, the operation is `discarded`;
- a file holds neither (someone edited it since): it is left alone and the
  operation marked `interrupted`.

Content that holds a credential is not kept (only its hash), and neither is
the content of a hard delete: the journal never stores a secret, and a hard
delete stays irreversible. Such a change cannot be undone, and says why.
"""

from __future__ import annotations

import json
import os
import sqlite3
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_recall.server.documents import INDEX_FILE_NAME, content_hash
from memory_recall.server.store.secrets import find_secrets, redact
from memory_recall.server.store.state import StateStore, now_ms

# What the journal calls a hard-deleted memory's path once it is purged.
HARD_DELETED = "(hard-deleted)"

PENDING, APPLIED, FAILED, DISCARDED, INTERRUPTED = (
    "pending",
    "applied",
    "failed",
    "discarded",
    "interrupted",
)


@dataclass
class Change:
    """One file an operation changes: `before` must be on disk, `after` will be (None: absent)."""

    path: str  # inside the root, `/`-separated
    action: str  # created | updated | merged | unchanged | archived | restored | renamed | deleted
    before: bytes | None
    after: bytes | None
    title: str | None = None
    keep_content: bool = True  # False: journal only the hashes (hard delete)
    temp: str | None = None  # the temp file name the write goes through

    @property
    def before_hash(self) -> str | None:
        return None if self.before is None else content_hash(self.before)

    @property
    def after_hash(self) -> str | None:
        return None if self.after is None else content_hash(self.after)


@dataclass
class ChangeRecord:
    """A change as the journal holds it; content is None when absent or not kept."""

    position: int
    path: str
    action: str
    title: str | None
    before: bytes | None
    after: bytes | None
    before_hash: str | None
    after_hash: str | None
    temp: str | None
    kept: bool


@dataclass
class OperationRecord:
    seq: int
    id: str
    root_id: int
    kind: str
    trigger: str
    state: str
    started_ms: int
    finished_ms: int | None
    undoes: str | None
    undone_by: str | None
    note: str | None
    result: dict[str, Any] | None
    batch: str | None = None  # shared by the operations of one request over several roots
    changes: list[ChangeRecord] = field(default_factory=list)


def _keepable(data: bytes | None) -> bool:
    if data is None:
        return True
    return not find_secrets(data.decode("utf-8", "replace"))


def new_operation_id() -> str:
    return "op-" + uuid.uuid4().hex[:12]


def new_batch_id() -> str:
    return "batch-" + uuid.uuid4().hex[:12]


_OPERATION_COLUMNS = (
    "seq, id, root_id, kind, trigger, state, started_ms, finished_ms, undoes, undone_by,"
    " note, result, batch"
)
_CHANGE_COLUMNS = (
    "position, path, action, title, before, after, before_hash, after_hash, temp, kept"
)


class Journal:
    """The journal tables of a state store."""

    def __init__(self, store: StateStore) -> None:
        self.store = store

    def begin(
        self,
        root_id: int,
        kind: str,
        trigger: str,
        changes: Sequence[Change],
        *,
        operation_id: str | None = None,
        undoes: str | None = None,
        note: str | None = None,
        batch: str | None = None,
    ) -> OperationRecord:
        """Record an operation as pending, with every change, before any file changes."""
        op_id = operation_id or new_operation_id()
        started = now_ms()
        note = redact(note) if note else None
        with self.store.transaction() as tx:
            cursor = tx.execute(
                "INSERT INTO operations(id, root_id, kind, trigger, state, started_ms, undoes,"
                " pid, note, batch) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    op_id,
                    root_id,
                    kind,
                    trigger,
                    PENDING,
                    started,
                    undoes,
                    os.getpid(),
                    note,
                    batch,
                ),
            )
            seq = int(cursor.lastrowid or 0)
            for position, change in enumerate(changes):
                kept = change.keep_content and _keepable(change.before) and _keepable(change.after)
                tx.execute(
                    f"INSERT INTO changes(operation_seq, root_id, {_CHANGE_COLUMNS})"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        seq,
                        root_id,
                        position,
                        change.path,
                        change.action,
                        change.title,
                        change.before if kept else None,
                        change.after if kept else None,
                        change.before_hash,
                        change.after_hash,
                        change.temp,
                        int(kept),
                    ),
                )
        record = self.get(op_id)
        assert record is not None
        return record

    def finish(
        self,
        seq: int,
        state: str,
        *,
        result: dict[str, Any] | None = None,
        tx: sqlite3.Connection | None = None,
    ) -> None:
        """Mark an operation applied / failed / discarded / interrupted."""
        sql = "UPDATE operations SET state = ?, finished_ms = ?, result = ? WHERE seq = ?"
        params = (state, now_ms(), json.dumps(result) if result is not None else None, seq)
        if tx is not None:
            tx.execute(sql, params)
        else:
            with self.store.transaction() as own:
                own.execute(sql, params)

    @staticmethod
    def mark_undone(tx: sqlite3.Connection, operation_id: str, by: str | None) -> None:
        tx.execute("UPDATE operations SET undone_by = ? WHERE id = ?", (by, operation_id))

    @staticmethod
    def forget_content(tx: sqlite3.Connection, root_id: int, path: str) -> None:
        """A hard delete: nothing of the memory at `path` stays in the journal — no
        version of its text, no title, not its name (a file name is made from the title):
        its rows keep only their hashes under a placeholder path, the operations that
        touched it lose their note and name it by the placeholder in their result, and a
        MEMORY.md version that listed it is dropped too (docs/safety.md)."""
        seqs = [
            row[0]
            for row in tx.execute(
                "SELECT DISTINCT operation_seq FROM changes WHERE root_id = ? AND path = ?",
                (root_id, path),
            )
        ]
        if not seqs:
            return
        tx.execute(
            "UPDATE changes SET before = NULL, after = NULL, kept = 0, title = NULL, path = ?"
            " WHERE root_id = ? AND path = ?",
            (HARD_DELETED, root_id, path),
        )
        link = f"]({path})".encode()
        for seq, position, before, after in tx.execute(
            "SELECT operation_seq, position, before, after FROM changes"
            " WHERE root_id = ? AND path = ?",
            (root_id, INDEX_FILE_NAME),
        ).fetchall():
            if (before and link in before) or (after and link in after):
                tx.execute(
                    "UPDATE changes SET before = NULL, after = NULL, kept = 0"
                    " WHERE operation_seq = ? AND position = ?",
                    (seq, position),
                )
        marks = ",".join("?" * len(seqs))
        for seq, result in tx.execute(
            f"SELECT seq, result FROM operations WHERE seq IN ({marks})", seqs
        ).fetchall():
            cleaned = result.replace(json.dumps(path)[1:-1], HARD_DELETED) if result else result
            tx.execute(
                "UPDATE operations SET note = NULL, result = ? WHERE seq = ?", (cleaned, seq)
            )

    # -- reading ----------------------------------------------------------------------------

    def _records(self, where: str, params: Sequence[object]) -> list[OperationRecord]:
        rows = self.store.query(
            f"SELECT {_OPERATION_COLUMNS} FROM operations WHERE {where} ORDER BY seq", params
        )
        records = []
        for row in rows:
            result = json.loads(row[11]) if row[11] else None
            record = OperationRecord(*row[:11], result, row[12])  # type: ignore[call-arg]
            record.changes = [
                ChangeRecord(*change[:9], bool(change[9]))  # type: ignore[call-arg]
                for change in self.store.query(
                    f"SELECT {_CHANGE_COLUMNS} FROM changes WHERE operation_seq = ?"
                    " ORDER BY position",
                    (record.seq,),
                )
            ]
            records.append(record)
        return records

    def get(self, operation_id: str) -> OperationRecord | None:
        found = self._records("id = ?", (operation_id,))
        return found[0] if found else None

    def batch(self, batch: str) -> list[OperationRecord]:
        """The operations of one batch, oldest first."""
        return self._records("batch = ?", (batch,))

    def pending(self, root_id: int) -> list[OperationRecord]:
        return self._records("root_id = ? AND state = ?", (root_id, PENDING))

    def history(self, root_id: int, paths: Sequence[str]) -> list[OperationRecord]:
        """Applied operations that touched any of `paths`, oldest first."""
        if not paths:
            return []
        marks = ", ".join("?" for _ in paths)
        return self._records(
            f"state = '{APPLIED}' AND seq IN (SELECT operation_seq FROM changes"
            f" WHERE root_id = ? AND path IN ({marks}))",
            (root_id, *paths),
        )

    def last_seq(self) -> int:
        return int(self.store.query("SELECT COALESCE(MAX(seq), 0) FROM operations")[0][0])

    def changed_since(self, root_id: int, seq: int) -> tuple[int, list[str]]:
        """The newest operation's seq in the root and the paths changed after `seq`."""
        rows = self.store.query(
            "SELECT c.path, o.seq FROM changes c JOIN operations o ON o.seq = c.operation_seq"
            " WHERE o.root_id = ? AND o.seq > ? ORDER BY o.seq",
            (root_id, seq),
        )
        newest = max((row[1] for row in rows), default=seq)
        return newest, list(dict.fromkeys(row[0] for row in rows))

    def last_forget(self, root_id: int, path: str) -> OperationRecord | None:
        """The latest applied, not undone, forget (or consolidation) that archived `path`
        (or to `path`)."""
        found = self._records(
            f"state = '{APPLIED}' AND kind IN ('forget', 'consolidate') AND undone_by IS NULL"
            " AND seq IN"
            " (SELECT operation_seq FROM changes WHERE root_id = ? AND path = ?)",
            (root_id, path),
        )
        return found[-1] if found else None
