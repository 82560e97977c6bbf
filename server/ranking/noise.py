"""Active-tool noise (docs/ranking.md).

When the agent has just used a tool, memories that merely document how to call
that tool repeat what the tool's own schema already says; they are dropped
before ranking. Memories that record something durable about the tool (a
gotcha, a workaround, who owns it) are kept.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from memory_recall.server.documents import MemoryDocument

DURABLE_MARKERS = (
    "credential", "credentials", "escalation", "gotcha", "gotchas", "known issue",
    "known issues", "owner", "ownership", "warning", "warnings", "workaround", "workarounds",
)  # fmt: skip
USAGE_MARKERS = (
    "api docs", "api documentation", "failed call", "failed tool call", "failed tool-call",
    "field mapping", "field mappings", "guessed call", "guessed tool", "mcp tool",
    "parameter schema", "parameter schemas", "tool schema", "tool schemas", "tool usage",
    "usage reference",
)  # fmt: skip


def tool_aliases(name: str) -> set[str]:
    """The names a memory may use for a tool: full, after `::`, and MCP short forms."""
    full = name.strip().lower()
    aliases = {full, full.rsplit("::", 1)[-1]}
    parts = full.split("__")
    if full.startswith("mcp__") and len(parts) >= 3:
        aliases.add("__".join(parts[2:]))
        aliases.add(parts[-1])
    aliases.discard("")
    return aliases


@dataclass(frozen=True)
class NoiseFilter:
    """Built once per recall from the host's `recentTools`."""

    aliases: tuple[str, ...]

    @classmethod
    def from_recent_tools(cls, recent_tools: Iterable[str]) -> NoiseFilter:
        aliases: set[str] = set()
        for tool in recent_tools:
            aliases |= tool_aliases(tool)
        return cls(tuple(sorted(aliases)))

    def __bool__(self) -> bool:
        return bool(self.aliases)

    def is_noise(self, doc: MemoryDocument) -> bool:
        if not self.aliases:
            return False
        text = doc.noise_text
        return (
            any(alias in text for alias in self.aliases)
            and not any(marker in text for marker in DURABLE_MARKERS)
            and any(marker in text for marker in USAGE_MARKERS)
        )
