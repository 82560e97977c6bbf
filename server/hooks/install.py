"""`memory-recall install-hooks HOST`: our entries in the host's own settings (docs/hooks.md).

Each host keeps its hooks in a JSON file of its own, under the user's home (`$HOME`
is honoured, and each host's own variable: `CLAUDE_CONFIG_DIR`, `QWEN_HOME`,
`CODEX_HOME`, `COPILOT_HOME`) or in the project:

| host | user | project |
| --- | --- | --- |
| claude-code | `~/.claude/settings.json` | `.claude/settings.json` |
| qwen | `~/.qwen/settings.json` | `.qwen/settings.json` |
| gemini | `~/.gemini/settings.json` | `.gemini/settings.json` |
| codex | `~/.codex/hooks.json` | `.codex/hooks.json` |
| copilot | `~/.copilot/hooks/memory-recall.json` | `.github/hooks/memory-recall.json` |

Installing merges one entry per event into the file and keeps everything else as it
was (other hooks, other settings); it prints the diff and writes only when something
changes, so running it twice changes nothing. Uninstalling removes exactly the
entries whose command is ours (`memory-recall … hook …`, or our loopback URL), and a
group, event list or table only when our entry was all it held. A file that is not
JSON is never rewritten: the error says so and shows what to add by hand.

Pure file work and JSON, no core.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memory_recall.server.hooks.hosts import HOSTS, Host, Point

# The host kills a hook after this (ours exits within its own budget long before).
HOST_TIMEOUT_S = 10
_OURS_COMMAND = re.compile(r"(memory-recall(?:\.exe)?['\"]?|-m\s+memory_recall\.server)\s+hook\s")
_OURS_URL = re.compile(r"^http://127\.0\.0\.1:\d+/hook/")


class InstallError(Exception):
    """The settings file cannot be changed safely; nothing was written."""


@dataclass(frozen=True)
class Change:
    path: Path
    before: str | None  # None: the file did not exist
    after: str | None  # None: the file is to be removed (our own file, emptied)

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def diff(self) -> str:
        before = (self.before or "").splitlines(keepends=True)
        after = (self.after or "").splitlines(keepends=True)
        name = str(self.path)
        return "".join(
            difflib.unified_diff(
                before, after, fromfile=name if self.before is not None else "/dev/null",
                tofile=name if self.after is not None else "/dev/null",
            )
        )  # fmt: skip


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def _dir(env: Mapping[str, str], variable: str, default: str) -> Path:
    value = env.get(variable)
    return Path(os.path.expanduser(value)) if value else _home(env) / default


def settings_path(host: Host, scope: str, project: Path, env: Mapping[str, str]) -> Path:
    """The file `install-hooks` edits for this host and scope."""
    user = scope == "user"
    if host.name == "claude-code":
        base = _dir(env, "CLAUDE_CONFIG_DIR", ".claude") if user else project / ".claude"
        return base / "settings.json"
    if host.name == "qwen":
        return (_dir(env, "QWEN_HOME", ".qwen") if user else project / ".qwen") / "settings.json"
    if host.name == "gemini":
        return (_home(env) / ".gemini" if user else project / ".gemini") / "settings.json"
    if host.name == "codex":
        return (_dir(env, "CODEX_HOME", ".codex") if user else project / ".codex") / "hooks.json"
    base = _dir(env, "COPILOT_HOME", ".copilot") / "hooks" if user else project / ".github/hooks"
    return base / "memory-recall.json"


def hook_command(executable: str | None = None) -> list[str]:
    """How the host starts our hook: this installation's `memory-recall`, by absolute path
    (a host's PATH is not the user's shell's)."""
    if executable:
        return [executable]
    here = Path(sys.argv[0]) if sys.argv and sys.argv[0] else None
    if here is not None and here.name in ("memory-recall", "memory-recall.exe") and here.exists():
        return [str(here.resolve())]
    found = shutil.which("memory-recall")
    if found:
        return [str(Path(found).resolve())]
    return [sys.executable, "-m", "memory_recall.server"]


def _command(base: list[str], host: Host, event: str) -> str:
    return shlex.join([*base, "hook", host.name, event])


def _handler(
    host: Host, event: str, base: list[str], http: tuple[str, str] | None
) -> dict[str, Any]:
    point = host.events[event]
    if http is not None and point in (Point.PROMPT, Point.TOOL):
        url, token = http
        return {
            "type": "http",
            "url": f"{url}/hook/{host.name}/{event}",
            "headers": {"Authorization": f"Bearer {token}"},
            "timeout": HOST_TIMEOUT_S,
        }
    command = _command(base, host, event)
    if host.name == "copilot":
        return {"type": "command", "bash": command, "timeoutSec": HOST_TIMEOUT_S}
    handler: dict[str, Any] = {"type": "command", "command": command}
    if host.name == "claude-code":
        handler["timeout"] = HOST_TIMEOUT_S
    elif host.name == "gemini":
        handler["name"] = "memory-recall"
        handler["timeout"] = HOST_TIMEOUT_S * 1000  # Gemini CLI counts milliseconds
    return handler


def is_ours(handler: Any) -> bool:
    """Whether a hook entry is one `install-hooks` wrote."""
    if not isinstance(handler, dict):
        return False
    command = handler.get("command", handler.get("bash"))
    if isinstance(command, str) and _OURS_COMMAND.search(command):
        return True
    url = handler.get("url")
    return isinstance(url, str) and bool(_OURS_URL.match(url))


def _load(path: Path) -> tuple[dict[str, Any], str | None]:
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}, None
    except (OSError, UnicodeDecodeError) as exc:
        raise InstallError(f"{path}: cannot be read ({exc})") from None
    if not text.strip():
        return {}, text
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise InstallError(f"{path}: not JSON ({exc}); nothing was changed") from None
    if not isinstance(data, dict):
        raise InstallError(f"{path}: expected a JSON object; nothing was changed")
    return data, text


