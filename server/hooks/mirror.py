"""Memory files derived from a host's free-text memory (docs/hooks.md, "The hosts' own memory").

Codex and Gemini CLI keep their memory as plain markdown: Codex a folder of
summaries, Gemini one bullet per fact under "## Gemini Added Memories" in
GEMINI.md, and notes in a private project folder. The catalog reads memory files
(front matter, then body), so each fact or section becomes one derived file in a
folder of ours (`<user data dir>/memory-recall/hosts/<host>/<source>/`), with
`source:` naming where it came from. The host's files are only read; the derived
folder is rewritten whenever its source changes (its files' sizes and times), and
is a read-only root: what the daemon recalls from it is what the host wrote.

Pure file work, no core.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from memory_recall.server.hooks.host_memory import HostMemory, sanitize

GEMINI_SECTION = "## Gemini Added Memories"
MAX_SOURCE_BYTES = 1024 * 1024  # larger files are not memory notes; skipped
MAX_FILES = 2000  # a folder with more is cut (the newest first), never read whole
TITLE_CHARS = 80
DESCRIPTION_CHARS = 300
STAMP = ".source-stamp"  # what the mirror was made from (hidden: the scanner skips it)
_HEADING = re.compile(r"^(#{1,3})\s+(.*\S)\s*$", re.MULTILINE)
_BULLET = re.compile(r"^\s*[-*]\s+(.*\S)\s*$")


@dataclass(frozen=True)
class Derived:
    name: str  # file name inside the mirror
    title: str
    description: str
    type: str
    body: str
    source: str


def mirror_folder(data_dir: Path, memory: HostMemory) -> Path:
    """Where the memory files derived from `memory` live."""
    key = sanitize(str(memory.source))[-120:].strip("-") or "root"
    return data_dir / "hosts" / memory.host / key


def _one_line(text: str, limit: int) -> str:
    text = " ".join(text.replace("\x00", " ").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _quoted(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(item: Derived) -> str:
    """A memory file of the catalog's format."""
    return (
        "---\n"
        f"name: {_quoted(item.title)}\n"
        f"description: {_quoted(item.description)}\n"
        f"type: {item.type}\n"
        f"source: {_quoted(item.source)}\n"
        "---\n\n"
        f"{item.body.strip()}\n"
    )


def _slug(text: str, fallback: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:50]
    return slug or fallback


def _read(path: Path) -> str | None:
    try:
        if path.stat().st_size > MAX_SOURCE_BYTES:
            return None
        return path.read_text("utf-8", "replace")
    except OSError:
        return None


def gemini_facts(text: str, source: str) -> Iterator[Derived]:
    """One memory per bullet under "## Gemini Added Memories"."""
    start = text.find(GEMINI_SECTION)
    if start < 0:
        return
    section = text[start + len(GEMINI_SECTION) :]
    following = re.search(r"^#{1,2}\s", section, re.MULTILINE)
    if following:
        section = section[: following.start()]
    for n, line in enumerate(section.splitlines()):
        bullet = _BULLET.match(line)
        if not bullet:
            continue
        fact = bullet.group(1).strip()
        digest = hashlib.sha1(fact.encode("utf-8")).hexdigest()[:8]
        yield Derived(
            f"gemini-{_slug(fact, str(n))[:40]}-{digest}.md",
            _one_line(fact, TITLE_CHARS),
            _one_line(fact, DESCRIPTION_CHARS),
            "user",
            fact,
            source,
        )


def sections(text: str, source: str, stem: str, memory_type: str) -> Iterator[Derived]:
    """One memory per `#`–`###` section of a free-text note (the whole note when it has
    no headings); a note that already has front matter is kept whole, as it is."""
    if text.startswith("---\n") or text.startswith("---\r\n"):
        yield Derived(f"{stem}.md", "", "", "", text, source)  # rendered as is
        return
    heads = list(_HEADING.finditer(text))
    if not heads:
        body = text.strip()
        if body:
            first = body.splitlines()[0].lstrip("#- ").strip()
            yield Derived(
                f"{stem}.md", _one_line(stem.replace("_", " ").replace("-", " "), TITLE_CHARS),
                _one_line(first, DESCRIPTION_CHARS), memory_type, body, source,
            )  # fmt: skip
        return
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        body = text[head.end() : end].strip()
        if not body:
            continue
        heading = head.group(2).strip()
        first = body.splitlines()[0].lstrip("#-* ").strip()
        yield Derived(
            f"{stem}--{_slug(heading, str(i))}-{i}.md",
            _one_line(f"{heading} ({stem})", TITLE_CHARS),
            _one_line(first, DESCRIPTION_CHARS),
            memory_type,
            body,
            source,
        )


def derive(memory: HostMemory) -> list[Derived]:
    """The memory files a host's free text makes."""
    source = memory.source
    if source.is_file():
        text = _read(source)
        if text is None:
            return []
        if memory.host == "gemini":
            return list(gemini_facts(text, str(source)))
        return list(sections(text, str(source), _slug(source.stem, "note"), "reference"))
    if not source.is_dir():
        return []
    files = sorted(
        (
            p
            for p in source.rglob("*.md")
            if not any(x.startswith(".") for x in p.relative_to(source).parts)
        ),
        key=_mtime,
        reverse=True,
    )[:MAX_FILES]
    kind = "project" if memory.scope == "project" else "reference"
    out: list[Derived] = []
    for path in files:
        if path.name == "MEMORY.md" and memory.host == "gemini":
            continue  # Gemini's index: pointers to the other files
        text = _read(path)
        if text is None:
            continue
        stem = _slug("-".join(path.relative_to(source).with_suffix("").parts), "note")
        out += sections(text, str(path), stem, kind)
    return out


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0


def stamp(memory: HostMemory) -> str:
    """What the source looks like now: its files, sizes and modification times."""
    source = memory.source
    try:
        if source.is_file():
            st = source.stat()
            return f"{source}:{st.st_size}:{st.st_mtime_ns}"
        parts = []
        for path in sorted(source.rglob("*.md"))[: MAX_FILES * 2]:
            st = path.stat()
            parts.append(f"{path}:{st.st_size}:{st.st_mtime_ns}")
        return hashlib.sha1("\n".join(parts).encode("utf-8", "replace")).hexdigest()
    except OSError:
        return ""


def refresh(data_dir: Path, memory: HostMemory) -> Path:
    """Bring the mirror of `memory` up to date (only when its source changed); its folder."""
    folder = mirror_folder(data_dir, memory)
    now = stamp(memory)
    marker = folder / STAMP
    try:
        if marker.read_text("utf-8") == now:
            return folder
    except OSError:
        pass
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    wanted = {}
    for item in derive(memory):
        wanted[item.name] = item.body if not item.type else render(item)
    for existing in folder.glob("*.md"):
        if existing.name not in wanted:
            existing.unlink(missing_ok=True)
    for name, content in wanted.items():
        _write_if_changed(folder / name, content)
    _write_if_changed(marker, now)
    return folder


def _write_if_changed(path: Path, content: str) -> None:
    try:
        if path.read_text("utf-8") == content:
            return
    except OSError:
        pass
    temp = path.with_name(f".{path.name}.tmp")
    temp.write_text(content, "utf-8")
    os.replace(temp, path)
