"""Where the user's shared daemon listens (docs/hooks.md): what a client needs to reach it.

One daemon per user serves every agent and editor of that user on a Unix domain
socket inside a per-user runtime folder that only the user can enter (0700; the
socket itself 0600). This module is the address and nothing else: standard
library only, so that a hook process, which has 100 ms from its start to its
exit, can import it without loading the daemon.

- `$MEMORY_RECALL_RUNTIME_DIR` when set (tests, several users of one account);
- else `$XDG_RUNTIME_DIR/memory-recall` (Linux sessions have one, already 0700);
- else `<temp dir>/memory-recall-<uid>`.

Windows has no Unix socket server in asyncio; the shared daemon is not offered
there yet (`memory-recall serve` on stdio is).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ENV_RUNTIME_DIR = "MEMORY_RECALL_RUNTIME_DIR"
APP = "memory-recall"
SOCKET_NAME = "daemon.sock"
# A Unix socket path is at most 107 bytes on Linux (108 with the NUL), 103 on macOS.
MAX_SOCKET_PATH_BYTES = 103

# The one method a hook process calls (docs/hooks.md): the host's event, answered with the
# exact bytes that host reads on the hook's stdout.
HOOK_METHOD = "hook/event"


def runtime_dir(env: dict[str, str] | None = None) -> Path:
    """The user's runtime folder for the daemon (it may not exist yet)."""
    env = dict(os.environ) if env is None else env
    configured = env.get(ENV_RUNTIME_DIR)
    if configured:
        return Path(os.path.expanduser(configured))
    xdg = env.get("XDG_RUNTIME_DIR")
    if xdg and os.path.isdir(xdg):
        return Path(xdg) / APP
    import tempfile  # only here: most sessions have XDG_RUNTIME_DIR

    uid = os.getuid() if hasattr(os, "getuid") else os.getlogin()
    return Path(tempfile.gettempdir()) / f"{APP}-{uid}"


def socket_path(env: dict[str, str] | None = None) -> Path:
    """The daemon's socket."""
    return runtime_dir(env) / SOCKET_NAME


def supported() -> bool:
    """Whether this platform can run the shared daemon."""
    return sys.platform != "win32"
