"""memory-recall: the memory of your coding agents — warm, multilingual recall in milliseconds.

Started with no command (as editors do) it serves JSON-RPC on stdio. By hand:
`recall` shows what a question would deliver, `remember` keeps a fact, `status`
shows what is indexed; `memory-recall COMMAND --help` for any command.
Settings: a config file and environment variables (docs/configuration.md).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from memory_recall.server.cli.common import (
    UsageError,
    add_root_option,
    add_workspace_option,
    existing,
    memory_path,
    root_from_arg,
    settings_of,
    with_core,
)
from memory_recall.server.cli.show import plural, print_phases
from memory_recall.server.release import version

if TYPE_CHECKING:  # what a command loads when it runs, never for --version or --help
    from memory_recall.protocol.messages import ExplainResult, PhaseResult, SearchResult
    from memory_recall.server.core.core import MemoryCore

TTY_HINT = (
    "memory-recall: this is the daemon; it speaks JSON-RPC (LSP framing) on stdin/stdout "
    'for editors. Try `memory-recall --help`, or `memory-recall recall "your question"`. '
    "Ctrl-D ends it."
)


def _ranker_help() -> str:
    from memory_recall.server.ranking.registry import RANKERS

    names = "; ".join(f"{name}: {spec.description}" for name, spec in RANKERS.items())
    return f"{names}. Old names: default = bm25f, indexed and reference = spec"


# -- the daemon's faces --------------------------------------------------------------------------


def cmd_serve(args: argparse.Namespace) -> int:
    if args.listen:  # the shared daemon's core on a socket of the caller's choosing
        from memory_recall.server.cli.agents import run_daemon

        return run_daemon(args, Path(os.path.abspath(os.path.expanduser(args.listen))))
    from memory_recall.server.lsp.server import run_stdio

    if _is_terminal(sys.stdin):  # started by hand: say what this is instead of waiting silently
        print(TTY_HINT, file=sys.stderr, flush=True)

    ceiling = args.selector_ceiling_ms / 1000 if args.selector_ceiling_ms else None
    return run_stdio(selector_ceiling_s=ceiling, log_level=args.log_level)


def cmd_mcp(args: argparse.Namespace) -> int:
    # The MCP SDK and the MCP face load only for this command (the `mcp` extra).
    try:
        from memory_recall.server.core.core import MemoryCore
        from memory_recall.server.mcp.config import config_from
        from memory_recall.server.mcp.face import run
    except ImportError as exc:
        print(
            f"memory-recall mcp needs the MCP SDK ({exc}): pip install 'memory-recall[mcp]'",
            file=sys.stderr,
        )
        return 2
    roots = [root_from_arg(r) for r in args.root] if args.root else None
    settings = config_from(args, roots)
    return run(
        MemoryCore(settings.options, settings.workspace, problems=settings.problems),
        args.log_level,
    )


def _is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


# -- reading -------------------------------------------------------------------------------------


def cmd_recall(args: argparse.Namespace) -> int:
    if args.corpus:  # a labelled corpus instead of the configured roots (developers)
        from memory_recall.server.cli.dev import recall_over_corpus

        return recall_over_corpus(args)
    if args.explain:
        return _print_explanations(args, args.query, args.explain, args.recent_tool)
    started = time.perf_counter()

    async def phases(
        core: MemoryCore,
    ) -> tuple[PhaseResult | None, PhaseResult, str, str, float]:
        from memory_recall.server.recall.service import RecallRequest, lexical_phases

        indexed = time.perf_counter()
        view = await core.session.view()
        request = RecallRequest("cli", args.query, recent_tools=tuple(args.recent_tool or ()))
        network = None if args.no_network else core.network.current()
        fast, refined = lexical_phases(view, request, core.ranker, network)
        catalog = core.catalog
        where = (
            f"{plural(len(catalog), 'document')} in {plural(len(catalog.roots), 'root')}, "
            f"{len(catalog.skipped)} skipped"
        )
        return fast, refined, core.ranker.name, where, indexed

    given = {"ranker": args.ranker} if args.ranker else {}
    fast, refined, ranker, where, indexed = with_core(args, phases, network=True, **given)
    done = time.perf_counter()
    if args.json:
        phases_json = {"fast": fast.wire() if fast else None, "refined": refined.wire()}
        print(json.dumps(phases_json, ensure_ascii=False, indent=2))
        return 0
    print_phases(args.query, ranker, fast, refined)
    print(
        f"{where}; index {1000 * (indexed - started):.1f} ms, "
        f"recall {1000 * (done - indexed):.2f} ms"
    )
    return 0


def _print_explanations(
    args: argparse.Namespace, query: str, paths: Sequence[str], recent: Sequence[str] | None
) -> int:
    from memory_recall.protocol.messages import ExplainParams
    from memory_recall.server.recall.explain_text import format_explanation

    async def explain(core: MemoryCore) -> list[ExplainResult]:
        return [
            await core.explain(
                ExplainParams(
                    query=query, path=memory_path(core, path), recent_tools=list(recent or ())
                ),
                fast_without_model=True,  # as `recall` prints it: the hooks' fast phase
            )
            for path in paths
        ]

    given = {"ranker": args.ranker} if getattr(args, "ranker", None) else {}
    explained = with_core(args, explain, network=True, **given)
    if args.json:
        print(json.dumps([e.wire() for e in explained], ensure_ascii=False, indent=2))
    else:
        print("\n\n".join(format_explanation(e) for e in explained))
    return 0 if all(e.found for e in explained) else 1


def cmd_explain(args: argparse.Namespace) -> int:
    return _print_explanations(args, args.query, args.path, args.recent_tool)


def cmd_search(args: argparse.Namespace) -> int:
    from memory_recall.protocol.messages import SearchParams

    async def search(core: MemoryCore) -> SearchResult:
        path = memory_path(core, args.memory) if args.memory else None
        params = SearchParams(
            mode=args.mode, query=args.query or "", path=path, category=args.category,
            scope=args.scope, limit=args.limit,
        )  # fmt: skip
        return await core.search(params)

    try:
        result = with_core(args, search, network=True)
    except ValueError as error:  # SearchError: what to change
        print(f"memory-recall: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.wire(), ensure_ascii=False, indent=2))
    else:
        print(result.prompt or "(nothing found)")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    async def status(core: MemoryCore) -> list[str]:
        catalog = core.catalog
        lines = []
        for root, count in zip(catalog.roots, catalog.count_by_root(), strict=True):
            exists = "" if root.path.is_dir() else "  (missing)"
            lines.append(
                f"{root.scope.value:8} {plural(count, 'document'):>15}  {root.path}{exists}"
            )
        lines.append(f"index built in {catalog.build_ms or 0:.1f} ms")
        lines += [f"skipped  {s.path}: {s.reason}" for s in catalog.skipped]
        docs = catalog.snapshot().documents
        lines += [
            f"stale    {doc.path}: {found.reason}"
            for doc, found in core.organise.organiser.stale(docs)
        ]
        import asyncio

        from memory_recall.server.cli.sync import status_lines

        lines += status_lines(await asyncio.to_thread(core.syncing.status))
        return lines

    print("\n".join(with_core(args, status)))
    from memory_recall.server.hooks.host_memory import host_memories

    for found in host_memories(settings_of(args).workspace or os.getcwd()):
        how = "mirrored by the daemon" if found.mirrored else "read by the daemon"
        exists = "" if found.source.exists() else "  (not there yet)"
        print(f"agent    {found.host:11} {found.scope:8} {found.source}{exists}  ({how})")
    from memory_recall.server.core.config import config_path

    source = config_path()
    print(f"settings: {source if source.exists() else 'defaults (no ' + str(source) + ')'}")
    return 0


# -- projects and the demo ---------------------------------------------------------------------


def cmd_demo(args: argparse.Namespace) -> int:
    from memory_recall.server.cli.bundled import DEMO_MEMORY, bundled
    from memory_recall.server.cli.demo import main as demo

    directory = existing(args.directory, "folder") if args.directory else bundled(DEMO_MEMORY)
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a folder")
    return demo(directory, args.model_delay_ms)


def cmd_project_init(args: argparse.Namespace) -> int:
    from memory_recall.server.extract.project.reader import read_project
    from memory_recall.server.extract.project.render import render

    workspace = existing(args.workspace, "folder")
    if not workspace.is_dir():
        raise UsageError(f"{workspace} is not a folder")
    report = read_project(workspace)
    memory = render(report)
    for problem in report.problems:
        print(f"skipped  {problem.path}: {problem.reason}", file=sys.stderr)
    if not args.write:
        print(memory.markdown(), end="")
        return 0
    # Written as memory/extract {trigger: projectInit} writes it: the core's writer.
    from memory_recall.server.cli.writes import _print_result, _refused
    from memory_recall.server.core.extracting import project_memory_request
    from memory_recall.server.core.writing import result_wire

    if not args.root:
        project_root = workspace / ".memory"
        project_root.mkdir(parents=True, exist_ok=True)
        args.root = [f"{project_root}:project"]
    roots = [root_from_arg(r) for r in args.root]
    project = next((r for r in roots if r.scope.value == "project"), None)
    if project is None:
        raise UsageError("--write needs a project root (--root DIR:project)")
    args.workspace = str(workspace)

    async def write(core: MemoryCore) -> object:
        index = [r.path for r in core.roots].index(project.path)
        docs = [d for d in (await core.session.view()).documents if d.root_index == index]
        kind, request = project_memory_request(memory, docs, "project", True)
        return result_wire(await core.write.writer.run_async(kind, request))

    try:
        result = with_core(args, write)
    except Exception as error:
        return _refused(error)
    return _print_result(result, args.json, args.root)  # type: ignore[arg-type]


def cmd_version(_args: argparse.Namespace) -> int:
    print(f"memory-recall {version()}")
    return 0


# -- the parser ----------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    from memory_recall.server.ranking.registry import DEFAULT_RANKER, accepted_names

    parser = argparse.ArgumentParser(
        prog="memory-recall",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Developers: `memory-recall dev --help` (evaluations, benchmarks).",
    )
    parser.add_argument("--version", action="version", version=f"memory-recall {version()}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    # Reading.
    recall = sub.add_parser("recall", help="what a question would deliver, with timings")
    recall.add_argument("query", help="what the user asked, in any language")
    add_root_option(recall)
    add_workspace_option(recall)
    recall.add_argument("--recent-tool", action="append", help="a recently used tool name")
    recall.add_argument(
        "--ranker", choices=accepted_names(), default=None, metavar="RANKER",
        help=f"default {DEFAULT_RANKER}. {_ranker_help()}",
    )  # fmt: skip
    recall.add_argument(
        "--json", action="store_true",
        help="print both phases as the daemon sends them (memory/fastResult, memory/refinedResult)",
    )  # fmt: skip
    recall.add_argument(
        "--explain", action="append", metavar="PATH",
        help="why this memory was or was not sent (same as `explain`); repeatable",
    )  # fmt: skip
    recall.add_argument("--corpus", metavar="CORPUS.json", help=argparse.SUPPRESS)
    recall.add_argument("--no-network", action="store_true", help="without the memory network")
    recall.set_defaults(func=cmd_recall)

    explain = sub.add_parser(
        "explain", help="why a memory was or was not delivered for a question: rank, scores, "
        "silence, network path, staleness",
    )  # fmt: skip
    explain.add_argument("query", help="the question")
    explain.add_argument("path", nargs="+", help="the memory (its file, or its path in a root)")
    add_root_option(explain)
    add_workspace_option(explain)
    explain.add_argument("--recent-tool", action="append", help="a recently used tool name")
    explain.add_argument("--json", action="store_true", help="print the explanation as JSON")
    explain.set_defaults(func=cmd_explain)

    search = sub.add_parser("search", help="look through the memories: shallow, deep, explore, get")
    search.add_argument("query", nargs="?", default="", help="what to look for")
    search.add_argument(
        "--mode", choices=["shallow", "deep", "explore", "get"], default="deep",
        help="shallow: titles and descriptions; deep (default): whole bodies and the network; "
        "explore: a topic subtree; get: one memory whole",
    )  # fmt: skip
    search.add_argument("--memory", help="explore from / get this memory (its path)")
    search.add_argument("--category", help="explore this topic (lessons, lessons/errors, …)")
    search.add_argument("--scope", choices=["project", "user", "team"], help="only this scope")
    search.add_argument("--limit", type=int, default=None, help="how many (default 10)")
    add_root_option(search)
    add_workspace_option(search)
    search.add_argument("--json", action="store_true", help="print the result as JSON")
    search.set_defaults(func=cmd_search)

    status = sub.add_parser("status", help="roots, document counts, skipped and stale files")
    add_root_option(status)
    add_workspace_option(status)
    status.set_defaults(func=cmd_status)

    # Writing and organising.
    from memory_recall.server.cli.writes import add_commands as add_write_commands

    add_write_commands(sub)
    from memory_recall.server.cli.organise import add_commands as add_organise_commands

    add_organise_commands(sub)
    from memory_recall.server.cli.proposals import add_commands as add_proposal_commands

    add_proposal_commands(sub)
    from memory_recall.server.cli.agents import add_commands as add_agent_commands

    add_agent_commands(sub)
    from memory_recall.server.cli.sync import add_commands as add_sync_commands

    add_sync_commands(sub)

    init = sub.add_parser(
        "project-init",
        help="the project memory projectInit would write for a workspace (no model)",
    )
    init.add_argument("workspace", nargs="?", default=".", help="the workspace folder (default .)")
    init.add_argument(
        "--write", action="store_true",
        help="create or update the memory in the project root (default WORKSPACE/.memory)",
    )  # fmt: skip
    add_root_option(init)
    init.add_argument("--json", action="store_true", help="with --write: the result as JSON")
    init.set_defaults(func=cmd_project_init)

    # The daemon.
    serve = sub.add_parser("serve", help="JSON-RPC over stdio for editors (the default)")
    serve.add_argument(
        "--selector-ceiling-ms", type=int, default=None,
        help="upper bound on any selector call (default 30000)",
    )  # fmt: skip
    serve.add_argument(
        "--log-level", default="WARNING",
        help="stderr log level (editors show stderr as errors, so WARNING by default)",
    )  # fmt: skip
    serve.add_argument(
        "--stdio", action="store_true", help="accepted for LSP clients; stdio is the transport"
    )
    serve.add_argument(
        "--listen", metavar="SOCKET",
        help="serve on this Unix socket instead of stdio: the shared daemon (see `daemon`), "
        "for every editor and agent that connects",
    )  # fmt: skip
    serve.set_defaults(func=cmd_serve)

    mcp = sub.add_parser(
        "mcp", help="an MCP server over stdio (needs the mcp extra: memory-recall[mcp])"
    )
    add_root_option(mcp)
    from memory_recall.server.mcp.config import add_arguments as add_mcp_arguments

    add_mcp_arguments(mcp)
    mcp.set_defaults(func=cmd_mcp)

    demo = sub.add_parser(
        "demo", help="a real daemon session: recalls in seven languages, both phases, timings"
    )
    demo.add_argument(
        "directory", nargs="?", default=None,
        help="a memory folder (with project/ and user/ subfolders, or one root); "
        "default: the bundled demo memories",
    )  # fmt: skip
    demo.add_argument(
        "--model-delay-ms", type=float, default=300,
        help="how long the stand-in model takes to answer memory/select (default 300)",
    )  # fmt: skip
    demo.set_defaults(func=cmd_demo)

    sub.add_parser("version", help="print the version").set_defaults(func=cmd_version)
    sub.add_parser("dev", help="developers: evaluations and benchmarks (`dev --help`)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv in (["--version"], ["version"]):  # at once: no parser, no core to import
        return cmd_version(argparse.Namespace())
    if argv[:1] == ["dev"]:
        from memory_recall.server.cli.dev import run as run_dev

        return run_dev(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):  # editors start us with no arguments
        args = parser.parse_args(["serve"])
    try:
        return int(args.func(args))
    except UsageError as error:
        parser.exit(2, f"memory-recall: error: {error}\n")
    except BrokenPipeError:
        # `memory-recall recall … | head`: the reader left; that is not an error.
        # Point stdout at devnull so the interpreter's final flush stays quiet.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
