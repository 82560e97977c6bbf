"""Pydantic models of every protocol message (protocol/README.md; the write side: docs/writing.md).

These are the single source of truth for the wire: the daemon validates and
serializes with them, the Python client parses with them, and the JSON Schema
in `protocol/schema/` that the editors use is generated from them.

One module past 500 lines on purpose: it *is* the wire, one model per message in
the order of protocol/README.md, docs/writing.md, docs/extraction.md, docs/organisation.md,
docs/network.md, and the schema generator and the editors' types
read it as one namespace; a message shared by two areas (MemoryDoc) would
otherwise be split from its users.
"""

from __future__ import annotations

from typing import Annotated, Literal

from memory_recall.protocol.limits import (
    LIST_PAGE_LIMIT,
    MAX_CURSOR_CHARS,
    MAX_QUERY_CHARS,
    MAX_RECENT_TOOLS,
    MAX_TOOL_NAME_CHARS,
    MAX_WRITE_TEXT_CHARS,
    REFINED_LIMIT,
    SEARCH_MAX_LIMIT,
)
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

Scope = Literal["project", "user", "team"]
MemoryType = Literal["user", "feedback", "project", "reference"]
PhaseName = Literal["fast", "refined"]
Strategy = Literal["heuristic", "model", "none"]
Status = Literal["delivered", "already_delivered", "no_relevant_results"]
SelectorKind = Literal["client", "http", "none"]
EdgeKind = Literal["link", "wikilink", "related", "supersedes", "mention", "keyword", "coUse"]


class WireModel(BaseModel):
    """camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def wire(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True)


# -- initialize ---------------------------------------------------------------


class RootOption(WireModel):
    """A memory directory and its scope."""

    path: StrictStr = Field(min_length=1, description="the folder (`~` is your home)")
    scope: Scope = Field(
        default="project", description="project, team or user; ties go project, team, user"
    )
    follow_symlinks: StrictBool = Field(
        default=False, description="follow symlinks that point outside the root"
    )
    read_only: StrictBool = Field(
        default=False,
        description="recalled, never written: no memory is created, changed, archived or "
        "consolidated in it (another tool's memory folder)",
    )


class SelectorOptions(WireModel):
    """Which model picks the refined memories."""

    kind: SelectorKind = Field(
        default="none",
        description="who picks the refined memories: client (the host's own model, through "
        "memory/select), http (an OpenAI-compatible endpoint) or none (the lexical top 5)",
    )
    url: StrictStr | None = Field(
        default=None,
        description="http: base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1",
    )
    model: StrictStr | None = Field(default=None, description="http: model name")
    api_key_env: StrictStr | None = Field(
        default=None, description="http: name of the environment variable holding the API key"
    )
    timeout_ms: StrictInt | None = Field(
        default=None, gt=0, description="selector deadline; never above the 30 s ceiling"
    )
    allow_plain_http: StrictBool = Field(
        default=False,
        description="http: allow an http:// URL to a host other than this machine (the "
        "manifest, the query and the API key would travel unencrypted)",
    )


class OrganiseOptions(WireModel):
    """Retention and consolidation (docs/organisation.md)."""

    capacity: StrictInt | None = Field(
        default=None, ge=1, le=1_000_000,
        description="memories per root before the lowest-retention ones are archived "
        "(default 300)",
    )  # fmt: skip
    auto_consolidate: StrictBool = Field(
        default=False,
        description="consolidate each writable root on its own when the host has been idle, "
        "at least 24 h and 5 writes after its last consolidation",
    )
    model_merge: StrictBool = Field(
        default=True,
        description="when a model is configured (selector or host completion), it rewords "
        "each merge of duplicates into one text; the rules' line-keeping merge is written "
        "whenever its text drops a code span, path, name or number",
    )


class SyncOptions(WireModel):
    """Sync through git (docs/sync.md): for the roots set up with `memory-recall sync init`."""

    auto: StrictBool = Field(
        default=True,
        description="the daemon syncs each root set up for it (and not set to manual) on start, "
        "after writes once idle, and every intervalS; false: only `memory-recall sync`",
    )
    interval_s: StrictInt | None = Field(
        default=None, ge=30, le=86_400,
        description="seconds between two syncs that pull what the other machines pushed "
        "(default 300)",
    )  # fmt: skip
    idle_s: StrictInt | None = Field(
        default=None, ge=1, le=3_600,
        description="seconds without a write before the daemon syncs what was written "
        "(default 5)",
    )  # fmt: skip


class ContextOptions(WireModel):
    """The always-loaded memories (docs/organisation.md `memory/context`)."""

    budget_chars: StrictInt | None = Field(
        default=None, ge=100, le=1_000_000, description="characters of the block (default 4000)"
    )


class WriteOptions(WireModel):
    """How the daemon writes memories (docs/writing.md)."""

    max_chars: StrictInt | None = Field(
        default=None, gt=0, le=MAX_WRITE_TEXT_CHARS,
        description="longest memory body written, in characters (default 4000)",
    )  # fmt: skip
    index_cap: StrictInt | None = Field(
        default=None, ge=1, description="most lines in a root's MEMORY.md (default 200)"
    )


class HostCapabilities(WireModel):
    """What the host can do for the daemon (protocol v2)."""

    complete: StrictBool = Field(
        default=False,
        description="the host answers memory/complete (its own model runs extraction tasks)",
    )


class EmbeddingsOptions(WireModel):
    """Semantic recall (protocol v2, opt-in): an OpenAI-compatible `/embeddings` endpoint."""

    url: StrictStr = Field(
        min_length=1,
        description="base URL of an OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1",
    )
    model: StrictStr | None = Field(default=None, description="embedding model name")
    api_key_env: StrictStr | None = Field(
        default=None, description="name of the environment variable holding the API key"
    )
    timeout_ms: StrictInt | None = Field(
        default=None, gt=0, le=120_000,
        description="deadline of one call (a batch of documents or a query; default 10000); "
        "the fast phase waits for the query embedding at most 60 ms, whatever this says",
    )  # fmt: skip
    allow_plain_http: StrictBool = Field(
        default=False,
        description="allow an http:// URL to a host other than this machine (memory text "
        "and the API key would travel unencrypted)",
    )


class InitializationOptions(WireModel):
    """`initialize` → `initializationOptions` (all optional)."""

    roots: list[RootOption] | None = Field(
        default=None,
        description="the memory folders; default: project <workspace>/.memory, team "
        "<workspace>/.memory/team and user <user data dir>/memory-recall/memory",
    )
    selector: SelectorOptions = Field(default_factory=SelectorOptions)
    watch: StrictBool = Field(default=True, description="follow changes of the memory files")
    ranker: StrictStr | None = Field(
        default=None,
        description="bm25f (the default: whole bodies, the passage that matched, silence) or "
        "spec (the reference scorer); the old names default, indexed, reference still work",
    )
    organise: OrganiseOptions = Field(default_factory=OrganiseOptions)
    context: ContextOptions = Field(default_factory=ContextOptions)
    write: WriteOptions = Field(default_factory=WriteOptions)
    capabilities: HostCapabilities = Field(default_factory=HostCapabilities)
    embeddings: EmbeddingsOptions | None = Field(
        default=None, description="semantic recall through an embeddings endpoint; off when absent"
    )
    sync: SyncOptions = Field(default_factory=SyncOptions)


# -- memory/recall --------------------------------------------------------------


class RecallParams(WireModel):
    """`memory/recall` params."""

    query: StrictStr = Field(max_length=MAX_QUERY_CHARS)
    token: StrictStr | StrictInt | None = Field(
        default=None, description="client-chosen id echoed in every notification of this recall"
    )
    recent_tools: list[Annotated[StrictStr, Field(max_length=MAX_TOOL_NAME_CHARS)]] = Field(
        default_factory=list,
        max_length=MAX_RECENT_TOOLS,
        description="names of tools used lately (at most 256, each at most 256 characters)",
    )
    exclude_paths: list[StrictStr] = Field(default_factory=list)
    limit: StrictInt | None = Field(
        default=None, ge=1, le=REFINED_LIMIT, description="most documents in the refined phase"
    )


class StaleMark(WireModel):
    """Why a delivered memory may be outdated (docs/organisation.md)."""

    reason: str = Field(
        description="e.g. 'cites src/app/pay.ts, which no longer exists', 'expired on 2025-06-30'"
    )


class SupersededMark(WireModel):
    """An older memory a delivered one replaces: both stated one slot, this one changed it."""

    path: str
    relative_path: str
    title: str
    date: str = Field(description="the day the older memory was last written (ISO date)")


class Excerpt(WireModel):
    """Where a delivered `body` lies in the memory's whole body: code-point offsets."""

    start: int = Field(ge=0, description="offset of the first character delivered")
    end: int = Field(ge=0, description="offset just past the last character delivered")


