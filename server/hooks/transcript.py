"""A host's transcript file as the turns extraction reads (docs/hooks.md, "After the turn").

Every host names its transcript in the hook's stdin (`transcript_path`) and every
host writes it differently: Claude Code and qwen-code one JSON object per line
with the message inside (`message.content`, a string or a list of parts), Codex
one `response_item` per line (`payload.content[].input_text`), Gemini CLI a JSON
document with a `messages` list (`type: "user" | "gemini"`). The reader looks for
what they share — a role and text parts — and keeps only what a person said or
the agent answered: tool calls and tool results are left out (they are the task's
progress, not what is worth remembering), and so is anything this daemon injected
(it came from memory: extracting it again would only find it known).

A line that is not JSON, a record of another shape, a file that is not there:
skipped, never an error. Pure: a path in, turns out.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

# A transcript larger than this is read from its end: the newest turns matter most, and a
# hook's extraction must not hold the daemon on a file of gigabytes.
MAX_READ_BYTES = 16 * 1024 * 1024
# What the daemon injects starts with one of these headings (recall's and the context's
# prompts): such text is memory already.
INJECTED_HEADINGS = ("## Relevant memory", "## Always-loaded memory")
# Text parts of a message, by the key each host uses; anything else in a message
# (tool_use, tool_result, function calls, images) is not a person's words.
TEXT_PART_TYPES = {"text", "input_text", "output_text"}
ROLES = {"user": "user", "human": "user", "assistant": "assistant", "gemini": "assistant",
         "model": "assistant", "copilot": "assistant"}  # fmt: skip


@dataclass(frozen=True)
class HostTurn:
    role: str  # user | assistant
    content: str


def read_transcript(path: str | Path) -> list[HostTurn]:
    """The transcript's turns in order ([] when the file cannot be read)."""
    try:
        with open(path, "rb") as stream:
            stream.seek(0, 2)
            size = stream.tell()
            stream.seek(max(0, size - MAX_READ_BYTES))
            data = stream.read()
    except (OSError, ValueError):
        return []
    text = data.decode("utf-8", "replace")
    if size > MAX_READ_BYTES:
        text = text.split("\n", 1)[-1]  # the first line read is cut: drop it
    records: list[Any]
    try:
        whole = json.loads(text)
    except ValueError:
        records = list(_json_lines(text))
    else:
        records = _records_of(whole)
    turns: list[HostTurn] = []
    for record in records:
        turn = _turn(record)
        if turn is not None:
            turns.append(turn)
    return turns


def _json_lines(text: str) -> Iterator[Any]:
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        try:
            yield json.loads(line)
        except ValueError:
            continue


def _records_of(whole: Any) -> list[Any]:
    """The message records of a whole-file transcript (Gemini: `{messages: [...]}`)."""
    if isinstance(whole, list):
        return whole
    if isinstance(whole, dict):
        for key in ("messages", "history", "turns", "items"):
            found = whole.get(key)
            if isinstance(found, list):
                return found
        return [whole]
    return []


def _turn(record: Any) -> HostTurn | None:
    if not isinstance(record, dict):
        return None
    if record.get("isMeta") or record.get("isSidechain"):
        return None  # Claude Code's own notes and subagents' turns
    message = record
    for key in ("message", "payload"):
        inner = record.get(key)
        if isinstance(inner, dict):
            message = inner
            break
    if message.get("type") not in (None, "message", "user", "assistant", "gemini", "model"):
        return None  # function calls, reasoning, events
    role = ROLES.get(str(message.get("role") or record.get("type") or "").lower())
    if role is None:
        return None
    parts = message.get("content", message.get("parts"))
    text = "\n\n".join(t for t in _texts(parts) if not t.lstrip().startswith(INJECTED_HEADINGS))
    text = text.strip()
    return HostTurn(role, text) if text else None


def _texts(content: Any) -> Iterator[str]:
    if isinstance(content, str):
        yield content
        return
    if not isinstance(content, list):
        return
    for part in content:
        if isinstance(part, str):
            yield part
        elif isinstance(part, dict):
            kind = part.get("type")
            if (kind is None or kind in TEXT_PART_TYPES) and isinstance(part.get("text"), str):
                yield part["text"]
