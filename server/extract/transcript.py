"""What the model is shown: the session, files, diff and existing memories, redacted and budgeted.

Every piece of text is redacted by the secret detector (store/secrets.py)
before it is placed, and stripped of the tags that delimit our data blocks,
so neither a credential nor a forged `</transcript>` reaches the model.

Budget rule for the transcript (docs/extraction.md): the first user message always
stays (it usually states the task and the user's standing wishes), then the
most recent turns, newest first, as many as fit; what was cut is said in
place, with how many turns and characters. A single overlong turn keeps its
head and tail.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import regex
from memory_recall.server.store.secrets import find_secrets, redact

TRANSCRIPT_BUDGET_CHARS = 24_000  # about 6k tokens: fits small local models with room to answer
TURN_CAP_CHARS = 6_000  # one pasted log must not crowd out the rest of the session
FILES_BUDGET_CHARS = 8_000
EXISTING_BUDGET_CHARS = 6_000
EXISTING_MAX = 120

_DELIMITERS = regex.compile(
    r"<\s*/?\s*(?:transcript|existing_memories|files|file|diff)\b[^>]*>", regex.IGNORECASE
)
_WORD = regex.compile(r"[\p{L}\p{N}_]{3,}")


@dataclass(frozen=True)
class Turn:
    role: str
    content: str


@dataclass(frozen=True)
class ExistingMemory:
    """One memory of the target root, as the model is told about it."""

    relative_path: str
    type: str
    title: str
    description: str
    mtime_ms: float = 0.0


@dataclass(frozen=True)
class Assembled:
    """A block of text for the prompt and what was left out of it."""

    text: str
    total: int  # turns (or items) offered
    kept: int
    cut_items: int
    cut_chars: int
    redactions: int

    @property
    def cut_note(self) -> str:
        if not self.cut_items and not self.cut_chars:
            return ""
        return f" ({self.cut_items} of {self.total} turns and {self.cut_chars:,} characters cut)"


def clean(text: str) -> tuple[str, int]:
    """`text` redacted and with our delimiter tags neutralised; and how many secrets went."""
    found = len(find_secrets(text))
    cleaned = redact(text) if found else text
    return _DELIMITERS.sub("[tag removed]", cleaned), found


def _cap(text: str, cap: int) -> tuple[str, int]:
    if len(text) <= cap:
        return text, 0
    head = cap * 2 // 3
    tail = cap - head
    cut = len(text) - head - tail
    return f"{text[:head]}\n[… {cut:,} characters cut …]\n{text[-tail:]}", cut


def _render_turn(turn: Turn, content: str) -> str:
    return f"[{turn.role}]\n{content}"


def assemble_transcript(
    turns: Sequence[Turn], budget: int = TRANSCRIPT_BUDGET_CHARS, turn_cap: int = TURN_CAP_CHARS
) -> Assembled:
    """The session within `budget` characters (module docstring), redacted."""
    rendered: list[str] = []
    redactions = 0
    capped_chars = 0
    for turn in turns:
        content, found = clean(turn.content.strip())
        redactions += found
        content, cut = _cap(content, turn_cap)
        capped_chars += cut
        rendered.append(_render_turn(turn, content))
    if not rendered:
        return Assembled("(empty)", 0, 0, 0, 0, 0)
    first_user = next((i for i, t in enumerate(turns) if t.role == "user"), 0)
    keep = {first_user}
    used = len(rendered[first_user])
    for index in range(len(rendered) - 1, -1, -1):
        if index in keep:
            continue
        size = len(rendered[index]) + 2
        if used + size > budget:
            break
        keep.add(index)
        used += size
    parts: list[str] = []
    cut_turns = 0
    cut_chars = 0
    pending = 0
    pending_chars = 0
    for index, text in enumerate(rendered):
        if index in keep:
            if pending:
                parts.append(f"[… {pending} turns ({pending_chars:,} characters) cut here …]")
                cut_turns += pending
                cut_chars += pending_chars
                pending = pending_chars = 0
            parts.append(text)
        else:
            pending += 1
            pending_chars += len(text)
    if pending:
        parts.append(f"[… {pending} turns ({pending_chars:,} characters) cut here …]")
        cut_turns += pending
        cut_chars += pending_chars
    return Assembled(
        "\n\n".join(parts),
        total=len(rendered),
        kept=len(keep),
        cut_items=cut_turns,
        cut_chars=cut_chars + capped_chars,
        redactions=redactions,
    )


def assemble_files(
    files: Sequence[tuple[str, str | None]], diff: str | None, budget: int = FILES_BUDGET_CHARS
) -> Assembled:
    """Accepted code (codeAccepted): each file's path and content, then the diff, in budget."""
    parts: list[str] = []
    used = 0
    redactions = 0
    cut = 0
    kept = 0
    items: list[tuple[str, str]] = [(path, content or "") for path, content in files]
    if diff:
        items.append(("(diff)", diff))
    for path, content in items:
        safe_path, found_path = clean(path)
        text, found = clean(content)
        redactions += found + found_path
        room = budget - used - len(safe_path) - 16
        if room <= 200:
            cut += len(text)
            continue
        text, capped = _cap(text, room)
        cut += capped
        block = f"--- {safe_path}\n{text}" if text else f"--- {safe_path}"
        parts.append(block)
        used += len(block) + 1
        kept += 1
    return Assembled("\n".join(parts), len(items), kept, len(items) - kept, cut, redactions)


def assemble_existing(
    memories: Sequence[ExistingMemory],
    session_text: str,
    budget: int = EXISTING_BUDGET_CHARS,
    limit: int = EXISTING_MAX,
) -> Assembled:
    """The root's memories, those sharing the most words with the session first, in budget."""
    words = {w.lower() for w in _WORD.findall(session_text)}

    def overlap(memory: ExistingMemory) -> int:
        mine = {w.lower() for w in _WORD.findall(f"{memory.title} {memory.description}")}
        return len(mine & words)

    ordered = sorted(memories, key=lambda m: (-overlap(m), -m.mtime_ms, m.relative_path))
    lines: list[str] = []
    used = 0
    redactions = 0
    for memory in ordered[:limit]:
        title, found_title = clean(" ".join(memory.title.split()))
        description, found_description = clean(" ".join(memory.description.split()))
        redactions += found_title + found_description
        line = f"- {memory.relative_path} [{memory.type}] {title} — {description}".rstrip(" —")
        if used + len(line) + 1 > budget:
            break
        lines.append(line)
        used += len(line) + 1
    text = "\n".join(lines) if lines else "(none yet)"
    return Assembled(text, len(memories), len(lines), len(memories) - len(lines), 0, redactions)
