"""Proposals on the command line: what agents asked to write that waits for the user.

`memory-recall proposals` lists them (`--all`: decided ones too), `confirm ID`
writes one as the user's own request (journaled: `memory-recall undo` reverses it),
`reject ID` drops it. Design: docs/safety.md; the store side: store/proposals.py.
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import sys
from collections.abc import Callable
from typing import Any

from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.errors import WriteError

RootsOf = Callable[[argparse.Namespace], list[MemoryRoot]]


def _when(ms: float | None) -> str:
    if not ms:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


def cmd_proposals(args: argparse.Namespace, roots_of: RootsOf) -> int:
    from memory_recall.server.cli_writes import _side
    from memory_recall.server.daemon.writing import proposal_wire

    try:
        found = _side(roots_of(args)).list_proposals(everything=args.all)
    except WriteError as error:
        print(f"memory-recall: {error}", file=sys.stderr)
        return 1
    if args.json:
        wire = [proposal_wire(p).wire() for p in found]
        print(json.dumps({"proposals": wire}, ensure_ascii=False, indent=2))
        return 0
    if not found:
        print("no proposals wait for you" if not args.all else "no proposals")
        return 0
    for proposal in found:
        why = ", ".join(proposal.reasons)
        print(f"{proposal.id}  {proposal.state:9} {proposal.kind:8} ({why}) from {proposal.origin}"
              f", {_when(proposal.created_ms)}")  # fmt: skip
        print(f"    {proposal.title}")
        if proposal.kind == "remember":
            for line in proposal.text.splitlines()[:6]:
                print(f"    | {line}")
        elif proposal.path:
            print(f"    archives {proposal.path}")
        if proposal.operation:
            op = proposal.operation
            print(f"    written as {op} (undo: memory-recall undo {op})")
    pending = sum(1 for p in found if p.state == "pending")
    if pending:
        print("\nmemory-recall confirm ID writes one; memory-recall reject ID drops it.")
    return 0


def cmd_confirm(args: argparse.Namespace, roots_of: RootsOf) -> int:
    from memory_recall.server.cli_writes import _print_result, _side

    side = _side(roots_of(args))
    try:
        result = asyncio.run(side.confirm(args.id))
    except WriteError as error:
        print(f"memory-recall: {error}", file=sys.stderr)
        return 1
    return _print_result(result, args.json)


def cmd_reject(args: argparse.Namespace, roots_of: RootsOf) -> int:
    from memory_recall.server.cli_writes import _side

    try:
        proposal = _side(roots_of(args)).reject(args.id)
    except WriteError as error:
        print(f"memory-recall: {error}", file=sys.stderr)
        return 1
    print(f"rejected {proposal.id}: {proposal.title} (nothing was written)")
    return 0


def add_commands(
    sub: Any, add_root_option: Callable[[argparse.ArgumentParser], None], roots_of: RootsOf
) -> None:
    """`proposals`, `confirm ID`, `reject ID` on the main parser's subcommands."""

    def command(name: str, help_text: str, run: Callable[..., int]) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text)
        add_root_option(parser)
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
        parser.set_defaults(func=lambda args: run(args, roots_of))
        return parser

    listing = command(
        "proposals", "writes agents proposed (force, always, team) that wait for you",
        cmd_proposals,
    )  # fmt: skip
    listing.add_argument("--all", action="store_true", help="confirmed and rejected ones too")
    confirm = command("confirm", "write a proposal as your own request", cmd_confirm)
    confirm.add_argument("id", help="the proposal id (prop-…)")
    reject = command("reject", "drop a proposal; nothing is written", cmd_reject)
    reject.add_argument("id", help="the proposal id (prop-…)")
