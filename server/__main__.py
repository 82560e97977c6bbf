"""memory-recall: a memory daemon for AI coding agents, and its command line.

Started with no command (as editors do) it serves JSON-RPC on stdio. By hand:
`recall` shows what a query would deliver, `status` what is indexed, `demo`
runs a real daemon session in several languages, and `eval`, `bench` and
`delivery` print quality and speed figures.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.prompt import format_age
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS
from memory_recall.server.ranking.shortlist import build_shortlist
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
        "Default: ./.memory (project) and the user data dir (user).",
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


def cmd_recall(args: argparse.Namespace) -> int:
    started = time.perf_counter()
    catalog = MemoryCatalog(_roots(args))
    catalog.scan()
    indexed = time.perf_counter()
    spec = RANKERS[args.ranker]
    shortlist = build_shortlist(
        catalog.snapshot(),
        args.query,
        recent_tools=args.recent_tool or (),
        ranker=spec.rank,
        tokenizer=spec.tokenize,
    )
    done = time.perf_counter()
    print(f"query: {args.query!r}")
    print(f"tokens ({len(shortlist.tokens)}): {' '.join(shortlist.tokens) or '(none)'}")
    for label, scored in (("fast", shortlist.fast), ("fallback", shortlist.fallback)):
        print(f"\n{label} ({len(scored)}):")
        if not scored:
            print("  (nothing relevant)")
            continue
        rows = [
            [
                str(s.score),
                s.document.scope.value,
                s.document.type,
                format_age(s.document.mtime_ms),
                clip(s.document.title, 48),
                s.document.relative_path,
            ]
            for s in scored
        ]
        print(table(rows, ["score", "scope", "type", "age", "title", "path"]))
    print(
        f"\n{plural(len(catalog), 'document')} in {plural(len(catalog.roots), 'root')}, "
        f"{len(catalog.skipped)} skipped; index {1000 * (indexed - started):.1f} ms, "
        f"recall {1000 * (done - indexed):.2f} ms"
    )
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.evaluation import (
        evaluate_all,
        format_table,
        load_corpus,
        silence_sweep,
    )

    corpus = load_corpus(args.corpus)
    if args.silence_sweep:
        print(silence_sweep(corpus))
        return 0
    names = args.ranker or [DEFAULT_RANKER]
    reports = evaluate_all(corpus, names)
    if args.json:
        payload = reports[0].as_json() if len(reports) == 1 else [r.as_json() for r in reports]
        print(json.dumps(payload, ensure_ascii=False, indent=2))
    else:
        print(format_table(reports))
    return 0


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
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    from memory_recall.server.daemon.server import run_stdio

    ceiling = args.selector_ceiling_ms / 1000 if args.selector_ceiling_ms else None
    return run_stdio(selector_ceiling_s=ceiling, log_level=args.log_level)


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


def _ranker_help() -> str:
    return "; ".join(f"{name}: {spec.description}" for name, spec in RANKERS.items())


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

    recall = sub.add_parser("recall", help="one-shot recall, human-readable, with timings")
    recall.add_argument("query", help="what the user asked, in any language")
    _add_root_option(recall)
    recall.add_argument("--recent-tool", action="append", help="a recently used tool name")
    recall.add_argument(
        "--ranker", choices=sorted(RANKERS), default=DEFAULT_RANKER,
        help=f"default {DEFAULT_RANKER}. {_ranker_help()}",
    )  # fmt: skip
    recall.set_defaults(func=cmd_recall)

    ev = sub.add_parser("eval", help="evaluate rankers on a labelled corpus")
    ev.add_argument(
        "corpus", help="a labelled corpus (JSON: docs and cases), e.g. fixtures/eval/corpus.json"
    )
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    ev.add_argument(
        "--ranker", action="append", choices=sorted(RANKERS),
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

    bench = sub.add_parser(
        "bench",
        help="latency vs number of memories (prints figures; `bench --help` for options)",
        add_help=False,
    )
    bench.add_argument("options", nargs=argparse.REMAINDER)
    bench.set_defaults(func=cmd_bench)

    network_eval = sub.add_parser(
        "network-eval",
        help="the memory network's figures: multi-hop recall with and without it, "
        "suggestions, --bench for speed (`network-eval --help` for options)",
        add_help=False,
    )
    network_eval.add_argument("options", nargs=argparse.REMAINDER)
    network_eval.set_defaults(func=cmd_network_eval)

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

    status = sub.add_parser("status", help="roots, document counts and skipped files")
    _add_root_option(status)
    status.set_defaults(func=cmd_status)

    from memory_recall.server.cli_writes import add_commands

    add_commands(sub, _add_root_option, _roots, table=table, clip=clip)

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
    return parser


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
