"""Where each agent keeps its own memory for a workspace (docs/hooks.md, "The hosts' own memory").

Found from the hosts' own code (their npm packages, December 2026), so that the
daemon reads what the user already taught each agent:

- **Claude Code**: `<config>/projects/<sanitized root>/memory/` — `<config>` is
  `$CLAUDE_CONFIG_DIR` or `~/.claude`; the root is the workspace's canonical git
  root (the main checkout of a worktree), else the workspace; sanitized = every
  character but ASCII letters and digits turned into `-`, and past 200 characters
  cut with a hash of the whole appended. `autoMemoryDirectory` in the user's
  `~/.claude/settings.json` replaces it. Files in our own format (front matter
  `name`, `description`, a type).
- **qwen-code**: `<base>/projects/<sanitized root>/memory/` — `<base>` is
  `$QWEN_CODE_MEMORY_BASE_DIR`, else `$QWEN_HOME`, else `~/.qwen`; with
  `QWEN_CODE_MEMORY_LOCAL=1`, `<workspace>/.qwen/memory/`. The same format.
- **Codex**: `$CODEX_HOME/memories/` (`~/.codex/memories/`): `MEMORY.md`,
  `memory_summary.md`, `rollout_summaries/*.md` — free markdown, for every project.
- **Gemini CLI**: the global `~/.gemini/GEMINI.md` ("## Gemini Added Memories",
  one fact per bullet) and the project's private folder `~/.gemini/tmp/<id>/memory/`,
  `<id>` from `~/.gemini/projects.json` — free markdown.

Claude's and qwen's folders are read as they are. Codex's and Gemini's files are
free text: `mirror.py` derives memory files from them into a folder of ours, and
that folder is the root. Every host root is read-only for the daemon (unless the
user opts in): never moved, archived or rewritten behind the host's back.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

# Claude Code cuts a sanitized project path past this many characters and appends a hash.
CLAUDE_MAX_SANITIZED = 200


@dataclass(frozen=True)
class HostMemory:
    """One host's memory for a workspace."""

    host: str  # the host's name (`claude-code`, …)
    source: Path  # what the host keeps: a folder, or a file (Gemini's GEMINI.md)
    scope: str  # project (this workspace only) or user (every project)
    # Free text that `mirror.py` turns into memory files (Codex, Gemini); False: the
    # folder is read as it is (Claude Code, qwen-code).
    mirrored: bool = False


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or os.path.expanduser("~"))


def _expand(path: str, env: Mapping[str, str]) -> Path:
    if path.startswith("~"):
        return _home(env) / path[1:].lstrip("/\\")
    return Path(path)


def canonical_root(workspace: Path) -> Path:
    """The git checkout the workspace is in — the main checkout of a worktree — else the
    workspace itself (both hosts key their memory by it)."""
    for folder in (workspace, *workspace.parents):
        git = folder / ".git"
        if git.is_dir():
            return folder
        if git.is_file():  # a worktree: `gitdir: <main>/.git/worktrees/<name>`
            try:
                pointer = git.read_text("utf-8").strip()
            except (OSError, UnicodeDecodeError):
                return folder
            if not pointer.startswith("gitdir:"):
                return folder
            gitdir = (folder / pointer[len("gitdir:") :].strip()).resolve()
            common = gitdir.parent.parent if gitdir.parent.name == "worktrees" else None
            if common is not None and common.name == ".git":
                return common.parent
            return folder
    return workspace


def _js_hash36(text: str) -> str:
    """Claude Code's short hash of a long path: a 32-bit string hash in base 36."""
    h = 0
    for code in memoryview(text.encode("utf-16-le")).cast("H"):  # JavaScript's code units
        h = ((h << 5) - h + code) & 0xFFFFFFFF
    if h >= 1 << 31:
        h -= 1 << 32
    n, digits = abs(h), "0123456789abcdefghijklmnopqrstuvwxyz"
    out = ""
    while True:
        n, r = divmod(n, 36)
        out = digits[r] + out
        if not n:
            return out


def sanitize(path: str, *, limit: int | None = None) -> str:
    """A path as one folder name, as Claude Code and qwen-code write it."""
    if sys.platform == "win32":
        path = path.lower()
    out = "".join(c if c.isascii() and c.isalnum() else "-" for c in path)
    if limit is not None and len(out) > limit:
        return f"{out[:limit]}-{_js_hash36(path)}"
    return out


def _json_file(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def claude_code(workspace: Path, env: Mapping[str, str]) -> HostMemory | None:
    config = _expand(env["CLAUDE_CONFIG_DIR"], env) if env.get("CLAUDE_CONFIG_DIR") else None
    config = config or _home(env) / ".claude"
    if not config.is_dir():
        return None  # Claude Code was never run by this user
    chosen = _json_file(config / "settings.json").get("autoMemoryDirectory")
    if isinstance(chosen, str) and chosen.strip():
        return HostMemory("claude-code", _expand(chosen.strip(), env), "project")
    root = str(canonical_root(workspace))
    folder = config / "projects" / sanitize(root, limit=CLAUDE_MAX_SANITIZED) / "memory"
    return HostMemory("claude-code", folder, "project")


def qwen_code(workspace: Path, env: Mapping[str, str]) -> HostMemory | None:
    if env.get("QWEN_CODE_MEMORY_LOCAL") == "1":
        return HostMemory("qwen", workspace / ".qwen" / "memory", "project")
    base_set = env.get("QWEN_CODE_MEMORY_BASE_DIR") or env.get("QWEN_HOME")
    base = _expand(base_set, env) if base_set else _home(env) / ".qwen"
    if not base.is_dir():
        return None
    folder = base / "projects" / sanitize(str(canonical_root(workspace))) / "memory"
    return HostMemory("qwen", folder, "project")


def codex(env: Mapping[str, str]) -> HostMemory | None:
    home = _expand(env["CODEX_HOME"], env) if env.get("CODEX_HOME") else _home(env) / ".codex"
    folder = home / "memories"
    return HostMemory("codex", folder, "user", mirrored=True) if folder.is_dir() else None


def gemini(workspace: Path, env: Mapping[str, str]) -> list[HostMemory]:
    home = _home(env) / ".gemini"
    if not home.is_dir():
        return []
    found = []
    global_file = home / "GEMINI.md"
    if global_file.is_file():
        found.append(HostMemory("gemini", global_file, "user", mirrored=True))
    projects = _json_file(home / "projects.json").get("projects")
    if isinstance(projects, dict):
        short = projects.get(str(workspace)) or projects.get(str(canonical_root(workspace)))
        if isinstance(short, str) and short and "/" not in short and short not in (".", ".."):
            folder = home / "tmp" / short / "memory"
            if folder.is_dir():
                found.append(HostMemory("gemini", folder, "project", mirrored=True))
    return found


def host_memories(
    workspace: str | os.PathLike[str], env: Mapping[str, str] | None = None
) -> list[HostMemory]:
    """Every host memory found for this workspace, project ones first."""
    env = os.environ if env is None else env
    ws = Path(os.path.abspath(workspace))
    found = [m for m in (claude_code(ws, env), qwen_code(ws, env), codex(env)) if m is not None]
    found += gemini(ws, env)
    return sorted(found, key=lambda m: m.scope != "project")
