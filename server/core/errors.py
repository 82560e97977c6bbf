"""Why the core refused a request, in the two kinds every face tells apart.

The core's services raise the errors of the rooms they call (the store's
`InvalidWrite` / `WriteFailed`, search's `SearchError`) or these two; each face
maps the kind once: the LSP face to -32602 (invalid params) and -32803 (request
failed), the MCP face to a tool error, the command line to its exit status.
Messages never carry a memory's text, so a credential cannot leak through one.
"""

from __future__ import annotations

from typing import Literal

from memory_recall.server.recall.search import SearchError
from memory_recall.server.store.errors import InvalidWrite, WriteFailed

RefusalKind = Literal["invalid", "failed"]


class InvalidRequest(ValueError):
    """The request itself is wrong (a missing or unknown value); the message says which."""


class RequestFailed(RuntimeError):
    """A valid request that could not be served (no model configured, no such root)."""


def refusal(exc: BaseException) -> tuple[RefusalKind, str] | None:
    """The kind and message of a refusal, or None for an exception that is a bug."""
    if isinstance(exc, InvalidWrite):
        return "invalid", f"{exc.field}: {exc.message}"
    if isinstance(exc, InvalidRequest):
        return "invalid", str(exc)
    if isinstance(exc, SearchError):
        return ("invalid" if exc.kind == "invalid" else "failed"), str(exc)
    if isinstance(exc, WriteFailed | RequestFailed):
        return "failed", str(exc)
    return None
