"""A memory document and its front matter (docs/memory-files.md).

Parsing is a pure function of the file's text so that it can be tested without
a file system; `load_document` adds the file-system facts (mtime, size).

Front matter is read line by line (`key: value`, docs/memory-files.md), and as YAML where
the block needs it and is valid YAML of scalars and lists: tools that rewrite
front matter fold long values onto continuation lines, quote multi-line
strings and write lists, which the line reader would cut short. YAML comes
from PyYAML's safe loader (composed only, never constructed: values stay text).
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from memory_recall.protocol.limits import BODY_WINDOW_CHARS
from memory_recall.server.roots import Scope
from memory_recall.server.tokens import normalize

INDEX_FILE_NAME = "MEMORY.md"  # the one-line-per-memory index, never a memory itself
EMPTY_BODY_MARKER = "_No entries yet._"
MemoryType = Literal["user", "feedback", "project", "reference"]
MEMORY_TYPES: tuple[MemoryType, ...] = ("user", "feedback", "project", "reference")
# Front-matter keys the parser turns into fields; every other key is kept in `extra`.
PARSED_KEYS = frozenset({"name", "title", "description", "type"})
_TRUE = frozenset({"true", "yes", "on", "1"})


# Larger files are not memories a prompt could carry; reading them whole would
# let one stray log file stall the index.
MAX_FILE_BYTES = 1024 * 1024


class InvalidMemory(ValueError):
    """A file under a memory root that is not a memory; the message is the reason."""


class UnreadableMemory(InvalidMemory):
    """A file that cannot be read now (permissions): a fact about the moment, not the
    content, so nothing may remember it past the file's next change of mode."""


@dataclass(frozen=True)
class FrontMatter:
    fields: dict[str, str]  # every value as text (a list's items joined by ", ")
    body: str
    lists: dict[str, list[str]] = field(default_factory=dict)  # the keys whose value is a list


