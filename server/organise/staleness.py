"""Staleness from citations (docs/organisation.md): is a memory about to be delivered still true?

A memory that cites workspace paths (`src/app/pay.ts`, `server/lsp.py:120`,
`docs/adr/`) is checked when it is about to be delivered: a cited file or
folder that no longer exists, a cited line past the end of its file, or an
`expires` date that has passed makes it stale. Stale memories are still
delivered — the agent may need them — but demoted below fresh ones, with
`stale: {reason}` on the wire and a line in the prompt saying why they may be
outdated (GitHub Copilot's memories re-check their code citations the same way).

What counts as a citation, chosen for precision (a false alarm demotes a good
memory):
- a relative path with a folder and a file extension (`src/app/pay.ts`), or a
  folder ending in `/` (`docs/adr/`), optionally with `:line`, `:line-line`
  or `#Lline`; an absolute path only when it lies inside the workspace;
- not URLs, not host names (`docs.example.com/x.md`), not npm scopes (`@org/x`),
  not globs or placeholders (`src/**/*.ts`, `src/<name>/index.ts`, `$HOME/x`),
  not paths that climb out of the workspace (`../other/x.md`), not `~/…`;
- only when its first folder exists in the workspace: a path under a folder the
  workspace never had is about another tree (another repository, a server).
Paths are checked for project and team memories, against the workspace the
daemon serves; a user memory spans projects, so only its `expires` is read.

Cost: parsing a memory's citations is cached by path and mtime; each recall
gets a fresh cache of `stat` results (files change between recalls), so a
recall costs at most a handful of `stat` calls per delivered memory (at most
MAX_CITATIONS each). Counting a file's lines for `path:line` reads the file
once per (size, mtime).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, timezone
from pathlib import Path
from typing import Literal

import regex
from memory_recall.server.documents import MemoryDocument

MAX_CITATIONS = 8  # per memory: bounds the stat calls a recall can cost
MAX_LINE_COUNT_BYTES = 1024 * 1024  # files counted for `path:line`; larger ones are trusted
_CACHE_LIMIT = 8192  # parsed memories / line counts kept across recalls

StaleKind = Literal["missing", "line", "expired"]
# path → its stat, False when missing, None when it could not be checked
_StatCache = dict[str, "os.stat_result | bool | None"]


@dataclass(frozen=True)
class Citation:
    """A workspace path a memory cites, as written (separators `/`, no leading `./`)."""

    path: str
    line: int | None = None
    directory: bool = False

    def __str__(self) -> str:
        return self.path if self.line is None else f"{self.path}:{self.line}"


@dataclass(frozen=True)
class Stale:
    """Why a memory may be outdated."""

    kind: StaleKind
    reason: str  # a sentence for the wire and the prompt
    citation: str | None = None


# -- Reading citations ------------------------------------------------------------------

_URL = regex.compile(r"\b[a-z][a-z0-9+.-]*://\S+", regex.IGNORECASE)
_CHUNK_SPLIT = regex.compile(r"[\s`\"'“”‘’«»、，。；]+")
_PLACEHOLDER = regex.compile(r"[<>{}*?$%|]")
_PIECE_SPLIT = regex.compile(r"[()\[\],;]+")
_SEGMENT = r"[\p{L}\p{N}_.+@-]+"
_PATH = regex.compile(
    rf"(?P<path>/?(?:{_SEGMENT}/)+(?:{_SEGMENT})?)"
    r"(?::(?P<line>\d{1,7})(?:[-:]\d{1,7})?|#L(?P<anchor>\d{1,7})(?:-L?\d{1,7})?)?"
)
_EXTENSION = regex.compile(r"\.[A-Za-z][A-Za-z0-9]{0,7}$")
_HOST_LIKE = regex.compile(r"^[\p{L}\p{N}-]+(?:\.[\p{L}\p{N}-]+)+$")
# Suffixes that end host names and bundles, not source files.
_NOT_FILE_EXTENSIONS = frozenset({".com", ".org", ".net", ".io", ".dev"})


def citations(text: str) -> tuple[Citation, ...]:
    """The workspace paths a text cites, in order of first mention, each once."""
    found: dict[str, Citation] = {}
    for chunk in _CHUNK_SPLIT.split(_URL.sub(" ", text.replace("\\", "/"))):
        if "/" not in chunk or _PLACEHOLDER.search(chunk):
            continue
        for piece in _PIECE_SPLIT.split(chunk):
            citation = _citation(piece.rstrip(".:!?"))
            if citation is not None and str(citation) not in found:
                found[str(citation)] = citation
    return tuple(found.values())


def _citation(piece: str) -> Citation | None:
    match = _PATH.fullmatch(piece)
    if not match:
        return None
    raw = match["path"]
    line_text = match["line"] or match["anchor"]
    directory = raw.endswith("/")
    path = raw.rstrip("/")
    while path.startswith("./"):
        path = path[2:]
    segments = [s for s in path.split("/") if s]
    if not segments or any(s == ".." for s in segments) or path.startswith(("@", "~")):
        return None
    if not path.startswith("/") and _HOST_LIKE.match(segments[0]) and "." in segments[0][1:]:
        return None  # `docs.example.com/guide.md`: a URL without its scheme
    if len(segments) < 2 and not path.startswith("/"):
        return None
    last = segments[-1]
    if not directory:
        extension = _EXTENSION.search(last)
        if extension is None or extension.group().lower() in _NOT_FILE_EXTENSIONS:
            return None
    if not any(regex.search(r"\p{L}", s) for s in segments):
        return None
    line = int(line_text) if line_text and not directory else None
    return Citation(path, line or None, directory)


# -- Checking --------------------------------------------------------------------------


def utc_today() -> date:
    return datetime.now(timezone.utc).date()


class StalenessChecker:
    """Checks memories against one workspace; shared by every recall of a session."""

    def __init__(
        self,
        workspace: str | os.PathLike[str] | None,
        *,
        today: Callable[[], date] = utc_today,
    ) -> None:
        self.workspace = os.path.abspath(workspace) if workspace else None
        self._today = today
        self._citations: dict[tuple[str, float], tuple[Citation, ...]] = {}
        self._line_counts: dict[tuple[str, int, int], int] = {}

    def for_recall(self) -> RecallStaleness:
        """A checker for one recall: `stat` results are shared within it, not beyond."""
        return RecallStaleness(self)

    def check(self, doc: MemoryDocument, stats: _StatCache | None = None) -> Stale | None:
        """Why `doc` is stale, or None. `stats` caches `stat` results (one recall's)."""
        expires = doc.date_of("expires")
        if expires is not None and expires < self._today():
            return Stale("expired", f"expired on {expires.isoformat()}")
        if self.workspace is None or doc.scope.value == "user":
            return None
        stats = {} if stats is None else stats
        for citation in self.citations_of(doc)[:MAX_CITATIONS]:
            problem = self._check_citation(citation, stats)
            if problem is not None:
                return problem
        return None

    def check_all(self, docs: Iterable[MemoryDocument]) -> list[tuple[MemoryDocument, Stale]]:
        """Every stale memory among `docs` with its reason (`memory-recall status`)."""
        stats: _StatCache = {}
        out = []
        for doc in docs:
            stale = self.check(doc, stats)
            if stale is not None:
                out.append((doc, stale))
        return out

    def citations_of(self, doc: MemoryDocument) -> tuple[Citation, ...]:
        key = (doc.path, doc.mtime_ms)
        found = self._citations.get(key)
        if found is None:
            if len(self._citations) >= _CACHE_LIMIT:
                self._citations.clear()
            found = self._citations[key] = citations(f"{doc.title}\n{doc.description}\n{doc.body}")
        return found

    def _check_citation(self, citation: Citation, stats: _StatCache) -> Stale | None:
        assert self.workspace is not None
        relative = self._inside_workspace(citation.path)
        if relative is None:
            return None
        top = relative.split("/", 1)[0]
        if "/" in relative and self._stat(os.path.join(self.workspace, top), stats) is False:
            return None  # a tree this workspace never had: not ours to check
        full = os.path.join(self.workspace, relative)
        st = self._stat(full, stats)
        if st is False:
            return Stale("missing", f"cites {citation.path}, which no longer exists", str(citation))
        if not isinstance(st, os.stat_result):
            return None  # could not be checked (permissions…): unknown is not stale
        if citation.line is not None and stat.S_ISREG(st.st_mode):
            lines = self._line_count(full, st)
            if lines is not None and citation.line > lines:
                return Stale(
                    "line",
                    f"cites line {citation.line} of {citation.path}, which has {lines} lines",
                    str(citation),
                )
        return None

    def _inside_workspace(self, path: str) -> str | None:
        """The cited path relative to the workspace, or None when it lies outside."""
        assert self.workspace is not None
        if path.startswith("/"):
            normal = os.path.normpath(path)
            prefix = self.workspace.rstrip("/") + "/"
            if not normal.startswith(prefix):
                return None
            return normal[len(prefix) :]
        normal = os.path.normpath(path)
        return None if normal.startswith("..") else normal.replace(os.sep, "/")

    @staticmethod
    def _stat(path: str, stats: _StatCache) -> os.stat_result | bool | None:
        """The path's stat, False when it does not exist, None when that cannot be known."""
        if path in stats:
            return stats[path]
        try:
            st: os.stat_result | bool | None = os.stat(path)
        except (FileNotFoundError, NotADirectoryError):
            st = False
        except (OSError, ValueError):  # permission denied, a name too long, a NUL
            st = None
        stats[path] = st
        return st

    def _line_count(self, path: str, st: os.stat_result) -> int | None:
        if st.st_size > MAX_LINE_COUNT_BYTES:
            return None
        key = (path, st.st_size, st.st_mtime_ns)
        count = self._line_counts.get(key)
        if count is None:
            try:
                with open(path, "rb") as f:
                    data = f.read(MAX_LINE_COUNT_BYTES + 1)
            except OSError:
                return None
            count = data.count(b"\n") + (1 if data and not data.endswith(b"\n") else 0)
            if len(self._line_counts) >= _CACHE_LIMIT:
                self._line_counts.clear()
            self._line_counts[key] = count
        return count


class RecallStaleness:
    """One recall's staleness check: `stat` calls made once per path within the recall."""

    def __init__(self, checker: StalenessChecker) -> None:
        self._checker = checker
        self._stats: _StatCache = {}
        self._seen: dict[str, Stale | None] = {}

    def __call__(self, docs: Sequence[MemoryDocument]) -> Mapping[str, str]:
        """The stale ones among `docs`: path → reason."""
        out = {}
        for doc in docs:
            if doc.path not in self._seen:
                self._seen[doc.path] = self._checker.check(doc, self._stats)
            found = self._seen[doc.path]
            if found is not None:
                out[doc.path] = found.reason
        return out


def workspace_of_root(root: Path) -> Path:
    """The workspace a project root belongs to when none is given: `<ws>/.memory` → `<ws>`."""
    return root.parent if root.name == ".memory" else root
