"""`memory-recall dev …`: the developers' commands — evaluations, benchmarks, simulations.

They read `server/dev/` (and the repository's fixtures), which the runtime wheel does
not ship: from an installed package they say how to get a source checkout. Each
command's module is imported only when it runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence

from memory_recall.server.cli.common import UsageError, existing
from memory_recall.server.cli.dev_eval import add_eval_command
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS

SOURCE_ONLY = (
    "memory-recall dev: the developer commands need a source checkout "
    "(git clone …; pip install -e '.[test]'): {missing}"
)


def run_bench(argv: Sequence[str]) -> int:
    # The benchmark owns its options; importing it only here keeps `serve` free of it.
    from memory_recall.server.dev import bench, load_bench

    parser = argparse.ArgumentParser(
        prog="memory-recall dev bench", description="latency vs number of memories (prints figures)"
    )
    bench.add_arguments(parser)
    load_bench.add_arguments(parser)  # requests first, writes in milliseconds (issue 33)
    args = parser.parse_args(argv)
    status = load_bench.main(args)
    if status or args.load_only:
        return status
    return bench.main(args)


def run_network_eval(argv: Sequence[str]) -> int:
    # The memory network's figures (quality, and with --bench speed) own their options.
    from memory_recall.server.dev import network_bench, network_eval

    if "--bench" in argv:
        parser = argparse.ArgumentParser(
            prog="memory-recall dev network-eval --bench",
            description="the memory network at size: build, activation, update (prints figures)",
        )
        parser.add_argument("--bench", action="store_true", help="run the benchmark")
        network_bench.add_arguments(parser)
        return network_bench.main(parser.parse_args(argv))
    parser = argparse.ArgumentParser(
        prog="memory-recall dev network-eval",
        description="the memory network on the labelled corpora, with and without it, and the "
        "suggestion matcher's precision and recall; --bench for its speed at size",
    )
    network_eval.add_arguments(parser)
    parser.add_argument(
        "--bench", action="store_true", help="benchmark instead (see `network-eval --bench -h`)"
    )
    return network_eval.main(parser.parse_args(argv))


def run_semantic(command: str, argv: Sequence[str]) -> int:
    """`semantic-eval` / `semantic-bench`: the semantic channel measured (issue 20); their
    own options (`-h`). Imported only here: they need numpy, and the real encoder needs the
    eval-semantic extra."""
    if command == "semantic-eval":
        from memory_recall.server.dev.semantic_eval import main as semantic_main
    else:
        from memory_recall.server.dev.semantic_bench import main as semantic_main
    return semantic_main(list(argv))


def run_calibrate(argv: Sequence[str]) -> int:
    # The fast phase's confidence, fitted on the labelled corpora (docs/ranking.md).
    from memory_recall.server.dev import calibration

    parser = argparse.ArgumentParser(
        prog="memory-recall dev calibrate",
        description="fit the fast phase's confidence on the tuning split of labelled corpora",
    )
    calibration.add_arguments(parser)
    return calibration.main(parser.parse_args(argv))


def run_search_bench(argv: Sequence[str]) -> int:
    from memory_recall.server.dev import search_bench

    parser = argparse.ArgumentParser(
        prog="memory-recall dev search-bench",
        description="memory/search per mode and the suggestion matcher at size (prints figures)",
    )
    search_bench.add_arguments(parser)
    return search_bench.main(parser.parse_args(argv))


def cmd_delivery(args: argparse.Namespace) -> int:
    from memory_recall.server.cli.bundled import DELIVERY_CORPUS, bundled
    from memory_recall.server.dev.delivery import LATENCIES_MS
    from memory_recall.server.dev.delivery import main as delivery

    corpus = existing(args.corpus, "corpus") if args.corpus else bundled(DELIVERY_CORPUS)
    return delivery(str(corpus), args.latency or LATENCIES_MS, args.json)


def cmd_eval_project(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.project_eval import evaluate, format_report

    directory = existing(args.fixtures, "folder")
    if not (directory / "expected.json").is_file():
        raise UsageError(f"{directory} has no expected.json (the labels)")
    report = evaluate(directory)
    print(json.dumps(report.as_json(), indent=2) if args.json else format_report(report))
    return 0


def cmd_eval_extract(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.extract_eval import run

    corpus = existing(args.corpus, "corpus")
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


def cmd_bench_write(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.write_bench import main as write_bench

    return write_bench(args)


def cmd_eval_gate(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.gate_eval import gate_main

    return gate_main(as_json=args.json)


def run_eval_facts(argv: Sequence[str]) -> int:
    """`eval-facts`: the write side's judgement per tier and language (docs/writing.md)."""
    from memory_recall.server.dev.fact_eval import main as fact_eval

    return fact_eval(list(argv))


def run_sweep_facts(argv: Sequence[str]) -> int:
    """`sweep-facts`: the tuning pairs judged again as real notes vary (docs/writing.md)."""
    from memory_recall.server.dev.fact_sweeps import main as fact_sweeps

    return fact_sweeps(list(argv))


