"""Taking writes back: forget (to the archive, or a hard delete), restore, undo (docs/writing.md).

Each is planned here as an operation of its own, carried out by the same
commit as every write (lock, journal, atomic files, MEMORY.md), so that it can
itself be undone — except a hard delete, the one change that is final.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from memory_recall.server.documents import INDEX_FILE_NAME
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.commit import Plan, PlannedChange
from memory_recall.server.store.edits import archive_changes, description_of, title_of
from memory_recall.server.store.errors import InvalidWrite, WriteFailed
from memory_recall.server.store.files import ARCHIVE_DIR, read_or_none, resolve_target, shown_path
from memory_recall.server.store.index_file import IndexEntry, IndexReport, index_target
from memory_recall.server.store.journal import APPLIED, Change, ChangeRecord, Journal
from memory_recall.server.store.renames import renamed_pair
from memory_recall.server.store.requests import Action, ForgetRequest, WriteSettings
from memory_recall.server.store.secrets import redact


class Planner(Protocol):
    """What taking a write back needs of the writer (`MemoryWriter` is one): the roots,
    the journal, and an empty plan of a root as every write starts."""

    journal: Journal | None
    settings: WriteSettings

    @property
    def roots(self) -> Sequence[MemoryRoot]: ...

    def new_plan(self, index: int, kind: str, trigger: str, *, uses_view: bool = True) -> Plan: ...

    def require_journal(self) -> Journal: ...

    def state_root_id(self, root: MemoryRoot) -> int: ...


# -- forget and restore --------------------------------------------------------------------------


def plan_forget(writer: Planner, request: ForgetRequest) -> Plan:
    """`forget`: a move into the root's archive, or (`hard`) a delete that purges the journal."""
    index, rel = resolve_target(writer.roots, request.path, archived=True)
    root = writer.roots[index]
    data = read_or_none(root.path / rel, root=root.path)
    if data is None:
        raise InvalidWrite("path", f"no memory {shown_path(rel)} in {root.path}")
    title = title_of(data, rel)
    plan = writer.new_plan(index, "forget", request.trigger, uses_view=False)
    plan.note = request.reason
    reason = redact(request.reason) if request.reason else None  # echoed: never a credential
    archived = rel.startswith(ARCHIVE_DIR + "/")
    if request.hard:
        plan.changes.append(
            PlannedChange(Change(rel, "deleted", data, None, title, keep_content=False))
        )
        plan.purge.append(rel)
        # Its other name (archived, or where it lived before it was archived) goes too,
        # unless another memory lives there now.
        other = _original_of(writer, root, rel) if archived else _archived_of(writer, root, rel)
        if other != rel and not (root.path / other).exists():
            plan.purge.append(other)
        plan.answers.append((0, "deleted", title, reason))
        return plan
    if archived:
        raise InvalidWrite("path", f"{rel} is already archived (hard: true deletes it)")
    plan.changes += archive_changes(rel, data, title)
    plan.answers.append((1, "archived", title, reason))
    return plan


def plan_restore(writer: Planner, path: str, trigger: str = "explicit") -> Plan:
    """`restore`: the archived copy back at its old path (beside a newer one: `-2`)."""
    index, rel = resolve_target(writer.roots, path, archived=True)
    root = writer.roots[index]
    plan = writer.new_plan(index, "restore", trigger, uses_view=False)
    if rel.startswith(ARCHIVE_DIR + "/"):
        archived, original = rel, _original_of(writer, root, rel)
    else:
        archived, original = _archived_of(writer, root, rel), rel
    data = read_or_none(root.path / archived, root=root.path)
    if data is None:
        raise InvalidWrite("path", f"no archived memory for {shown_path(original)} in {root.path}")
    title = title_of(data, original)
    folder, _, name = original.rpartition("/")
    taken = (root.path / original).exists()
    restore = PlannedChange(
        Change(original, "restored", None, data, title),
        new_in=folder if taken else None,
        slug=name.removesuffix(".md") if taken else None,
        entry=IndexEntry(original, title, description_of(data), False, float("inf")),
        moved_from=archived,
    )
    plan.changes.append(restore)
    plan.changes.append(PlannedChange(Change(archived, "restored", data, None, title)))
    plan.answers.append((0, "restored", title, None))
    return plan


