"""Suggestions (docs/network.md): from what the agent is doing to the lesson or convention
that applies, before anyone asks.

An observed event (`memory/observe`) is an `edit` of a path, an `error` text, a
`toolResult` text or a `command` line. Only memories on the topic tree's
`lessons` and `conventions` branches (declared, or inferred by
`categories`) are ever suggested, and only on strong evidence:

- an edit: the path is one the memory cites — the same file (also by its
  name alone, `jest.config.ts`, or its extension, `.snap`), or inside a folder
  the memory is about (named in its title or description: `db/migrations/`;
  in its body only when specific, three levels or more: `infra/envs/staging`);
- a command: it runs a command the memory cites in backticks (its words in
  order: `git push --force` in `git push --force origin main`), and the memory's
  title or description names that program;
- an error or a tool result: the text shares with the memory at least two of
  these signals — a rare identifier (an error code `ECONNRESET`, `P2002`, an
  exception `DeadlockDetected`, a file `go.mod`; held by at most two memories),
  a path the memory cites, a distinctive word (held by at most 5 % of the
  memories) — or four distinctive words. One shared word says nothing
  (`TypeError` alone is every JavaScript bug).

`SuggestionSession` then decides what is sent: each memory at most once per
session, at most `max_per_window` suggestion notifications per `window_s` (what
the limit stops is dropped, not queued: a lesson that mattered a minute ago may
not now), and never while a recall's fast window is open (the host is
assembling its prompt: a suggestion waits until the recall's first result has
been sent).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import regex
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.network.keywords import keyword_candidates
from memory_recall.server.organise.categories import CategoryPath, infer_category
from memory_recall.server.ranking.bm25f import QUERY_STOPWORDS
from memory_recall.server.tokens import normalize, raw_tokens

EventKind = Literal["edit", "error", "toolResult", "command"]
EVENT_KINDS: tuple[EventKind, ...] = ("edit", "error", "toolResult", "command")
SUGGESTED_CATEGORIES = frozenset({"lessons", "conventions"})
MAX_SUGGESTIONS = 2  # per event: a suggestion is an interruption
MAX_TEXT_CHARS = 20_000  # the head of a long tool output says what failed

_CODE_SPAN = regex.compile(r"`([^`\n]+)`")
# A path with a slash, or a file name with an extension, or a dot-file (`.env`).
_PATH = regex.compile(
    r"(?<![\w@~/.-])(?:\.?[\w@~+*<>-][\w.@~+*<>-]*/(?:[\w.@~+*<>-]+/?)*"
    r"|[\w@+-]+(?:\.[\w@+-]+)*\.[A-Za-z][\w]{0,9}|\.[A-Za-z][\w.-]*)"
)
_LINE_SUFFIX = regex.compile(r"(?::\d+)+$")  # `src/app.py:14:5`
_CAPS_CODE = regex.compile(r"(?<![\p{L}\p{N}_])\p{Lu}{5,}(?![\p{L}\p{N}_])")  # ECONNRESET
_DOTTED = regex.compile(r"[\p{L}\p{N}_]+(?:[.:][\p{L}\p{N}_]+)+")
_ANY_WORD = regex.compile(r"[\p{L}\p{N}]+")
PHRASE_WORDS = 4


@dataclass(frozen=True)
class ObservedEvent:
    """What `memory/observe` reports: an event kind, and its text and/or path."""

    kind: EventKind
    text: str = ""
    path: str | None = None


@dataclass(frozen=True)
class Suggestion:
    """A memory worth the agent's attention now, and the evidence for it."""

    path: str
    category: str
    evidence: tuple[str, ...]


@dataclass(frozen=True)
class _Citation:
    path: str  # normalized, without a trailing slash
    folder: bool  # ends with `/`, or has no extension in its last part
    prominent: bool  # in the title or the description


@dataclass(frozen=True)
class _Candidate:
    doc: MemoryDocument
    category: CategoryPath
    citations: tuple[_Citation, ...]
    commands: tuple[tuple[str, ...], ...]  # cited commands, as words
    summary_words: frozenset[str]  # title and description words
    identifiers: frozenset[str]
    words: frozenset[str]
    phrases: frozenset[tuple[str, ...]]


def _clean_path(raw: str) -> str:
    path = _LINE_SUFFIX.sub("", raw.strip().strip("`'\"()[]<>,;")).replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.casefold()


