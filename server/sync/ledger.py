"""What sync keeps in the state store (docs/sync.md): this machine's name, per synced root
the journal position already committed and the last outcome, and the journal's record
of operations other machines did.

The tables come from the state store's migration "sync through git" (store/state.py):
`machine` (one row), `sync_roots`, and `operations.machine` (NULL: done here).
"""

from __future__ import annotations

import os
import re
import socket
import uuid
from collections.abc import Sequence
from dataclasses import dataclass

from memory_recall.server.store.journal import APPLIED, Change, Journal
from memory_recall.server.store.state import StateStore, now_ms

# Operations that are not this machine's own writes to commit: what sync itself applied,
# and (machine IS NOT NULL) what it recorded of other machines.
SYNC_KIND = "sync"
# A change found on disk and committed by sync itself (a hand edit): journaled and
# committed in one step, never replayed.
EDIT_KIND = "edit"
MACHINE_NAME_CHARS = 24


def _host() -> str:
    try:
        name = socket.gethostname().split(".")[0]
    except OSError:
        name = ""
    name = re.sub(r"[^A-Za-z0-9-]+", "-", name).strip("-").lower()
    return name[:MACHINE_NAME_CHARS] or "machine"


def machine_id(store: StateStore) -> str:
    """This machine's name in commits and in other machines' journals: its host name and a
    random suffix, chosen once per state store (`devbox-7c1e`)."""
    found = store.query("SELECT id FROM machine LIMIT 1")
    if found:
        return str(found[0][0])
    chosen = os.environ.get("MEMORY_RECALL_MACHINE") or f"{_host()}-{uuid.uuid4().hex[:4]}"
    with store.transaction() as tx:
        again = tx.execute("SELECT id FROM machine LIMIT 1").fetchone()
        if again:
            return str(again[0])
        tx.execute("INSERT INTO machine(id) VALUES (?)", (chosen,))
    return chosen


@dataclass
class SyncRecord:
    """One root's sync bookkeeping."""

    committed_seq: int = 0
    last_attempt_ms: int | None = None
    last_sync_ms: int | None = None
    last_error: str | None = None
    failures: int = 0


class Ledger:
    """Sync's rows of one state store."""

    def __init__(self, store: StateStore) -> None:
        self.store = store
        self.journal = Journal(store)

    def record(self, root_id: int) -> SyncRecord:
        rows = self.store.query(
            "SELECT committed_seq, last_attempt_ms, last_sync_ms, last_error, failures"
            " FROM sync_roots WHERE root_id = ?",
            (root_id,),
        )
        return SyncRecord(*rows[0]) if rows else SyncRecord()

    def _upsert(self, root_id: int, **values: object) -> None:
        names = list(values)
        marks = ", ".join("?" for _ in names)
        updates = ", ".join(f"{n} = excluded.{n}" for n in names)
        with self.store.transaction() as tx:
            tx.execute(
                f"INSERT INTO sync_roots(root_id, {', '.join(names)}) VALUES (?, {marks})"
                f" ON CONFLICT(root_id) DO UPDATE SET {updates}",
                (root_id, *values.values()),
            )

    def set_committed(self, root_id: int, seq: int) -> None:
        self._upsert(root_id, committed_seq=seq)

    def attempted(self, root_id: int, error: str | None) -> None:
        """A sync ended: its time, and the error (None: it succeeded)."""
        when = now_ms()
        if error is None:
            self._upsert(
                root_id, last_attempt_ms=when, last_sync_ms=when, last_error=None, failures=0
            )
        else:
            failures = self.record(root_id).failures + 1
            self._upsert(root_id, last_attempt_ms=when, last_error=error, failures=failures)

    # -- the journal as sync reads it ---------------------------------------------------------

    def local_operations(self, root_id: int, after_seq: int) -> list[tuple[int, str]]:
        """This machine's applied writes after `after_seq`, oldest first: `(seq, id)`."""
        rows = self.store.query(
            "SELECT seq, id FROM operations WHERE root_id = ? AND seq > ? AND state = ?"
            " AND machine IS NULL AND kind NOT IN (?, ?) ORDER BY seq",
            (root_id, after_seq, APPLIED, SYNC_KIND, EDIT_KIND),
        )
        return [(int(seq), str(op)) for seq, op in rows]

    def pending_count(self, root_id: int, after_seq: int) -> int:
        rows = self.store.query(
            "SELECT COUNT(*) FROM operations WHERE root_id = ? AND seq > ? AND state = ?"
            " AND machine IS NULL AND kind NOT IN (?, ?)",
            (root_id, after_seq, APPLIED, SYNC_KIND, EDIT_KIND),
        )
        return int(rows[0][0])

    def settled_seq(self, root_id: int) -> int:
        """The newest journal position below which no operation of the root is still being
        written (a pending one is committed when it has settled)."""
        pending = self.store.query(
            "SELECT MIN(seq) FROM operations WHERE root_id = ? AND state = 'pending'", (root_id,)
        )[0][0]
        return int(pending) - 1 if pending is not None else self.journal.last_seq()

    def known(self, operation: str) -> bool:
        return bool(self.store.query("SELECT 1 FROM operations WHERE id = ?", (operation,)))

    def machine_of(self, operation: str) -> str | None:
        rows = self.store.query("SELECT machine FROM operations WHERE id = ?", (operation,))
        return rows[0][0] if rows else None

    def record_remote(
        self,
        root_id: int,
        *,
        operation: str,
        kind: str,
        trigger: str,
        machine: str,
        when_ms: int,
        changes: Sequence[Change],
        undoes: str | None,
        note: str | None,
        hard_deleted: Sequence[str] = (),
    ) -> bool:
        """An operation another machine did, as this journal's record of it (applied there,
        its files brought here by the sync operation): undo works on it here, and an undo
        it carries marks what it undid. False when the journal already has it."""
        if self.known(operation):
            return False
        record = self.journal.begin(
            root_id, kind, trigger, changes, operation_id=operation, undoes=undoes, note=note
        )
        with self.store.transaction() as tx:
            self.journal.finish(record.seq, APPLIED, tx=tx, result={"machine": machine})
            tx.execute(
                "UPDATE operations SET machine = ?, started_ms = ?, finished_ms = ?, pid = NULL"
                " WHERE seq = ?",
                (machine, when_ms, when_ms, record.seq),
            )
            for path in hard_deleted:
                Journal.forget_content(tx, root_id, path)
            if undoes:
                undone = tx.execute(
                    "SELECT kind, undoes FROM operations WHERE id = ?", (undoes,)
                ).fetchone()
                Journal.mark_undone(tx, undoes, operation)
                if undone is not None and undone[0] == "undo" and undone[1]:
                    Journal.mark_undone(tx, undone[1], None)  # undoing an undo: a redo
        return True
