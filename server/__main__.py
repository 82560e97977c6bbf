"""memory-recall: a memory daemon for AI coding agents, and its command line.

Started with no command (as editors do) it serves JSON-RPC on stdio. By hand:
`recall` shows what a query would deliver, `status` what is indexed, `demo`
runs a real daemon session in several languages, and `eval`, `bench` and
`delivery` print quality and speed figures.

Past 500 lines as one job, the command line: one argparse tree and a thin
function per command. What a command does lives in its own room (`cli_writes`
for the write side, `dev/` for benchmarks and evaluations, imported only when
that command runs, so `serve` loads none of them).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import unicodedata
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.prompt import format_age
from memory_recall.server.ranking.registry import (
    DEFAULT_RANKER,
    RANKERS,
    accepted_names,
    ranker_named,
)
from memory_recall.server.roots import MemoryRoot, Scope, default_roots, parse_root_arg

SCOPES = ", ".join(s.value for s in Scope)


class UsageError(Exception):
    """A mistake on the command line: printed as one line, exit status 2."""


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


def _roots(args: argparse.Namespace) -> list[MemoryRoot]:
    if args.root:
        return [root_from_arg(r) for r in args.root]
    return default_roots(os.getcwd())


def plural(count: int, noun: str) -> str:
    """`1 document`, `2 documents`."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def display_width(text: str) -> int:
    """Columns a terminal gives the text: wide CJK characters take two, marks none."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in {"Mn", "Me", "Cf"}:
            continue
        width += 2 if unicodedata.east_asian_width(char) in {"W", "F"} else 1
    return width


def clip(text: str, columns: int) -> str:
    """The text cut to at most `columns` display columns, with … when cut."""
    if display_width(text) <= columns:
        return text
    out, used = [], 0
    for char in text:
        step = display_width(char)
        if used + step > columns - 1:
            break
        out.append(char)
        used += step
    return "".join(out) + "…"


def _add_root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        action="append",
        metavar="DIR[:scope]",
        help="a memory root (scope project, user or team; default project); repeatable. "
        "Default: ./.memory (project), ./.memory/team (team) and the user data dir (user).",
    )


def _pad(text: str, width: int) -> str:
    return text + " " * (width - display_width(text))


def table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    """Columns aligned by display width, so CJK titles line up too."""
    widths = [
        max(display_width(h), *(display_width(r[i]) for r in rows)) for i, h in enumerate(headers)
    ]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(_pad(c, w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def _recall_memories(args: argparse.Namespace, spec: Any) -> tuple[Any, Any, str]:
    """The snapshot, its memory network (None with --no-network) and a description."""
    from memory_recall.server.daemon.networking import network_document
    from memory_recall.server.network.graph import MemoryNetwork
    from memory_recall.server.recall_network import FixedNetwork

    if args.corpus:
        from memory_recall.server.dev.network_eval import load_network_corpus

        _existing(args.corpus, "corpus")
        corpus, network = load_network_corpus(args.corpus)
        snapshot = corpus.snapshot
        where = f"{plural(len(snapshot), 'document')} of {args.corpus}"
    else:
        catalog = MemoryCatalog(_roots(args), spec.index_kind)
        catalog.scan()
        snapshot = catalog.snapshot()
        network = MemoryNetwork.build(network_document(d) for d in snapshot.documents)
        where = (
            f"{plural(len(catalog), 'document')} in {plural(len(catalog.roots), 'root')}, "
            f"{len(catalog.skipped)} skipped"
        )
    fixed = None if args.no_network else FixedNetwork.of(network, snapshot.documents)
    return snapshot, fixed, where


def cmd_recall(args: argparse.Namespace) -> int:
    from memory_recall.server.recall import RecallRequest, lexical_phases

    started = time.perf_counter()
    spec = ranker_named(args.ranker)
    assert spec is not None  # argparse checked the name
    snapshot, network, where = _recall_memories(args, spec)
    indexed = time.perf_counter()
    request = RecallRequest("cli", args.query, recent_tools=tuple(args.recent_tool or ()))
    fast, refined = lexical_phases(snapshot, request, spec, network)
    done = time.perf_counter()
    if args.explain:
        from memory_recall.server.explain import ExplainRequest, explain
        from memory_recall.server.explain_text import format_explanation

        explained = [
            explain(
                snapshot,
                ExplainRequest(
                    path, args.query, recent_tools=tuple(args.recent_tool or ()),
                    with_selector=True,
                ),
                spec,
                network=network,
            )
            for path in args.explain
        ]  # fmt: skip
        if args.json:
            print(json.dumps([e.wire() for e in explained], ensure_ascii=False, indent=2))
        else:
            print("\n\n".join(format_explanation(e) for e in explained))
        return 0 if all(e.found for e in explained) else 1
    if args.json:
        phases = {"fast": fast.wire() if fast else None, "refined": refined.wire()}
        print(json.dumps(phases, ensure_ascii=False, indent=2))
        return 0
    print(f"query: {args.query!r}")
    print(f"ranker: {spec.name}; tokens ({len(spec.tokenize(args.query))}): "
          f"{' '.join(spec.tokenize(args.query)) or '(none)'}")  # fmt: skip
    for label, phase in (
        ("fast (sent first when a model is configured)", fast),
        (
            "refined without a model (the ranker's top 5; network finds only by the fast rule)",
            refined,
        ),
    ):
        docs = phase.docs if phase else []
        print(f"\n{label}: {len(docs)}")
        if not docs:
            print("  (nothing relevant)")
            continue
        rows = [
            [
                f"{d.score:g}",
                d.scope,
                d.type,
                format_age(d.mtime_ms),
                clip(d.title, 48),
                d.relative_path,
                f"{d.excerpt.start}–{d.excerpt.end}" if d.excerpt and d.truncated else "whole",
            ]
            for d in docs
        ]
        print(table(rows, ["score", "scope", "type", "age", "title", "path", "body"]))
        for d in docs:
            if d.via:
                hops = ", then ".join(
                    f"{h.kind}{' ' + repr(h.keyword) if h.keyword else ''} ({h.direction}) "
                    f"from {h.from_}"
                    for h in d.via
                )
                print(f"  {d.relative_path}: found by the network ({hops})")
    if refined.prompt:
        print("\nprompt (what a host without a model injects):\n")
        print(refined.prompt)
    print(
        f"{where}; index {1000 * (indexed - started):.1f} ms, "
        f"recall {1000 * (done - indexed):.2f} ms"
    )
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.evaluation import (
        compare_to_baseline,
        evaluate_all,
        evaluate_corpora,
        format_table,
        load_corpus,
        silence_sweep,
    )

    for path in args.corpus:
        _existing(path, "corpus")
    categories = [path for path in args.corpus if _is_category_set(path)]
    if categories:  # labelled category sets: the topic tree's accuracy
        import dataclasses

        from memory_recall.server.dev.category_eval import evaluate_categories, format_report

        for path in categories:
            report = evaluate_categories(path)
            if args.json:
                print(json.dumps(dataclasses.asdict(report), ensure_ascii=False, indent=2))
            else:
                print(format_report(report))
        args.corpus = [path for path in args.corpus if path not in categories]
        if not args.corpus:
            return 0
    # `fixtures/eval/*.json` also matches the baseline: say so and evaluate the rest.
    for path in [p for p in args.corpus if _is_baseline(p)]:
        print(f"memory-recall: skipped {path}: a baseline, not a corpus (--check takes it)",
              file=sys.stderr)  # fmt: skip
        args.corpus.remove(path)
    if not args.corpus:
        return 2
    names = args.ranker or [DEFAULT_RANKER]
    if args.silence_sweep:
        for path in args.corpus:
            print(f"{path}\n{silence_sweep(load_corpus(path))}")
        return 0
    if args.check:
        baseline = json.loads(_existing(args.check, "baseline").read_text(encoding="utf-8"))
        rankers = args.ranker or sorted({r for c in baseline["corpora"].values() for r in c})
        regressions, improvements = compare_to_baseline(
            evaluate_corpora(args.corpus, rankers), baseline
        )
        for line in improvements:
            print(f"better  {line}")
        for line in regressions:
            print(f"WORSE   {line}")
        print(f"{len(regressions)} regressions beyond tolerance, {len(improvements)} improvements")
        return 1 if regressions else 0
    if args.json and not args.per_case:
        print(json.dumps(evaluate_corpora(args.corpus, names), ensure_ascii=False, indent=2))
        return 0
    for path in args.corpus:
        reports = evaluate_all(load_corpus(path), names)
        if args.json:
            payload = [r.as_json() for r in reports]
            print(json.dumps(payload[0] if len(payload) == 1 else payload, ensure_ascii=False))
        else:
            if len(args.corpus) > 1:
                print(f"\n{path}")
            print(format_table(reports))
    return 0


def _is_category_set(path: str) -> bool:
    """A labelled category set (`{"memories": [...]}`) rather than a ranking corpus."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError):
        return False  # load_corpus says what is wrong with it
    return isinstance(data, dict) and "memories" in data and "cases" not in data


