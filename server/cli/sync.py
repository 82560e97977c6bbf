"""`memory-recall sync`: the same memories on every machine, through git (docs/sync.md).

    memory-recall sync init --remote URL [--scope user|project] [--manual]
    memory-recall sync [--scope user|project]
    memory-recall sync status
    memory-recall sync check | rewrite-history [--yes] | auto on|off

Each command opens the core for its settings and roots (no index is built: sync reads the
files and the journal) and calls its sync side; what is printed is for people, `--json`
for scripts. Exit status 1 when a sync did not reach the remote or was refused.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

from memory_recall.server.cli.common import add_root_option, add_workspace_option, settings_of
from memory_recall.server.cli.show import plural

if TYPE_CHECKING:
    from memory_recall.protocol.messages import SyncRootStatus
    from memory_recall.server.core.core import MemoryCore
    from memory_recall.server.sync.service import SyncOutcome

T = TypeVar("T")
# `team` is accepted to be refused with the reason: it travels with the project's own git.
SCOPES = ["user", "project", "team"]


def _with_core(args: argparse.Namespace, action: Callable[[MemoryCore], Awaitable[T]]) -> T:
    """The core for one sync command: settings and roots, no index build, no watcher."""
    from memory_recall.server.core.core import MemoryCore

    settings = settings_of(args)

    async def run() -> T:
        core = MemoryCore(settings.options, settings.workspace, problems=settings.problems)
        for problem in core.problems:
            print(f"memory-recall: {problem}", file=sys.stderr)
        try:
            return await action(core)
        finally:
            await core.stop()

    return asyncio.run(run())


def _refused(error: Exception) -> int:
    print(f"memory-recall sync: {error}", file=sys.stderr)
    return 1


def _ago(ms: int | None) -> str:
    if not ms:
        return "never"
    seconds = max(0, time.time() - ms / 1000)
    if seconds < 90:
        return f"{seconds:.0f} s ago"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min ago"
    if seconds < 172_800:
        return f"{seconds / 3600:.0f} h ago"
    return f"{seconds / 86_400:.0f} days ago"


def print_outcome(outcome: SyncOutcome, scope: str) -> None:
    done = []
    if outcome.commits:
        done.append(f"{plural(outcome.commits, 'commit')} made")
    if outcome.pulled:
        done.append(f"{plural(outcome.pulled, 'commit')} pulled")
    if outcome.merged:
        done.append("merged")
    if outcome.pushed:
        done.append("pushed")
    what = ", ".join(done) or "nothing new"
    print(f"{outcome.state:8} {scope:8} {outcome.root}: {what}")
    if outcome.error:
        print(f"         {outcome.error}")
    for path, why in sorted(outcome.held.items()):
        print(f"         stays here: {path} — {why}")
    for path in outcome.kept_here:
        print(f"         kept this machine's newer {path} (committed at the next sync)")
    for note in outcome.notes:
        print(f"         merge: {note}")
    for secret in outcome.secrets:
        print(f"         history: {secret} — `memory-recall sync rewrite-history` removes it")
    if outcome.operation and outcome.changed:
        print(
            f"         {plural(len(outcome.changed), 'file')} changed here;"
            f" undo: memory-recall undo {outcome.operation}"
        )


def status_lines(found: Sequence[SyncRootStatus]) -> list[str]:
    """The sync part of `memory-recall status` and `memory-recall sync status`."""
    lines = []
    for root in found:
        remote = root.remote or "(no remote)"
        lines.append(f"sync     {root.path} → {remote} ({root.branch})")
        how = "automatic" if root.auto else "manual"
        lines.append(
            f"         {how}, {root.state}; {root.ahead} ahead, {root.behind} behind,"
            f" {plural(root.pending, 'write')} to commit; last sync {_ago(root.last_sync_ms)}"
        )
        if root.last_error and root.state != "idle":
            lines.append(f"         last error: {root.last_error}")
        if root.retry_at_ms:
            when = time.strftime("%H:%M:%S", time.localtime(root.retry_at_ms / 1000))
            lines.append(f"         next try {when}")
        lines += [f"         stays here: {h.path} — {h.reason}" for h in root.held]
        lines += [f"         history: {s}" for s in root.secrets]
    return lines


# -- commands -----------------------------------------------------------------------------------


def cmd_sync(args: argparse.Namespace) -> int:
    from memory_recall.server.sync.repo import SyncRefused

    async def run(core: MemoryCore) -> list[tuple[str, SyncOutcome]]:
        outcomes = await core.syncing.sync_all(args.scope)
        scopes = {str(r.path): r.scope.value for r in core.roots}
        return [(scopes.get(o.root, ""), o) for o in outcomes]

    try:
        done = _with_core(args, run)
    except SyncRefused as error:
        return _refused(error)
    if args.json:
        print(json.dumps([vars(o) for _, o in done], indent=2))
    elif not done:
        print("no root is set up for sync: memory-recall sync init --remote URL")
    for scope, outcome in [] if args.json else done:
        print_outcome(outcome, scope)
    return 0 if all(o.state in ("synced", "local") for _, o in done) else 1


def cmd_init(args: argparse.Namespace) -> int:
    from memory_recall.server.sync.repo import SyncRefused

    async def run(core: MemoryCore) -> tuple[list[str], SyncOutcome, bool]:
        done, outcome = await core.syncing.init(args.scope, args.remote, auto=not args.manual)
        return done, outcome, core.options.sync.auto

    try:
        done, outcome, daemon_auto = _with_core(args, run)
    except SyncRefused as error:
        return _refused(error)
    for line in done:
        print(line)
    print_outcome(outcome, args.scope)
    if args.manual or not daemon_auto:
        print("automatic sync: off — run `memory-recall sync` to sync")
    elif args.remote or outcome.state != "local":
        print(
            "automatic sync: on — the daemon syncs on start, after writes and every few minutes"
            " (`memory-recall sync auto off` to stop)"
        )
    if outcome.state == "local":
        print("no remote yet: memory-recall sync init --remote URL")
    return 0 if outcome.state in ("synced", "local") else 1


def cmd_status(args: argparse.Namespace) -> int:
    async def run(core: MemoryCore) -> list[SyncRootStatus]:
        return await asyncio.to_thread(core.syncing.status)

    found = _with_core(args, run)
    if args.json:
        print(json.dumps([r.wire() for r in found], indent=2, ensure_ascii=False))
        return 0
    if not found:
        print("no root is set up for sync: memory-recall sync init --remote URL")
        return 0
    print("\n".join(status_lines(found)))
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    from memory_recall.server.sync.repo import SyncRefused

    try:
        found = _with_core(args, lambda core: core.syncing.check(args.scope))
    except SyncRefused as error:
        return _refused(error)
    if not found:
        print("no credential in any committed version")
        return 0
    for secret in found:
        print(f"credential  {secret.message}")
    print(
        "`memory-recall sync rewrite-history` shows how the history would be rewritten;"
        " `--yes` rewrites it (every version redacted) and pushes it over the remote's."
        " Revoke the credential as well: a hosted remote may keep old objects for a while."
    )
    return 1


def cmd_rewrite(args: argparse.Namespace) -> int:
    from memory_recall.server.sync.repo import SyncRefused

    try:
        found = _with_core(args, lambda core: core.syncing.check(args.scope))
        if not found:
            print("no credential in any committed version: nothing to rewrite")
            return 0
        for secret in found:
            print(f"credential  {secret.message}")
        if not args.yes:
            print(
                f"would rewrite every commit holding these {plural(len(found), 'version')}: each"
                " redacted ([REDACTED:kind]), messages, authors and dates kept; then push the new"
                " history over the remote's (with a lease) — the other machines adopt it at their"
                " next sync. Run again with --yes to do it."
            )
            return 1
        head, count = _with_core(args, lambda core: core.syncing.rewrite_history(args.scope))
    except SyncRefused as error:
        return _refused(error)
    print(f"rewrote {plural(count, 'commit')}; the branch is now {head[:10]}")
    print("revoke the credential all the same: a hosted remote may keep old objects for a while")
    return 0


def cmd_auto(args: argparse.Namespace) -> int:
    from memory_recall.server.sync.repo import SyncRefused

    try:
        _with_core(args, lambda core: core.syncing.set_auto(args.scope, args.state == "on"))
    except SyncRefused as error:
        return _refused(error)
    print(f"automatic sync of the {args.scope} root: {args.state}")
    return 0


def add_commands(sub: Any) -> None:
    sync = sub.add_parser(
        "sync",
        help="the same memories on every machine, through a git remote of your own",
        description="Without a subcommand: commit this machine's changes, pull and merge the "
        "other machines', push. docs/sync.md",
    )
    _common(sync, scope_default=None)
    sync.add_argument("--json", action="store_true", help="print the outcome as JSON")
    sync.set_defaults(func=cmd_sync)
    actions = sync.add_subparsers(
        dest="sync_command", metavar="{init,status,check,rewrite-history,auto}"
    )

    init = actions.add_parser("init", help="make a root a git work tree and sync it")
    init.add_argument(
        "--remote",
        metavar="URL",
        help="any git remote (a private repository, a server, a bare repository on a disk)",
    )
    _common(init)
    init.add_argument(
        "--manual", action="store_true", help="the daemon does not sync this root on its own"
    )
    init.set_defaults(func=cmd_init)

    status = actions.add_parser("status", help="ahead, behind, last sync, what stays here")
    _common(status, scope_default=None)
    status.add_argument("--json", action="store_true", help="print the status as JSON")
    status.set_defaults(func=cmd_status)

    check = actions.add_parser("check", help="look for credentials in every committed version")
    _common(check)
    check.set_defaults(func=cmd_check)

    rewrite = actions.add_parser(
        "rewrite-history", help="take committed credentials out of the history (asks first)"
    )
    _common(rewrite)
    rewrite.add_argument(
        "--yes", action="store_true", help="rewrite and push (without it: show what would happen)"
    )
    rewrite.set_defaults(func=cmd_rewrite)

    auto = actions.add_parser("auto", help="turn the daemon's automatic sync of a root on or off")
    auto.add_argument("state", choices=["on", "off"])
    _common(auto)
    auto.set_defaults(func=cmd_auto)


def _common(parser: argparse.ArgumentParser, *, scope_default: str | None = "user") -> None:
    parser.add_argument(
        "--scope", choices=SCOPES, default=scope_default,
        help="which root (default: " + (scope_default or "every root set up for sync") + "); "
        "the team root travels with the project's own git",
    )  # fmt: skip
    add_root_option(parser)
    add_workspace_option(parser)
