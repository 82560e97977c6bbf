"""The write side of a session: the writer built from the options, and its results on the wire.

The store (server/store) never sees the wire; this module is where its plain
results become protocol models and its errors JSON-RPC errors:
`InvalidWrite` → -32602 naming the field, `WriteFailed` → -32803 with the
reason. The CLI builds its writer here too, so a command line `remember` and
a host's `memory/remember` run the same code.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from memory_recall.protocol.messages import (
    ForgetParams,
    HistoryEntry,
    HistoryResult,
    IndexStatus,
    ListedMemory,
    ListResult,
    MemoryStatistics,
    RememberParams,
    UpdateParams,
    WriteOperation,
    WriteOptions,
    WriteResult,
    WriteSkipped,
    WriteStatus,
)
from memory_recall.protocol.messages import (
    Proposal as WireProposal,
)
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.core.background import FRESH_WAIT_S, SECONDS_PER_MEMORY, Refreshed
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.facts.tiers import ModelTier, Tier, VectorTier
from memory_recall.server.models.complete import Completer, CompletionRequest, complete_within
from memory_recall.server.organise.categories import infer_category
from memory_recall.server.ranking.registry import RankerSpec
from memory_recall.server.roots import posix_relative
from memory_recall.server.store import inventory
from memory_recall.server.store.commit import OMITTED_SHOWN
from memory_recall.server.store.errors import WriteFailed
from memory_recall.server.store.files import root_key
from memory_recall.server.store.gate import GateLimits
from memory_recall.server.store.index_file import DEFAULT_INDEX_CAP, IndexReport
from memory_recall.server.store.proposals import (
    CONFIRMED,
    PENDING,
    REJECTED,
    Proposal,
    ProposalBook,
    propose_forget,
    propose_remember,
    reasons_for_forget,
    reasons_for_remember,
    request_of,
    root_of,
)
from memory_recall.server.store.secrets import redact
from memory_recall.server.store.state import DeliveryCounter, StateStore
from memory_recall.server.store.writer import (
    ForgetRequest,
    MemoryWriter,
    RememberRequest,
    UpdateRequest,
    WriteSettings,
)
from memory_recall.server.store.writer import WriteResult as StoreResult

log = logging.getLogger("memory_recall")

# Deliveries are written to the state store this often, off the event loop.
DELIVERY_FLUSH_S = 2.0
# A reconcile answer: one short verdict per unsure pair of a write (a handful).
RECONCILE_TOKENS = 400


def categorize(
    memory_type: str, title: str, description: str, body: str, declared: str | None
) -> str:
    """The topic-tree slug of a memory (docs/organisation.md): declared when valid, else
    inferred."""
    return infer_category(
        type=memory_type, title=title, description=description, body=body, declared=declared
    ).slug


def open_state() -> tuple[StateStore | None, str | None]:
    """The user's state store, or None and why (off, unusable, written by a newer release)."""
    try:
        store = StateStore.open_default()
    except Exception as exc:  # a newer schema, an unwritable folder: recall still works
        log.warning("state store unavailable: %s", exc)
        return None, f"the state store is unavailable ({exc})"
    if store is None:
        return None, None
    return store, store.problem