class NetworkHop(WireModel):
    """One step of the memory-network path that reached a memory (docs/network.md)."""

    from_: str = Field(alias="from", description="the memory the step starts from (a path)")
    to: str = Field(description="the memory it reaches (a path)")
    kind: EdgeKind = Field(
        description="link, wikilink, related, supersedes (what a memory writes), mention (a "
        "memory's title written in another's body), keyword (a rare identifier or name both "
        "hold), coUse (used together, from memory/feedback)"
    )
    direction: Literal["forward", "backward"] = Field(
        description="forward: as the `from` memory wrote it; backward: seen from its target"
    )
    keyword: str | None = Field(default=None, description="the shared keyword (kind keyword)")


class MemoryDoc(WireModel):
    """One delivered memory."""

    path: str
    relative_path: str
    scope: Scope
    type: MemoryType
    title: str
    description: str
    body: str = Field(
        description="at most 1,200 characters: the whole body when it fits, else (ranker "
        "bm25f) the passage that best matches the query, cut on sentence or line boundaries "
        "where possible, or (ranker spec) the first 1,200 characters"
    )
    truncated: bool = Field(description="true when `body` is not the whole body")
    excerpt: Excerpt | None = Field(
        default=None,
        description="where `body` lies in the whole body (always sent by this daemon; "
        "absent from older ones, whose body is the first 1,200 characters)",
    )
    mtime_ms: float
    score: float
    stale: StaleMark | None = Field(
        default=None,
        description="set when a cited path is gone or `expires` has passed; the memory is "
        "delivered after the fresh ones of its phase",
    )
    content_hash: str | None = Field(
        default=None, description="the file's version: pass it as memory/update's ifMatch"
    )
    via: list[NetworkHop] | None = Field(
        default=None,
        description="set when the memory network, not the ranker, found this memory: the hops "
        "from a lexical hit to it (at most two); absent for a lexical hit",
    )
    similarity: float | None = Field(
        default=None,
        description="cosine similarity to the query, for a memory the semantic channel "
        "added to a slot the lexical result left empty (its score is then 0)",
    )
    supersedes: list[SupersededMark] | None = Field(
        default=None,
        description="older memories of this recall that state the same fact with another "
        "value: newer wins, they are not delivered (or, when an earlier phase already "
        "sent one, this marks it as replaced); absent when none",
    )
    perhaps_corrects: list[SupersededMark] | None = Field(
        default=None,
        description="older memories of this recall that this one may correct: the writer "
        "linked the two (`maybeSupersedes`) when the conflict rules leaned so but could not "
        "settle it. Both are delivered, never one hidden on a lean; absent when none",
    )
    confidence: float | None = Field(
        default=None,
        ge=0.0,
        le=1.0,
        description="fast phase (ranker bm25f): how likely this memory answers the query, "
        "a probability calibrated on labelled corpora. The fast phase delivers 0, 1 or 2 "
        "memories by it (silence when none is likely); absent in the refined phase and for "
        "the spec ranker",
    )


