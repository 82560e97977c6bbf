"""The write side on the command line: remember, update, forget, restore, undo, history, list.

Each command opens the memory core (`common.with_core`: the daemon's own services
over the configured roots) and runs the same request a host sends; only the
output is for people. A memory is named by its path from the current folder or
inside a root. Exit status: 0 when the operation ran, 1 when it was refused (a
gate rule, a changed file), 2 for a mistake on the command line.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from memory_recall.protocol.messages import (
    ForgetParams,
    ListedMemory,
    ListParams,
    ListResult,
    RememberParams,
    UpdateParams,
    WriteResult,
)
from memory_recall.server.cli.common import (
    add_root_option,
    add_workspace_option,
    memory_path,
    undo_hint,
    with_core,
)
from memory_recall.server.cli.show import clip, table
from memory_recall.server.core.core import MemoryCore
from memory_recall.server.core.errors import refusal
from pydantic import ValidationError


def _print_result(result: WriteResult, as_json: bool, roots: list[str] | None = None) -> int:
    if as_json:
        print(json.dumps(result.wire(), ensure_ascii=False, indent=2))
        return 0 if result.operations else 1
    for op in result.operations:
        print(f"{op.action:9} {op.scope:8} {op.path}")
        print(f"          {op.title}")
        if op.reason:
            print(f"          ({op.reason})")
        print(f"          operation {op.operation}  (undo: {undo_hint(op.operation, roots)})")
    for skipped in result.skipped:
        print(f"not written ({skipped.reason}): {skipped.message}", file=sys.stderr)
    for index in result.indexes:
        if index.omitted_count:
            print(
                f"MEMORY.md is at its cap ({index.cap} lines): {index.omitted_count} memories"
                f" have no line in {index.path}",
                file=sys.stderr,
            )
        if index.problem:
            print(f"MEMORY.md not updated: {index.problem}", file=sys.stderr)
    return 0 if result.operations else 1


def _refused(error: Exception) -> int:
    """A refusal of the core (or bad input) in one line; exit status 1."""
    if isinstance(error, ValidationError):
        problems = "; ".join(
            f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in error.errors()
        )
        print(f"memory-recall: {problems}", file=sys.stderr)
        return 1
    found = refusal(error)
    if found is None:
        raise error
    print(f"memory-recall: {found[1]}", file=sys.stderr)
    return 1


def _write(args: argparse.Namespace, action: Callable[[MemoryCore], Awaitable[WriteResult]]) -> int:
    try:
        result = with_core(args, action)
    except Exception as error:
        return _refused(error)
    return _print_result(result, args.json, args.root)


def cmd_remember(args: argparse.Namespace) -> int:
    def remember(core: MemoryCore) -> Awaitable[WriteResult]:
        params = RememberParams(
            text=args.text, scope=args.scope, type=args.type, title=args.title,
            description=args.description, pinned=args.pinned or None,
            always=args.always or None, force=args.force,
        )  # fmt: skip
        return core.remember(params, trigger="cli")

    return _write(args, remember)


def _body(args: argparse.Namespace) -> str | None:
    """`--body TEXT`, or `--body-file F` (`-` reads standard input)."""
    if args.body_file is None:
        return args.body
    if args.body_file == "-":
        return sys.stdin.read()
    with open(args.body_file, encoding="utf-8") as handle:
        return handle.read()


def cmd_update(args: argparse.Namespace) -> int:
    try:
        body = _body(args)
    except (OSError, UnicodeDecodeError) as error:
        print(f"memory-recall: cannot read the body: {error}", file=sys.stderr)
        return 2

    def update(core: MemoryCore) -> Awaitable[WriteResult]:
        params = UpdateParams(
            path=memory_path(core, args.path), if_match=args.if_match, title=args.title,
            description=args.description, type=args.type, body=body, pinned=args.pinned,
            always=args.always, force=args.force,
        )  # fmt: skip
        return core.update(params, trigger="cli")

    return _write(args, update)


def cmd_forget(args: argparse.Namespace) -> int:
    def forget(core: MemoryCore) -> Awaitable[WriteResult]:
        params = ForgetParams(path=memory_path(core, args.path), reason=args.reason, hard=args.hard)
        return core.forget(params, trigger="cli")

    return _write(args, forget)


def cmd_restore(args: argparse.Namespace) -> int:
    return _write(args, lambda core: core.restore(memory_path(core, args.path, archived=True)))


def cmd_undo(args: argparse.Namespace) -> int:
    return _write(args, lambda core: core.undo(args.operation))


def _when(ms: int | None) -> str:
    if not ms:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


def cmd_history(args: argparse.Namespace) -> int:
    try:
        found = with_core(args, lambda core: core.history(memory_path(core, args.path)))
    except Exception as error:
        return _refused(error)
    if args.json:
        print(json.dumps(found.wire(), ensure_ascii=False, indent=2))
        return 0
    if not found.entries:
        print(f"no journaled change to {found.path}")
    for entry in found.entries:
        undone = f"  (undone by {entry.undone_by})" if entry.undone_by else ""
        print(f"{_when(entry.time_ms)}  {entry.operation}  {entry.kind:8} {entry.action:9}"
              f" {entry.title or ''}{undone}")  # fmt: skip
        if args.content and entry.after is not None:
            print("    " + entry.after.replace("\n", "\n    ").rstrip())
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    async def every_page(core: Any) -> ListResult:
        """The daemon's pages, one after the other: the command lists every memory."""
        pages: list[ListedMemory] = []
        cursor = None
        while True:
            params = ListParams(scope=args.scope, category=args.category, cursor=cursor)
            page = await core.list_memories(params)
            pages += page.memories
            cursor = page.next_cursor
            if cursor is None:
                return ListResult(memories=pages)

    try:
        found = with_core(args, every_page)
    except Exception as error:
        return _refused(error)
    if args.json:
        print(json.dumps(found.wire(), ensure_ascii=False, indent=2))
        return 0
    memories = found.memories
    rows = [
        [
            m.scope,
            m.type,
            m.category or "-",
            ("📌 " if m.pinned else "") + clip(m.title, 44),
            str(m.stats.delivered),
            m.updated or "-",
            m.relative_path,
        ]
        for m in memories
    ]
    if rows:
        print(table(rows, ["scope", "type", "category", "title", "delivered", "updated", "path"]))
    print("1 memory" if len(memories) == 1 else f"{len(memories)} memories")
    return 0