def _archived_of(writer: Planner, root: MemoryRoot, rel: str) -> str:
    if writer.journal is not None:
        record = writer.journal.last_forget(writer.state_root_id(root), rel)
        if record is not None:
            # A move is two changes, the archive copy then the removal (edits.archive_changes);
            # an operation may move many memories (a consolidation): pair them by position.
            changes = record.changes
            for at, change in enumerate(changes):
                if change.path == rel and change.after_hash is None and at > 0:
                    copy = changes[at - 1]
                    if copy.path.startswith(ARCHIVE_DIR + "/") and copy.after_hash:
                        return copy.path
    return f"{ARCHIVE_DIR}/{rel}"


def _original_of(writer: Planner, root: MemoryRoot, archived: str) -> str:
    if writer.journal is not None:
        record = writer.journal.last_forget(writer.state_root_id(root), archived)
        if record is not None:
            changes = record.changes
            for at, change in enumerate(changes[:-1]):
                following = changes[at + 1]
                if change.path == archived and not following.path.startswith(ARCHIVE_DIR + "/"):
                    return following.path
    return archived.removeprefix(ARCHIVE_DIR + "/")


def _index_report(root: MemoryRoot, text: bytes | None, cap: int) -> IndexReport:
    lines = (text or b"").decode("utf-8", "replace").splitlines()
    listed = sum(1 for line in lines if index_target(line) is not None)
    return IndexReport(str(root.path / INDEX_FILE_NAME), len(lines), cap, listed, changed=True)


# -- undo ----------------------------------------------------------------------------------------


def undo_targets(writer: Planner, operation: str) -> list[str]:
    """What undoing `operation` undoes: it alone, or — when it is one of a batch (one
    consolidation of several roots) — every operation of the batch still standing,
    newest first. The operation itself is always in the list (its own refusals apply)."""
    journal = writer.journal
    record = journal.get(operation.strip()) if journal is not None else None
    if record is None or record.batch is None:
        return [operation.strip()]
    members = [
        m.id
        for m in reversed(journal.batch(record.batch))  # type: ignore[union-attr]
        if m.id == record.id or (m.state == APPLIED and not m.undone_by)
    ]
    return members


def _renamed_to(changes: Sequence[ChangeRecord], change: ChangeRecord) -> str | None:
    """For the old file of a rename (store/renames.py), coming back: the new name, whose
    statistics go back with it."""
    pair = renamed_pair(changes)
    return pair[1].path if pair is not None and change is pair[0] else None


def plan_undo(writer: Planner, operation: str, batch: str | None = None) -> Plan:
    """`undo`: every file of one operation back to its before-state, as a new operation."""
    record = writer.require_journal().get(operation.strip())
    if record is None:
        raise InvalidWrite("operation", f"unknown operation {operation!r}")
    if record.state != APPLIED:
        raise WriteFailed(f"operation {record.id} was {record.state}: there is nothing to undo")
    if record.undone_by:
        raise WriteFailed(f"operation {record.id} was already undone by {record.undone_by}")
    found = [
        (i, r) for i, r in enumerate(writer.roots) if writer.state_root_id(r) == record.root_id
    ]
    if not found:
        raise WriteFailed(f"operation {record.id} changed a root this daemon does not serve")
    index, root = found[0]
    plan = writer.new_plan(index, "undo", "undo", uses_view=False)
    plan.undoes, plan.batch = record.id, batch
    plan.redoes = record.undoes if record.kind == "undo" else None
    for change in reversed(record.changes):
        if not change.kept:
            raise WriteFailed(
                f"operation {record.id} cannot be undone: the journal does not keep the"
                f" content of {change.path} (a hard delete, or text that held a credential)"
            )
        if change.path == INDEX_FILE_NAME:  # the operation journaled MEMORY.md: back as it was
            plan.index = _index_report(root, change.before, writer.settings.index_cap)
            if change.before != change.after:
                plan.changes.append(
                    PlannedChange(Change(change.path, "undone", change.after, change.before))
                )
            continue
        if change.before == change.after:
            continue
        entry = None
        if change.before is not None and not change.path.startswith(ARCHIVE_DIR + "/"):
            entry = IndexEntry(
                change.path,
                title_of(change.before, change.path),
                description_of(change.before),
                False,
                float("inf"),
            )
        restored_title = title_of(change.before, change.path) if change.before else change.title
        plan.changes.append(
            PlannedChange(
                Change(change.path, "undone", change.after, change.before, restored_title),
                entry=entry,
                stats="updated" if entry is not None else None,
                moved_from=_renamed_to(record.changes, change),
            )
        )
        if not change.path.startswith(ARCHIVE_DIR + "/"):
            action: Action = (
                "deleted"
                if change.before is None
                else "restored"
                if change.after is None
                else "updated"
            )
            plan.answers.append(
                (len(plan.changes) - 1, action, restored_title or "", f"undoes {record.id}")
            )
    return plan
