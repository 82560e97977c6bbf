"""The `memory-recall` command: serve | recall | eval | bench | status."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Sequence

from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.prompt import format_age
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS
from memory_recall.server.ranking.shortlist import build_shortlist
from memory_recall.server.roots import MemoryRoot, default_roots, parse_root_arg


def _roots(args: argparse.Namespace) -> list[MemoryRoot]:
    if args.root:
        return [parse_root_arg(r) for r in args.root]
    return default_roots(os.getcwd())


def _add_root_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--root",
        action="append",
        metavar="DIR[:scope]",
        help="a memory root (scope project or user, default project); repeatable. "
        "Default: ./.memory (project) and the user data dir (user).",
    )


def _table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    line = "  ".join(h.ljust(w) for h, w in zip(headers, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


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
                s.document.title[:48],
                s.document.relative_path,
            ]
            for s in scored
        ]
        print(_table(rows, ["score", "scope", "type", "age", "title", "path"]))
    print(
        f"\n{len(catalog)} documents in {len(catalog.roots)} roots, "
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
        print(f"{root.scope.value:8} {count:6} documents  {root.path}{exists}")
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


def cmd_demo(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.demo import main as demo

    return demo(args.directory, args.model_delay_ms)


def cmd_delivery(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.delivery import LATENCIES_MS
    from memory_recall.server.dev.delivery import main as delivery

    return delivery(args.corpus, args.latency or LATENCIES_MS, args.json)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="memory-recall", description=__doc__)
    sub = parser.add_subparsers(dest="command")

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
    recall.add_argument("query")
    _add_root_option(recall)
    recall.add_argument("--recent-tool", action="append", help="a recently used tool name")
    recall.add_argument("--ranker", choices=sorted(RANKERS), default=DEFAULT_RANKER)
    recall.set_defaults(func=cmd_recall)

    ev = sub.add_parser("eval", help="evaluate rankers on a labelled corpus")
    ev.add_argument("corpus")
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    ev.add_argument(
        "--ranker", action="append", choices=sorted(RANKERS),
        help=f"repeat to compare side by side (default {DEFAULT_RANKER})",
    )  # fmt: skip
    ev.add_argument(
        "--silence-sweep", action="store_true",
        help="print the default ranker's silence threshold against Recall@5 and silence",
    )  # fmt: skip
    ev.set_defaults(func=cmd_eval)

    demo = sub.add_parser("demo", help="a real stdio session against a memory tree")
    demo.add_argument("directory", nargs="?", default="fixtures/demo-memory")
    demo.add_argument("--model-delay-ms", type=float, default=300)
    demo.set_defaults(func=cmd_demo)

    bench = sub.add_parser(
        "bench",
        help="latency vs number of memories (prints figures; `bench --help` for options)",
        add_help=False,
    )
    bench.add_argument("options", nargs=argparse.REMAINDER)
    bench.set_defaults(func=cmd_bench)

    delivery = sub.add_parser(
        "delivery", help="benchmark: what a host waiting 100 ms gets, per model latency"
    )
    delivery.add_argument("corpus", nargs="?", default="fixtures/eval/corpus.json")
    delivery.add_argument("--latency", type=float, action="append", help="ms; repeatable")
    delivery.add_argument("--json", action="store_true")
    delivery.set_defaults(func=cmd_delivery)

    status = sub.add_parser("status", help="roots, document counts and skipped files")
    _add_root_option(status)
    status.set_defaults(func=cmd_status)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["bench"]:
        return run_bench(argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):  # editors start us with no arguments
        args = parser.parse_args(["serve"])
    return int(args.func(args))


if __name__ == "__main__":
    sys.exit(main())