def add_commands(sub: Any) -> None:
    """The write commands, on the main parser's subcommands."""

    def command(name: str, help_text: str, run: Callable[..., int]) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text)
        add_root_option(parser)
        add_workspace_option(parser)
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
        parser.set_defaults(func=run)
        return parser

    remember = command(
        "remember", "remember a fact (metadata, gate and conflicts as the daemon does)",
        cmd_remember,
    )  # fmt: skip
    remember.add_argument("text", help="what to remember, in any language")
    remember.add_argument("--scope", choices=["project", "user", "team"])
    remember.add_argument("--type", choices=["user", "feedback", "project", "reference"])
    remember.add_argument("--title")
    remember.add_argument("--description")
    remember.add_argument("--pinned", action="store_true", help="never archived by the daemon")
    remember.add_argument("--always", action="store_true", help="always loaded (memory/context)")
    remember.add_argument(
        "--force", action="store_true", help="write text that reads like an order to the agent"
    )
    update = command(
        "update", "edit one memory (gate and journal as memory/update; unset fields kept)",
        cmd_update,
    )  # fmt: skip
    update.add_argument("path", help="the memory: its file, or its path inside a root")
    update.add_argument("--title")
    update.add_argument("--description")
    update.add_argument("--type", choices=["user", "feedback", "project", "reference"])
    text = update.add_mutually_exclusive_group()
    text.add_argument("--body", help="the new body")
    text.add_argument("--body-file", help="read the new body from a file (- for stdin)")
    flag = argparse.BooleanOptionalAction
    update.add_argument("--pinned", action=flag, default=None, help="never archived")
    update.add_argument("--always", action=flag, default=None, help="always loaded")
    update.add_argument("--if-match", help="the contentHash last seen: refuse if it changed")
    update.add_argument(
        "--force", action="store_true", help="write text that reads like an order to the agent"
    )
    forget = command("forget", "move a memory to its root's .archive/ (or delete it)", cmd_forget)
    forget.add_argument("path", help="the memory: its file, or its path inside a root")
    forget.add_argument("--hard", action="store_true", help="delete it: cannot be undone")
    forget.add_argument("--reason")
    restore = command("restore", "bring a forgotten memory back", cmd_restore)
    restore.add_argument("path", help="its path before it was forgotten, or its archived path")
    undo = command("undo", "put back every file one operation changed", cmd_undo)
    undo.add_argument("operation", help="the operation id (op-…) a write printed")
    history = command("history", "a memory's versions, from the journal", cmd_history)
    history.add_argument("path", help="the memory: its file, or its path inside a root")
    history.add_argument("--content", action="store_true", help="print each version's text")
    listing = command("list", "memories with category, flags and statistics", cmd_list)
    listing.add_argument("--scope", choices=["project", "user", "team"])
    listing.add_argument("--category", help="a topic-tree slug: lessons or lessons/errors")
