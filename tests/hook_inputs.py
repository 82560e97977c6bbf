"""What each host sends on a hook's stdin, event by event (docs/hooks.md; the shapes were read
from the hosts' packages and their hook documentation, and checked by `make agents` for the
four hosts that run here), and what each host reads back."""

from __future__ import annotations

import json
from typing import Any

# host → event → (the delivery point's name, a stdin payload builder)
PROMPT, TOOL, START, TURN_END, END = "prompt", "tool", "start", "turn-end", "end"


def claude_like(event: str, session: str, cwd: str, transcript: str, prompt: str) -> dict[str, Any]:
    base = {"session_id": session, "transcript_path": transcript, "cwd": cwd,
            "hook_event_name": event}  # fmt: skip
    if event == "UserPromptSubmit":
        return {**base, "prompt": prompt, "permission_mode": "default"}
    if event == "PostToolUse":
        return {**base, "tool_name": "Bash", "tool_input": {"command": "ls"},
                "tool_response": {"stdout": "a\nb\n", "stderr": ""}, "tool_use_id": "toolu_01"}  # fmt: skip
    if event == "SessionStart":
        return {**base, "source": "startup"}
    if event == "SessionEnd":
        return {**base, "reason": "other"}
    return {**base, "stop_hook_active": False}  # Stop


def gemini(event: str, session: str, cwd: str, transcript: str, prompt: str) -> dict[str, Any]:
    base = {"session_id": session, "transcript_path": transcript, "cwd": cwd,
            "hook_event_name": event, "timestamp": "2026-12-04T10:00:00.000Z"}  # fmt: skip
    if event == "BeforeAgent":
        return {**base, "prompt": prompt}
    if event == "AfterTool":
        return {**base, "tool_name": "run_shell_command", "tool_input": {"command": "ls"},
                "tool_response": {"llmContent": "a\nb"}}  # fmt: skip
    if event == "SessionStart":
        return {**base, "source": "startup"}
    if event == "SessionEnd":
        return {**base, "reason": "exit"}
    return {**base, "prompt": prompt, "prompt_response": "done"}  # AfterAgent


def copilot(event: str, session: str, cwd: str, transcript: str, prompt: str) -> dict[str, Any]:
    base = {"sessionId": session, "timestamp": 1764842400000, "cwd": cwd}
    if event == "userPromptSubmitted":
        return {**base, "prompt": prompt}
    if event == "postToolUse":
        return {**base, "toolName": "bash", "toolArgs": '{"command":"ls"}',
                "toolResult": {"resultType": "success", "textResultForLlm": "a\nb"}}  # fmt: skip
    if event == "sessionStart":
        return {**base, "source": "new", "initialPrompt": ""}
    return {**base, "reason": "complete"}  # sessionEnd


HOST_EVENTS: dict[str, dict[str, tuple[str, Any]]] = {
    "claude-code": {"UserPromptSubmit": (PROMPT, claude_like), "PostToolUse": (TOOL, claude_like),
                    "SessionStart": (START, claude_like), "Stop": (TURN_END, claude_like),
                    "SessionEnd": (END, claude_like)},
    "qwen": {"UserPromptSubmit": (PROMPT, claude_like), "PostToolUse": (TOOL, claude_like),
             "SessionStart": (START, claude_like), "Stop": (TURN_END, claude_like),
             "SessionEnd": (END, claude_like)},
    "codex": {"UserPromptSubmit": (PROMPT, claude_like), "PostToolUse": (TOOL, claude_like),
              "SessionStart": (START, claude_like), "Stop": (TURN_END, claude_like)},
    "gemini": {"BeforeAgent": (PROMPT, gemini), "AfterTool": (TOOL, gemini),
               "SessionStart": (START, gemini), "AfterAgent": (TURN_END, gemini),
               "SessionEnd": (END, gemini)},
    "copilot": {"userPromptSubmitted": (PROMPT, copilot), "postToolUse": (TOOL, copilot),
                "sessionStart": (START, copilot), "sessionEnd": (END, copilot)},
}  # fmt: skip

GARBAGE: list[bytes] = [
    b"",
    b"   \n",
    b"not json at all",
    b"[1, 2, 3]",
    b'"a string"',
    b'{"session_id": ',
    b"\xff\xfe\x00garbage",
    json.dumps({"prompt": 42, "session_id": ["x"], "cwd": 7}).encode(),
]


def payload(host: str, event: str, *, session: str = "s-1", cwd: str = "/tmp",
            transcript: str = "/nonexistent", prompt: str = "") -> dict[str, Any]:  # fmt: skip
    _point, build = HOST_EVENTS[host][event]
    return build(event, session, cwd, transcript, prompt)


def injected(host: str, event: str, stdout: str) -> str:
    """The text the host would inject from the hook's stdout, read as that host reads it
    (the JSON it parses; '' for no output). Fails on anything the host would not take."""
    if not stdout:
        return ""
    data = json.loads(stdout)
    if host == "copilot":
        assert set(data) == {"additionalContext"}, data
        text = data["additionalContext"]
    else:
        assert set(data) == {"hookSpecificOutput"}, data
        inner = data["hookSpecificOutput"]
        assert inner["hookEventName"] == event, inner
        assert set(inner) == {"hookEventName", "additionalContext"}, inner
        text = inner["additionalContext"]
    assert isinstance(text, str) and text.strip()
    return text
