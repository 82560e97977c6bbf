"""Building a memory file's next version: shared by every operation of the writer."""

from __future__ import annotations

from pathlib import Path

import regex
from memory_recall.server.documents import InvalidMemory
from memory_recall.server.store.commit import PlannedChange
from memory_recall.server.store.errors import WriteFailed
from memory_recall.server.store.files import ARCHIVE_DIR
from memory_recall.server.store.journal import Change
from memory_recall.server.store.memory_file import MemoryFile


def parse_file(data: bytes, where: Path) -> MemoryFile:
    try:
        return MemoryFile.parse(data.decode("utf-8"))
    except (UnicodeDecodeError, InvalidMemory) as exc:
        raise WriteFailed(f"{where} is not a memory the daemon can edit: {exc}") from None


def title_of(data: bytes, rel: str) -> str:
    try:
        memory = MemoryFile.parse(data.decode("utf-8", "replace"))
    except InvalidMemory:
        return Path(rel).stem
    return memory.get("name") or memory.get("title") or Path(rel).stem


def description_of(data: bytes) -> str:
    try:
        return MemoryFile.parse(data.decode("utf-8", "replace")).get("description") or ""
    except InvalidMemory:
        return ""


def set_flags(memory: MemoryFile, pinned: bool | None, always: bool | None) -> None:
    for key, value in (("pinned", pinned), ("always", always)):
        if value is True:
            memory.set(key, True)
        elif value is False and memory.get(key) is not None:
            memory.set(key, None)


def archive_changes(rel: str, data: bytes, title: str) -> list[PlannedChange]:
    """A move into `<root>/.archive/` (same folders inside): the copy first, then the removal,
    so a crash in between leaves the memory in both places, never in neither."""
    folder, _, name = rel.rpartition("/")
    into = f"{ARCHIVE_DIR}/{folder}" if folder else ARCHIVE_DIR
    return [
        PlannedChange(
            Change("", "archived", None, data, title),
            new_in=into,
            slug=name.removesuffix(".md"),
            moved_from=rel,
        ),
        PlannedChange(Change(rel, "archived", data, None, title)),
    ]


_SLOT = regex.compile(r"[\p{L}\p{N}]*\p{N}[\p{L}\p{N}._-]*|`[^`]+`|[\w.-]+[./_][\w.-]+")


def title_survives(title: str, new_body: str) -> bool:
    """Keep an old title when every number, version or identifier in it is still in the new
    text ("Node version" stays; "Use Node 18" goes when the text now says 22)."""
    slots = [m.group().strip("`").lower() for m in _SLOT.finditer(title)]
    lowered = new_body.lower()
    return all(slot in lowered for slot in slots)
