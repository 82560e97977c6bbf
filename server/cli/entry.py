"""The `memory-recall` command's entry point: the hook command without the rest.

A host runs `memory-recall hook HOST EVENT` at every prompt and tool call, with 100 ms
from the process's start to its exit; the full command line (its parser, the core,
pydantic) takes longer than that to import. So this module looks at the first word and
loads only the hook client for `hook` (docs/hooks.md), the command line for anything else.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args[:1] == ["hook"] and not {"-h", "--help"} & set(args):
        from memory_recall.server.hooks.command import main as hook

        return hook(args[1:])
    from memory_recall.server.cli.main import main as command_line

    return command_line(args)
