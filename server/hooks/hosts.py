"""The five hosts as the daemon sees them (docs/hooks.md): which of their events are which
delivery point, what their stdin JSON carries, and what they read back on stdout.

Every host sends one JSON object on the hook's stdin and reads JSON on its stdout.
They agree on little else: Claude Code, qwen-code and Codex use Claude's event names
and snake_case fields; Gemini CLI has its own event names (`BeforeAgent`,
`AfterTool`); Copilot CLI's own format is camelCase (`userPromptSubmitted`,
`sessionId`, `toolName`) and takes `additionalContext` at the top level. Plain
stdout is ignored by most of them, so the answer is always the JSON the host reads.

Pure functions of plain data: no core, no I/O.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from typing import Any


class Point(str, Enum):
    """Where in a session a hook fires, as the daemon serves it."""

    PROMPT = "prompt"  # the user's prompt, before the first model request: the fast result
    TOOL = "tool"  # a tool's result goes back to the model: the refined result
    START = "start"  # a session starts: the always-loaded context
    TURN_END = "turn-end"  # the agent finished a turn: extraction of the new turns
    END = "end"  # the session ends: extraction of what is left


@dataclass(frozen=True)
class Host:
    """One agent CLI's hook dialect."""

    name: str
    title: str  # for people: "Claude Code"
    events: Mapping[str, Point]
    # Copilot CLI reads `additionalContext` at the top level; the others inside
    # `hookSpecificOutput`, with the event's name beside it.
    nested_output: bool = True
    # The events `install-hooks` registers (the others are understood, not installed).
    installed: tuple[str, ...] = ()
    http: bool = False  # the host also runs `type: "http"` hooks (Claude Code, qwen-code)
    aliases: tuple[str, ...] = field(default=())


CLAUDE_EVENTS = {
    "UserPromptSubmit": Point.PROMPT,
    "PostToolUse": Point.TOOL,
    "SessionStart": Point.START,
    "Stop": Point.TURN_END,
    "SessionEnd": Point.END,
}

HOSTS: dict[str, Host] = {
    "claude-code": Host(
        "claude-code", "Claude Code", CLAUDE_EVENTS,
        installed=("SessionStart", "UserPromptSubmit", "PostToolUse", "SessionEnd"),
        http=True, aliases=("claude",),
    ),
    "qwen": Host(
        "qwen", "qwen-code", CLAUDE_EVENTS,
        installed=("SessionStart", "UserPromptSubmit", "PostToolUse", "SessionEnd"),
        http=True, aliases=("qwen-code",),
    ),
    # Codex has no SessionEnd: its Stop (after each turn) extracts the turns not yet read.
    "codex": Host(
        "codex", "Codex CLI", CLAUDE_EVENTS,
        installed=("SessionStart", "UserPromptSubmit", "PostToolUse", "Stop"),
    ),
    "gemini": Host(
        "gemini", "Gemini CLI",
        {
            "BeforeAgent": Point.PROMPT,
            "AfterTool": Point.TOOL,
            "SessionStart": Point.START,
            "AfterAgent": Point.TURN_END,
            "SessionEnd": Point.END,
        },
        installed=("SessionStart", "BeforeAgent", "AfterTool", "SessionEnd"),
        aliases=("gemini-cli",),
    ),
    "copilot": Host(
        "copilot", "Copilot CLI",
        {
            "userPromptSubmitted": Point.PROMPT,
            "postToolUse": Point.TOOL,
            "sessionStart": Point.START,
            "sessionEnd": Point.END,
        },
        nested_output=False,
        installed=("sessionStart", "userPromptSubmitted", "postToolUse", "sessionEnd"),
        aliases=("copilot-cli",),
    ),
}  # fmt: skip


def host_named(name: str) -> Host | None:
    """A host by its name or an alias (`claude`, `qwen-code`, …)."""
    wanted = name.strip().lower()
    for host in HOSTS.values():
        if wanted == host.name or wanted in host.aliases:
            return host
    return None


@dataclass(frozen=True)
class HookEvent:
    """What the daemon needs of one hook's stdin, whatever the host."""

    host: str
    event: str
    point: Point
    session: str  # the host's session id, or "" when it sends none
    cwd: str | None
    prompt: str = ""
    tool: str = ""  # the tool's name (tool hooks)
    transcript_path: str | None = None


def _text(data: Mapping[str, Any], *keys: str) -> str:
    for key in keys:
        value = data.get(key)
        if isinstance(value, str):
            return value
    return ""


def read_event(host: Host, event: str, data: Any) -> HookEvent | None:
    """The event, or None when it is not one the daemon serves or `data` is not the
    host's JSON object. The event name on the command line wins over the one in the
    JSON (hosts name it differently; `install-hooks` writes the command line)."""
    point = host.events.get(event)
    if point is None:
        # An event name in another spelling (`userpromptsubmit`) is still that event.
        point = next((p for e, p in host.events.items() if e.lower() == event.lower()), None)
        if point is None:
            return None
        event = next(e for e in host.events if e.lower() == event.lower())
    if not isinstance(data, Mapping):
        return None
    session = _text(data, "session_id", "sessionId")
    cwd = _text(data, "cwd") or None
    return HookEvent(
        host=host.name,
        event=event,
        point=point,
        session=session,
        cwd=cwd,
        prompt=_text(data, "prompt", "initialPrompt") if point is Point.PROMPT else "",
        tool=_text(data, "tool_name", "toolName"),
        transcript_path=_text(data, "transcript_path", "transcriptPath") or None,
    )


def output(host: Host, event: str, text: str) -> str:
    """What the hook prints for `text` to reach the model: '' when there is nothing."""
    if not text:
        return ""
    if host.nested_output:
        body: dict[str, Any] = {
            "hookSpecificOutput": {"hookEventName": event, "additionalContext": text}
        }
    else:
        body = {"additionalContext": text}
    return json.dumps(body, ensure_ascii=False) + "\n"
