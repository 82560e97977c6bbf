"""The ready-to-inject markdown block of a phase (SPEC §5 `prompt`)."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence

from memory_recall.server.documents import MemoryDocument


def format_age(mtime_ms: float, now_ms: float | None = None) -> str:
    """A short human age: `just now`, `5 min ago`, `3 h ago`, `2 days ago`, `4 months ago`."""
    now_ms = time.time() * 1000 if now_ms is None else now_ms
    seconds = max(0.0, (now_ms - mtime_ms) / 1000)
    if seconds < 60:
        return "just now"
    for unit_seconds, singular, plural in (
        (365 * 86400, "year", "years"),
        (30 * 86400, "month", "months"),
        (86400, "day", "days"),
        (3600, "h", "h"),
        (60, "min", "min"),
    ):
        if seconds >= unit_seconds:
            n = int(seconds // unit_seconds)
            return f"{n} {singular if n == 1 else plural} ago"
    return "just now"


def render_prompt(
    docs: Sequence[MemoryDocument],
    now_ms: float | None = None,
    stale: Mapping[str, str] | None = None,
) -> str:
    """`## Relevant memory` with one `### title (relative path)` section per document.

    `stale`: path → why a memory may be outdated (SPEC §10); its section says so.
    """
    if not docs:
        return ""
    parts = ["## Relevant memory"]
    for doc in docs:
        section = [
            f"### {doc.title} ({doc.relative_path})",
            f"_saved {format_age(doc.mtime_ms, now_ms)}_",
        ]
        if stale and doc.path in stale:
            section.append(f"_May be outdated: it {stale[doc.path]}._")
        if doc.description:
            section.append(doc.description)
        window = doc.body_window
        if window:
            section.append(window + (" …" if doc.truncated else ""))
        parts.append("\n\n".join(section))
    return "\n\n".join(parts) + "\n"