class SemanticReport(WireModel):
    """What the semantic channel did in one phase (absent when the channel is off)."""

    filled: int = Field(description="documents of this phase that came from the channel")
    query_ms: float | None = Field(
        default=None, description="how long the query embedding took, when it came back"
    )
    failure: str | None = Field(
        default=None,
        description="why the channel gave nothing to this phase: late, HTTP error, wrong "
        "count or dimension, a value that is not a number (lexical results are unaffected)",
    )


class PhaseResult(WireModel):
    """One phase of a recall."""

    phase: PhaseName
    strategy: Strategy
    status: Status
    docs: list[MemoryDoc]
    prompt: str = Field(description="ready-to-inject markdown, empty when there are no docs")
    elapsed_ms: float = Field(description="since the request arrived")
    failure: str | None = Field(
        default=None, description="why the model's answer was not used, when it was not"
    )
    semantic: SemanticReport | None = Field(
        default=None, description="the semantic channel's part (protocol v2, when configured)"
    )


class PhaseNotification(PhaseResult):
    """`memory/fastResult` and `memory/refinedResult` params."""

    request_id: StrictStr | StrictInt
    token: StrictStr | StrictInt | None = None


class RecallResult(WireModel):
    """`memory/recall` result, sent after the lifecycle ends."""

    request_id: StrictStr | StrictInt
    token: StrictStr | StrictInt | None = None
    fast: PhaseResult | None
    refined: PhaseResult | None
    docs_scanned: int
    duration_ms: float


# -- memory/select (server → client) ---------------------------------------------


class SelectCandidate(WireModel):
    path: str
    type: MemoryType
    mtime_ms: float
    description: str
    via: list[NetworkHop] | None = Field(
        default=None, description="set for a memory only the memory network found (see MemoryDoc)"
    )
    similarity: float | None = Field(
        default=None, description="cosine similarity to the query (semantic channel), if known"
    )


class SelectParams(WireModel):
    query: str
    candidates: list[SelectCandidate]
    limit: int
    recent_tools: list[str]


class SelectResult(WireModel):
    selected: list[StrictStr]


# -- memory/complete (server → client, protocol v2) ---------------------------------

CompletionTask = Literal["extract", "reconcile", "consolidate"]


class ChatMessage(WireModel):
    role: Literal["system", "user", "assistant"]
    content: str


class CompleteParams(WireModel):
    """`memory/complete`: the daemon asks the host's model for one JSON answer."""

    task: CompletionTask
    messages: list[ChatMessage]
    response_schema: dict[str, object] = Field(
        description="JSON Schema the answer's content must satisfy (it is validated anyway)"
    )
    max_tokens: int


class CompleteResult(WireModel):
    content: StrictStr = Field(description="the model's answer: JSON text per responseSchema")


# -- telemetry/event ----------------------------------------------------------------


class RecallTelemetry(WireModel):
    """The one terminal `telemetry/event` of every recall."""

    event: Literal["memory/recall"] = "memory/recall"
    request_id: StrictStr | StrictInt
    token: StrictStr | StrictInt | None = None
    outcome: Literal["completed", "cancelled", "failed"]
    phase: PhaseName | None = Field(description="the last phase delivered")
    strategy: Strategy | None
    status: Status | None
    docs_scanned: int
    docs_selected: int = Field(description="documents delivered over both phases")
    fast_docs: int
    refined_docs: int
    duration_ms: float
    selector_kind: SelectorKind
    selector_latency_ms: float | None
    failure: str | None = None


# -- memory/status --------------------------------------------------------------------


class RootStatus(WireModel):
    path: str
    scope: Scope
    exists: bool
    documents: int


class SkippedFileStatus(WireModel):
    path: str
    reason: str


class WatcherStatus(WireModel):
    state: Literal["off", "starting", "watching", "polling", "failed", "stopped"]
    detail: str | None = None


class RecallCounters(WireModel):
    recalls: int = 0
    completed: int = 0
    cancelled: int = 0
    failed: int = 0
    fast_delivered: int = 0
    refined_delivered: int = 0
    selector_failures: int = 0
    active: int = 0


class CatalogCountersStatus(WireModel):
    scans: int
    upserts: int
    removals: int
    skipped_updates: int


class RuntimeStatus(WireModel):
    """What the process holds right now: a leak shows as a count that stays up after load."""

    tasks: int = Field(description="asyncio tasks alive in the daemon")
    pending_requests: int = Field(
        description="requests the daemon sent to the host (memory/select) still awaiting a reply"
    )
    exclusion_sets: int = Field(description="per-recall exclusion sets alive (one per recall)")


class SemanticStatus(WireModel):
    """The semantic channel in `memory/status` (absent when it is off)."""

    model: str
    documents: int = Field(description="memories with a vector now")
    pending: int = Field(description="memories still waiting for one")
    embedded: int = Field(description="vectors the endpoint computed this session")
    reused: int = Field(description="vectors found in the state store's cache")
    query_failures: int
    failure: str | None = Field(default=None, description="the last background failure")


SyncState = Literal["off", "idle", "syncing", "offline", "error", "blocked"]


class SyncHeldFile(WireModel):
    path: str = Field(description="inside the root")
    reason: str = Field(description="private, or the credential kinds it holds (never the value)")


