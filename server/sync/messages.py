"""Commit messages: one commit per journal operation, its id and kind in trailers (docs/sync.md).

    remember: Deploys go out on Tuesdays

    Memory-Recall-Operation: op-3f2a9c1d7e4b
    Memory-Recall-Kind: remember
    Memory-Recall-Trigger: explicit
    Memory-Recall-Machine: laptop-7c1e
    Memory-Recall-Time: 1767261600123     (when it was done, in ms: "newer" in a merge)
    Memory-Recall-Undoes: op-…            (an undo)
    Memory-Recall-Hard-Delete: notes/x.md  (a hard delete: gone everywhere, not archived)

Another machine reads the trailers back to record the operation in its own journal
(which machine did what, and what an undo undid). Every message passes the secret
detector: a title or a note never carries a credential into the history.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from memory_recall.server.store.secrets import redact

PREFIX = "Memory-Recall-"
SUBJECT_CHARS = 72
LISTED_PATHS = 20  # a hand-edit commit names this many paths, then a count


@dataclass
class OperationMessage:
    """What a commit says about the operation it records."""

    kind: str
    title: str
    operation: str | None = None
    trigger: str | None = None
    machine: str | None = None
    undoes: str | None = None
    note: str | None = None
    time_ms: int | None = None
    hard_deleted: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)  # listed in the body (hand edits, merges)


def _one_line(text: str) -> str:
    return " ".join(text.split())


def render(message: OperationMessage) -> str:
    subject = _one_line(
        redact(f"{message.kind}: {message.title}" if message.title else message.kind)
    )
    if len(subject) > SUBJECT_CHARS:
        subject = subject[: SUBJECT_CHARS - 1].rstrip() + "…"
    parts = [subject]
    if message.note:
        parts.append(redact(message.note.strip()))
    if message.paths:
        shown = [f"- {p}" for p in message.paths[:LISTED_PATHS]]
        if len(message.paths) > LISTED_PATHS:
            shown.append(f"- … and {len(message.paths) - LISTED_PATHS} more")
        parts.append("\n".join(shown))
    trailers = [
        (name, value)
        for name, value in (
            ("Operation", message.operation),
            ("Kind", message.kind),
            ("Trigger", message.trigger),
            ("Machine", message.machine),
            ("Undoes", message.undoes),
            ("Time", str(message.time_ms) if message.time_ms is not None else None),
        )
        if value
    ]
    trailers += [("Hard-Delete", path) for path in message.hard_deleted]
    parts.append("\n".join(f"{PREFIX}{name}: {_one_line(value)}" for name, value in trailers))
    return "\n\n".join(parts) + "\n"


def parse(text: str) -> OperationMessage:
    """The operation a commit message records; a commit made outside memory-recall reads as
    kind `edit` with no operation id."""
    lines = text.strip().splitlines()
    subject = lines[0] if lines else ""
    values: dict[str, list[str]] = {}
    for line in lines[1:]:
        if line.startswith(PREFIX) and ": " in line:
            name, _, value = line[len(PREFIX) :].partition(": ")
            values.setdefault(name, []).append(value.strip())

    def one(name: str) -> str | None:
        found = values.get(name)
        return found[-1] if found else None

    kind = one("Kind") or "edit"
    title = subject.split(": ", 1)[1] if subject.startswith(f"{kind}: ") else subject
    return OperationMessage(
        kind=kind,
        title=title,
        operation=one("Operation"),
        trigger=one("Trigger"),
        machine=one("Machine"),
        undoes=one("Undoes"),
        time_ms=_int(one("Time")),
        hard_deleted=values.get("Hard-Delete", []),
    )


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text else None
    except ValueError:
        return None
