"""The shared daemon's own settings: the `[hooks]` table of the user's config file
(docs/configuration.md), then `MEMORY_RECALL_HOOKS_*` variables, then its flags.

The memory settings (roots, ranker, model, …) are the ones every face reads
(`core/config.py`); these say how the daemon runs: how long it stays up idle, the
optional loopback HTTP listener, what happens at a session's end, and whether the
hosts' own memory folders are read (and written).
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_recall.server.core.config import config_path, read_config_file
from memory_recall.server.roots import user_data_dir

# Claude Code and qwen-code can POST a hook to a URL; the port must not move between
# daemon starts, since their settings name it.
DEFAULT_HTTP_PORT = 47931
DEFAULT_IDLE_MINUTES = 60.0  # the daemon stops after this long without a request
DEFAULT_WORKSPACE_IDLE_MINUTES = 30.0  # a workspace's warm catalog is dropped after this
TOKEN_FILE = "daemon-token"
EXTRACT_MODES = ("write", "propose", "off")


@dataclass
class DaemonSettings:
    extract: str = "write"
    http: bool = False
    http_port: int = DEFAULT_HTTP_PORT
    idle_s: float = DEFAULT_IDLE_MINUTES * 60
    workspace_idle_s: float = DEFAULT_WORKSPACE_IDLE_MINUTES * 60
    host_memory: bool = True
    host_memory_writable: bool = False
    problems: list[str] = field(default_factory=list)


def _number(raw: Any, name: str, problems: list[str], low: float, high: float) -> float | None:
    if isinstance(raw, bool) or not isinstance(raw, (int, float)) or not low <= raw <= high:
        problems.append(f"hooks.{name}: expected a number from {low:g} to {high:g}")
        return None
    return float(raw)


def _flag(raw: Any, name: str, problems: list[str]) -> bool | None:
    if isinstance(raw, bool):
        return raw
    problems.append(f"hooks.{name}: expected true or false")
    return None


def read_daemon_settings(env: Mapping[str, str] | None = None) -> DaemonSettings:
    """The `[hooks]` table, then the environment; a bad value keeps its default, said once."""
    env = os.environ if env is None else env
    settings = DaemonSettings()
    table, problem = read_config_file(config_path(env))
    if problem:
        settings.problems.append(problem)
    raw = table.get("hooks", {}) if isinstance(table, dict) else {}
    if not isinstance(raw, dict):
        settings.problems.append("hooks: expected a table")
        raw = {}
    raw = dict(raw)
    if env.get("MEMORY_RECALL_HOOKS_EXTRACT"):
        raw["extract"] = env["MEMORY_RECALL_HOOKS_EXTRACT"]
    problems = settings.problems
    if "extract" in raw:
        if raw["extract"] in EXTRACT_MODES:
            settings.extract = raw["extract"]
        else:
            problems.append("hooks.extract: expected write, propose or off")
    if "http" in raw and (value := _flag(raw["http"], "http", problems)) is not None:
        settings.http = value
    if "httpPort" in raw and (port := _number(raw["httpPort"], "httpPort", problems, 1024, 65535)):
        settings.http_port = int(port)
    if "idleMinutes" in raw and (
        m := _number(raw["idleMinutes"], "idleMinutes", problems, 0.05, 10080)
    ):
        settings.idle_s = m * 60
    if "workspaceIdleMinutes" in raw and (
        m := _number(raw["workspaceIdleMinutes"], "workspaceIdleMinutes", problems, 0.05, 10080)
    ):
        settings.workspace_idle_s = m * 60
    for key, attr in (
        ("hostMemory", "host_memory"),
        ("hostMemoryWritable", "host_memory_writable"),
    ):
        if key in raw and (value := _flag(raw[key], key, problems)) is not None:
            setattr(settings, attr, value)
    known = {"extract", "http", "httpPort", "idleMinutes", "workspaceIdleMinutes", "hostMemory",
             "hostMemoryWritable"}  # fmt: skip
    problems += [f"hooks.{k}: unknown setting" for k in raw if k not in known]
    return settings


def token_path() -> Path:
    return user_data_dir() / TOKEN_FILE


def http_token(create: bool = True) -> str | None:
    """The per-user token the HTTP listener asks for (kept 0600 in the user data dir, so that
    the hosts' settings that carry it stay valid across daemon starts)."""
    path = token_path()
    try:
        token = path.read_text("utf-8").strip()
        if token:
            return token
    except OSError:
        pass
    if not create:
        return None
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(32)
    temp = path.with_name(f".{TOKEN_FILE}.{os.getpid()}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(token + "\n")
    os.replace(temp, path)
    return token
