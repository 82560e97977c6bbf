"""What every command of the command line shares: the settings it serves with, the
memory core it opens for one command, and how a memory is named.

A command reads the same settings every face reads (`core/config.py`: the user's
config file, then the environment), then its own `--root` and `--workspace`, and
opens the same `MemoryCore` the daemon runs — without the file watcher, for the
length of the command.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shlex
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from memory_recall.server.roots import MemoryRoot, Scope, parse_root_arg

if TYPE_CHECKING:  # the core loads when a command needs it, not for --help
    from memory_recall.server.core.config import Settings
    from memory_recall.server.core.core import MemoryCore

T = TypeVar("T")
SCOPES = ", ".join(s.value for s in Scope)


class UsageError(Exception):
    """A mistake on the command line: printed as one line, exit status 2."""


# -- settings and the core ---------------------------------------------------------------------


def add_root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        action="append",
        metavar="DIR[:scope]",
        help="a memory root (scope project, user or team; default project); repeatable. "
        "Default: the config file's roots, else ./.memory (project), ./.memory/team (team) "
        "and the user data dir (user).",
    )


def add_workspace_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--workspace", metavar="DIR",
        help="the project folder (default $MEMORY_RECALL_WORKSPACE, else the current folder): "
        "its .memory is the project root; cited paths are checked against it",
    )  # fmt: skip


def root_from_arg(spec: str) -> MemoryRoot:
    """`DIR[:scope]` checked as a user means it: an existing folder, a known scope."""
    if not Path(spec).exists():
        path, sep, suffix = spec.rpartition(":")
        if sep and path and suffix and suffix not in {s.value for s in Scope}:
            raise UsageError(f"--root {spec}: unknown scope {suffix!r} (valid: {SCOPES})")
    root = parse_root_arg(spec)
    if not root.path.exists():
        raise UsageError(f"--root {spec}: {root.path} does not exist")
    if not root.path.is_dir():
        raise UsageError(f"--root {spec}: {root.path} is not a folder")
    return root


def settings_of(args: argparse.Namespace, **given: Any) -> Settings:
    """The settings a command serves with: file, environment, then its flags and `given`."""
    from memory_recall.server.core.config import load_settings

    options: dict[str, Any] = {"watch": False, **given}  # one command: nothing to follow
    if getattr(args, "root", None):
        options["roots"] = [
            {"path": str(r.path), "scope": r.scope.value}
            for r in (root_from_arg(spec) for spec in args.root)
        ]
    settings = load_settings(options, workspace=getattr(args, "workspace", None))
    if settings.workspace is None:
        settings.workspace = os.getcwd()
    return settings


def with_core(
    args: argparse.Namespace,
    action: Callable[[MemoryCore], Awaitable[T]],
    *,
    network: bool = False,
    **given: Any,
) -> T:
    """Open the memory core for one command, run `action` once its index is built (and,
    with `network`, its memory network: recall and search answer as the daemon does)."""
    from memory_recall.server.core.core import MemoryCore

    settings = settings_of(args, **given)

    async def run() -> T:
        core = MemoryCore(settings.options, settings.workspace, problems=settings.problems)
        for problem in core.problems:
            print(f"memory-recall: {problem}", file=sys.stderr)
        core.start()
        try:
            if network:
                await core.ready()
            else:
                await core.session.ready.wait()
            return await action(core)
        finally:
            # The daemon writes the snapshot its scan left after `ready`, beside its
            # requests; a command writes it before it exits, so the next one starts warm.
            if core.session.ready.is_set():
                await asyncio.to_thread(core.catalog.save_snapshot)
            await core.stop()

    return asyncio.run(run())


def memory_path(core: MemoryCore, name: str, *, archived: bool = False) -> str:
    """A memory named on the command line: a path from the current folder, else a path
    inside one of the roots (`notes/db.md`), also when it sits in the archive (`archived`)."""
    from memory_recall.server.store.files import ARCHIVE_DIR

    here = Path(name)
    if here.exists() or here.is_absolute():
        return os.path.abspath(name)
    for root in core.roots:
        inside = [root.path / name, *([root.path / ARCHIVE_DIR / name] if archived else [])]
        if any(p.exists() for p in inside):
            return str(root.path / name)
    return name  # the store says what is wrong with it


def undo_hint(operation: str, roots: list[str] | None) -> str:
    """The command that takes an operation back, with the roots it was run on."""
    flags = "".join(f" --root {shlex.quote(r)}" for r in roots or ())
    return f"memory-recall undo {operation}{flags}"


def existing(path: str, what: str) -> Path:
    if not Path(path).exists():
        raise UsageError(f"{what} {path} does not exist")
    return Path(path)
