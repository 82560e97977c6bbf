"""A memory file as the writer edits it: front matter kept line for line, the body as text.

docs/writing.md: the daemon may write `name`, `description`, `type`, `created`,
`updated`, `category`, `pinned`, `always`, `related`, `supersedes` and
`expires`; every other key — and every line it does not change — is kept
verbatim, in place (a folded YAML value, a comment, another tool's keys).

The front matter is read as blocks: a line `key: value` at the start of a
line opens a block, and indented lines, list items and blank lines after it
belong to it. Setting a key replaces its block where it stands; a new key is
added after the last block. Values are written so that both the line-by-line
reader (docs/memory-files.md) and a YAML reader get the same text back.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import regex
from memory_recall.server.documents import InvalidMemory, unquote
from memory_recall.server.store.lines import plain_line

# The order keys take in a new file: what a reader wants first.
KEY_ORDER = (
    "name",
    "description",
    "type",
    "category",
    "created",
    "updated",
    "pinned",
    "always",
    "related",
    "supersedes",
    "maybeSupersedes",
    "expires",
)

Value = str | bool | Sequence[str]

_KEY_LINE = regex.compile(r"^([A-Za-z_][\w.-]*)[ \t]*:(.*)$")
# YAML would read these plain scalars as something other than text.
_YAML_SPECIAL = regex.compile(
    r"^(?:true|false|yes|no|on|off|null|~|y|n|[-+]?(?:\d[\d_]*)?\.?\d+(?:e[-+]?\d+)?|\.inf|\.nan)$",
    regex.IGNORECASE,
)
_PLAIN_START = regex.compile(r"^[^\s\-?:,\[\]{}#&*!|>'\"%@`]")


def _plain_ok(value: str, *, in_flow: bool = False) -> bool:
    if not value or value != value.strip() or not _PLAIN_START.match(value):
        return False
    if ": " in value or " #" in value or value.endswith(":") or _YAML_SPECIAL.match(value):
        return False
    return not (in_flow and regex.search(r"[,\[\]{}]", value))


def render_scalar(value: str, *, in_flow: bool = False) -> str:
    """`value` on one line, quoted only when a YAML reader would read it otherwise."""
    value = plain_line(value)
    value = " ".join(value.split()) if "\n" in value or "\r" in value else value
    if _plain_ok(value, in_flow=in_flow):
        return value
    if "'" not in value:
        return f"'{value}'"  # no escapes inside single quotes: both readers agree
    if '"' not in value and "\\" not in value:
        return f'"{value}"'
    escaped = value.replace("\\", "\\\\").replace('"', '\\"')
    return f'"{escaped}"'


def render_value(value: Value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return render_scalar(value)
    return "[" + ", ".join(render_scalar(item, in_flow=True) for item in value) + "]"


@dataclass
class _Block:
    key: str | None  # lowercased; None for lines before the first key
    lines: list[str]


@dataclass
class MemoryFile:
    """An editable memory file. `render()` of an unedited file gives its text back."""

    blocks: list[_Block] = field(default_factory=list)
    body: str = ""
    newline: str = "\n"
    bom: bool = False
    # The text after the closing `---` exactly as read, until the body is set.
    _raw_rest: str | None = None

    @classmethod
    def parse(cls, text: str) -> MemoryFile:
        """Raises InvalidMemory when there is no front matter."""
        bom = text.startswith("\ufeff")
        if bom:
            text = text[1:]
        newline = "\r\n" if "\r\n" in text.split("\n", 1)[0] + "\n" else "\n"
        lines = text.split("\n")
        if not lines or lines[0].rstrip("\r").rstrip() != "---":
            raise InvalidMemory("no front matter: the first line is not '---'")
        blocks: list[_Block] = []
        for number, raw in enumerate(lines[1:], start=1):
            line = raw.rstrip("\r")
            if line.rstrip() == "---":
                rest = "\n".join(lines[number + 1 :])
                body = rest.replace("\r\n", "\n")
                return cls(blocks, body.strip(), newline, bom, rest)
            match = _KEY_LINE.match(line)
            if match and not line[:1].isspace():
                blocks.append(_Block(match.group(1).lower(), [line]))
            elif blocks:
                blocks[-1].lines.append(line)
            else:
                blocks.append(_Block(None, [line]))
        raise InvalidMemory("unterminated front matter: no closing '---' line")

    @classmethod
    def new(cls, fields: dict[str, Value], body: str) -> MemoryFile:
        memory = cls(body=body.strip())
        for key in sorted(fields, key=lambda k: KEY_ORDER.index(k) if k in KEY_ORDER else 99):
            memory.set(key, fields[key])
        return memory

    # -- reading ----------------------------------------------------------------------

    def _block(self, key: str) -> _Block | None:
        for block in self.blocks:
            if block.key == key.lower():
                return block
        return None

    def get(self, key: str) -> str | None:
        """A key's value as the line reader sees it (one pair of quotes stripped)."""
        block = self._block(key)
        if block is None:
            return None
        match = _KEY_LINE.match(block.lines[0])
        return unquote(match.group(2).strip()) if match else None

    def get_list(self, key: str) -> list[str]:
        """A list value: flow style `[a, b]`, block style `- a` lines, or one scalar."""
        block = self._block(key)
        if block is None:
            return []
        head = self.get(key) or ""
        if head.startswith("[") and head.endswith("]"):
            return [unquote(item.strip()) for item in head[1:-1].split(",") if item.strip()]
        items = [
            unquote(line.strip()[1:].strip())
            for line in block.lines[1:]
            if line.strip().startswith("-")
        ]
        return items or ([head] if head else [])

    def get_bool(self, key: str) -> bool:
        return (self.get(key) or "").strip().lower() in {"true", "yes", "on", "1"}

    def keys(self) -> list[str]:
        return [b.key for b in self.blocks if b.key is not None]

    # -- editing ----------------------------------------------------------------------

    def set(self, key: str, value: Value | None) -> None:
        """Write one key where it stands (or after the last one); None removes it."""
        key = key.lower()
        block = self._block(key)
        if value is None:
            if block is not None:
                self.blocks.remove(block)
            return
        lines = [f"{key}: {render_value(value)}"]
        if block is not None:
            # Keep the blank lines and comments that trailed the old value.
            trailing = [line for line in block.lines[1:] if _trailing_keep(line)]
            block.lines = lines + trailing
        else:
            self.blocks.append(_Block(key, lines))

    def set_body(self, body: str) -> None:
        self.body = body.strip()
        self._raw_rest = None

    def render(self) -> str:
        lines = ["---"]
        for block in self.blocks:
            lines.extend(block.lines)
        lines.append("---")
        head = self.newline.join(lines) + self.newline
        if self._raw_rest is not None:
            text = head + self._raw_rest
        else:
            body = self.body.replace("\n", self.newline)
            text = head + (self.newline + body + self.newline if body else "")
        return ("\ufeff" if self.bom else "") + text


def _trailing_keep(line: str) -> bool:
    # Blank lines and comments at the start of a line; an indented `#` may be
    # part of a multi-line value.
    return not line.strip() or line.startswith("#")
