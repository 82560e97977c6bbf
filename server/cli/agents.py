"""The agents' commands (docs/hooks.md): the shared daemon, the hook, and installing hooks.

- `memory-recall daemon [status | stop]`: run the user's shared daemon in the
  foreground (hooks start it in the background on their own), or ask the running one;
- `memory-recall hook HOST EVENT`: what a host runs (`cli/entry.py` sends it to
  `hooks/command.py` before any of this is imported; this parser only documents it);
- `memory-recall install-hooks HOST`: merge our hooks into that host's settings.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from memory_recall.protocol.endpoint import socket_path, supported
from memory_recall.server.cli.common import UsageError
from memory_recall.server.hooks.hosts import HOSTS, host_named

HOST_NAMES = ", ".join(HOSTS)


def cmd_daemon(args: argparse.Namespace) -> int:
    from memory_recall.server.daemon.control import NotRunning, request

    listen = getattr(args, "listen", None)
    address = Path(os.path.abspath(os.path.expanduser(listen))) if listen else socket_path()
    if args.action in ("status", "stop"):
        try:
            result = request(address, f"daemon/{args.action}")
        except NotRunning as exc:
            print(f"memory-recall: {exc}", file=sys.stderr)
            return 1
        if args.action == "stop" or args.json:
            print(json.dumps(result, indent=2, ensure_ascii=False))
        else:
            print(_status_text(result))
        return 0
    return run_daemon(args, address)


def run_daemon(args: argparse.Namespace, address: Path) -> int:
    if not supported():
        print("memory-recall: the shared daemon needs Unix sockets (not on Windows yet); "
              "editors use `memory-recall serve` on stdio", file=sys.stderr)  # fmt: skip
        return 1
    from memory_recall.server.daemon.server import run_daemon as run
    from memory_recall.server.daemon.settings import read_daemon_settings

    settings = read_daemon_settings()
    if getattr(args, "http_port", None):
        settings.http, settings.http_port = True, args.http_port
    if getattr(args, "idle_minutes", None):
        settings.idle_s = args.idle_minutes * 60
    return run(address, settings, log_level=args.log_level)


def _status_text(status: dict[str, Any]) -> str:
    hooks = status.get("hooks", {})
    lines = [
        f"daemon   pid {status['pid']}, memory-recall {status['version']}, up "
        f"{status['uptimeSeconds']:.0f} s, on {status['socket']}"
        + (f" and {status['http']}" if status.get("http") else ""),
        f"clients  {status['connections']} connected, {status['requests']} requests; "
        f"{status['pendingRecalls']} recalls waiting for a tool hook",
        f"hooks    {hooks.get('fast_sent', 0)} fast and {hooks.get('refined_sent', 0)} refined "
        f"results sent, {hooks.get('context_sent', 0)} contexts, "
        f"{hooks.get('missed_deadline', 0)} past the deadline; extraction: {status['extract']}"
        + (f" (last: {hooks['last_extraction']})" if hooks.get("last_extraction") else ""),
    ]
    for ws in status.get("workspaces", []):
        lines.append(
            f"workspace {ws['workspace'] or '(none)'}: {ws['documents']} memories, idle "
            f"{ws['idleSeconds']:.0f} s"
        )
        for root in ws["roots"]:
            host = f"  {root['host']}'s memory" if root.get("host") else ""
            source = (
                f" (from {root['source']})"
                if root.get("source") and root["source"] != root["path"]
                else ""
            )
            flag = ", read-only" if root.get("readOnly") else ""
            lines.append(
                f"  {root['scope']:8} {root['documents']:>6}  {root['path']}{source}{host}{flag}"
            )
    return "\n".join(lines)


def cmd_hook(args: argparse.Namespace) -> int:
    from memory_recall.server.hooks.command import main as hook

    return hook([args.host, args.event])


def cmd_install_hooks(args: argparse.Namespace) -> int:
    from memory_recall.server.hooks.install import InstallError, apply, plan, trust_note

    host = host_named(args.host)
    if host is None:
        raise UsageError(f"unknown host {args.host!r} (known: {HOST_NAMES})")
    http = None
    if args.http:
        if not host.http:
            raise UsageError(f"{host.title} runs command hooks only; drop --http")
        if args.scope == "project":
            raise UsageError(
                "--http writes your token into the settings: user scope only, never a "
                "project's (it would be committed)"
            )
        from memory_recall.server.daemon.settings import http_token, read_daemon_settings

        settings = read_daemon_settings()
        token = http_token()
        assert token is not None
        http = (f"http://127.0.0.1:{settings.http_port}", token)
        if not settings.http:
            print(
                "memory-recall: note: the daemon's HTTP listener is off; add `http = true` "
                "under [hooks] in your config file (docs/configuration.md)",
                file=sys.stderr,
            )
    project = Path(os.path.abspath(args.workspace or os.getcwd()))
    try:
        change = plan(host, args.scope, project, uninstall=args.uninstall, http=http)
    except InstallError as exc:
        print(f"memory-recall: {exc}", file=sys.stderr)
        return 1
    if not change.changed:
        what = "not installed" if args.uninstall else "already installed"
        print(f"{host.title}: {what} in {change.path}; nothing to change")
        return 0
    print(change.diff(), end="")
    if args.dry_run:
        print(f"(dry run: {change.path} not changed)")
        return 0
    apply(change)
    verb = "removed from" if args.uninstall else "installed in"
    print(f"{host.title}: memory-recall hooks {verb} {change.path}")
    note = trust_note(host, args.scope)
    if note and not args.uninstall:
        print(note)
    return 0


def add_commands(sub: Any) -> None:
    """The agents' commands, on the CLI's subparsers."""
    daemon = sub.add_parser(
        "daemon",
        help="the shared daemon of every agent and editor (hooks start it on their own)",
    )
    daemon.add_argument(
        "action", nargs="?", choices=["run", "status", "stop"], default="run",
        help="run it here in the foreground (default), or ask the running one",
    )  # fmt: skip
    daemon.add_argument("--json", action="store_true", help="status as JSON")
    daemon.add_argument(
        "--listen", metavar="SOCKET", help="another socket than the user's default one"
    )
    daemon.add_argument(
        "--http-port", type=int, default=None, metavar="PORT",
        help="also serve hook events over loopback HTTP on this port (see [hooks] http)",
    )  # fmt: skip
    daemon.add_argument("--idle-minutes", type=float, default=None, help="stop after this idle")
    daemon.add_argument("--log-level", default="INFO", help="stderr log level (default INFO)")
    daemon.set_defaults(func=cmd_daemon)

    hook = sub.add_parser(
        "hook",
        help="what an agent's hook runs: the host's JSON on stdin, what it injects on stdout",
        description="Reads the host's hook JSON on stdin, asks the shared daemon, prints what "
        "that host reads, exits 0 (always). Installed by `install-hooks`.",
    )
    hook.add_argument("host", help=f"the agent: {HOST_NAMES}")
    hook.add_argument("event", help="the host's event name (UserPromptSubmit, BeforeAgent, …)")
    hook.set_defaults(func=cmd_hook)

    install = sub.add_parser(
        "install-hooks", help="add memory-recall's hooks to an agent's settings (prints the diff)"
    )
    install.add_argument("host", help=f"the agent: {HOST_NAMES}")
    install.add_argument(
        "--scope", choices=["user", "project"], default="user",
        help="your settings under $HOME (default), or the project's",
    )  # fmt: skip
    install.add_argument("--workspace", metavar="DIR", help="the project (default: here)")
    install.add_argument("--dry-run", action="store_true", help="print the diff, change nothing")
    install.add_argument(
        "--uninstall", action="store_true", help="remove exactly the entries install-hooks added"
    )
    install.add_argument(
        "--http", action="store_true",
        help="Claude Code, qwen-code: prompt and tool hooks as HTTP requests to the daemon "
        "(no process per hook); user scope only",
    )  # fmt: skip
    install.set_defaults(func=cmd_install_hooks)
