"""Why a write did not happen: the two kinds a caller must tell apart.

The store never sees the wire; the daemon maps these to JSON-RPC codes
(`InvalidWrite` → -32602 naming the field, `WriteFailed` → -32803). Messages
never carry a memory's text, so a credential in a file cannot leak through one.
"""

from __future__ import annotations


class WriteError(Exception):
    """A write that did not happen; nothing was changed on disk."""


class InvalidWrite(WriteError):
    """The request itself is wrong (a path outside every root, an unknown operation)."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class WriteFailed(WriteError):
    """A valid request that could not be carried out (changed on disk, read-only, disk full)."""


class ChangedOnDisk(WriteFailed):
    """The file differs from what the decision was made on: the user's edit wins."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"changed on disk: {path} was modified after the daemon read it; nothing was"
            " overwritten. Read it again and repeat."
        )
        self.path = path
