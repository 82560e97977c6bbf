"""Proposals on the command line: what agents asked to write that waits for the user.

`memory-recall proposals` lists them (`--all`: decided ones too), `confirm ID`
writes one as the user's own request (journaled: `memory-recall undo` reverses it),
`reject ID` drops it. Design: docs/safety.md; the store side: store/proposals.py.
"""

from __future__ import annotations

import argparse
import datetime
import json
from collections.abc import Awaitable, Callable
from typing import Any

from memory_recall.protocol.messages import (
    ProposalParams,
    ProposalsParams,
    ProposalsResult,
    RejectResult,
    WriteResult,
)
from memory_recall.server.cli.common import add_root_option, add_workspace_option, with_core
from memory_recall.server.cli.writes import _print_result, _refused
from memory_recall.server.core.core import MemoryCore


def _when(ms: float | None) -> str:
    if not ms:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M")


def cmd_proposals(args: argparse.Namespace) -> int:
    def listing(core: MemoryCore) -> Awaitable[ProposalsResult]:
        return core.proposals(ProposalsParams(all=args.all))

    try:
        found = with_core(args, listing).proposals
    except Exception as error:
        return _refused(error)
    if args.json:
        print(json.dumps({"proposals": [p.wire() for p in found]}, ensure_ascii=False, indent=2))
        return 0
    if not found:
        print("no proposals wait for you" if not args.all else "no proposals")
        return 0
    for p in found:
        print(f"{p.id}  {p.state:9} {p.kind:8} ({', '.join(p.reasons)}) from {p.origin},"
              f" {_when(p.created_ms)}")  # fmt: skip
        print(f"    {p.title}")
        if p.kind == "remember":
            for line in p.text.splitlines()[:6]:
                print(f"    | {line}")
        elif p.path:
            print(f"    archives {p.path}")
        if p.operation:
            print(f"    written as {p.operation} (undo: memory-recall undo {p.operation})")
    if any(p.state == "pending" for p in found):
        print("\nmemory-recall confirm ID writes one; memory-recall reject ID drops it.")
    return 0


def cmd_confirm(args: argparse.Namespace) -> int:
    def confirm(core: MemoryCore) -> Awaitable[WriteResult]:
        return core.confirm(ProposalParams(id=args.id))

    try:
        result = with_core(args, confirm)
    except Exception as error:
        return _refused(error)
    return _print_result(result, args.json, args.root)


def cmd_reject(args: argparse.Namespace) -> int:
    def reject(core: MemoryCore) -> Awaitable[RejectResult]:
        return core.reject(ProposalParams(id=args.id))

    try:
        proposal = with_core(args, reject).proposal
    except Exception as error:
        return _refused(error)
    if args.json:
        print(json.dumps(proposal.wire(), ensure_ascii=False, indent=2))
    else:
        print(f"rejected {proposal.id}: {proposal.title} (nothing was written)")
    return 0


def add_commands(sub: Any) -> None:
    """`proposals`, `confirm ID`, `reject ID` on the main parser's subcommands."""

    def command(name: str, help_text: str, run: Callable[..., int]) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text)
        add_root_option(parser)
        add_workspace_option(parser)
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
        parser.set_defaults(func=run)
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