class SyncRootStatus(WireModel):
    """One root set up for sync through git (docs/sync.md)."""

    path: str
    remote: str | None = Field(description="the remote, without any user or token in it")
    branch: str
    auto: bool = Field(description="the daemon syncs this root on its own")
    state: SyncState = Field(
        description="off (automatic sync not on), idle, syncing, offline (the remote cannot be "
        "reached: work goes on, the daemon retries), error, blocked (a credential in a commit "
        "not pushed: `memory-recall sync rewrite-history`)"
    )
    ahead: int = Field(description="commits here the remote has not got")
    behind: int = Field(description="commits the remote had at the last fetch that are not here")
    pending: int = Field(description="writes not committed yet (they are at the next sync)")
    last_sync_ms: int | None = Field(description="the last sync that reached the remote")
    last_error: str | None = None
    retry_at_ms: int | None = Field(
        default=None, description="when the daemon tries again after a failure (back-off)"
    )
    held: list[SyncHeldFile] = Field(
        default_factory=list, description="files that stay on this machine"
    )
    secrets: list[str] = Field(
        default_factory=list,
        description="credentials found in the history (path and commit, never the value)",
    )


class StatusResult(WireModel):
    """`memory/status` result."""

    protocol_version: int
    ready: bool
    roots: list[RootStatus]
    documents: int
    skipped: list[SkippedFileStatus]
    index_build_ms: float | None
    ranker: str
    selector: SelectorKind
    watcher: WatcherStatus
    recall: RecallCounters
    catalog: CatalogCountersStatus
    faults: list[str] = Field(
        default_factory=list,
        description="what is wrong now, in words: a root that cannot be read, a snapshot cache "
        "that cannot be written, a failed watcher (each also shown once with window/showMessage)",
    )
    runtime: RuntimeStatus | None = Field(
        default=None, description="always sent by this daemon; optional for older ones"
    )
    write: WriteStatus | None = Field(default=None, description="the write side (protocol v2)")
    extract: ExtractCounters | None = Field(
        default=None, description="extraction calls and outcomes (protocol v2)"
    )
    semantic: SemanticStatus | None = Field(
        default=None, description="the semantic channel, when configured (protocol v2)"
    )
    usage: list[CategoryUsage] | None = Field(
        default=None,
        description="per category of the topic tree (docs/organisation.md): how often its memories "
        "were recalled, "
        "delivered and used (memory/feedback); null without the state store",
    )
    stale: list[StaleMemory] | None = Field(
        default=None, description="memories that may be outdated now, with the reason"
    )
    network: NetworkStatus | None = Field(default=None, description="the memory network")
    suggestions: SuggestionStatus | None = Field(
        default=None, description="memory/observe events and the suggestions they brought"
    )
    sync: list[SyncRootStatus] | None = Field(
        default=None,
        description="the roots set up for sync through git (docs/sync.md); null without the "
        "state store",
    )


# -- the write side (docs/writing.md) -------------------------------------------------------------

WriteAction = Literal[
    "created", "updated", "merged", "unchanged", "archived", "restored", "deleted", "proposed"
]
_TEXT = Field(min_length=1, max_length=MAX_WRITE_TEXT_CHARS)
_PATH = Field(min_length=1, max_length=4096, description="a memory's path, as recall gives it")


class RememberParams(WireModel):
    """`memory/remember`: the user's explicit "remember this". Missing metadata is derived."""

    text: StrictStr = _TEXT
    scope: Scope | None = Field(
        default=None, description="default: user for type user, else project; team only by name"
    )
    type: MemoryType | None = None
    title: StrictStr | None = Field(default=None, max_length=MAX_WRITE_TEXT_CHARS)
    description: StrictStr | None = Field(default=None, max_length=MAX_WRITE_TEXT_CHARS)
    category: StrictStr | None = Field(default=None, max_length=200)
    pinned: StrictBool | None = None
    always: StrictBool | None = None
    force: StrictBool = Field(
        default=False, description="write it even though it reads like an instruction to the agent"
    )


class UpdateParams(WireModel):
    """`memory/update`: edit one memory; only the fields given change."""

    path: StrictStr = _PATH
    if_match: StrictStr | None = Field(
        default=None, description="the contentHash last seen; a file changed since is not touched"
    )
    title: StrictStr | None = Field(default=None, min_length=1, max_length=MAX_WRITE_TEXT_CHARS)
    description: StrictStr | None = Field(default=None, max_length=MAX_WRITE_TEXT_CHARS)
    type: MemoryType | None = None
    body: StrictStr | None = Field(default=None, max_length=MAX_WRITE_TEXT_CHARS)
    pinned: StrictBool | None = None
    always: StrictBool | None = None
    force: StrictBool = False


class ForgetParams(WireModel):
    """`memory/forget`: move to `<root>/.archive/`; `hard: true` deletes (irreversibly)."""

    path: StrictStr = _PATH
    reason: StrictStr | None = Field(default=None, max_length=2000)
    hard: StrictBool = False


class RestoreParams(WireModel):
    """`memory/restore`: bring an archived memory back (its old path or its archived one)."""

    path: StrictStr = _PATH


class UndoParams(WireModel):
    """`memory/undo`: put back every file one operation touched."""

    operation: StrictStr = Field(min_length=1, max_length=200)


class HistoryParams(WireModel):
    """`memory/history`: a memory's versions, from the journal."""

    path: StrictStr = _PATH


