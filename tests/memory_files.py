"""Writing memory files for tests that drive the real daemon."""

from __future__ import annotations

from pathlib import Path


def write_memory(
    root: Path,
    name: str,
    title: str,
    description: str = "",
    body: str = "",
    *,
    type: str = "project",
) -> Path:
    """`root/name` as a docs/memory-files.md memory file (parent folders created)."""
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {title}\ndescription: {description}\ntype: {type}\n---\n{body}\n",
        encoding="utf-8",
    )
    return path
