"""Where memories live by default (SPEC §5)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

from memory_recall.server.catalog import MemoryRoot
from memory_recall.server.documents import Scope

APP_DIR_NAME = "memory-recall"


def user_data_dir() -> Path:
    """The platform's per-user data directory for this app."""
    if sys.platform == "win32":
        base = os.environ.get("LOCALAPPDATA") or os.environ.get("APPDATA") or "~/AppData/Local"
    elif sys.platform == "darwin":
        base = "~/Library/Application Support"
    else:
        base = os.environ.get("XDG_DATA_HOME") or "~/.local/share"
    return Path(os.path.expanduser(base)) / APP_DIR_NAME


def default_roots(workspace: str | os.PathLike[str] | None) -> list[MemoryRoot]:
    """Project `<workspace>/.memory` (when there is a workspace), then the user's memory dir."""
    roots = []
    if workspace:
        roots.append(MemoryRoot.of(Path(workspace) / ".memory", Scope.PROJECT))
    roots.append(MemoryRoot.of(user_data_dir() / "memory", Scope.USER))
    return roots


def parse_root_arg(spec: str) -> MemoryRoot:
    """`DIR` or `DIR:scope` (scope project or user; project when omitted)."""
    path, sep, scope = spec.rpartition(":")
    if sep and scope in {s.value for s in Scope}:
        return MemoryRoot.of(path, scope)
    return MemoryRoot.of(spec, Scope.PROJECT)
