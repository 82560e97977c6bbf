"""The organisation side of a session: its services, and their results on the wire.

`OrganiseSide` holds the session's `Organiser` (tree, context, staleness, plans),
its `Dreamer` (consolidation through the session's writer) and the automatic
consolidation; the functions below turn their plain results into protocol models.
The organise package never sees the wire; this module is where it meets it.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from memory_recall.protocol.messages import (
    ConsolidateResult,
    ConsolidationArchive,
    ConsolidationMerge,
    ConsolidationNotice,
    ConsolidationReport,
    ConsolidationSupersede,
    ContextDoc,
    ContextOmission,
    ContextResult,
    InitializationOptions,
    TreeMember,
    TreeNode,
    TreeResult,
)
from memory_recall.server.core.writing import WriteSide, index_wire, result_wire
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.models.complete import Completer
from memory_recall.server.organise.categories import Tree
from memory_recall.server.organise.categories import TreeNode as Node
from memory_recall.server.organise.context import Context, section
from memory_recall.server.organise.dream import AutoConsolidation, Dreamer, Run
from memory_recall.server.organise.organiser import (
    Organiser,
    OrganiseSettings,
    UsageSource,
    no_usage,
)
from memory_recall.server.organise.prose import ProseMerger
from memory_recall.server.organise.staleness import StalenessChecker
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.requests import WriteResult as StoreResult

log = logging.getLogger("memory_recall")


def organise_settings(options: InitializationOptions) -> OrganiseSettings:
    """`organise.capacity` and `context.budgetChars`, else their defaults."""
    defaults = OrganiseSettings()
    return OrganiseSettings(
        capacity=options.organise.capacity or defaults.capacity,
        budget_chars=options.context.budget_chars or defaults.budget_chars,
    )


class OrganiseSide:
    """The session's organisation services; `write` is None until the write side exists."""

    def __init__(
        self,
        roots: Sequence[MemoryRoot],
        workspace: str | None,
        options: InitializationOptions | None = None,
        write: WriteSide | None = None,
        completer: Completer | None = None,
        deadline_s: float = 0.0,
        *,
        usage: UsageSource = no_usage,
    ) -> None:
        options = options or InitializationOptions()
        self.staleness = StalenessChecker(workspace)
        self.organiser = Organiser(
            roots, workspace=workspace, settings=organise_settings(options),
            staleness=self.staleness, usage=usage,
        )  # fmt: skip
        # The model rewords merges when one is configured (`organise.modelMerge`).
        prose = (
            ProseMerger(completer, deadline_s)
            if completer is not None and options.organise.model_merge
            else None
        )
        self.dreamer = (
            Dreamer(write.writer, self.organiser, prose=prose) if write is not None else None
        )
        self.auto = (
            AutoConsolidation(self.dreamer)
            if self.dreamer is not None and options.organise.auto_consolidate
            else None
        )
        self.last_activity = time.monotonic()

    def touch(self) -> None:
        """A request arrived: the host is not idle."""
        self.last_activity = time.monotonic()

    async def auto_tick(self) -> list[Run]:
        """One check for automatic consolidation; what ran is logged (and undoable)."""
        if self.auto is None:
            return []
        runs = await self.auto.tick(self.last_activity)
        for run in runs:
            log.warning(
                "memory-recall consolidated %s on its own: %s (undo: memory/undo %s)",
                run.plan.root,
                _counts(run),
                run.operation,
            )
        return runs


def _counts(run: Run) -> str:
    plan = run.plan
    return (
        f"{len(plan.archived('merged'))} merged, {len(plan.archived('superseded'))} superseded,"
        f" {len(plan.archived('capacity'))} archived over capacity, {plan.after} memories left"
    )


# -- on the wire --------------------------------------------------------------------------------


def tree_wire(tree: Tree, docs: Sequence[MemoryDocument], organiser: Organiser) -> dict[str, Any]:
    by_path = {d.path: d for d in docs}

    def node(n: Node) -> TreeNode:
        members = [
            TreeMember(
                path=path,
                relative_path=by_path[path].relative_path,
                scope=by_path[path].scope.wire,
                title=by_path[path].title,
                source=organiser.topics.place(by_path[path]).source,
            )
            for path in n.members
        ]
        children = [node(c) for c in n.children]
        return TreeNode(
            slug=n.slug, label=n.label, count=n.count, members=members, children=children
        )

    return TreeResult(categories=[node(n) for n in tree.categories], total=tree.total).wire()


def context_wire(built: Context) -> dict[str, Any]:
    def doc(d: MemoryDocument) -> dict[str, Any]:
        return dict(
            path=d.path, relative_path=d.relative_path, scope=d.scope.wire, type=d.type,
            title=d.title, chars=len(section(d)),
        )  # fmt: skip

    return ContextResult(
        prompt=built.prompt,
        docs=[ContextDoc(**doc(d)) for d in built.docs],
        truncated=[ContextOmission(**doc(o.doc), reason=o.reason) for o in built.omitted],
        budget_chars=built.budget_chars,
        used_chars=built.used_chars,
    ).wire()


def report_wire(run: Run, root: MemoryRoot) -> ConsolidationReport:
    plan = run.plan
    return ConsolidationReport(
        root=plan.root,
        scope=root.scope.wire,
        capacity=plan.capacity,
        before=plan.before,
        after=plan.after,
        operation=run.operation,
        merges=[
            ConsolidationMerge(
                into=r.path,
                merged_from=list(r.merged_from),
                added_lines=len(r.added_lines),
                merged_by="model" if r.merged_by == "model" else "rules",
                note=r.merge_note or None,
            )
            for r in plan.rewrites
            if r.merged_from
        ],
        supersessions=[
            ConsolidationSupersede(path=r.path, supersedes=list(r.supersedes))
            for r in plan.rewrites
            if r.supersedes
        ],
        archived=[
            ConsolidationArchive(
                path=a.path, cause=a.cause, reason=a.reason, into=a.into, retention=a.retention
            )
            for a in plan.archives
        ],
        notices=[
            ConsolidationNotice(path=n.path, kind=n.kind, reason=n.reason) for n in plan.notices
        ],
        pairs_judged=plan.gather.pairs_judged,
        elapsed_ms=plan.gather.elapsed_ms,
    )


def consolidate_wire(
    runs: Sequence[Run], roots: Sequence[MemoryRoot], dry_run: bool
) -> dict[str, Any]:
    merged = StoreResult()
    for run in runs:
        if run.result is not None:
            merged.operations += run.result.operations
            merged.skipped += run.result.skipped
            merged.indexes += run.result.indexes
    written = result_wire(merged)
    return ConsolidateResult(
        dry_run=dry_run,
        reports=[report_wire(run, roots[run.index]) for run in runs],
        operations=written.operations,
        skipped=written.skipped,
        indexes=[index_wire(i) for i in merged.indexes],
    ).wire()
