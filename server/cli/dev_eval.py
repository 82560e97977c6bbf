"""`memory-recall dev eval`: the rankers and the fast phase on the labelled corpora
(Recall@5, top-1, silence, the fast phase's precision), a baseline's check, the silence
sweep, prompts wrapped in agent instructions; labelled category sets get the topic
tree's accuracy instead."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from memory_recall.server.cli.common import existing
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS, accepted_names


def _ranker_help() -> str:
    names = "; ".join(f"{name}: {spec.description}" for name, spec in RANKERS.items())
    return f"{names}. Old names: default = bm25f, indexed and reference = spec"


def cmd_eval(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.eval_tables import format_fast_summary, format_table
    from memory_recall.server.dev.evaluation import (
        compare_to_baseline,
        evaluate_all,
        evaluate_corpora,
        load_corpus,
        silence_sweep,
    )

    for path in args.corpus:
        existing(path, "corpus")
    kinds = {path: _kind(path) for path in args.corpus}
    for path, kind in kinds.items():
        if kind not in ("corpus", "categories", "baseline", "category baseline"):
            print(f"memory-recall: {path}: {kind}", file=sys.stderr)
            return 2
    # `fixtures/categories/*.json` also matches their baseline, which the tests read.
    for path in [p for p in args.corpus if kinds[p] == "category baseline"]:
        print(f"memory-recall: skipped {path}: the category sets' baseline "
              "(tests/unit/test_categories.py compares with it)", file=sys.stderr)  # fmt: skip
        args.corpus.remove(path)
    if not args.corpus:
        return 0
    categories = [path for path in args.corpus if kinds[path] == "categories"]
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
    for path in [p for p in args.corpus if kinds[p] == "baseline"]:
        print(f"memory-recall: skipped {path}: a baseline, not a corpus (--check takes it)",
              file=sys.stderr)  # fmt: skip
        args.corpus.remove(path)
    if not args.corpus:
        return 2
    names = args.ranker or [DEFAULT_RANKER]
    if args.agent_wrapped and (args.check or args.silence_sweep or args.json):
        print("memory-recall: --agent-wrapped prints the tables only", file=sys.stderr)
        return 2
    if args.silence_sweep:
        for path in args.corpus:
            print(f"{path}\n{silence_sweep(load_corpus(path))}")
        return 0
    if args.check:
        baseline = json.loads(existing(args.check, "baseline").read_text(encoding="utf-8"))
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
    by_ranker: dict[str, list[tuple[str, Any]]] = {name: [] for name in names}
    for path in args.corpus:
        corpus = load_corpus(path)
        if args.agent_wrapped:
            from memory_recall.server.dev.wrapped import agent_wrapped

            corpus = agent_wrapped(corpus)
        reports = evaluate_all(corpus, names)
        for evaluated in reports:
            by_ranker[evaluated.ranker].append((Path(path).stem, evaluated))
        if args.json:
            payload = [r.as_json() for r in reports]
            print(json.dumps(payload[0] if len(payload) == 1 else payload, ensure_ascii=False))
        else:
            if len(args.corpus) > 1:
                print(f"\n{path}")
            print(format_table(reports))
    if not args.json and len(args.corpus) > 1:
        for name, named in by_ranker.items():
            if any(evaluated.tallies["all"].delivered for _, evaluated in named):
                print(f"\n{name}: " + format_fast_summary(named).lstrip("\n"))
    return 0


def _kind(path: str) -> str:
    """What a JSON file given to `eval` holds: a ranking corpus (`docs` and `cases`), a
    labelled category set (`{"memories": [...]}`), a figures baseline (`{"corpora":
    {...}}`, what --check reads), or else why it is none of them."""
    try:
        data = json.loads(Path(path).read_text("utf-8"))
    except (OSError, ValueError) as exc:
        return f"not readable as JSON ({exc})"
    if not isinstance(data, dict):
        return "not a JSON object"
    if "docs" in data and "cases" in data:
        return "corpus"
    if "memories" in data:
        return "categories"
    if "corpora" in data:
        return "baseline"
    if data and all(k == "about" or k.endswith(".json") for k in data):
        return "category baseline"  # the category sets' figures, by set file
    return "neither a ranking corpus (docs and cases), a category set (memories) nor a baseline"


def add_eval_command(sub: Any) -> None:
    """The `eval` command on `memory-recall dev`'s subparsers."""
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
    ev.add_argument(
        "--agent-wrapped", action="store_true",
        help="ask every question with each of a few agent instructions around it "
        "(\"… Look at the files first, then answer.\"): the fast phase on prompts as typed",
    )  # fmt: skip
    ev.set_defaults(func=cmd_eval)
