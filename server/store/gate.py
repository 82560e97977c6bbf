"""The quality gate every memory write passes (docs/writing.md), deterministic.

Rules, in this order, the first that fires wins:

1. `secret` — a credential in any field (see secrets.py). Always rejected.
2. `injection` — text addressing the agent to override its instructions.
   Rejected for extracted memories; for `remember` and `update` (the user's
   own words) an error the host may override with `force`.
3. `size` — an empty memory, or a field over its limit.
4. `ephemeral` — extraction only: task progress rather than a durable fact.

A rejection names its rule and never echoes a secret. The word lists live in
data/ (injection_patterns.txt, ephemeral_cues.txt), each with its sources.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Literal

import regex
from memory_recall.server.store.injection import find_injection
from memory_recall.server.store.secrets import find_secrets
from memory_recall.server.tokens import normalize

Origin = Literal["remember", "extract", "update"]
Rule = Literal["secret", "injection", "size", "ephemeral"]

# docs/writing.md default limits, in characters: a title fits one index line, a
# description one sentence, a body a screenful of notes.
DEFAULT_TITLE_LIMIT = 100
DEFAULT_DESCRIPTION_LIMIT = 300
DEFAULT_BODY_LIMIT = 4_000

# docs/memory-files.md: a body that is exactly this counts as empty.
EMPTY_BODY_MARKER = "_No entries yet._"

# A memory is progress, not fact, when at least this share of its sentences
# narrate work in progress (one such sentence in a long note is incidental).
EPHEMERAL_SENTENCE_SHARE = 0.5


@dataclass(frozen=True)
class GateLimits:
    """Per-field length limits in characters (configurable; docs/writing.md defaults)."""

    title: int = DEFAULT_TITLE_LIMIT
    description: int = DEFAULT_DESCRIPTION_LIMIT
    body: int = DEFAULT_BODY_LIMIT


@dataclass(frozen=True)
class MemoryDraft:
    """The text of a memory about to be written."""

    title: str
    description: str
    body: str


@dataclass(frozen=True)
class GateRejection:
    """Why a draft may not be written: the rule that fired and a message for the user."""

    rule: Rule
    message: str


@dataclass(frozen=True)
class _Cue:
    label: str
    pattern: regex.Pattern[str]


def _data_lines(name: str) -> list[str]:
    text = resources.files(__package__).joinpath(f"data/{name}").read_text("utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


@cache
def _ephemeral_cues() -> tuple[regex.Pattern[str], ...]:
    return tuple(
        regex.compile(line, regex.IGNORECASE) for line in _data_lines("ephemeral_cues.txt")
    )


def _fields(draft: MemoryDraft) -> tuple[tuple[str, str], ...]:
    return (("title", draft.title), ("description", draft.description), ("body", draft.body))


# Sentence ends in the scripts our users write; a newline ends a log line.
_SENTENCE_END = regex.compile(r"(?<=[.!?;。！？；])\s+|(?<=[。！？；])|\n+")


def _sentences(text: str) -> list[str]:
    return [s for s in _SENTENCE_END.split(text) if s.strip()]


def _narrates_progress(text: str) -> bool:
    return any(cue.search(text) for cue in _ephemeral_cues())


def is_ephemeral(draft: MemoryDraft) -> bool:
    """Whether a draft records task progress rather than a durable fact.

    A progress cue in the title says what the whole memory is about; in the
    description and body, at least half the sentences must narrate progress.
    Step logs count line by line.
    """
    if _narrates_progress(normalize(draft.title)):
        return True
    sentences = _sentences(normalize(f"{draft.description}\n{draft.body}"))
    if not sentences:
        return False
    progress = sum(1 for sentence in sentences if _narrates_progress(sentence))
    return progress / len(sentences) >= EPHEMERAL_SENTENCE_SHARE


def _secret_rejection(draft: MemoryDraft) -> GateRejection | None:
    for field_name, text in _fields(draft):
        kinds = sorted({finding.kind for finding in find_secrets(text)})
        if kinds:
            return GateRejection(
                "secret",
                f"the {field_name} holds a credential ({', '.join(kinds)}); nothing was written."
                " Keep the credential in a secret store and remember where it lives instead.",
            )
    return None


def _injection_rejection(draft: MemoryDraft, origin: Origin, force: bool) -> GateRejection | None:
    label = find_injection("\n".join(text for _, text in _fields(draft)))
    if label is None or (force and origin != "extract"):
        return None
    advice = (
        " Extracted memories are never forced."
        if origin == "extract"
        else " If it really is a note you want kept, repeat with force: true."
    )
    return GateRejection(
        "injection",
        f"the text addresses the agent to override its instructions ({label});"
        f" memories are facts, not commands.{advice}",
    )


# Characters that show nothing: a text of only these is empty (U+200D alone is not a fact).
_INVISIBLE = regex.compile(r"[\s\p{Cf}\p{Cc}\u115f\u1160\u3164\uffa0\u2800\u034f]+")
# A NUL or another control character (not tab or newline) in a body: the file would not
# be read back (a NUL makes it binary), so it is refused, never written.
_CONTROL = regex.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def is_blank(text: str) -> bool:
    """Whether `text` shows nothing: empty, or only spaces and invisible characters."""
    return not _INVISIBLE.sub("", text)


def _size_rejection(draft: MemoryDraft, limits: GateLimits) -> GateRejection | None:
    body = draft.body.strip()
    if is_blank(body) or body == EMPTY_BODY_MARKER:
        return GateRejection("size", "the memory is empty: there is no body to write.")
    if is_blank(draft.title):
        return GateRejection("size", "the memory has no title.")
    control = _CONTROL.search(body)
    if control is not None:
        return GateRejection(
            "size",
            f"the body contains a control character (U+{ord(control.group()):04X}); a memory"
            " file holds text only. Nothing was written.",
        )
    for field_name, text in _fields(draft):
        limit = getattr(limits, field_name)
        if len(text) > limit:
            return GateRejection(
                "size",
                f"the {field_name} is {len(text):,} characters; the limit is {limit:,}."
                " Split it into several memories or shorten it.",
            )
    return None


def check(
    draft: MemoryDraft,
    *,
    origin: Origin,
    force: bool = False,
    limits: GateLimits = GateLimits(),
) -> GateRejection | None:
    """The first gate rule `draft` breaks, in docs/writing.md order, or None when it may be written.

    `force` overrides only the injection rule, and only for the user's own
    words (`remember`, `update`); secrets are never forced.
    """
    rejection = (
        _secret_rejection(draft)
        or _injection_rejection(draft, origin, force)
        or _size_rejection(draft, limits)
    )
    if rejection is not None:
        return rejection
    if origin == "extract" and is_ephemeral(draft):
        return GateRejection(
            "ephemeral",
            "the text reports task progress rather than a durable fact; it is not worth"
            " remembering beyond this session.",
        )
    return None
