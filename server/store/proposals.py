"""Proposals: an agent's force, always, team and hard-delete writes wait for the user's word.

An agent (through MCP today; the host hooks later) may be prompt-injected, so it
may not decide alone what only the user should: to keep a text that reads as an
instruction (`force`), to load a memory into every session (`always`), to write
the team's shared memories (`scope: team`, forgetting a team memory), or to delete a
memory for good (`hard`: the journal keeps nothing of it, so nothing could undo it). Such a write
is checked by the gate as any other (a credential is refused outright and never
stored here), then kept in the state store's `proposals` table and answered
`proposed` with the proposal's id. The user lists them and confirms or rejects
each one (the editors through `memory/proposals`, `memory/confirm`,
`memory/reject`; the CLI through `memory-recall proposals | confirm ID | reject ID`).
A confirmed proposal runs as the user's own request through the writer: journaled,
its operation id recorded here, undoable with `memory/undo` like any write.
Design: docs/safety.md.
"""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
from typing import Any

from memory_recall.server.store.errors import InvalidWrite, WriteFailed
from memory_recall.server.store.files import root_key
from memory_recall.server.store.gate import MemoryDraft, check
from memory_recall.server.store.metadata import derive
from memory_recall.server.store.requests import (
    ForgetRequest,
    OperationEntry,
    RememberRequest,
    SkippedEntry,
    WriteResult,
)
from memory_recall.server.store.secrets import redact
from memory_recall.server.store.state import StateStore, now_ms

PENDING, CONFIRMED, REJECTED = "pending", "confirmed", "rejected"


@dataclass
class Proposal:
    """One proposed write, as the table keeps it."""

    id: str
    state: str
    kind: str  # remember | forget
    origin: str
    reasons: list[str]
    title: str
    request: dict[str, Any]
    created_ms: int
    decided_ms: int | None = None
    operation: str | None = None
    root: str | None = field(default=None)

    @property
    def scope(self) -> str | None:
        return self.request.get("scope")

    @property
    def text(self) -> str:
        return str(self.request.get("text", ""))

    @property
    def path(self) -> str | None:
        return self.request.get("path")


def reasons_for_remember(request: RememberRequest) -> list[str]:
    """What in an agent's `remember` needs the user: force, always, team scope."""
    reasons = []
    if request.force:
        reasons.append("force")
    if request.always:
        reasons.append("always")
    if request.scope == "team":
        reasons.append("team")
    return reasons


def new_proposal_id() -> str:
    return "prop-" + uuid.uuid4().hex[:12]


_COLUMNS = (
    "id, state, kind, origin, reasons, title, request, created_ms, decided_ms, operation, root_id"
)


class ProposalBook:
    """The `proposals` table of a state store."""

    def __init__(self, state: StateStore) -> None:
        self.state = state

    def add(self, kind: str, origin: str, reasons: list[str], title: str,
            request: dict[str, Any], root: str | None) -> Proposal:  # fmt: skip
        proposal = Proposal(new_proposal_id(), PENDING, kind, origin, reasons, title,
                            request, now_ms())  # fmt: skip
        root_id = self.state.root_id(root) if root else None
        with self.state.transaction() as tx:
            tx.execute(
                f"INSERT INTO proposals({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (proposal.id, PENDING, kind, origin, json.dumps(reasons), title,
                 json.dumps(request, ensure_ascii=False), proposal.created_ms, None, None,
                 root_id),
            )  # fmt: skip
        return proposal

    def _rows(self, where: str, params: tuple[Any, ...]) -> list[Proposal]:
        roots = {rid: path for rid, path in self.state.query("SELECT id, path FROM roots")}
        return [
            Proposal(
                row[0],
                row[1],
                row[2],
                row[3],
                json.loads(row[4]),
                row[5],
                json.loads(row[6]),
                row[7],
                row[8],
                row[9],
                roots.get(row[10]),
            )
            for row in self.state.query(
                f"SELECT {_COLUMNS} FROM proposals WHERE {where} ORDER BY created_ms, id", params
            )
        ]

    def list(self, *, everything: bool = False) -> list[Proposal]:
        return self._rows("1" if everything else "state = ?", () if everything else (PENDING,))

    def get(self, proposal_id: str) -> Proposal:
        found = self._rows("id = ?", (proposal_id.strip(),))
        if not found:
            raise InvalidWrite("id", f"no proposal {proposal_id.strip()[:40]!r}")
        return found[0]

    def record(self, proposal_id: str, operation: str | None) -> None:
        """The operation a confirmed proposal became."""
        with self.state.transaction() as tx:
            tx.execute("UPDATE proposals SET operation = ? WHERE id = ?", (operation, proposal_id))

    def reopen(self, proposal_id: str) -> None:
        """A confirmation whose write failed: the proposal waits again."""
        with self.state.transaction() as tx:
            tx.execute(
                "UPDATE proposals SET state = ?, decided_ms = NULL WHERE id = ?",
                (PENDING, proposal_id),
            )

    def decide(self, proposal_id: str, state: str, operation: str | None = None) -> Proposal:
        with self.state.transaction() as tx:
            changed = tx.execute(
                "UPDATE proposals SET state = ?, decided_ms = ?, operation = ?"
                " WHERE id = ? AND state = ?",
                (state, now_ms(), operation, proposal_id, PENDING),
            ).rowcount
        if not changed:
            raise WriteFailed(f"proposal {proposal_id} was already decided")
        return self.get(proposal_id)


