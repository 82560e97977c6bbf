"""The explicit links one memory writes to others, read from its text.

- a markdown link to another memory file, `[testing rules](../conventions/testing.md)`
  (inline or reference-style), relative to the linking file's folder, or to the
  root when it starts with `/`;
- a wiki link, `[[Title]]` (also `[[Title|shown text]]`, `[[Title#Heading]]`): the
  memory with that title, or whose file name reads the same;
- the front-matter lists `related: [...]` and `supersedes: [...]` (docs/writing.md):
  paths relative to the root, as the daemon writes them (relative to the file's
  folder is accepted too).

Links inside code (fenced blocks, backticks) are examples, not links. A link
that leaves the root, points to a web page or to `MEMORY.md` is no memory link.
Resolving a target to a memory is the network's job (`graph`), since it needs
the other memories.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

import regex
from memory_recall.server.documents import INDEX_FILE_NAME
from memory_recall.server.tokens import normalize

LinkKind = Literal["link", "wikilink", "related", "supersedes"]

_FENCED = regex.compile(r"^(```|~~~)[^\n]*\n.*?^\1[^\n]*$", flags=regex.MULTILINE | regex.DOTALL)
_CODE_SPAN = regex.compile(r"`[^`\n]*`")
# [text](target.md), [text](<target with spaces.md> "title"), [text](target.md 'title'),
# [text](target.md#anchor)
_INLINE = regex.compile(
    r"\[(?:[^\[\]\n]|\[[^\[\]\n]*\])*\]\(\s*(?:<([^>\n]+)>|([^)\s]+))"
    r"(?:\s+(?:\"[^\"\n]*\"|'[^'\n]*'))?\s*\)"
)
# [ref]: target.md
_REFERENCE = regex.compile(r"^[ \t]{0,3}\[[^\]\n]+\]:[ \t]*<?([^\s>]+)>?", flags=regex.MULTILINE)
_DESTINATION = regex.compile(r"(?<=\])\([^)\n]*\)")
_WIKI = regex.compile(r"\[\[([^\[\]\|#\n]+)(?:#[^\[\]\|\n]*)?(?:\|[^\[\]\n]*)?\]\]")
_SCHEME = regex.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_SEPARATORS = regex.compile(r"[\s_-]+")


@dataclass(frozen=True, slots=True)
class LinkTarget:
    """One link as written: its kind and the keys it may resolve by, in order.

    Path keys are root-relative POSIX paths (`path:conventions/testing.md`);
    title keys are `title:` + `title_key(text)`.
    """

    kind: LinkKind
    keys: tuple[str, ...]


def title_key(text: str) -> str:
    """How a title, a file name and a wiki link are compared: normalized, with
    spaces, `-` and `_` alike (`[[Test rules]]` finds `test-rules.md`)."""
    return _SEPARATORS.sub(" ", normalize(text)).strip()


def path_key(relative_path: str) -> str:
    return "path:" + relative_path.replace("\\", "/").casefold()


def title_keys(title: str, relative_path: str) -> tuple[str, ...]:
    """The title keys a memory answers to: its title and its file name without `.md`."""
    stem = posixpath.splitext(posixpath.basename(relative_path.replace("\\", "/")))[0]
    return tuple(dict.fromkeys(f"title:{k}" for k in (title_key(title), title_key(stem)) if k))


def without_code(body: str) -> str:
    """The body with fenced blocks and code spans blanked (their length kept)."""

    def blank(match: regex.Match[str]) -> str:
        return " " * len(match.group())

    if "```" in body or "~~~" in body:
        body = _FENCED.sub(blank, body)
    return _CODE_SPAN.sub(blank, body) if "`" in body else body


def without_destinations(body: str) -> str:
    """The body with the destinations of its markdown links blanked (`[text](…)`
    keeps its text): a link's path is the link, not a keyword it shares."""
    if "](" not in body:
        return body
    return _DESTINATION.sub(lambda m: " " * len(m.group()), body)


def prose(body: str) -> str:
    """The body without code and without its links (what is left is what it says in
    words: where another memory's title appears unlinked)."""

    def blank(match: regex.Match[str]) -> str:
        return " " * len(match.group())

    text = without_code(body)
    if "](" in text:
        text = _INLINE.sub(blank, text)
    return _WIKI.sub(blank, text) if "[[" in text else text


def _resolve_relative(source_relative: str, target: str) -> str | None:
    """A link target as a root-relative path, or None when it leaves the root."""
    target = target.replace("\\", "/")
    if target.startswith("/"):
        joined = target.lstrip("/")
    else:
        joined = posixpath.join(posixpath.dirname(source_relative.replace("\\", "/")), target)
    resolved = posixpath.normpath(joined)
    if resolved.startswith("../") or resolved in {"..", "."}:
        return None
    return resolved


def _memory_file_target(source_relative: str, raw: str) -> str | None:
    target = unquote(raw.split("#", 1)[0].split("?", 1)[0]).strip()
    if not target or _SCHEME.match(target) or not target.lower().endswith(".md"):
        return None
    if posixpath.basename(target) == INDEX_FILE_NAME:
        return None
    return _resolve_relative(source_relative, target)


def body_links(source_relative: str, body: str) -> Iterator[LinkTarget]:
    """The markdown and wiki links of a body, in order, repeats included."""
    text = without_code(body)
    if "](" not in text and "[[" not in text and "]:" not in text:
        return
    for match in _INLINE.finditer(text):
        resolved = _memory_file_target(source_relative, match.group(1) or match.group(2))
        if resolved is not None:
            yield LinkTarget("link", (path_key(resolved),))
    for match in _REFERENCE.finditer(text):
        resolved = _memory_file_target(source_relative, match.group(1))
        if resolved is not None:
            yield LinkTarget("link", (path_key(resolved),))
    for match in _WIKI.finditer(text):
        written = match.group(1).strip()
        keys = [f"title:{title_key(written)}"]
        if "/" in written:  # [[folder/note]]: a path without its .md
            resolved = _resolve_relative(source_relative, written + ".md")
            if resolved is not None:
                keys.insert(0, path_key(resolved))
        if title_key(written):
            yield LinkTarget("wikilink", tuple(keys))


def front_matter_links(
    source_relative: str, related: Iterable[str], supersedes: Iterable[str]
) -> Iterator[LinkTarget]:
    """`related` and `supersedes` entries: root-relative first, then relative to the file."""
    for kind, paths in (("related", related), ("supersedes", supersedes)):
        for raw in paths:
            target = raw.replace("\\", "/").strip()
            if target.startswith("./"):
                target = target[2:]
            keys = []
            from_root = _resolve_relative("", target)
            if from_root is not None:
                keys.append(path_key(from_root))
            beside = _resolve_relative(source_relative, target)
            if beside is not None and beside != from_root:
                keys.append(path_key(beside))
            if keys:
                yield LinkTarget(kind, tuple(keys))  # type: ignore[arg-type]
