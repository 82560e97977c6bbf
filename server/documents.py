"""A memory document and its front matter (SPEC §2).

Parsing is a pure function of the file's text so that it can be tested without
a file system; `load_document` adds the file-system facts (mtime, size).
"""

from __future__ import annotations

import hashlib
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, cast

from memory_recall.protocol.limits import BODY_WINDOW_CHARS
from memory_recall.server.roots import Scope
from memory_recall.server.tokens import normalize

INDEX_FILE_NAME = "MEMORY.md"  # the one-line-per-memory index, never a memory itself
EMPTY_BODY_MARKER = "_No entries yet._"
MemoryType = Literal["user", "feedback", "project", "reference"]
MEMORY_TYPES: tuple[MemoryType, ...] = ("user", "feedback", "project", "reference")


# Larger files are not memories a prompt could carry; reading them whole would
# let one stray log file stall the index.
MAX_FILE_BYTES = 1024 * 1024


class InvalidMemory(ValueError):
    """A file under a memory root that is not a memory; the message is the reason."""


@dataclass(frozen=True)
class FrontMatter:
    fields: dict[str, str]
    body: str


def split_front_matter(text: str) -> FrontMatter:
    """Split `---` front matter from the body, reading `key: value` lines.

    Raises InvalidMemory when the first line is not `---` or no closing `---`
    line follows.
    """
    text = text.replace("\r\n", "\n")
    if text.startswith("\ufeff"):  # editors on Windows still write a BOM
        text = text[1:]
    # Line by line up to the closing line only: the body is never split.
    end = text.find("\n")
    if (text if end < 0 else text[:end]).rstrip() != "---":
        raise InvalidMemory("no front matter: the first line is not '---'")
    fields: dict[str, str] = {}
    while end >= 0:
        start = end + 1
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        if line.rstrip() == "---":
            return FrontMatter(fields=fields, body="" if end < 0 else text[end + 1 :])
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key:
            fields[key] = _unquote(value.strip())
    raise InvalidMemory("unterminated front matter: no closing '---' line")


def _unquote(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        return value[1:-1]
    return value


@dataclass(frozen=True, slots=True)
class MemoryDocument:
    """One parsed memory, with everything a query needs computed once at load."""

    path: str
    relative_path: str
    scope: Scope
    type: MemoryType
    title: str
    description: str
    body: str
    mtime_ms: float
    root_index: int = 0
    # The file's bytes as read, hashed (`content_hash`): what a writer's
    # `ifMatch` is compared with. Empty for documents not read from a file.
    content_hash: str = ""
    # Derived fields: normalized once here, never per query. (The body's normal
    # form is not kept: an index reads it once, when the document is indexed.)
    norm_title: str = field(init=False, repr=False, compare=False)
    norm_description: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "norm_title", normalize(self.title))
        set_(self, "norm_description", normalize(self.description))

    @property
    def norm_body_window(self) -> str:
        """The normalized body window SPEC §3 scores, computed when asked: the SPEC
        index reads it when it indexes the document, the plain scan per query."""
        return normalize(self.body_window)

    @property
    def noise_text(self) -> str:
        """What the noise filter reads: the whole body, lowercased but not NFKC (SPEC §3).

        Built per use, not kept: it would be a third copy of every body, and
        only recalls with recent tools read it, for the few documents they rank.
        """
        return f"{self.title} {self.description} {self.body}".lower()

    @property
    def body_window(self) -> str:
        return self.body[:BODY_WINDOW_CHARS]

    @property
    def truncated(self) -> bool:
        return len(self.body) > BODY_WINDOW_CHARS


def parse_memory(
    text: str,
    *,
    path: str,
    relative_path: str,
    scope: Scope,
    mtime_ms: float,
    root_index: int = 0,
    content_hash: str = "",
) -> MemoryDocument:
    """Parse a memory file's text; raises InvalidMemory with the reason."""
    front = split_front_matter(text)
    mem_type = front.fields.get("type", "")
    if not mem_type:
        raise InvalidMemory("front matter has no 'type'")
    if mem_type not in MEMORY_TYPES:
        raise InvalidMemory(
            f"unknown type {mem_type!r} (expected one of {', '.join(MEMORY_TYPES)})"
        )
    mem_type = cast(MemoryType, mem_type)
    title = front.fields.get("name") or front.fields.get("title") or mem_type
    body = front.body.strip()
    if body == EMPTY_BODY_MARKER:
        body = ""
    return MemoryDocument(
        path=path,
        relative_path=relative_path,
        scope=scope,
        type=mem_type,
        title=title,
        description=front.fields.get("description", ""),
        body=body,
        mtime_ms=mtime_ms,
        root_index=root_index,
        content_hash=content_hash,
    )


def content_hash(raw: bytes) -> str:
    """The `contentHash` of a file's bytes: 128 bits of SHA-256, hex."""
    return hashlib.sha256(raw).hexdigest()[:32]


def is_memory_file_name(name: str) -> bool:
    return name.endswith(".md") and name != INDEX_FILE_NAME


def missing_file(path: Path) -> InvalidMemory:
    """Why a listed file could not be found: a dangling symlink, or it was just deleted.

    Only the first is reported; a file that vanished is simply no longer there.
    """
    if path.is_symlink():
        return InvalidMemory("broken symlink: its target does not exist")
    return InvalidMemory("file vanished before it could be read")


def load_document(
    path: Path,
    *,
    root: Path,
    scope: Scope,
    root_index: int = 0,
    st: os.stat_result | None = None,
) -> MemoryDocument:
    """Read and parse one file; raises InvalidMemory (or OSError) with the reason.

    `st`: the file's `os.stat` when the caller has just taken it (a scan
    does), so that it is not taken again.
    """
    if st is None:
        try:
            st = path.stat()
        except FileNotFoundError as exc:
            raise missing_file(path) from exc
    if not stat.S_ISREG(st.st_mode):
        raise InvalidMemory("not a regular file")
    if st.st_size > MAX_FILE_BYTES:
        raise InvalidMemory(
            f"file is {st.st_size} bytes, larger than the {MAX_FILE_BYTES}-byte limit"
        )
    try:
        raw = path.read_bytes()
    except FileNotFoundError as exc:
        raise missing_file(path) from exc
    except PermissionError as exc:
        raise InvalidMemory("permission denied") from exc
    if b"\x00" in raw:
        raise InvalidMemory("binary file (contains NUL bytes)")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InvalidMemory(f"not valid UTF-8 (byte {exc.start})") from exc
    return parse_memory(
        text,
        path=str(path),
        relative_path=os.path.relpath(path, root),
        scope=scope,
        mtime_ms=st.st_mtime_ns / 1_000_000,
        root_index=root_index,
        content_hash=content_hash(raw),
    )
