"""Selectors: who picks the refined memories from the candidate manifest.

Every selector answers a `SelectionRequest` with a list of paths or raises
`SelectorError` with a short reason; validating the answer against the
manifest and the limit happens once, in `server.recall`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import Any, Protocol

from memory_recall.server.documents import MemoryDocument

# (method, params) → (JSON-RPC id, future of the reply); cancel(id) tells the host to stop.
SendRequest = Callable[[str, dict[str, Any]], tuple[str, "Future[Any]"]]
CancelRequest = Callable[[str], None]


@dataclass(frozen=True)
class HostModel:
    """The host's own model, reached over the face's connection: `memory/select`
    (selector kind `client`) and `memory/complete`. Only a face with a host that
    answers requests (the LSP daemon) has one."""

    send: SendRequest
    cancel: CancelRequest


class SelectorError(Exception):
    """The selector could not give a usable answer; the message is the reason."""


@dataclass(frozen=True)
class SelectionRequest:
    query: str
    candidates: list[MemoryDocument]
    limit: int
    recent_tools: list[str]
    # Cosine similarity to the query of the candidates the semantic channel found.
    similarity: Mapping[str, float] = field(default_factory=dict)
    # path → the network path that reached a candidate (wire NetworkHop models), for
    # the memories only the memory network found (docs/network.md)
    via: dict[str, list[Any]] = field(default_factory=dict)


class Selector(Protocol):
    kind: str

    async def select(self, request: SelectionRequest) -> list[str]:
        """Paths chosen from `request.candidates`, best first."""
        ...
