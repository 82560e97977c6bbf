"""What the writer is asked and what it answers: plain data (docs/writing.md's shapes).

The daemon maps these to and from the wire (core/writing.py); the store never
sees JSON-RPC. Extraction and consolidation build the same requests.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from memory_recall.server.store.gate import GateLimits, Origin
from memory_recall.server.store.index_file import DEFAULT_INDEX_CAP, IndexReport

Action = Literal[
    "created", "updated", "merged", "unchanged", "archived", "restored", "deleted", "proposed"
]


@dataclass(frozen=True)
class WriteSettings:
    limits: GateLimits = field(default_factory=GateLimits)
    index_cap: int = DEFAULT_INDEX_CAP


@dataclass(frozen=True)
class RememberRequest:
    text: str
    scope: str | None = None
    type: str | None = None
    title: str | None = None
    description: str | None = None
    pinned: bool | None = None
    always: bool | None = None
    force: bool = False
    category: str | None = None
    origin: Origin = "remember"  # "extract" for the extraction pipeline
    trigger: str = "explicit"
    apply: bool = True  # False: decide and answer `proposed`, write nothing


@dataclass(frozen=True)
class UpdateRequest:
    path: str
    if_match: str | None = None
    title: str | None = None
    description: str | None = None
    type: str | None = None
    body: str | None = None
    pinned: bool | None = None
    always: bool | None = None
    force: bool = False
    trigger: str = "explicit"


@dataclass(frozen=True)
class ForgetRequest:
    path: str
    reason: str | None = None
    hard: bool = False
    trigger: str = "explicit"


@dataclass(frozen=True)
class OperationEntry:
    operation: str
    action: Action
    path: str
    scope: str
    title: str
    reason: str | None = None  # why (a conflict verdict), for the host's log
    proposal: str | None = None  # an agent's write waiting for the user (store/proposals.py)


@dataclass(frozen=True)
class SkippedEntry:
    reason: str  # the gate rule (secret, injection, size, ephemeral)
    message: str
    title: str | None = None


@dataclass
class WriteResult:
    operations: list[OperationEntry] = field(default_factory=list)
    skipped: list[SkippedEntry] = field(default_factory=list)
    indexes: list[IndexReport] = field(default_factory=list)