def _dump(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def _without_ours(hooks: dict[str, Any], grouped: bool) -> dict[str, Any]:
    """The hooks table with our entries taken out (and whatever only held them)."""
    out: dict[str, Any] = {}
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            out[event] = entries
            continue
        kept: list[Any] = []
        for entry in entries:
            if grouped and isinstance(entry, dict) and isinstance(entry.get("hooks"), list):
                inner = [h for h in entry["hooks"] if not is_ours(h)]
                if inner or not entry["hooks"]:
                    kept.append({**entry, "hooks": inner})
                elif len(inner) != len(entry["hooks"]):
                    continue  # the group held only ours
            elif not is_ours(entry):
                kept.append(entry)
        if kept or not entries:
            out[event] = kept
    return out


def plan(
    host: Host,
    scope: str,
    project: Path,
    *,
    uninstall: bool = False,
    http: tuple[str, str] | None = None,
    executable: str | None = None,
    env: Mapping[str, str] | None = None,
) -> Change:
    """The change to the host's settings file (nothing written yet)."""
    env = os.environ if env is None else env
    path = settings_path(host, scope, project, env)
    data, before = _load(path)
    grouped = host.name != "copilot"
    result = copy.deepcopy(data)
    old = result.get("hooks")
    if old is not None and not isinstance(old, dict):
        raise InstallError(f"{path}: `hooks` is not an object; nothing was changed")
    hooks = _without_ours(old or {}, grouped)  # reinstalling replaces ours, never doubles
    if not uninstall:
        base = hook_command(executable)
        for event in host.installed:
            handler = _handler(host, event, base, http)
            entry: Any = handler
            if grouped:
                entry = {"hooks": [handler]}
                if host.events[event] is Point.TOOL and host.name != "gemini":
                    entry = {"matcher": "*", "hooks": [handler]}
            if not isinstance(hooks.setdefault(event, []), list):
                raise InstallError(f"{path}: `hooks.{event}` is not a list; nothing was changed")
            hooks[event].append(entry)
        if host.name == "copilot":
            result.setdefault("version", 1)
    if hooks:
        result["hooks"] = hooks
    elif old is not None:
        if old:  # it held only ours
            del result["hooks"]
        else:
            result["hooks"] = {}
    if uninstall and host.name == "copilot" and set(result) <= {"version"}:
        after = None  # our own file, emptied: removed
    else:
        after = _dump(result) if (result or before is not None) else None
    if before is not None and after is not None and _normal(before) == _normal(after):
        after = before  # the same settings: the user's formatting stays
    return Change(path, before, after)


def _normal(text: str | None) -> Any:
    try:
        return json.loads(text) if text and text.strip() else {}
    except ValueError:
        return text


def apply(change: Change) -> None:
    """Write the change atomically (a temp file beside it, then a rename), keeping the
    file's permissions; remove our own file when it is emptied."""
    if not change.changed:
        return
    if change.after is None:
        change.path.unlink(missing_ok=True)
        return
    change.path.parent.mkdir(parents=True, exist_ok=True)
    mode = change.path.stat().st_mode & 0o777 if change.path.exists() else None
    temp = change.path.with_name(f".{change.path.name}.memory-recall.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode if mode is not None else 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(change.after)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temp, change.path)


def trust_note(host: Host, scope: str) -> str | None:
    """What the user must still do for the host to run the hooks, if anything."""
    if host.name == "codex":
        return (
            "Codex runs a hook only once you trust it: start `codex`, open `/hooks` and trust "
            "the memory-recall entries (Codex records each one's hash in ~/.codex/config.toml "
            "under [hooks.state]); until then `codex exec` skips them silently. For one run, "
            "`codex exec --dangerously-bypass-hook-trust` runs them without review."
        )
    if host.name == "copilot" and scope == "project":
        return "Copilot CLI reads .github/hooks/*.json from the folder it starts in."
    return None


__all__ = ["HOSTS", "Change", "InstallError", "apply", "is_ours", "plan", "trust_note"]