class WriteSide:
    """The session's writer, its state store and the deliveries it counts."""

    def __init__(
        self,
        catalog: MemoryCatalog,
        ranker: RankerSpec,
        options: WriteOptions | None = None,
        *,
        state: StateStore | None = None,
        state_problem: str | None = None,
    ) -> None:
        options = options or WriteOptions()
        limits = GateLimits(body=options.max_chars) if options.max_chars else GateLimits()
        settings = WriteSettings(limits=limits, index_cap=options.index_cap or DEFAULT_INDEX_CAP)
        self.state = state
        self.writer = MemoryWriter(
            catalog,
            state,
            ranker=ranker,
            categorize=categorize,
            settings=settings,
            state_problem=state_problem,
        )
        self.proposals = ProposalBook(state) if state is not None else None
        self.deliveries = DeliveryCounter()
        self._root_keys = [root_key(r) for r in catalog.roots]
        self._indexes: Refreshed[list[IndexStatus]] = Refreshed("the index files' status")

    def use_tiers(
        self,
        completer: Completer | None,
        deadline_s: float,
        embed: Callable[[list[str]], Awaitable[list[list[float]]]] | None = None,
    ) -> None:
        """The tiers above the conflict rules for pairs they are unsure of (docs/writing.md):
        the semantic channel's endpoint, then the model channel's `reconcile` task."""
        tiers: list[Tier] = []
        if embed is not None:
            tiers.append(VectorTier(embed))
        if completer is not None:

            async def ask(messages: list[dict[str, str]], schema: dict[str, Any]) -> str:
                request = CompletionRequest(
                    task="reconcile",
                    messages=[{**m, "content": redact(m["content"])} for m in messages],
                    response_schema=schema,
                    max_tokens=RECONCILE_TOKENS,
                    schema_name="reconcile",
                )
                answer, _elapsed = await complete_within(completer, request, deadline_s)
                return answer

            tiers.append(ModelTier(ask))
        self.writer.tiers = tiers

    @classmethod
    def open(
        cls, catalog: MemoryCatalog, ranker: RankerSpec, options: WriteOptions | None = None
    ) -> WriteSide:
        state, problem = open_state()
        return cls(catalog, ranker, options, state=state, state_problem=problem)

    # -- an agent's writes: force, always and team wait for the user (store/proposals.py) --

    def _book(self) -> ProposalBook:
        if self.proposals is None:
            reason = self.writer.state_problem or "the state store is off"
            raise WriteFailed(f"proposals need the state store, and {reason}; nothing was kept")
        return self.proposals

    async def remember_from_agent(self, request: RememberRequest, origin: str) -> StoreResult:
        """An agent's `remember`: written at once, unless it asks for force, always or the
        team scope; then kept as a proposal the user confirms."""
        if not reasons_for_remember(request):
            return await self.writer.run_async("remember", request)
        memory_type = request.type or "project"
        index, _root = self.writer._root_for_scope(request.scope, memory_type)
        return propose_remember(self._book(), request, origin, root_of(self.writer.roots, index))

    async def forget_from_agent(
        self, request: ForgetRequest, origin: str, *, team: bool, scope: str, title: str
    ) -> StoreResult:
        """An agent's `forget`: archived at once (undoable), unless it is a team memory or
        a delete for good; then kept as a proposal the user confirms."""
        reasons = reasons_for_forget(request, team=team)
        if not reasons:
            return await self.writer.run_async("forget", request)
        return propose_forget(
            self._book(), request, origin, None, title, scope=scope, reasons=reasons
        )

    async def confirm(self, proposal_id: str) -> StoreResult:
        """The user's yes: the proposal runs as their own request (journaled, undoable)."""
        book = self._book()
        proposal = book.get(proposal_id)
        if proposal.state != PENDING:
            raise WriteFailed(f"proposal {proposal.id} was already {proposal.state}")
        book.decide(proposal.id, CONFIRMED)  # claimed: a second confirm is refused
        try:
            result = await self.writer.run_async(proposal.kind, request_of(proposal))
        except BaseException:
            book.reopen(proposal.id)
            raise
        if not result.operations:  # refused now (the gate, a missing memory): still waits
            book.reopen(proposal.id)
            return result
        book.record(proposal.id, result.operations[0].operation)
        return result

    def reject(self, proposal_id: str) -> Proposal:
        return self._book().decide(proposal_id.strip(), REJECTED)

    def list_proposals(self, *, everything: bool = False) -> list[Proposal]:
        return self._book().list(everything=everything)

    # -- statistics -----------------------------------------------------------------------

    def count_delivery(self, path: str, relative_path: str) -> None:
        """A memory delivered by a recall: counted in memory, written later in a batch."""
        located = self.writer.catalog.locate(path)
        if located is not None:
            self.deliveries.add(self._root_keys[located[0]], posix_relative(relative_path))

    def delivered_last(self, limit: int) -> list[MemoryDocument]:
        """The memories delivered most recently, in this session or an earlier one, the
        latest first, as the catalog holds them now (none without the state store)."""
        if self.state is None:
            return []
        roots = dict(zip(self._root_keys, self.writer.catalog.roots, strict=True))
        found = []
        for key, path in self.state.delivered_last(self._root_keys, limit):
            doc = self.writer.catalog.get(str(roots[key].path / path))
            if doc is not None:
                found.append(doc)
        return found

    def flush(self) -> None:
        if self.state is not None:
            try:
                self.deliveries.flush(self.state)
            except Exception as exc:
                log.warning("could not write delivery statistics: %s", exc)

    async def flush_periodically(self) -> None:
        while True:
            await asyncio.sleep(DELIVERY_FLUSH_S)
            await asyncio.to_thread(self.flush)

    # -- status -------------------------------------------------------------------------------

    async def status(self, wait_s: float = FRESH_WAIT_S) -> WriteStatus:
        """The write side for `memory/status`. Each root's MEMORY.md as the next change
        would leave it reads every memory of the root (seconds at 100,000): worked out in
        a thread when the memories or an index file changed (server.daemon.background)."""
        key = (
            self.writer.catalog.snapshot().version,
            self.writer.settings.index_cap,
            tuple(inventory.index_mtime_ns(root.path) for root in self.writer.roots),
        )
        expected = len(self.writer.catalog) * SECONDS_PER_MEMORY

        def prepare() -> Callable[[], list[IndexStatus]]:
            return self._index_reports

        indexes = await self._indexes.get(key, prepare, wait_s, expected_s=expected)
        return WriteStatus(
            state_path=str(self.state.path) if self.state else None,
            state_problem=self.writer.state_problem,
            schema_version=self.state.schema_version if self.state else None,
            indexes=indexes or [],
        )

    def _index_reports(self) -> list[IndexStatus]:
        with contextlib.suppress(Exception):  # status must answer even if a root is odd
            return [index_wire(r) for r in inventory.index_status(self.writer)]
        return []