class ListParams(WireModel):
    """`memory/list`: memories with their statistics, a page at a time (in input order)."""

    scope: Scope | None = None
    category: StrictStr | None = Field(
        default=None, max_length=200, description="a topic-tree slug: `lessons` or `lessons/errors`"
    )
    limit: StrictInt | None = Field(
        default=None, ge=1, le=LIST_PAGE_LIMIT,
        description=f"most memories in this page (default and at most {LIST_PAGE_LIMIT})",
    )  # fmt: skip
    cursor: StrictStr | None = Field(
        default=None, min_length=1, max_length=MAX_CURSOR_CHARS,
        description="the `nextCursor` of the previous page: the page after it",
    )  # fmt: skip


class WriteOperation(WireModel):
    """One thing an operation did (or, `proposed`, would do)."""

    operation: str = Field(description="the operation id: memory/undo takes it")
    action: WriteAction
    path: str
    scope: Scope
    title: str
    reason: str | None = Field(default=None, description="why: the conflict verdict, the reason")
    proposal: str | None = Field(
        default=None,
        description="action `proposed` of an agent's write the user must confirm: the id"
        " memory/confirm and memory/reject take",
    )


class WriteSkipped(WireModel):
    """A memory not written, and the gate rule that stopped it (the text is never echoed)."""

    title: str | None = None
    reason: str = Field(
        description="secret | injection | size | ephemeral; extraction adds malformed | limit"
        " | unreadable (a workspace file projectInit could not parse)"
    )
    message: str


class IndexStatus(WireModel):
    """A root's MEMORY.md: its lines against the cap, and the memories that do not fit."""

    path: str
    lines: int
    cap: int
    listed: int
    omitted_count: int = Field(description="memories without a line: the cap is reached")
    omitted: list[str] = Field(description="the first of them, by path inside the root")
    problem: str | None = Field(default=None, description="why the file could not be rewritten")


class WriteResult(WireModel):
    """What every write request returns (docs/writing.md)."""

    operations: list[WriteOperation]
    skipped: list[WriteSkipped]
    indexes: list[IndexStatus] = Field(
        default_factory=list, description="MEMORY.md of each root the operation changed"
    )


# -- proposals: an agent's force, always and team writes, confirmed by the user --------------

ProposalState = Literal["pending", "confirmed", "rejected"]


class ProposalsParams(WireModel):
    """`memory/proposals`: the writes agents proposed; pending ones unless `all`."""

    all: StrictBool = Field(default=False, description="also the confirmed and rejected ones")


class Proposal(WireModel):
    """A write an agent asked for that needs the user's word (force, always or team scope)."""

    id: str
    state: ProposalState
    kind: Literal["remember", "forget"]
    origin: str = Field(description="who proposed it: mcp (an agent through MCP), hook …")
    reasons: list[str] = Field(description="why it waits: force, always, team")
    title: str
    scope: Scope | None = None
    path: str | None = Field(default=None, description="forget: the memory it would archive")
    text: str = Field(description="remember: the text it would write (passed the secret gate)")
    created_ms: float
    decided_ms: float | None = None
    operation: str | None = Field(
        default=None, description="once confirmed: the journal operation (memory/undo takes it)"
    )


class ProposalsResult(WireModel):
    proposals: list[Proposal]


class ProposalParams(WireModel):
    """`memory/confirm` / `memory/reject`: one proposal by its id."""

    id: StrictStr = Field(min_length=1, max_length=100)


class RejectResult(WireModel):
    proposal: Proposal


# -- memory/extract (docs/extraction.md)
# ----------------------------------------------------------------

ExtractTrigger = Literal["sessionEnd", "codeAccepted", "projectInit", "explicit"]
MAX_TRANSCRIPT_TURNS = (
    2_000  # longer sessions are cut to a budget anyway; one message stays bounded
)


class ExtractTurn(WireModel):
    role: Literal["user", "assistant", "system", "tool"]
    content: StrictStr = Field(max_length=MAX_WRITE_TEXT_CHARS * 4)


class ExtractFile(WireModel):
    path: StrictStr = Field(min_length=1, max_length=4096)
    content: StrictStr | None = Field(default=None, max_length=MAX_WRITE_TEXT_CHARS * 4)


class ExtractParams(WireModel):
    """`memory/extract`: memories from a session, accepted code, or the workspace."""

    trigger: ExtractTrigger
    transcript: list[ExtractTurn] | None = Field(default=None, max_length=MAX_TRANSCRIPT_TURNS)
    files: list[ExtractFile] | None = Field(default=None, max_length=200)
    diff: StrictStr | None = Field(default=None, max_length=MAX_WRITE_TEXT_CHARS * 4)
    scope: Scope | None = Field(default=None, description="default project; team: proposals only")
    apply: StrictBool = Field(
        default=True,
        description="false: the same decisions with action `proposed`, nothing written",
    )


class ExtractModelStatus(WireModel):
    kind: Literal["client", "http"]
    elapsed_ms: float | None = Field(description="the model call, when it answered")


class ExtractTranscriptStatus(WireModel):
    """What the model was shown of the session."""

    turns: int
    turns_cut: int = Field(description="turns left out to fit the budget")
    chars_cut: int
    redactions: int = Field(
        description="secrets replaced by [REDACTED:kind] before the model saw them"
    )


class ExtractResult(WriteResult):
    """`memory/extract` result: the writes (or proposals), every skip with its reason."""

    failure: str | None = Field(
        default=None, description="why the model gave no usable answer; nothing was written"
    )
    model: ExtractModelStatus | None = Field(default=None, description="null for projectInit")
    transcript: ExtractTranscriptStatus | None = None


class ExtractCounters(WireModel):
    calls: int = 0
    completed: int = 0
    refused: int = Field(default=0, description="model triggers without a model (-32803)")
    failed: int = 0
    model_failures: int = 0
    written: int = Field(default=0, description="memories created or updated")
    skipped: int = 0


