"""Roots, scopes and platform directories: where memories live (docs/memory-files.md,
protocol/README.md).

A leaf module: it imports nothing else of the daemon, so every layer may use it.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Literal

APP_DIR_NAME = "memory-recall"


class Scope(str, Enum):
    """Where a memory lives; on ties project comes first, then team, then user (docs/writing.md)."""

    PROJECT = "project"
    USER = "user"
    # Shared with everyone on the project (committed to git): the daemon
    # writes there only when asked to explicitly (docs/writing.md).
    TEAM = "team"

    @property
    def rank(self) -> int:
        return _SCOPE_RANK[self]

    @property
    def wire(self) -> Literal["project", "user", "team"]:
        return self.value


_SCOPE_RANK = {Scope.PROJECT: 0, Scope.TEAM: 1, Scope.USER: 2}


@dataclass(frozen=True)
class MemoryRoot:
    """A directory of memories. `path` is kept as configured (absolute, unresolved)."""

    path: Path
    scope: Scope
    follow_symlinks_outside: bool = False
    # Recalled, never written (another agent's memory folder, docs/hooks.md): the write side
    # picks no such root and refuses a path inside one; consolidation only reports on it.
    read_only: bool = False

    @classmethod
    def of(cls, path: str | os.PathLike[str], scope: Scope | str, **kw: bool) -> MemoryRoot:
        return cls(Path(os.path.abspath(os.path.expanduser(path))), Scope(scope), **kw)


def user_data_dir() -> Path:
    """The platform's per-user data directory for this app."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.environ.get("APPDATA") or "~/AppData/Local"
    elif sys.platform == "darwin":
        base = "~/Library/Application Support"
    else:
        base = os.environ.get("XDG_DATA_HOME") or "~/.local/share"
    return Path(os.path.expanduser(base)) / APP_DIR_NAME


# The team's memories, committed to git with the project (docs/writing.md): a root of its own
# inside the project root, whose walk leaves it to its own root.
TEAM_DIR_NAME = "team"


def default_roots(workspace: str | os.PathLike[str] | None) -> list[MemoryRoot]:
    """Project `<workspace>/.memory` and team `<workspace>/.memory/team` (when there is a
    workspace), then the user's memory dir."""
    roots = []
    if workspace:
        project = Path(workspace) / ".memory"
        roots.append(MemoryRoot.of(project, Scope.PROJECT))
        roots.append(MemoryRoot.of(project / TEAM_DIR_NAME, Scope.TEAM))
    roots.append(MemoryRoot.of(user_data_dir() / "memory", Scope.USER))
    return roots


def parse_root_arg(spec: str) -> MemoryRoot:
    """`DIR` or `DIR:scope` (scope project, user or team; project when omitted)."""
    path, sep, scope = spec.rpartition(":")
    if sep and scope in {s.value for s in Scope}:
        return MemoryRoot.of(path, scope)
    return MemoryRoot.of(spec, Scope.PROJECT)


def posix_relative(relative: str) -> str:
    """`Path(relative).as_posix()`: a path inside a root as the state store keys it. A
    path already in that form (as `os.path.relpath` gives them here) is returned as it
    is, without making a Path: a recall asks it of each of its ~200 candidates."""
    if (
        os.sep == "/"
        and relative
        and "//" not in relative
        and not relative.endswith("/")
        and "/./" not in f"/{relative}/"
    ):
        return relative
    return Path(relative).as_posix()