# -- requests from the wire, results on it ---------------------------------------------------


def remember_request(p: RememberParams, trigger: str = "explicit") -> RememberRequest:
    """`memory/remember`'s params as the store's request (every face maps them here);
    `trigger` names the face in the journal."""
    return RememberRequest(
        text=p.text,
        scope=p.scope,
        type=p.type,
        title=p.title,
        description=p.description,
        pinned=p.pinned,
        always=p.always,
        force=p.force,
        category=p.category,
        trigger=trigger,
    )


def update_request(p: UpdateParams, trigger: str = "explicit") -> UpdateRequest:
    """`memory/update`'s params as the store's request."""
    return UpdateRequest(
        path=p.path,
        if_match=p.if_match,
        title=p.title,
        description=p.description,
        type=p.type,
        body=p.body,
        pinned=p.pinned,
        always=p.always,
        force=p.force,
        trigger=trigger,
    )


def forget_request(p: ForgetParams, trigger: str = "explicit") -> ForgetRequest:
    """`memory/forget`'s params as the store's request."""
    return ForgetRequest(path=p.path, reason=p.reason, hard=p.hard, trigger=trigger)


def index_wire(report: IndexReport) -> IndexStatus:
    return IndexStatus(
        path=report.path,
        lines=report.lines,
        cap=report.cap,
        listed=report.listed,
        omitted_count=report.omitted_count,
        omitted=report.omitted[:OMITTED_SHOWN],
        problem=report.problem,
    )


def result_wire(result: StoreResult) -> WriteResult:
    return WriteResult(
        operations=[
            WriteOperation(
                operation=o.operation,
                action=o.action,
                path=o.path,
                scope=o.scope,  # type: ignore[arg-type]
                title=o.title,
                reason=o.reason,
                proposal=o.proposal,
            )
            for o in result.operations
        ],
        skipped=[
            WriteSkipped(title=s.title, reason=s.reason, message=s.message) for s in result.skipped
        ],
        indexes=[index_wire(r) for r in result.indexes],
    )


def history_wire(path: str, entries: Sequence[inventory.HistoryEntry]) -> HistoryResult:
    return HistoryResult(path=path, entries=[HistoryEntry(**vars(e)) for e in entries])


def list_wire(page: inventory.Page) -> ListResult:
    out = []
    for memory in page.memories:
        fields: dict[str, Any] = dict(vars(memory))
        stats = fields.pop("stats")
        out.append(ListedMemory(**fields, stats=MemoryStatistics(**vars(stats))))
    after = page.after
    return ListResult(memories=out, next_cursor=inventory.cursor_of(after) if after else None)


def proposal_wire(proposal: Proposal) -> WireProposal:
    request = proposal.request
    return WireProposal(
        id=proposal.id,
        state=proposal.state,  # type: ignore[arg-type]
        kind=proposal.kind,  # type: ignore[arg-type]
        origin=proposal.origin,
        reasons=proposal.reasons,
        title=proposal.title,
        scope=request.get("scope"),
        path=request.get("path"),
        text=str(request.get("text", "")),
        created_ms=proposal.created_ms,
        decided_ms=proposal.decided_ms,
        operation=proposal.operation,
    )
