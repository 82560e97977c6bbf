"""The organisation commands: `tree`, `context`, `consolidate [--dry-run]`, and the
developers' `retention-sim`, `messy-year` and `bench-organise` (`memory-recall dev`).

The user's commands open the memory core (`common.with_core`) and use its
organiser and dreamer, as `memory/tree`, `memory/context` and `memory/consolidate`
do; only the output is for people.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.cli.common import (
    add_root_option,
    add_workspace_option,
    undo_hint,
    with_core,
)
from memory_recall.server.core.core import MemoryCore
from memory_recall.server.core.writing import result_wire
from memory_recall.server.organise.categories import Tree
from memory_recall.server.organise.consolidate import ConsolidationPlan
from memory_recall.server.organise.context import DEFAULT_BUDGET_CHARS, Context
from memory_recall.server.organise.dream import Run
from memory_recall.server.organise.organiser import Organiser, OrganiseSettings
from memory_recall.server.organise.retention import DEFAULT_CAPACITY
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.errors import WriteError


def format_tree(tree: Tree, titles: dict[str, str] | None = None) -> str:
    """The tree as indented lines with counts; with `titles`, each member too."""
    lines = [f"{tree.total} memories"]

    def members(ids: tuple[str, ...], indent: str) -> None:
        if titles is not None:
            lines.extend(f"{indent}· {titles.get(m, m)}" for m in ids)

    for node in tree.categories:
        lines.append(f"{node.count:>5}  {node.label} ({node.slug})")
        members(node.members, " " * 9)
        for child in node.children:
            if child.count:
                lines.append(f"{child.count:>5}    {child.label} ({child.slug})")
                members(child.members, " " * 11)
    return "\n".join(lines)


def format_plan(plan: ConsolidationPlan, root: Path | str, *, limit: int = 10) -> str:
    """A consolidation plan for people: counts, then examples of each action."""

    def rel(path: str) -> str:
        return os.path.relpath(path, root)

    g = plan.gather
    merged_into = sum(1 for r in plan.rewrites if r.merged_from)
    lines = [
        f"consolidation of {plan.root}: {plan.before} memories, capacity {plan.capacity}",
        f"  gather: {g.pairs_judged} pairs judged ({g.set_aside} set aside: titles name"
        f" different things), {g.duplicates} duplicate and {g.updates} changed-fact verdicts",
        f"  merged: {len(plan.archived('merged'))} duplicates into {merged_into} memories",
        f"  superseded (newer wins): {len(plan.archived('superseded'))}",
        f"  covered by a protected memory: {len(plan.archived('covered'))}",
        f"  pruned over capacity: {len(plan.archived('capacity'))}",
        f"  after: {plan.after} memories",
        f"  reported only: {len(plan.notices)} ("
        + ", ".join(
            f"{kind} {sum(1 for n in plan.notices if n.kind == kind)}"
            for kind in ("stale", "protected", "possible", "over-capacity")
        )
        + ")",
        "  timings: " + ", ".join(f"{k} {v:.0f} ms" for k, v in g.elapsed_ms.items()),
    ]
    sections = (
        ("merges", [f"{rel(r.path)} ← {', '.join(rel(p) for p in r.merged_from)}"
                    f" (+{len(r.added_lines)} lines)" for r in plan.rewrites if r.merged_from]),
        ("archives", [f"{rel(x.path)}: {x.cause}: {x.reason}" for x in plan.archives]),
        ("reported", [f"{rel(n.path)}: {n.kind}: {n.reason}" for n in plan.notices]),
    )  # fmt: skip
    for title, items in sections:
        if items:
            shown = items if limit <= 0 else items[:limit]
            lines.append(f"  {title} ({len(shown)} of {len(items)}):")
            lines.extend(f"    {item}" for item in shown)
    return "\n".join(lines)


def plan_json(plan: ConsolidationPlan) -> dict[str, Any]:
    return {
        "root": plan.root,
        "capacity": plan.capacity,
        "before": plan.before,
        "after": plan.after,
        "rewrites": [vars(r) for r in plan.rewrites],
        "archives": [vars(a) for a in plan.archives],
        "notices": [vars(n) for n in plan.notices],
        "gather": vars(plan.gather),
    }


# -- commands -----------------------------------------------------------------------------


def _organise_settings(args: argparse.Namespace) -> dict[str, Any]:
    given: dict[str, Any] = {}
    if getattr(args, "capacity", None):
        given["organise"] = {"capacity": args.capacity}
    if getattr(args, "budget", None):
        given["context"] = {"budgetChars": args.budget}
    return given


def cmd_tree(args: argparse.Namespace) -> int:
    async def tree(core: MemoryCore) -> str:
        docs = (await core.session.view()).documents
        found = core.organise.organiser.tree(docs, args.scope)
        titles = {d.path: f"{d.title} ({d.relative_path})" for d in docs} if args.members else None
        return format_tree(found, titles)

    print(with_core(args, tree))
    return 0


def cmd_context(args: argparse.Namespace) -> int:
    async def context(core: MemoryCore) -> Context:
        docs = (await core.session.view()).documents
        return core.organise.organiser.context(docs, args.budget)

    built = with_core(args, context, **_organise_settings(args))
    print(built.prompt or "(no memory is marked always: true)")
    print(f"{built.used_chars} of {built.budget_chars} characters; {len(built.docs)} memories")
    for omitted in built.omitted:
        print(f"did not fit: {omitted.doc.path}: {omitted.reason}")
    return 0


def cmd_consolidate(args: argparse.Namespace) -> int:
    async def plans(core: MemoryCore) -> list[ConsolidationPlan]:
        docs = (await core.session.view()).documents
        return core.organise.organiser.plans(docs, args.scope)

    async def dream(core: MemoryCore) -> list[Run]:
        # The daemon's own dreamer, writer and journal (same lock and rules as
        # memory/consolidate).
        assert core.organise.dreamer is not None
        return await core.organise.dreamer.run_all_async(args.scope)

    if args.dry_run:
        found = with_core(args, plans, **_organise_settings(args))
        if args.json:
            print(json.dumps([plan_json(p) for p in found], ensure_ascii=False, indent=2))
            return 0
        print("dry run: nothing is changed")
        for plan in found:
            print(format_plan(plan, plan.root, limit=args.limit))
        return 0
    try:
        runs = with_core(args, dream, **_organise_settings(args))
    except WriteError as error:
        print(f"memory-recall: {error}", file=sys.stderr)
        return 1
    if args.json:
        payload = [
            {**plan_json(r.plan), "result": result_wire(r.result).wire() if r.result else None}
            for r in runs
        ]
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    for run in runs:
        print(format_plan(run.plan, run.plan.root, limit=args.limit))
        for report in run.result.indexes if run.result else []:
            omitted = (
                f", {report.omitted_count} memories without a line" if report.omitted_count else ""
            )
            print(f"  MEMORY.md: {report.lines} lines (cap {report.cap}){omitted}")
        if run.operation:
            print(f"  operation {run.operation}  (undo: {undo_hint(run.operation, args.root)})")
    return 0


def cmd_retention_sim(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.retention_sim import as_json, format_report, run

    results = run(capacity=args.capacity, seed=args.seed)
    print(as_json(results) if args.json else format_report(results, args.capacity))
    return 0


def cmd_messy_year(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.messy_year import check, generate

    year = generate(args.directory, memories=args.memories, seed=args.seed)
    print(f"wrote {year.labels['memories']} memories to {year.root}, labels {year.labels_path}")
    if args.check:
        catalog = MemoryCatalog([MemoryRoot.of(year.root, "project")])
        catalog.scan()
        settings = OrganiseSettings(capacity=year.labels["capacity"])
        organiser = Organiser(catalog.roots, workspace=str(year.workspace), settings=settings)
        (plan,) = organiser.plans(catalog.snapshot().documents)
        print(format_plan(plan, year.root, limit=5))
        agreement = check(plan, year.labels, year.root)
        print("against the labels:")
        print("\n".join(agreement.lines()))
        return 0 if agreement.perfect else 1
    return 0


def cmd_bench_organise(args: argparse.Namespace) -> int:
    from memory_recall.server.dev.organise_bench import main as bench

    return bench(args)


def add_commands(sub: Any) -> None:
    """The user's organisation commands, on the CLI's subparsers."""

    def scope_option(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--scope", choices=["project", "user", "team"], help="only this scope")

    tree = sub.add_parser("tree", help="the topic tree: categories, counts, members")
    add_root_option(tree)
    add_workspace_option(tree)
    scope_option(tree)
    tree.add_argument("--members", action="store_true", help="list each category's memories")
    tree.set_defaults(func=cmd_tree)

    context = sub.add_parser("context", help="the always-loaded memories (always: true)")
    add_root_option(context)
    add_workspace_option(context)
    context.add_argument("--budget", type=int, help=f"characters (default {DEFAULT_BUDGET_CHARS})")
    context.set_defaults(func=cmd_context)

    consolidate = sub.add_parser(
        "consolidate",
        help="merge duplicates, newer wins, prune to capacity, rebuild MEMORY.md (undoable)",
    )
    add_root_option(consolidate)
    add_workspace_option(consolidate)
    scope_option(consolidate)
    consolidate.add_argument(
        "--dry-run", action="store_true", help="print the plan and change nothing"
    )
    consolidate.add_argument(
        "--capacity", type=int, help=f"memories per root (default {DEFAULT_CAPACITY})"
    )
    consolidate.add_argument("--limit", type=int, default=10, help="items shown per list (0: all)")
    consolidate.add_argument("--json", action="store_true", help="print the plans as JSON")
    consolidate.set_defaults(func=cmd_consolidate)


def add_dev_commands(sub: Any) -> None:
    """The developers' organisation tools (`memory-recall dev …`)."""
    sim = sub.add_parser(
        "retention-sim", help="a synthetic year of use: what retention keeps and archives"
    )
    sim.add_argument("--capacity", type=int, default=DEFAULT_CAPACITY, help="memories kept")
    sim.add_argument("--seed", type=int, default=7)
    sim.add_argument("--json", action="store_true")
    sim.set_defaults(func=cmd_retention_sim)

    messy = sub.add_parser(
        "messy-year", help="write the messy-year fixture (duplicates, corrections, stale, pinned)"
    )
    messy.add_argument("directory", help="an empty or new folder")
    messy.add_argument("--memories", type=int, default=600, help="default 600 (capacity: half)")
    messy.add_argument("--seed", type=int, default=17)
    messy.add_argument(
        "--check", action="store_true", help="plan a consolidation and compare it with the labels"
    )
    messy.set_defaults(func=cmd_messy_year)

    bench = sub.add_parser(
        "bench-organise", help="benchmark: consolidation plans and staleness checks (figures)"
    )
    bench.add_argument("--docs", type=int, default=10_000, help="memories for the full plan")
    bench.add_argument("--dry-docs", type=int, default=1_000, help="memories for the dry run")
    bench.add_argument("--recalls", type=int, default=500, help="recalls timed for staleness")
    bench.add_argument("--repeats", type=int, default=3)
    bench.add_argument("--json", action="store_true")
    bench.set_defaults(func=cmd_bench_organise)