def propose_remember(
    book: ProposalBook, request: RememberRequest, origin: str, root: str | None
) -> WriteResult:
    """Keep an agent's `remember` for the user, after the gate: a credential, an empty or
    oversized text, an order to the agent without `force` are refused now, as they would
    be when written (with `force`, the user's confirmation lifts the injection rule)."""
    text = request.text.strip()
    derived = derive(text) if text else None
    title = request.title or (derived.title if derived else "")
    description = request.description or (derived.description if derived else "")
    rejection = check(MemoryDraft(title, description, text), origin="remember", force=request.force)
    if rejection is not None:
        return WriteResult(
            skipped=[SkippedEntry(rejection.rule, rejection.message, redact(title) or None)]
        )
    reasons = reasons_for_remember(request)
    stored = {k: v for k, v in asdict(request).items() if v not in (None, False)}
    stored.pop("origin", None)
    stored.pop("apply", None)
    proposal = book.add("remember", origin, reasons, title, stored, root)
    return WriteResult(operations=[_proposed(proposal, request.scope or "project", title)])


def reasons_for_forget(request: ForgetRequest, *, team: bool) -> list[str]:
    """What in an agent's `forget` needs the user: a team memory, a delete for good."""
    return [reason for reason, needed in (("team", team), ("hard", request.hard)) if needed]


def propose_forget(
    book: ProposalBook,
    request: ForgetRequest,
    origin: str,
    root: str | None,
    title: str,
    *,
    scope: str,
    reasons: list[str],
) -> WriteResult:
    """Keep an agent's forget of a team memory, or its delete for good, for the user."""
    stored = {k: v for k, v in asdict(request).items() if v not in (None, False)}
    proposal = book.add("forget", origin, reasons, title, stored, root)
    return WriteResult(operations=[_proposed(proposal, scope, title, request.path)])


def _proposed(proposal: Proposal, scope: str, title: str, path: str = "") -> OperationEntry:
    why = ", ".join(proposal.reasons)
    return OperationEntry(
        proposal.id,
        "proposed",
        path,
        scope,
        title,
        f"waits for the user's confirmation ({why}): memory-recall confirm {proposal.id}",
        proposal=proposal.id,
    )


def request_of(proposal: Proposal) -> RememberRequest | ForgetRequest:
    """The user's own request a confirmed proposal becomes."""
    data = dict(proposal.request)
    if proposal.kind == "forget":
        return ForgetRequest(path=data["path"], reason=data.get("reason"),
                             hard=bool(data.get("hard")), trigger="proposal")  # fmt: skip
    allowed = set(RememberRequest.__dataclass_fields__) - {"origin", "apply", "trigger"}
    return RememberRequest(**{k: v for k, v in data.items() if k in allowed}, trigger="proposal")


def root_of(roots: Any, index: int) -> str:
    return root_key(roots[index])
