"""Pydantic models of every protocol message (SPEC §5; the write side of §7–8).

These are the single source of truth for the wire: the daemon validates and
serializes with them, the Python client parses with them, and the JSON Schema
in `protocol/schema/` that the editors use is generated from them.
"""

from __future__ import annotations

from typing import Annotated, Literal

from memory_recall.protocol.limits import (
    MAX_QUERY_CHARS,
    MAX_RECENT_TOOLS,
    MAX_TOOL_NAME_CHARS,
    MAX_WRITE_TEXT_CHARS,
    REFINED_LIMIT,
)
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

Scope = Literal["project", "user", "team"]
MemoryType = Literal["user", "feedback", "project", "reference"]
PhaseName = Literal["fast", "refined"]
Strategy = Literal["heuristic", "model", "none"]
Status = Literal["delivered", "already_delivered", "no_relevant_results"]
SelectorKind = Literal["client", "http", "none"]


class WireModel(BaseModel):
    """camelCase on the wire, snake_case in Python."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="ignore")

    def wire(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True)


# -- initialize ---------------------------------------------------------------


class RootOption(WireModel):
    """A memory directory and its scope."""

    path: StrictStr = Field(min_length=1)
    scope: Scope = "project"
    follow_symlinks: StrictBool = Field(
        default=False, description="Follow symlinks that point outside the root."
    )


class SelectorOptions(WireModel):
    """Which model picks the refined memories."""

    kind: SelectorKind = "none"
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


class WriteOptions(WireModel):
    """How the daemon writes memories (SPEC §8)."""

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


class InitializationOptions(WireModel):
    """`initialize` → `initializationOptions` (all optional)."""

    roots: list[RootOption] | None = Field(
        default=None,
        description="Default: project <workspace>/.memory and "
        "user <user data dir>/memory-recall/memory",
    )
    selector: SelectorOptions = Field(default_factory=SelectorOptions)
    watch: StrictBool = True
    ranker: StrictStr | None = Field(
        default=None, description="fast-phase ranker by name; default: the server's default"
    )
    write: WriteOptions = Field(default_factory=WriteOptions)
    capabilities: HostCapabilities = Field(default_factory=HostCapabilities)


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


class Excerpt(WireModel):
    """Where a delivered `body` lies in the memory's whole body: code-point offsets."""

    start: int = Field(ge=0, description="offset of the first character delivered")
    end: int = Field(ge=0, description="offset just past the last character delivered")


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
    content_hash: str | None = Field(
        default=None, description="the file's version: pass it as memory/update's ifMatch"
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


# -- the write side (SPEC §7–8) -------------------------------------------------------------

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
    """`memory/list`: memories with their statistics."""

    scope: Scope | None = None
    category: StrictStr | None = Field(
        default=None, max_length=200, description="a topic-tree slug: `lessons` or `lessons/errors`"
    )


class WriteOperation(WireModel):
    """One thing an operation did (or, `proposed`, would do)."""

    operation: str = Field(description="the operation id: memory/undo takes it")
    action: WriteAction
    path: str
    scope: Scope
    title: str
    reason: str | None = Field(default=None, description="why: the conflict verdict, the reason")


class WriteSkipped(WireModel):
    """A memory not written, and the gate rule that stopped it (the text is never echoed)."""

    title: str | None = None
    reason: str = Field(description="secret | injection | size | ephemeral")
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
    """What every write request returns (SPEC §8)."""

    operations: list[WriteOperation]
    skipped: list[WriteSkipped]
    indexes: list[IndexStatus] = Field(
        default_factory=list, description="MEMORY.md of each root the operation changed"
    )


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


class WriteStatus(WireModel):
    """`memory/status` → `write`: where the journal is and what each MEMORY.md holds."""

    state_path: str | None = Field(description="the state database; null when it is off")
    state_problem: str | None = None
    schema_version: int | None = None
    indexes: list[IndexStatus]


ALL_MODELS: tuple[type[WireModel], ...] = (
    InitializationOptions,
    RecallParams,
    RecallResult,
    PhaseNotification,
    SelectParams,
    SelectResult,
    CompleteParams,
    CompleteResult,
    RecallTelemetry,
    StatusResult,
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
)

StatusResult.model_rebuild()  # it refers to WriteStatus, defined after it