class HistoryEntry(WireModel):
    """One change to one file, as the journal holds it."""

    operation: str
    kind: str = Field(description="remember | update | forget | restore | undo")
    trigger: str
    time_ms: int
    action: str
    path: str
    title: str | None
    before_hash: str | None
    after_hash: str | None
    before: str | None = Field(description="content before; null when absent or not kept")
    after: str | None = Field(description="content after; null when absent or not kept")
    kept: bool = Field(description="false: a hard delete or a credential; not undoable")
    undone_by: str | None
    undoes: str | None
    note: str | None


class HistoryResult(WireModel):
    path: str
    entries: list[HistoryEntry]


class MemoryStatistics(WireModel):
    writes: int
    delivered: int
    last_delivered_ms: int | None
    created_ms: int | None
    updated_ms: int | None


class ListedMemory(WireModel):
    path: str
    relative_path: str
    scope: Scope
    type: MemoryType
    title: str
    description: str
    category: str | None
    pinned: bool
    always: bool
    created: str | None
    updated: str | None
    expires: str | None
    content_hash: str
    mtime_ms: float
    stats: MemoryStatistics


class ListResult(WireModel):
    memories: list[ListedMemory]
    next_cursor: str | None = Field(
        default=None,
        description="more memories follow: pass it as `cursor` for the next page; null on the"
        " last page",
    )


class WriteStatus(WireModel):
    """`memory/status` → `write`: where the journal is and what each MEMORY.md holds."""

    state_path: str | None = Field(description="the state database; null when it is off")
    state_problem: str | None = None
    schema_version: int | None = None
    indexes: list[IndexStatus]


# -- organisation (docs/organisation.md) ---------------------------------------------------------

PlaceSource = Literal["declared", "declared-top", "inferred"]


class TreeParams(WireModel):
    """`memory/tree`: the topic tree of one scope, or of every root."""

    scope: Scope | None = None


class TreeMember(WireModel):
    path: str
    relative_path: str
    scope: Scope
    title: str
    source: PlaceSource = Field(
        description="declared: `category:` front matter; declared-top: its category declared, "
        "the subcategory inferred; inferred: by the rules"
    )


class TreeNode(WireModel):
    """A category or subcategory; `count` includes its subcategories' members."""

    slug: str = Field(description="`lessons`, `lessons/errors`: what `category:` may say")
    label: str
    count: int
    members: list[TreeMember]
    children: list[TreeNode] = Field(default_factory=list)


class TreeResult(WireModel):
    """`memory/tree` result: the five categories (docs/organisation.md order), empty ones
    included."""

    categories: list[TreeNode]
    total: int


class ContextParams(WireModel):
    """`memory/context`: the always-loaded block (`always: true` memories)."""

    budget_chars: StrictInt | None = Field(
        default=None, ge=100, le=1_000_000,
        description="characters; default: context.budgetChars of initialize, else 4000",
    )  # fmt: skip


class ContextDoc(WireModel):
    path: str
    relative_path: str
    scope: Scope
    type: MemoryType
    title: str
    chars: int = Field(description="its section's size in the prompt")


class ContextOmission(ContextDoc):
    reason: str


class ContextResult(WireModel):
    """`memory/context` result: what fits, in order, and what did not (never dropped silently)."""

    prompt: str = Field(description="`## Always-loaded memory` and one section per doc; '' if none")
    docs: list[ContextDoc]
    truncated: list[ContextOmission] = Field(
        description="the always-loaded memories that did not fit the budget"
    )
    budget_chars: int
    used_chars: int


# -- memory/consolidate (docs/organisation.md)
# ------------------------------------------------------------

ArchiveCause = Literal["merged", "superseded", "covered", "capacity"]
NoticeKind = Literal["stale", "protected", "possible", "over-capacity"]


class ConsolidateParams(WireModel):
    """`memory/consolidate`: merge duplicates, newer wins, prune to capacity, rebuild MEMORY.md."""

    scope: Scope | None = Field(default=None, description="only the roots of this scope")
    dry_run: StrictBool = Field(default=False, description="report the plan, change nothing")


class ConsolidationMerge(WireModel):
    into: str = Field(description="the newest duplicate, which keeps every distinct line")
    merged_from: list[str]
    added_lines: int
    merged_by: Literal["rules", "model"] = Field(
        default="rules",
        description="who wrote the merged text: the line-keeping rules or a model",
    )
    note: str | None = Field(
        default=None, description="why the rules' text was kept although a model is configured"
    )


class ConsolidationSupersede(WireModel):
    path: str = Field(description="the newer memory, kept")
    supersedes: list[str] = Field(description="relative paths of the older ones, archived")


class ConsolidationArchive(WireModel):
    path: str
    cause: ArchiveCause
    reason: str
    into: str | None = Field(default=None, description="the memory holding its content or fact")
    retention: float | None = Field(default=None, description="its score, when over capacity")


class ConsolidationNotice(WireModel):
    """Something consolidation saw and only reports (it never changes these)."""

    path: str
    kind: NoticeKind
    reason: str


class ConsolidationReport(WireModel):
    """One root's consolidation: what it found and did (or, in a dry run, would do)."""

    root: str
    scope: Scope
    capacity: int
    before: int
    after: int
    operation: str | None = Field(default=None, description="the journal operation: undo takes it")
    merges: list[ConsolidationMerge]
    supersessions: list[ConsolidationSupersede]
    archived: list[ConsolidationArchive]
    notices: list[ConsolidationNotice]
    pairs_judged: int
    elapsed_ms: dict[str, float]


class ConsolidateResult(WireModel):
    """`memory/consolidate` result: the reports, and the write result of what was carried out."""

    dry_run: bool
    reports: list[ConsolidationReport]
    operations: list[WriteOperation] = Field(default_factory=list)
    skipped: list[WriteSkipped] = Field(default_factory=list)
    indexes: list[IndexStatus] = Field(default_factory=list)


