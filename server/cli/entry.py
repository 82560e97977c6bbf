"""The `memory-recall` command's entry point: the hook command without the rest, and the
faces' opening.

A host runs `memory-recall hook HOST EVENT` at every prompt and tool call, with 100 ms
from the process's start to its exit; the full command line (its parser, the core,
pydantic) takes longer than that to import. So this module looks at the first word and
loads only the hook client for `hook` (docs/hooks.md), the command line for anything else.
For `serve` on stdio and `mcp`, the command line is imported in a thread while the
opening (`server/opening.py`) answers the host's first requests (docs/performance.md,
"Start-up").
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

# `MEMORY_RECALL_OPENING=off`: no early answers; the server answers from its first message.
ENV_OPENING = "MEMORY_RECALL_OPENING"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from memory_recall.server.hooks.command import main as hook

        return hook(args[1:])
    face = stdio_face(args)
    if face is not None and os.environ.get(ENV_OPENING, "").lower() not in ("off", "0", "no"):
        failure = _open(face)
        if failure is not None:
            raise failure
    from memory_recall.server.cli.main import main as command_line

    return command_line(args)


def stdio_face(args: Sequence[str]) -> str | None:
    """`serve` (or no command, as editors start it) on stdio, or `mcp`: the faces a host
    starts and waits on; None for anything else (a flag before the command included)."""
    if {"-h", "--help", "--version"} & set(args):
        return None
    if not args or args[0] == "serve":
        if any(a == "--listen" or a.startswith("--listen=") for a in args):
            return None  # the shared daemon's core on a socket: no stdio host waits
        return "serve"
    if args[0] == "mcp":
        return "mcp"
    return None


def _open(face: str) -> BaseException | None:
    from memory_recall.server import opening

    if not opening.supported():
        return None
    if face == "serve":
        from memory_recall.server.lsp.opening import start

        return start(_import_serve)
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        return None  # the command says the extra is missing
    from memory_recall.server.mcp.opening import start as start_mcp

    return start_mcp(_import_mcp)


def _import_serve() -> None:
    import memory_recall.server.cli.main
    import memory_recall.server.lsp.server  # noqa: F401


def _import_mcp() -> None:
    import memory_recall.server.cli.main
    import memory_recall.server.core.core
    import memory_recall.server.mcp.config
    import memory_recall.server.mcp.face  # noqa: F401