def _is_baseline(path: str) -> bool:
    """A figures baseline (`{"corpora": {...}}`, what --check reads) rather than a corpus."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and "corpora" in data and "docs" not in data


def cmd_status(args: argparse.Namespace) -> int:
    catalog = MemoryCatalog(_roots(args))
    catalog.scan()
    counts = catalog.count_by_root()
    for root, count in zip(catalog.roots, counts, strict=True):
        exists = "" if root.path.is_dir() else "  (missing)"
        print(f"{root.scope.value:8} {plural(count, 'document'):>15}  {root.path}{exists}")
    print(f"index built in {catalog.build_ms or 0:.1f} ms")
    for skipped in catalog.skipped:
        print(f"skipped  {skipped.path}: {skipped.reason}")
    from memory_recall.server.cli_organise import stale_lines

    for line in stale_lines(catalog, os.path.abspath(args.workspace or os.getcwd())):
        print(line)
    return 0


TTY_HINT = (
    "memory-recall: this is the daemon; it speaks JSON-RPC (LSP framing) on stdin/stdout "
    'for editors. Try `memory-recall --help`, or `memory-recall recall "your question"`. '
    "Ctrl-D ends it."
)


def cmd_serve(args: argparse.Namespace) -> int:
    from memory_recall.server.daemon.server import run_stdio

    if _is_terminal(sys.stdin):  # started by hand: say what this is instead of waiting silently
        print(TTY_HINT, file=sys.stderr, flush=True)

    ceiling = args.selector_ceiling_ms / 1000 if args.selector_ceiling_ms else None
    return run_stdio(selector_ceiling_s=ceiling, log_level=args.log_level)


def cmd_mcp(args: argparse.Namespace) -> int:
    # The MCP SDK and the MCP face load only for this command.
    from memory_recall.server.mcp.config import config_from
    from memory_recall.server.mcp.core import MemoryCore
    from memory_recall.server.mcp.face import run

    roots = [root_from_arg(r) for r in args.root] if args.root else None
    config = config_from(args, roots)
    return run(MemoryCore(config.options, config.workspace, config.problems), args.log_level)


def _is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False


def run_bench(argv: Sequence[str]) -> int:
    # The benchmark owns its options; importing it only here keeps `serve` free of it.
    from memory_recall.server.dev import bench

    parser = argparse.ArgumentParser(
        prog="memory-recall bench", description="latency vs number of memories (prints figures)"
    )
    bench.add_arguments(parser)
    return bench.main(parser.parse_args(argv))


def cmd_bench(args: argparse.Namespace) -> int:
    return run_bench(args.options)


def run_network_eval(argv: Sequence[str]) -> int:
    # The memory network's figures (quality, and with --bench speed) own their options.
    from memory_recall.server.dev import network_bench, network_eval

    if "--bench" in argv:
        parser = argparse.ArgumentParser(
            prog="memory-recall network-eval --bench",
            description="the memory network at size: build, activation, update (prints figures)",
        )
        parser.add_argument("--bench", action="store_true", help="run the benchmark")
        network_bench.add_arguments(parser)
        return network_bench.main(parser.parse_args(argv))
    parser = argparse.ArgumentParser(
        prog="memory-recall network-eval",
        description="the memory network on the labelled corpora, with and without it, and the "
        "suggestion matcher's precision and recall; --bench for its speed at size",
    )
    network_eval.add_arguments(parser)
    parser.add_argument(
        "--bench", action="store_true", help="benchmark instead (see `network-eval --bench -h`)"
    )
    return network_eval.main(parser.parse_args(argv))


def cmd_network_eval(args: argparse.Namespace) -> int:
    return run_network_eval(args.options)


def run_semantic(command: str, argv: Sequence[str]) -> int:
    """`semantic-eval` / `semantic-bench`: the semantic channel measured (issue 20); their
    own options (`-h`). Imported only here: they need numpy, and the real encoder needs the
    eval-semantic extra."""
    if command == "semantic-eval":
        from memory_recall.server.dev.semantic_eval import main as semantic_main
    else:
        from memory_recall.server.dev.semantic_bench import main as semantic_main
    return semantic_main(list(argv))


def cmd_semantic(args: argparse.Namespace) -> int:
    return run_semantic(args.command, args.options)


def run_search_bench(argv: Sequence[str]) -> int:
    from memory_recall.server.dev import search_bench

    parser = argparse.ArgumentParser(
        prog="memory-recall search-bench",
        description="memory/search per mode and the suggestion matcher at size (prints figures)",
    )
    search_bench.add_arguments(parser)
    return search_bench.main(parser.parse_args(argv))


def cmd_search_bench(args: argparse.Namespace) -> int:
    return run_search_bench(args.options)


def _existing(path: str, what: str) -> Path:
    if not Path(path).exists():
        raise UsageError(f"{what} {path} does not exist")
    return Path(path)


def cmd_demo(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.bundled import DEMO_MEMORY, bundled
    from memory_recall.server.dev.demo import main as demo

    directory = _existing(args.directory, "folder") if args.directory else bundled(DEMO_MEMORY)
    if not directory.is_dir():
        raise UsageError(f"{directory} is not a folder")
    return demo(directory, args.model_delay_ms)


def cmd_delivery(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.bundled import DELIVERY_CORPUS, bundled
    from memory_recall.server.dev.delivery import LATENCIES_MS
    from memory_recall.server.dev.delivery import main as delivery

    corpus = _existing(args.corpus, "corpus") if args.corpus else bundled(DELIVERY_CORPUS)
    return delivery(str(corpus), args.latency or LATENCIES_MS, args.json)


def cmd_project_init(args: argparse.Namespace) -> int:
    from memory_recall.server.extract.project.reader import read_project
    from memory_recall.server.extract.project.render import render

    workspace = _existing(args.workspace, "folder")
    if not workspace.is_dir():
        raise UsageError(f"{workspace} is not a folder")
    report = read_project(workspace)
    memory = render(report)
    for problem in report.problems:
        print(f"skipped  {problem.path}: {problem.reason}", file=sys.stderr)
    if not args.write:
        print(memory.markdown(), end="")
        return 0
    # Written as memory/extract {trigger: projectInit} writes it: the daemon's writer.
    from memory_recall.server.cli_writes import _print_result, _side
    from memory_recall.server.daemon.extracting import project_memory_request

    roots = [root_from_arg(r) for r in args.root] if args.root else None
    roots = roots or [MemoryRoot.of(str(workspace / ".memory"), "project")]
    project = next((r for r in roots if r.scope.value == "project"), None)
    if project is None:
        raise UsageError("--write needs a project root (--root DIR:project)")
    project.path.mkdir(parents=True, exist_ok=True)
    side = _side(roots)
    index = roots.index(project)
    docs = [d for d in side.writer.catalog.snapshot().documents if d.root_index == index]
    kind, request = project_memory_request(memory, docs, "project", True)
    run = side.writer.update if kind == "update" else side.writer.remember
    return _print_result(run(request), args.json)  # type: ignore[arg-type]


def cmd_eval_project(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.project_eval import evaluate, format_report

    directory = _existing(args.fixtures, "folder")
    if not (directory / "expected.json").is_file():
        raise UsageError(f"{directory} has no expected.json (the labels)")
    report = evaluate(directory)
    print(json.dumps(report.as_json(), indent=2) if args.json else format_report(report))
    return 0


def cmd_eval_extract(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.extract_eval import run

    corpus = _existing(args.corpus, "corpus")
    if args.model_url is None and (args.model or args.api_key_env):
        raise UsageError("--model and --api-key-env need --model-url")
    return run(
        str(corpus),
        model_url=args.model_url,
        model=args.model,
        api_key_env=args.api_key_env,
        deadline_s=args.timeout_ms / 1000,
        as_json=args.json,
    )


def _ranker_help() -> str:
    names = "; ".join(f"{name}: {spec.description}" for name, spec in RANKERS.items())
    return f"{names}. Old names: default = bm25f, indexed and reference = spec"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memory-recall",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

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
    serve.set_defaults(func=cmd_serve)

    mcp = sub.add_parser("mcp", help="an MCP server over stdio (tools and resources for MCP hosts)")
    _add_root_option(mcp)
    from memory_recall.server.mcp.config import add_arguments as add_mcp_arguments

    add_mcp_arguments(mcp)
    mcp.set_defaults(func=cmd_mcp)

    recall = sub.add_parser("recall", help="one-shot recall, human-readable, with timings")
    recall.add_argument("query", help="what the user asked, in any language")
    _add_root_option(recall)
    recall.add_argument("--recent-tool", action="append", help="a recently used tool name")
    recall.add_argument(
        "--ranker", choices=accepted_names(), default=DEFAULT_RANKER, metavar="RANKER",
        help=f"default {DEFAULT_RANKER}. {_ranker_help()}",
    )  # fmt: skip
    recall.add_argument(
        "--json", action="store_true",
        help="print both phases as the daemon sends them (memory/fastResult, memory/refinedResult)",
    )  # fmt: skip
    recall.add_argument(
        "--explain", action="append", metavar="PATH",
        help="why this memory (path, relative path, or a corpus id) was or was not sent: rank, "
        "score parts per field and term, silence, network path, staleness; repeatable",
    )  # fmt: skip
    recall.add_argument(
        "--corpus", metavar="CORPUS.json",
        help="recall over a labelled corpus (fixtures/eval/*.json) instead of --root folders",
    )  # fmt: skip
    recall.add_argument(
        "--no-network", action="store_true", help="without the memory network (SPEC §11)"
    )
    recall.set_defaults(func=cmd_recall)

    ev = sub.add_parser("eval", help="evaluate rankers on labelled corpora")
    ev.add_argument(
        "corpus", nargs="+",
        help="labelled corpora (JSON: docs and cases), e.g. fixtures/eval/*.json",
    )  # fmt: skip
    ev.add_argument(
        "--json", action="store_true",
        help="print the figures (overall, per category, per script) as one JSON object: "
        "the format of fixtures/eval/baseline.json",
    )  # fmt: skip
    ev.add_argument(
        "--per-case", action="store_true", help="with --json: every case's top 5, per corpus"
    )
    ev.add_argument(
        "--check", metavar="BASELINE",
        help="compare with a baseline written by --json; exit 1 on a drop beyond tolerance",
    )  # fmt: skip
    ev.add_argument(
        "--ranker", action="append", choices=accepted_names(), metavar="RANKER",
        help=f"repeat to compare side by side (default {DEFAULT_RANKER}). {_ranker_help()}",
    )  # fmt: skip
    ev.add_argument(
        "--silence-sweep", action="store_true",
        help="print the default ranker's silence threshold against Recall@5 and silence",
    )  # fmt: skip
    ev.set_defaults(func=cmd_eval)

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

    # Commands that parse their own options (`<command> --help`): the rest of the line.
    def passthrough(name: str, help_text: str, run: Callable[[argparse.Namespace], int]) -> None:
        command = sub.add_parser(name, help=help_text, add_help=False)
        command.add_argument("options", nargs=argparse.REMAINDER)
        command.set_defaults(func=run)

    passthrough(
        "bench", "latency vs number of memories (prints figures; `bench --help` for options)",
        cmd_bench,
    )  # fmt: skip
    passthrough(
        "network-eval",
        "the memory network's figures: multi-hop recall with and without it, "
        "suggestions, --bench for speed (`network-eval --help` for options)",
        cmd_network_eval,
    )
    passthrough(
        "semantic-eval",
        "recall with and without the semantic channel, fill against fusion, "
        "through a real local encoder (`make eval-semantic` installs it)",
        cmd_semantic,
    )
    passthrough(
        "semantic-bench",
        "benchmark: the fast phase with the semantic channel on, and embedding throughput (docs/s)",
        cmd_semantic,
    )
    passthrough(
        "search-bench",
        "benchmark: memory/search per mode beside a recall's ranking, the suggestion "
        "index and matcher (`search-bench --help` for options)",
        cmd_search_bench,
    )

    delivery = sub.add_parser(
        "delivery", help="benchmark: what a host waiting 100 ms gets, per model latency"
    )
    delivery.add_argument(
        "corpus", nargs="?", default=None,
        help="a labelled corpus (JSON); default: the bundled eval corpus",
    )  # fmt: skip
    delivery.add_argument(
        "--latency", type=float, action="append", help="model latency in ms; repeatable"
    )
    delivery.add_argument("--json", action="store_true", help="print JSON rows")
    delivery.set_defaults(func=cmd_delivery)

    init = sub.add_parser(
        "project-init",
        help="the project memory projectInit would write for a workspace (read-only, no model)",
    )
    init.add_argument("workspace", nargs="?", default=".", help="the workspace folder (default .)")
    init.add_argument(
        "--write", action="store_true",
        help="create or update the memory in the project root (default WORKSPACE/.memory)",
    )  # fmt: skip
    _add_root_option(init)
    init.add_argument("--json", action="store_true", help="with --write: the result as JSON")
    init.set_defaults(func=cmd_project_init)

    evp = sub.add_parser(
        "eval-project", help="projectInit against labelled fixture repositories (prints accuracy)"
    )
    evp.add_argument(
        "fixtures", nargs="?", default="fixtures/projects",
        help="a folder of repositories with expected.json (default fixtures/projects)",
    )  # fmt: skip
    evp.add_argument("--json", action="store_true", help="print one JSON object")
    evp.set_defaults(func=cmd_eval_project)

    exv = sub.add_parser(
        "eval-extract",
        help="extraction against labelled sessions: precision, recall, duplicates, secrets leaked",
    )
    exv.add_argument(
        "corpus", nargs="?", default="fixtures/extract/corpus.json",
        help="labelled sessions (default fixtures/extract/corpus.json)",
    )  # fmt: skip
    exv.add_argument(
        "--model-url", default=None,
        help="an OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1 (Ollama); "
        "default: the scripted model with the corpus's prepared answers",
    )  # fmt: skip
    exv.add_argument("--model", default=None, help="model name, e.g. qwen2.5:7b-instruct")
    exv.add_argument(
        "--api-key-env", default=None, help="name of the environment variable with the API key"
    )
    exv.add_argument(
        "--timeout-ms", type=int, default=30_000, help="deadline per model call (default 30000)"
    )
    exv.add_argument("--json", action="store_true", help="print one JSON object")
    exv.set_defaults(func=cmd_eval_extract)

    status = sub.add_parser("status", help="roots, document counts, skipped and stale files")
    _add_root_option(status)
    status.add_argument(
        "--workspace", metavar="DIR",
        help="the workspace cited paths are checked against (default: the current folder)",
    )  # fmt: skip
    status.set_defaults(func=cmd_status)

    from memory_recall.server.cli_organise import add_commands as add_organise_commands

    add_organise_commands(sub, _add_root_option, _roots)
    from memory_recall.server.cli_writes import add_commands

    add_commands(sub, _add_root_option, _roots, table=table, clip=clip)
    from memory_recall.server.cli_proposals import add_commands as add_proposal_commands

    add_proposal_commands(sub, _add_root_option, _roots)

    bench_write = sub.add_parser(
        "bench-write", help="benchmark: remember end to end, and recall with vs without the store"
    )
    bench_write.add_argument("--docs", type=int, default=10_000, help="memories in the tree")
    bench_write.add_argument("--writes", type=int, default=200, help="remembers timed")
    bench_write.add_argument("--recalls", type=int, default=300, help="recalls per daemon")
    bench_write.add_argument("--json", action="store_true", help="print one JSON object")
    bench_write.set_defaults(func=cmd_bench_write)

    evw = sub.add_parser(
        "eval-write", help="figures of the write side's rules on their labelled sets"
    )
    evw.add_argument("--json", action="store_true", help="print one JSON object")
    evw.set_defaults(func=cmd_eval_write)

    evg = sub.add_parser(
        "eval-gate",
        help="the gate's secret and injection figures, per class and per language",
    )
    evg.add_argument("--json", action="store_true", help="print one JSON object")
    evg.set_defaults(func=cmd_eval_gate)
    return parser


def cmd_eval_gate(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.gate_eval import gate_main

    return gate_main(as_json=args.json)


def cmd_bench_write(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.write_bench import main as write_bench

    return write_bench(args)


def cmd_eval_write(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.write_eval import main as write_eval

    return write_eval(as_json=args.json)


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:
        return run_bench(argv[1:])
    if argv[:1] == ["network-eval"]:
        return run_network_eval(argv[1:])
    if argv[:1] in (["semantic-eval"], ["semantic-bench"]):
        return run_semantic(argv[0], argv[1:])
    if argv[:1] == ["search-bench"]:
        return run_search_bench(argv[1:])
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


if __name__ == "__main__":
    sys.exit(main())