def _citations(text: str, prominent: bool) -> list[_Citation]:
    out = []
    for match in _PATH.finditer(text):
        raw = match.group().rstrip(".,;:")
        if "://" in text[match.start() : match.end() + 3] or raw.startswith("<"):
            continue
        path = _clean_path(raw)
        if not path or path in {".", ".."}:
            continue
        last = path.rstrip("/").rsplit("/", 1)[-1]
        folder = path.endswith("/") or ("." not in last and "/" in path)
        out.append(_Citation(path.rstrip("/"), folder, prominent))
    return out


def _words(text: str) -> set[str]:
    return {t for t in raw_tokens(normalize(text)) if t not in QUERY_STOPWORDS}


def _identifiers(text: str) -> set[str]:
    found = {k.removeprefix("kw:") for k in keyword_candidates(text)}
    found.update(normalize(code) for code in _CAPS_CODE.findall(text))
    # Dotted names: their camelCase parts too (`psycopg.errors.DeadlockDetected`), as
    # written (case tells a name from a word).
    for token in _DOTTED.findall(text):
        for part in regex.split(r"[.:]", token):
            if len(part) >= 4 and (_camel(part) or _CAPS_CODE.fullmatch(part)):
                found.add(normalize(part))
    return {_LINE_SUFFIX.sub("", k) for k in found}


def _camel(word: str) -> bool:
    return word != word.lower() and not word.isupper() and not word.istitle()


def _phrases(text: str) -> set[tuple[str, ...]]:
    """Runs of four words with at least two content words: an error message quoted in
    a lesson (`cannot use import statement outside a module`) is found whole."""
    words = _ANY_WORD.findall(normalize(text))
    out = set()
    for i in range(len(words) - PHRASE_WORDS + 1):
        run = tuple(words[i : i + PHRASE_WORDS])
        if sum(w not in QUERY_STOPWORDS and len(w) > 2 for w in run) >= 2:
            out.add(run)
    return out


def _path_matches(path: str, citation: _Citation) -> bool:
    """Whether an edited (or reported) path is, or is inside, what a memory cites."""
    cited = citation.path
    if citation.folder:
        depth = cited.count("/") + 1
        if depth < (2 if citation.prominent else 3):
            return False
        return path == cited or path.startswith(cited + "/") or f"/{cited}/" in f"/{path}"
    if path == cited or path.endswith("/" + cited):
        return True
    if "/" in cited:
        return False
    name = path.rsplit("/", 1)[-1]
    if cited.startswith(".") and cited.count(".") == 1:  # `.snap`, `.env`
        return name == cited or name.endswith(cited)
    return name == cited


@dataclass(frozen=True)
class _Read:
    """What one memory adds to the index's document frequencies (and its candidate)."""

    doc: MemoryDocument
    identifiers: frozenset[str]
    words: frozenset[str]
    candidate: _Candidate | None  # None: not a lesson or a convention


@dataclass(frozen=True)
class _Event:
    """What the matcher reads of an error or output text, read once per event."""

    identifiers: frozenset[str]
    paths: frozenset[str]
    phrases: frozenset[tuple[str, ...]]
    words: frozenset[str]


Place = Callable[[MemoryDocument], CategoryPath]