# -- memory/search (docs/network.md) ------------------------------------------------------------

SearchMode = Literal["shallow", "deep", "explore", "get"]


class SearchParams(WireModel):
    """`memory/search`: the memory tool of a host's agent.

    shallow: `query` against titles and descriptions (no bodies); deep: `query` against
    whole bodies, with the matching passage and the memories the network reaches;
    explore: a subtree of the topic tree — `category`, or the place of `path` (a
    memory) or of the query's best hit, the network's finds from there first; get: the
    memory at `path` (its path or relative path), whole body.
    """

    mode: SearchMode
    query: StrictStr = Field(default="", max_length=MAX_QUERY_CHARS)
    limit: StrictInt | None = Field(
        default=None, ge=1, le=SEARCH_MAX_LIMIT, description="most memories returned (default 10)"
    )
    path: StrictStr | None = Field(
        default=None, min_length=1, max_length=4096,
        description="get, explore: a memory's path (as recall gives it) or relative path",
    )  # fmt: skip
    category: StrictStr | None = Field(
        default=None, min_length=1, max_length=100,
        description="explore: a topic-tree slug, `lessons` or `lessons/errors`",
    )  # fmt: skip
    scope: Scope | None = Field(default=None, description="only this scope's memories")


class SearchDoc(WireModel):
    """One memory a search found."""

    path: str
    relative_path: str
    scope: Scope
    type: MemoryType
    title: str
    description: str
    category: str = Field(description="its place on the topic tree, e.g. 'lessons/errors'")
    source: Literal["lexical", "network", "tree", "path"] = Field(
        description="lexical: the ranker matched it; network: reached from a match or from "
        "`path` (see `via`); tree: a member of the explored subtree; path: the memory asked for"
    )
    body: str | None = Field(
        description="deep: the passage that matched (at most 1,200 characters); get: the whole "
        "body; shallow and explore: null"
    )
    truncated: bool = Field(description="true when `body` is not the whole body")
    excerpt: Excerpt | None = Field(default=None, description="where `body` lies in the body")
    mtime_ms: float
    score: float | None = Field(description="the ranker's score; null when it did not score it")
    activation: float | None = Field(
        default=None, description="network finds: the activation that reached it (0–1)"
    )
    via: list[NetworkHop] | None = Field(
        default=None, description="network finds: the hops that reached it (at most two)"
    )
    stale: StaleMark | None = None
    content_hash: str | None = None


class SearchSubtree(WireModel):
    """explore: the place searched, how many memories sit under it, its subcategories."""

    slug: str
    label: str
    count: int
    children: list[SearchSubtree] = Field(default_factory=list)


class SearchResult(WireModel):
    """`memory/search` result."""

    mode: SearchMode
    query: str
    docs: list[SearchDoc]
    total: int = Field(description="memories found before `limit` cut the list")
    subtree: SearchSubtree | None = Field(default=None, description="explore only")
    network: bool = Field(description="deep, explore: whether the memory network was used")
    prompt: str = Field(description="the result as markdown for the agent; empty when none")
    elapsed_ms: float


# -- memory/observe → memory/suggestion (docs/network.md) ---------------------------------------

ObserveEvent = Literal["edit", "error", "toolResult", "command"]


class ObserveParams(WireModel):
    """`memory/observe` (a notification): what the agent is doing right now.

    edit: `path` was edited; error: `text` is an error message (with the `path` it
    names, if any); toolResult: a tool's output; command: a command line run.
    """

    event: ObserveEvent
    path: StrictStr | None = Field(default=None, min_length=1, max_length=4096)
    text: StrictStr | None = Field(
        default=None, max_length=MAX_WRITE_TEXT_CHARS,
        description="error, toolResult, command: the text (its first 20,000 characters "
        "are read)",
    )  # fmt: skip


class SuggestionTrigger(WireModel):
    """What a suggestion answers: the observed event (its text cut to 200 characters)."""

    event: ObserveEvent
    path: str | None = None
    text: str | None = None


class SuggestedDoc(MemoryDoc):
    """A suggested memory: a delivered memory plus why it was suggested."""

    category: str = Field(description="lessons/… or conventions/…")
    evidence: list[str] = Field(
        description="what matched, e.g. 'cites src/lib/redis.ts', 'shares econnreset'"
    )


class SuggestionNotification(WireModel):
    """`memory/suggestion` (server → client): lessons or conventions that apply now.

    Each memory is suggested at most once per session; suggestions are rate-limited
    and never sent while a recall's fast phase is pending.
    """

    trigger: SuggestionTrigger
    docs: list[SuggestedDoc]
    prompt: str = Field(description="ready-to-inject markdown")


# -- reflection (docs/network.md) ----------------------------------------------------------------

FeedbackVerdict = Literal["used", "ignored"]


class FeedbackItem(WireModel):
    id: StrictStr = Field(
        min_length=1, max_length=4096, description="a delivered memory's path (as recall gave it)"
    )
    verdict: FeedbackVerdict


class FeedbackParams(WireModel):
    """`memory/feedback`: which delivered memories the host's model used (docs/network.md).

    A notification per docs/network.md; sent as a request (with an id) it answers a
    FeedbackResult. `used`/`ignored` are docs/network.md's lists; `items` says the same per
    memory; all three may be combined. `token` (or `requestId`) names the recall the
    memories were delivered by: memories used together in one recall become co-use
    links in the memory network.
    """

    token: StrictStr | StrictInt | None = None
    request_id: StrictStr | StrictInt | None = None
    used: list[Annotated[StrictStr, Field(min_length=1, max_length=4096)]] = Field(
        default_factory=list, max_length=REFINED_LIMIT * 4
    )
    ignored: list[Annotated[StrictStr, Field(min_length=1, max_length=4096)]] = Field(
        default_factory=list, max_length=REFINED_LIMIT * 4
    )
    items: list[FeedbackItem] = Field(default_factory=list, max_length=REFINED_LIMIT * 4)