def split_front_matter(text: str) -> FrontMatter:
    """Split `---` front matter from the body and read its keys (lowercased).

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
    lines: list[str] = []
    while end >= 0:
        start = end + 1
        end = text.find("\n", start)
        line = text[start:] if end < 0 else text[start:end]
        if line.rstrip() == "---":
            body = "" if end < 0 else text[end + 1 :]
            if _needs_yaml(lines):
                read = _yaml_fields(lines)
                if read is not None:
                    return FrontMatter(fields=read[0], body=body, lists=read[1])
            return FrontMatter(fields=_line_fields(lines), body=body)
        lines.append(line)
    raise InvalidMemory("unterminated front matter: no closing '---' line")


def _line_fields(lines: list[str]) -> dict[str, str]:
    """docs/memory-files.md v1: `key: value` per line, values may hold `:`, one pair of quotes
    stripped."""
    fields: dict[str, str] = {}
    for line in lines:
        key, sep, value = line.partition(":")
        if not sep:
            continue
        key = key.strip().lower()
        if key:
            fields[key] = unquote(value.strip())
    return fields


# A value that starts like this is YAML syntax the line reader would keep as text.
_YAML_VALUE_START = tuple("\"'[{|>&*!")


def _needs_yaml(lines: list[str]) -> bool:
    """Whether the line reader could read this block differently from YAML.

    A block of single-line `key: plain value` lines reads the same both ways
    (and the line reader's value is kept for such lines, see `_yaml_fields`),
    so only continuation lines, list items and quoted, flow, block or tagged
    values are worth a YAML parse.
    """
    for line in lines:
        if not line.strip():
            continue
        if line[0] in " \t-":
            return True
        value = line.partition(":")[2].strip()
        if value.startswith(_YAML_VALUE_START):
            return True
    return False


_YamlLoader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _yaml_fields(lines: list[str]) -> tuple[dict[str, str], dict[str, list[str]]] | None:
    """The block as YAML when it is a mapping of scalars and lists of scalars, else None.

    Values are the text YAML reads (folded, unquoted, unescaped), never typed:
    `yes`, `1.10` and `2024-05-01` stay as written. A plain value on a single
    line keeps the line reader's reading, so that a `#` in it (`see issue
    #12`) is text as docs/memory-files.md reads it, not a YAML comment.
    """
    try:
        node = yaml.compose("\n".join(lines), Loader=_YamlLoader)
    except yaml.YAMLError:
        return None
    if node is None:
        return {}, {}
    if not isinstance(node, yaml.MappingNode):
        return None
    fields: dict[str, str] = {}
    lists: dict[str, list[str]] = {}
    for key_node, value_node in node.value:
        if not isinstance(key_node, yaml.ScalarNode):
            return None
        key = key_node.value.strip().lower()
        if isinstance(value_node, yaml.SequenceNode):
            items = [
                item.value.strip() for item in value_node.value if isinstance(item, yaml.ScalarNode)
            ]
            if len(items) != len(value_node.value):
                return None  # a list of lists or mappings: not front matter we read
            fields[key], lists[key] = ", ".join(items), items
            continue
        if not isinstance(value_node, yaml.ScalarNode):
            return None
        lists.pop(key, None)
        one_line = (
            value_node.start_mark.line == value_node.end_mark.line == key_node.start_mark.line
        )
        plain = not value_node.style and not key_node.style  # libyaml says '', PyYAML None
        if plain and one_line:
            fields[key] = unquote(lines[key_node.start_mark.line].partition(":")[2].strip())
        else:
            fields[key] = value_node.value.strip()
    return {k: v for k, v in fields.items() if k}, lists


def unquote(value: str) -> str:
    """The value without one pair of matching surrounding quotes."""
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
    # The other front-matter keys, as read (docs/writing.md: created, updated, category,
    # pinned, always, related, supersedes, expires, and any unknown key), in file
    # order. A tuple: most memories have none, and the empty tuple is shared.
    extra: tuple[tuple[str, str], ...] = ()
    # Derived fields: normalized once here, never per query. (The body's normal
    # form is not kept: an index reads it once, when the document is indexed.)
    norm_title: str = field(init=False, repr=False, compare=False)
    norm_description: str = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "norm_title", normalize(self.title))
        set_(self, "norm_description", normalize(self.description))

    @classmethod
    def restored(
        cls,
        path: str,
        relative_path: str,
        scope: Scope,
        type: MemoryType,
        title: str,
        description: str,
        body: str,
        mtime_ms: float,
        root_index: int,
        content_hash: str,
        extra: tuple[tuple[str, str], ...],
        norm_title: str,
        norm_description: str,
    ) -> MemoryDocument:
        """A document as a snapshot saved it: every field given, the normal forms too, not
        worked out again (a fifth of reading a snapshot's documents at 100,000). Each slot
        set in turn, as the dataclass's own `__init__` does (a loop over a mapping of them
        cost more than the normal forms it saves); tests/unit/test_snapshot_cache.py
        compares every slot with the document read from its file."""
        doc = object.__new__(cls)
        set_ = object.__setattr__
        set_(doc, "path", path)
        set_(doc, "relative_path", relative_path)
        set_(doc, "scope", scope)
        set_(doc, "type", type)
        set_(doc, "title", title)
        set_(doc, "description", description)
        set_(doc, "body", body)
        set_(doc, "mtime_ms", mtime_ms)
        set_(doc, "root_index", root_index)
        set_(doc, "content_hash", content_hash)
        set_(doc, "extra", extra)
        set_(doc, "norm_title", norm_title)
        set_(doc, "norm_description", norm_description)
        return doc

    @property
    def norm_body_window(self) -> str:
        """The normalized body window the reference scores (docs/ranking.md), computed when asked:
        the spec
        index reads it when it indexes the document, the plain scan per query."""
        return normalize(self.body_window)

    @property
    def noise_text(self) -> str:
        """What the noise filter reads: the whole body, lowercased but not NFKC (docs/ranking.md).

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

    # -- docs/writing.md front-matter keys ------------------------------------------------

    def meta(self, key: str) -> str | None:
        """The value of a front-matter key other than name/title/description/type."""
        for name, value in self.extra:
            if name == key:
                return value
        return None

    def flag(self, key: str) -> bool:
        """A boolean key (`pinned: true`, `always: yes`); absent or anything else is False."""
        value = self.meta(key)
        return value is not None and value.strip().lower() in _TRUE

    def date_of(self, key: str) -> date | None:
        """A date key (`created`, `updated`, `expires`) as a date; None when absent or unreadable.

        Accepts an ISO date or an ISO timestamp (`2025-03-01T09:30:00Z`): its date part.
        """
        value = self.meta(key)
        if not value:
            return None
        try:
            return date.fromisoformat(value.strip()[:10])
        except ValueError:
            return None

    def paths_of(self, key: str) -> tuple[str, ...]:
        """A list key (`related`, `supersedes`): `[a.md, b.md]`, `a.md, b.md` or one path."""
        return path_list(self.meta(key))


def path_list(value: str | Iterable[str] | None) -> tuple[str, ...]:
    """A front-matter list of paths: a YAML list, `[a.md, 'b c.md']`, `a.md, b.md` or one."""
    if value is None:
        return ()
    if isinstance(value, str):
        text = value.strip()
        if text.startswith("[") and text.endswith("]"):
            text = text[1:-1]
        value = text.split(",")
    items = (unquote(str(item).strip()).strip() for item in value)
    return tuple(item for item in items if item)


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
        extra=tuple((k, v) for k, v in front.fields.items() if k not in PARSED_KEYS),
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
        raise UnreadableMemory("permission denied") from exc
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