@dataclass
class SuggestionIndex:
    """The lessons and conventions of a set of memories, read once for matching.

    Kept up to date per changed memory (`upsert`, `remove`, `follow`): a memory is
    read when it is added or changed, never again for another event or change.
    `place` puts a memory on the topic tree (a session's cached `TopicTree`); by
    default the rules, with `declared` front-matter categories by path.
    """

    declared: Mapping[str, str] = field(default_factory=dict)
    place: Place | None = None
    identifier_df: Counter[str] = field(default_factory=Counter)
    word_df: Counter[str] = field(default_factory=Counter)
    _read: dict[str, _Read] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        docs: Iterable[MemoryDocument],
        declared: Mapping[str, str] | None = None,
        place: Place | None = None,
    ) -> SuggestionIndex:
        """`declared`: front-matter categories by path, where a memory declares one."""
        index = cls(dict(declared or {}), place)
        for doc in docs:
            index.upsert(doc)
        return index

    @property
    def memories(self) -> int:
        return len(self._read)

    @property
    def candidates(self) -> list[_Candidate]:
        return [r.candidate for r in self._read.values() if r.candidate is not None]

    def upsert(self, doc: MemoryDocument) -> None:
        """Add or replace one memory."""
        self.remove(doc.path)
        full = f"{doc.title}\n{doc.description}\n{doc.body}"
        identifiers = frozenset(_identifiers(full))
        words = frozenset(_words(full))
        self.identifier_df.update(identifiers)
        self.word_df.update(words)
        self._read[doc.path] = _Read(
            doc, identifiers, words, self._candidate(doc, full, identifiers, words)
        )

    def remove(self, path: str) -> None:
        """Forget one memory (nothing when it is not here)."""
        read = self._read.pop(path, None)
        if read is None:
            return
        self.identifier_df.subtract(read.identifiers)
        self.word_df.subtract(read.words)
        for counter, keys in ((self.identifier_df, read.identifiers), (self.word_df, read.words)):
            for key in keys:
                if counter[key] <= 0:
                    del counter[key]

    def follow(self, docs: Iterable[MemoryDocument]) -> int:
        """Bring the index to exactly `docs`: a memory whose document object changed is
        read again, one gone is removed. Returns how many were read or removed."""
        current = {doc.path: doc for doc in docs}
        changed = 0
        for path in self._read.keys() - current.keys():
            self.remove(path)
            changed += 1
        for path, doc in current.items():
            read = self._read.get(path)
            if read is None or read.doc is not doc:
                self.upsert(doc)
                changed += 1
        return changed

    def _candidate(
        self,
        doc: MemoryDocument,
        full: str,
        identifiers: frozenset[str],
        words: frozenset[str],
    ) -> _Candidate | None:
        if self.place is not None:
            category = self.place(doc)
        else:
            category = infer_category(
                type=doc.type,
                title=doc.title,
                description=doc.description,
                body=doc.body,
                declared=self.declared.get(doc.path),
            )
        if category.top not in SUGGESTED_CATEGORIES:
            return None
        summary = f"{doc.title}\n{doc.description}"
        spans = [m.group(1).strip() for m in _CODE_SPAN.finditer(full)]
        commands = tuple(
            tuple(span.split()) for span in spans if len(span.split()) >= 2 and span[0].isalnum()
        )
        return _Candidate(
            doc=doc,
            category=category,
            citations=(
                *_citations(summary, prominent=True),
                *_citations(doc.body, prominent=False),
            ),
            commands=commands,
            summary_words=frozenset(normalize(summary).replace("-", " ").split()),
            identifiers=identifiers,
            words=words,
            phrases=frozenset(_phrases(full)),
        )

    def distinctive(self, word: str) -> bool:
        return 0 < self.word_df[word] <= max(2, round(0.05 * self.memories))

    def rare_identifier(self, identifier: str) -> bool:
        return 0 < self.identifier_df[identifier] <= 2

    def match(self, event: ObservedEvent) -> list[Suggestion]:
        """The memories this event strongly matches, strongest first (at most two)."""
        read = self._read_event(event)
        scored: list[tuple[tuple[int, int], Suggestion]] = []
        for candidate in self.candidates:
            found = self._evidence(candidate, event, read)
            if found is not None:
                strength, evidence = found
                scored.append(
                    (
                        strength,
                        Suggestion(candidate.doc.path, candidate.category.slug, tuple(evidence)),
                    )
                )
        scored.sort(key=lambda item: (-item[0][0], -item[0][1], item[1].path))
        return [s for _strength, s in scored[:MAX_SUGGESTIONS]]

    def _read_event(self, event: ObservedEvent) -> _Event | None:
        if event.kind in ("edit", "command"):
            return None
        text = event.text[:MAX_TEXT_CHARS]
        if not text.strip():
            return None
        paths = {_clean_path(c.path) for c in _citations(text, prominent=False)}
        if event.path:
            paths.add(_clean_path(event.path))
        return _Event(
            identifiers=frozenset(i for i in _identifiers(text) if self.rare_identifier(i)),
            paths=frozenset(paths),
            phrases=frozenset(_phrases(text)),
            words=frozenset(w for w in _words(text) if self.distinctive(w)),
        )

    def _evidence(
        self, candidate: _Candidate, event: ObservedEvent, read: _Event | None
    ) -> tuple[tuple[int, int], list[str]] | None:
        if event.kind == "edit":
            if not event.path:
                return None
            path = _clean_path(event.path)
            cited = [c.path for c in candidate.citations if _path_matches(path, c)]
            return ((3, len(cited)), [f"cites {c}" for c in cited]) if cited else None
        if event.kind == "command":
            observed = event.text.split()
            for command in candidate.commands:
                if _runs(observed, command) and _names(candidate.summary_words, command[:2]):
                    return (3, len(command)), [f"cites the command `{' '.join(command)}`"]
            return None
        if read is None:
            return None
        identifiers = sorted(read.identifiers & candidate.identifiers)
        cited = sorted(
            {c.path for p in read.paths for c in candidate.citations if _path_matches(p, c)}
        )
        phrases = read.phrases & candidate.phrases
        # A word already counted as an identifier (`typeerror`) is not counted again.
        named = {part for i in identifiers for part in _words(i)} | set(identifiers)
        words = sorted(w for w in read.words & candidate.words if w not in named)
        signals = len(identifiers) + len(cited) + bool(phrases)
        if not (signals >= 2 or (signals and words) or len(words) >= 4):
            return None
        evidence = [f"shares {i}" for i in identifiers] + [f"cites {c}" for c in cited]
        if phrases:
            evidence.append(f"quotes {' '.join(min(phrases))!r}")
        evidence += [f"shares the words {', '.join(words[:6])}"] if words else []
        return (signals, len(words)), evidence