class FeedbackResult(WireModel):
    """`memory/feedback` answered as a request: what was recorded."""

    recorded: int = Field(description="memories whose statistics changed")
    unknown: list[str] = Field(
        default_factory=list, description="paths that are not memories the daemon serves"
    )
    co_use_links: int = Field(description="pairs of memories linked as used together")


class CategoryUsage(WireModel):
    """`memory/status` → `usage`: one category's statistics (summed over its memories)."""

    category: str = Field(description="e.g. 'lessons/errors'")
    memories: int
    recalled: int = Field(description="times its memories were among a recall's candidates")
    delivered: int = Field(description="times its memories were sent in a phase")
    used: int = Field(description="times a host said its model used one (memory/feedback)")
    ignored: int


class StaleMemory(WireModel):
    path: str
    reason: str


class SuggestionStatus(WireModel):
    observed: int = Field(default=0, description="memory/observe events taken")
    matched: int = Field(default=0, description="events that matched at least one memory")
    sent: int = Field(default=0, description="memory/suggestion notifications")
    deferred: int = Field(default=0, description="held back until a recall's first result")
    dropped: int = Field(default=0, description="dropped: too many events were waiting")
    settled: int = Field(
        default=0, description="events whose handling is over (sent, or nothing to send)"
    )


class NetworkStatus(WireModel):
    memories: int
    edges: int = Field(description="edges between memories, keyword nodes counted once per pair")
    co_use_pairs: int
    build_ms: float | None = Field(description="the last build from scratch")
    loaded_from_state: bool = Field(description="co-use links loaded from the state store at start")


# -- memory/explain (docs/network.md) --------------------------------------------------------------


class ExplainParams(WireModel):
    """`memory/explain`: why a memory was or was not delivered.

    Names the recall by `token` (a recall this daemon ran lately, with its query
    and what it delivered) or by `query` (ranked now, as a recall would). `path`
    is a memory's path or its relative path.
    """

    path: StrictStr = Field(min_length=1, max_length=4096)
    token: StrictStr | StrictInt | None = None
    query: StrictStr | None = Field(default=None, max_length=MAX_QUERY_CHARS)
    recent_tools: list[Annotated[StrictStr, Field(max_length=MAX_TOOL_NAME_CHARS)]] = Field(
        default_factory=list, max_length=MAX_RECENT_TOOLS
    )
    ranker: StrictStr | None = Field(
        default=None, description="explain under this ranker (default: the daemon's)"
    )


class ScorePart(WireModel):
    """One addend of the ranker's score: the parts sum to `score`."""

    field: str = Field(description="title, description, body, type (the spec boost), …")
    term: str | None = Field(description="the query term, null for a part of no one term")
    value: float
    detail: str | None = Field(default=None, description="how the ranker got the value")


class SilenceExplain(WireModel):
    """bm25f's silence rule: how much of the query the memory covers."""

    coverage: float = Field(description="share of the query's weight the memory matches")
    threshold: float
    silenced: bool = Field(description="true when the rule drops the memory")
    detail: str | None = None


class NetworkExplain(WireModel):
    activation: float
    seed: str = Field(description="the lexical hit the path starts from")
    via: list[NetworkHop]
    describe: str = Field(description="the path in words")


class PhaseExplain(WireModel):
    phase: PhaseName
    delivered: bool
    rank: int | None = Field(description="1-based place in the phase's list, when in it")
    reason: str


class ExplainResult(WireModel):
    """`memory/explain` result."""

    path: str
    relative_path: str | None
    title: str | None
    found: bool = Field(description="false when no memory served has this path")
    query: str
    ranker: str
    tokens: list[str] = Field(description="the query's terms under this ranker")
    rank: int | None = Field(description="1-based rank in the ranker's list, null when unranked")
    ranked: int = Field(description="how many memories the ranker returned")
    score: float | None
    parts: list[ScorePart] = Field(description="per field and term; they sum to `score`")
    silence: SilenceExplain | None
    network: NetworkExplain | None
    stale: StaleMark | None
    noise: bool = Field(description="removed as active-tool noise (docs/ranking.md)")
    excluded: bool = Field(description="in the recall's excludePaths")
    candidate: bool = Field(description="in the model's manifest (candidates)")
    phases: list[PhaseExplain]
    summary: str = Field(description="which phase sent it, or why none did, in words")


ALL_MODELS: tuple[type[WireModel], ...] = (
    InitializationOptions,
    ProposalsParams,
    ProposalsResult,
    ProposalParams,
    RejectResult,
    RecallParams,
    RecallResult,
    PhaseNotification,
    SelectParams,
    SelectResult,
    CompleteParams,
    CompleteResult,
    ExtractParams,
    ExtractResult,
    RecallTelemetry,
    StatusResult,
    TreeParams,
    TreeResult,
    ContextParams,
    ContextResult,
    ConsolidateParams,
    ConsolidateResult,
    RememberParams,
    UpdateParams,
    ForgetParams,
    RestoreParams,
    UndoParams,
    HistoryParams,
    ListParams,
    WriteResult,
    HistoryResult,
    ListResult,
    SearchParams,
    SearchResult,
    ObserveParams,
    SuggestionNotification,
    FeedbackParams,
    FeedbackResult,
    ExplainParams,
    ExplainResult,
)

StatusResult.model_rebuild()  # it refers to WriteStatus, defined after it