def cmd_eval_write(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.write_eval import main as write_eval

    return write_eval(as_json=args.json)


# Commands that parse their own options (`dev <command> --help`): the rest of the line.
PASSTHROUGH: dict[str, tuple[str, Callable[[Sequence[str]], int]]] = {
    "bench": ("latency vs number of memories (prints figures)", run_bench),
    "network-eval": (
        "the memory network's figures: multi-hop recall with and without it, suggestions, "
        "--bench for speed",
        run_network_eval,
    ),
    "semantic-eval": (
        "recall with and without the semantic channel, through a real local encoder "
        "(`make eval-semantic` installs it)",
        lambda argv: run_semantic("semantic-eval", argv),
    ),
    "semantic-bench": (
        "the fast phase with the semantic channel on, and embedding throughput (docs/s)",
        lambda argv: run_semantic("semantic-bench", argv),
    ),
    "hook-bench": (
        "a host's hook at 10,000 memories: command and HTTP hooks beside the daemon's round trip",
        lambda argv: run_hook_bench(argv),
    ),
    "startup-bench": (
        "how soon `serve` and `mcp` answer a host that just started them, opening on and off",
        lambda argv: run_startup_bench(argv),
    ),
    "search-bench": (
        "memory/search per mode beside a recall's ranking, the suggestion index and matcher",
        run_search_bench,
    ),
    "eval-facts": (
        "the write side's judgement per tier (rules, + vectors, + a scripted model) and "
        "language: losses, conflicts right, partial updates, newest-fact-only on histories",
        run_eval_facts,
    ),
    "sweep-facts": (
        "the tuning pairs judged again as real notes vary (one generic title, the other "
        "order, an unrelated statement, a 'Note:' label, lower case, 'now'): the facts "
        "each variant loses",
        run_sweep_facts,
    ),
    "sync-bench": (
        "sync through git at 10,000 memories: first push and pull, one change, 100 changes, "
        "beside plain git",
        lambda argv: run_sync_bench(argv),
    ),
    "calibrate": (
        "fit the fast phase's confidence on the labelled corpora's tuning split (--write)",
        run_calibrate,
    ),
}


def run_startup_bench(argv: Sequence[str]) -> int:
    from memory_recall.server.dev.startup_bench import main as startup_bench

    return startup_bench(argv)


def run_sync_bench(argv: Sequence[str]) -> int:
    from memory_recall.server.dev.sync_bench import main as sync_bench

    return sync_bench(list(argv))


def run_hook_bench(argv: Sequence[str]) -> int:
    from memory_recall.server.dev.hook_bench import main as hook_bench

    return hook_bench(argv)


def run(argv: Sequence[str]) -> int:
    """`memory-recall dev ARGS`."""
    argv = list(argv)
    try:
        import memory_recall.server.dev  # noqa: F401  (not in the runtime wheel)
    except ImportError as exc:
        print(SOURCE_ONLY.format(missing=exc), file=sys.stderr)
        return 2
    if argv[:1] and argv[0] in PASSTHROUGH:
        return PASSTHROUGH[argv[0]][1](argv[1:])
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args))
    except UsageError as error:
        parser.exit(2, f"memory-recall dev: error: {error}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="memory-recall dev",
        description="Evaluations, benchmarks and simulations, for the people building "
        "memory-recall. Figures are printed, never asserted.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    add_eval_command(sub)

    for name, (help_text, _run) in PASSTHROUGH.items():
        sub.add_parser(name, help=f"{help_text} (`dev {name} --help` for options)")

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
        "eval-gate", help="the gate's secret and injection figures, per class and per language"
    )
    evg.add_argument("--json", action="store_true", help="print one JSON object")
    evg.set_defaults(func=cmd_eval_gate)
    from memory_recall.server.cli.organise import add_dev_commands

    add_dev_commands(sub)
    return parser


def recall_over_corpus(args: argparse.Namespace) -> int:
    """`memory-recall recall QUERY --corpus CORPUS.json`: what the daemon would send over a
    labelled corpus (its documents and their network) instead of the configured roots."""
    from memory_recall.server.cli.show import print_phases
    from memory_recall.server.dev.network_eval import load_network_corpus
    from memory_recall.server.recall.explain import ExplainRequest, explain
    from memory_recall.server.recall.explain_text import format_explanation
    from memory_recall.server.recall.network import FixedNetwork
    from memory_recall.server.recall.service import RecallRequest, lexical_phases

    spec = RANKERS[args.ranker or DEFAULT_RANKER]
    existing(args.corpus, "corpus")
    corpus, network = load_network_corpus(args.corpus)
    snapshot = corpus.snapshot
    fixed = None if args.no_network else FixedNetwork.of(network, snapshot.documents)
    recent = tuple(args.recent_tool or ())
    if args.explain:
        explained = [
            explain(
                snapshot,
                ExplainRequest(path, args.query, recent_tools=recent, with_selector=True),
                spec,
                network=fixed,
            )
            for path in args.explain
        ]
        if args.json:
            print(json.dumps([e.wire() for e in explained], ensure_ascii=False, indent=2))
        else:
            print("\n\n".join(format_explanation(e) for e in explained))
        return 0 if all(e.found for e in explained) else 1
    fast, refined = lexical_phases(
        snapshot, RecallRequest("cli", args.query, recent_tools=recent), spec, fixed
    )
    if args.json:
        phases = {"fast": fast.wire() if fast else None, "refined": refined.wire()}
        print(json.dumps(phases, ensure_ascii=False, indent=2))
        return 0
    print_phases(args.query, spec.name, fast, refined)
    print(f"{len(snapshot)} documents of {args.corpus}")
    return 0