def _names(summary: frozenset[str], words: Sequence[str]) -> bool:
    """Whether a title or description names one of these words (`publish` in
    "Publishing the npm package": the same start, four letters at least)."""
    for word in (normalize(w) for w in words):
        if word in summary:
            return True
        if len(word) >= 4 and any(
            s.startswith(word) or (len(s) >= 4 and word.startswith(s)) for s in summary
        ):
            return True
    return False


def _runs(observed: Sequence[str], command: Sequence[str]) -> bool:
    """Whether an observed command line runs a cited command: the same program,
    and the cited words in order among the observed ones."""
    if not observed or normalize(observed[0]) != normalize(command[0]):
        return False
    words = iter(normalize(w) for w in observed[1:])
    return all(normalize(w) in words for w in command[1:])


# A recall's first result goes out within milliseconds of its arrival; a window
# still open after this long belongs to a recall stuck elsewhere (a slow first
# index), and must not hold suggestions back for good. Generous: on a loaded 2-core
# machine a fast phase has taken over a second, and a suggestion sent then lands in
# the prompt the host is assembling; one held a few seconds longer costs nothing.
FAST_WINDOW_CAP_S = 5.0


@dataclass
class SuggestionSession:
    """What one session has been suggested, and when it may be suggested more.

    A recall's fast window opens when the recall arrives (`recall_started`) and
    closes when its first result has been sent, or it ended (`recall_answered`);
    while any is open (at most `fast_window_cap_s` each), suggestions wait.
    """

    max_per_window: int = 3
    window_s: float = 60.0
    fast_window_cap_s: float = FAST_WINDOW_CAP_S
    suggested: set[str] = field(default_factory=set)
    _sent_at: list[float] = field(default_factory=list)
    _open: dict[object, float] = field(default_factory=dict)
    rate_limited: int = 0  # suggestions dropped by the rate limit
    repeated: int = 0  # suggestions dropped as already sent this session

    def recall_started(self, key: object, now: float) -> None:
        """A recall arrived: nothing is suggested until its first result is out."""
        self._open[key] = now

    def recall_answered(self, key: object) -> None:
        """The recall's first result was sent (or it ended): its window closes."""
        self._open.pop(key, None)

    def wait_s(self, now: float) -> float:
        """How long a suggestion must wait before it may be sent (0: now)."""
        for key, started in list(self._open.items()):
            if now - started >= self.fast_window_cap_s:
                del self._open[key]
        if not self._open:
            return 0.0
        return max(0.0, min(self._open.values()) + self.fast_window_cap_s - now)

    def fresh(self, suggestions: Sequence[Suggestion]) -> list[Suggestion]:
        """The suggestions not yet sent this session."""
        return [s for s in suggestions if s.path not in self.suggested]

    def admit(self, suggestions: Sequence[Suggestion], now: float) -> list[Suggestion]:
        """The suggestions to send now: never one already sent this session, within
        the rate limit. Call when `wait_s` is 0; what is admitted counts as sent."""
        if self.wait_s(now) > 0:
            return []
        self._sent_at = [t for t in self._sent_at if now - t < self.window_s]
        fresh = self.fresh(suggestions)
        self.repeated += len(suggestions) - len(fresh)
        if not fresh:
            return []
        if len(self._sent_at) >= self.max_per_window:
            self.rate_limited += len(fresh)
            return []
        self._sent_at.append(now)
        self.suggested.update(s.path for s in fresh)
        return fresh
