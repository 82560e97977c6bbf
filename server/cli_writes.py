"""The write side on the command line: remember, update, forget, restore, undo, history, list.

Each command scans the roots (through the snapshot cache, as the daemon does),
builds the same writer the daemon's session builds (daemon/writing.py) and
runs the same operation; only the output is for people. Exit status: 0 when
the operation ran, 1 when it was refused (a gate rule, a changed file), 2 for
a mistake on the command line.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store import inventory
from memory_recall.server.store.errors import WriteError
from memory_recall.server.store.writer import (
    ForgetRequest,
    RememberRequest,
    UpdateRequest,
    WriteResult,
)

if TYPE_CHECKING:
    from memory_recall.server.daemon.writing import WriteSide

RootsOf = Callable[[argparse.Namespace], list[MemoryRoot]]


def _side(roots: list[MemoryRoot]) -> WriteSide:
    # The daemon's modules, imported only when a write command runs.
    from memory_recall.server.catalog.catalog import MemoryCatalog
    from memory_recall.server.catalog.snapshot_cache import snapshot_cache
    from memory_recall.server.daemon.writing import WriteSide
    from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS

    catalog = MemoryCatalog(roots)
    catalog.scan(snapshot_cache(roots))
    return WriteSide.open(catalog, RANKERS[DEFAULT_RANKER])


def _absolute(path: str) -> str:
    """A path typed on the command line: relative to the current folder when it exists there."""
    return os.path.abspath(path) if os.path.exists(path) or os.sep in path else path


def _print_result(result: WriteResult, as_json: bool) -> int:
    from memory_recall.server.daemon.writing import result_wire

    if as_json:
        print(json.dumps(result_wire(result).wire(), ensure_ascii=False, indent=2))
        return 0 if result.operations else 1
    for op in result.operations:
        print(f"{op.action:9} {op.scope:8} {op.path}")
        print(f"          {op.title}")
        if op.reason:
            print(f"          ({op.reason})")
        print(f"          operation {op.operation}  (undo: memory-recall undo {op.operation})")
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


def _run(action: Callable[[], WriteResult], as_json: bool) -> int:
    try:
        return _print_result(action(), as_json)
    except WriteError as error:
        print(f"memory-recall: {error}", file=sys.stderr)
        return 1


def cmd_remember(args: argparse.Namespace, roots_of: RootsOf) -> int:
    writer = _side(roots_of(args)).writer
    request = RememberRequest(
        text=args.text,
        scope=args.scope,
        type=args.type,
        title=args.title,
        description=args.description,
        pinned=args.pinned or None,
        always=args.always or None,
        force=args.force,
        trigger="cli",
    )
    return _run(lambda: writer.remember(request), args.json)


def _body(args: argparse.Namespace) -> str | None:
    """`--body TEXT`, or `--body-file F` (`-` reads standard input)."""
    if args.body_file is None:
        return args.body
    if args.body_file == "-":
        return sys.stdin.read()
    with open(args.body_file, encoding="utf-8") as handle:
        return handle.read()


def cmd_update(args: argparse.Namespace, roots_of: RootsOf) -> int:
    try:
        body = _body(args)
    except (OSError, UnicodeDecodeError) as error:
        print(f"memory-recall: cannot read the body: {error}", file=sys.stderr)
        return 2
    writer = _side(roots_of(args)).writer
    request = UpdateRequest(
        path=_absolute(args.path),
        if_match=args.if_match,
        title=args.title,
        description=args.description,
        type=args.type,
        body=body,
        pinned=args.pinned,
        always=args.always,
        force=args.force,
        trigger="cli",
    )
    return _run(lambda: writer.update(request), args.json)


def cmd_forget(args: argparse.Namespace, roots_of: RootsOf) -> int:
    writer = _side(roots_of(args)).writer
    request = ForgetRequest(_absolute(args.path), reason=args.reason, hard=args.hard, trigger="cli")
    return _run(lambda: writer.forget(request), args.json)


def cmd_restore(args: argparse.Namespace, roots_of: RootsOf) -> int:
    writer = _side(roots_of(args)).writer
    return _run(lambda: writer.restore(_absolute(args.path), trigger="cli"), args.json)


def cmd_undo(args: argparse.Namespace, roots_of: RootsOf) -> int:
    writer = _side(roots_of(args)).writer
    return _run(lambda: writer.undo(args.operation), args.json)


def _when(ms: int | None) -> str:
    if not ms:
        return "-"
    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


def cmd_history(args: argparse.Namespace, roots_of: RootsOf) -> int:
    writer = _side(roots_of(args)).writer
    path = _absolute(args.path)
    try:
        entries = inventory.memory_history(writer, path)
    except WriteError as error:
        print(f"memory-recall: {error}", file=sys.stderr)
        return 1
    if args.json:
        from memory_recall.server.daemon.writing import history_wire

        print(json.dumps(history_wire(path, entries).wire(), ensure_ascii=False, indent=2))
        return 0
    if not entries:
        print(f"no journaled change to {path}")
    for entry in entries:
        undone = f"  (undone by {entry.undone_by})" if entry.undone_by else ""
        print(f"{_when(entry.time_ms)}  {entry.operation}  {entry.kind:8} {entry.action:9}"
              f" {entry.title or ''}{undone}")  # fmt: skip
        if args.content and entry.after is not None:
            print("    " + entry.after.replace("\n", "\n    ").rstrip())
    return 0


Table = Callable[[Sequence[Sequence[str]], Sequence[str]], str]
Clip = Callable[[str, int], str]


def cmd_list(args: argparse.Namespace, roots_of: RootsOf, table: Table, clip: Clip) -> int:
    side = _side(roots_of(args))
    memories = inventory.list_memories(
        side.writer, side.writer.catalog.snapshot(), scope=args.scope, category=args.category
    )
    if args.json:
        from memory_recall.server.daemon.writing import list_wire

        print(json.dumps(list_wire(memories).wire(), ensure_ascii=False, indent=2))
        return 0
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


def add_commands(
    sub: Any,
    add_root_option: Callable[[argparse.ArgumentParser], None],
    roots_of: RootsOf,
    *,
    table: Table,
    clip: Clip,
) -> None:
    """The write commands, on the main parser's subcommands (`table`/`clip`: its formatting)."""

    def command(name: str, help_text: str, run: Callable[..., int]) -> argparse.ArgumentParser:
        parser: argparse.ArgumentParser = sub.add_parser(name, help=help_text)
        add_root_option(parser)
        parser.add_argument("--json", action="store_true", help="print the result as JSON")
        extra = (table, clip) if run is cmd_list else ()
        parser.set_defaults(func=lambda args: run(args, roots_of, *extra))
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
    update.add_argument("path", help="the memory file")
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
    forget.add_argument("path", help="the memory file")
    forget.add_argument("--hard", action="store_true", help="delete it: cannot be undone")
    forget.add_argument("--reason")
    restore = command("restore", "bring a forgotten memory back", cmd_restore)
    restore.add_argument("path", help="its path before it was forgotten, or its archived path")
    undo = command("undo", "put back every file one operation changed", cmd_undo)
    undo.add_argument("operation", help="the operation id (op-…) a write printed")
    history = command("history", "a memory's versions, from the journal", cmd_history)
    history.add_argument("path", help="the memory file")
    history.add_argument("--content", action="store_true", help="print each version's text")
    listing = command("list", "memories with category, flags and statistics", cmd_list)
    listing.add_argument("--scope", choices=["project", "user", "team"])
    listing.add_argument("--category", help="a topic-tree slug: lessons or lessons/errors")
