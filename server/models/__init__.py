"""Selectors: who picks the refined memories from the candidate manifest.

Every selector answers a `SelectionRequest` with a list of paths or raises
`SelectorError` with a short reason; validating the answer against the
manifest and the limit happens once, in `server.recall`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from memory_recall.server.documents import MemoryDocument


class SelectorError(Exception):
    """The selector could not give a usable answer; the message is the reason."""


@dataclass(frozen=True)
class SelectionRequest:
    query: str
    candidates: list[MemoryDocument]
    limit: int
    recent_tools: list[str]
    # path → the network path that reached a candidate (wire NetworkHop models), for
    # the memories only the memory network found (SPEC §11)
    via: dict[str, list[Any]] = field(default_factory=dict)


class Selector(Protocol):
    kind: str

    async def select(self, request: SelectionRequest) -> list[str]:
        """Paths chosen from `request.candidates`, best first."""
        ...
