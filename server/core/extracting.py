"""`memory/extract` (docs/extraction.md): a session, accepted code or the workspace, into memories.

Model triggers (`sessionEnd`, `codeAccepted`, `explicit`) run the extraction
pipeline (server/extract/pipeline.py) with the session's model, then hand
every item to the writer exactly as `memory/remember` does, with origin
`extract`: the quality gate (secrets, injections never forced, size,
ephemeral), conflict detection, the atomic journaled write. `projectInit`
reads the workspace without a model and creates, or updates in place, the one
"Project stack and commands" memory of the project root.

`apply: false` answers the same decisions with action `proposed` and writes
nothing; extraction into team scope is always a proposal (docs/writing.md). Without a
model, the model triggers answer -32803 "no model configured for extraction".
A model that fails (deadline, HTTP error, an answer that is not the schema) is
recorded in the result's `failure` and in `memory/status`; nothing is written.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_recall.protocol.messages import (
    ExtractCounters,
    ExtractModelStatus,
    ExtractParams,
    ExtractResult,
    ExtractTranscriptStatus,
    WriteSkipped,
)
from memory_recall.server.core.session import CatalogSession
from memory_recall.server.core.writing import WriteSide, result_wire
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.extract.parse import ExtractedItem
from memory_recall.server.extract.pipeline import (
    MODEL_TRIGGERS,
    NO_MODEL_MESSAGE,
    ExtractionInput,
    run_extraction,
)
from memory_recall.server.extract.project.reader import read_project
from memory_recall.server.extract.project.render import TITLE, ProjectMemory, render
from memory_recall.server.extract.transcript import ExistingMemory, Turn
from memory_recall.server.models.complete import Completer
from memory_recall.server.roots import Scope
from memory_recall.server.store.conflicts import MemoryText, judge, same_title
from memory_recall.server.store.errors import WriteError, WriteFailed
from memory_recall.server.store.gate import MemoryDraft, check
from memory_recall.server.store.secrets import redact
from memory_recall.server.store.writer import RememberRequest, UpdateRequest


@dataclass
class ExtractionService:
    """The session's extraction: its model (or none), deadline, workspace and counters."""

    completer: Completer | None
    deadline_s: float
    workspace: str | None
    counters: ExtractCounters = field(default_factory=ExtractCounters)

    @property
    def model_kind(self) -> str:
        return self.completer.kind if self.completer else "none"

    async def extract(
        self, params: ExtractParams, write: WriteSide, session: CatalogSession
    ) -> dict[str, Any]:
        """One `memory/extract` (module docstring)."""
        self.counters.calls += 1
        if params.trigger in MODEL_TRIGGERS and self.completer is None:
            self.counters.refused += 1
            raise WriteFailed(NO_MODEL_MESSAGE)
        await session.ready.wait()
        scope = params.scope or "project"
        root_index = _root_index(session, scope)
        if root_index is None:
            raise WriteFailed(f"no {scope} memory root is configured")
        apply = params.apply and scope != Scope.TEAM.value
        try:
            if params.trigger == "projectInit":
                result = await self._project_init(params, write, session, root_index, apply)
            else:
                result = await self._with_model(params, write, session, root_index, apply)
        except WriteError:
            self.counters.failed += 1
            raise
        self.counters.completed += 1
        self.counters.written += sum(o.action in {"created", "updated"} for o in result.operations)
        self.counters.skipped += len(result.skipped)
        return result.wire()

    # -- projectInit ----------------------------------------------------------------------

    async def _project_init(
        self,
        params: ExtractParams,
        write: WriteSide,
        session: CatalogSession,
        root_index: int,
        apply: bool,
    ) -> ExtractResult:
        if not self.workspace:
            raise WriteFailed(
                "projectInit needs a workspace folder (initialize's workspaceFolders or rootUri)"
            )
        report = await asyncio.to_thread(read_project, self.workspace)
        memory = render(report)
        docs = [d for d in session.catalog.snapshot().documents if d.root_index == root_index]
        kind, request = project_memory_request(memory, docs, params.scope or "project", apply)
        stored = result_wire(await write.writer.run_async(kind, request))
        skipped = list(stored.skipped) + [
            WriteSkipped(title=p.path, reason="unreadable", message=f"{p.path}: {p.reason}")
            for p in report.problems
        ]
        return ExtractResult(
            operations=stored.operations,
            skipped=skipped,
            indexes=stored.indexes,
            failure=None,
            model=None,
            transcript=None,
        )

    # -- with a model ---------------------------------------------------------------------

    async def _with_model(
        self,
        params: ExtractParams,
        write: WriteSide,
        session: CatalogSession,
        root_index: int,
        apply: bool,
    ) -> ExtractResult:
        assert self.completer is not None
        docs = [d for d in session.catalog.snapshot().documents if d.root_index == root_index]
        existing = [
            ExistingMemory(d.relative_path, d.type, d.title, d.description, d.mtime_ms)
            for d in docs
        ]
        request = ExtractionInput(
            trigger=params.trigger,
            transcript=[Turn(t.role, t.content) for t in params.transcript or []],
            files=[(f.path, f.content) for f in params.files or []],
            diff=params.diff,
            scope=params.scope or "project",
        )
        outcome = await run_extraction(request, existing, self.completer, self.deadline_s)
        summary = outcome.summary()
        result = ExtractResult(
            operations=[],
            skipped=[
                WriteSkipped(title=s.title, reason=s.reason, message=s.message)
                for s in outcome.skipped
            ],
            indexes=[],
            failure=outcome.failure,
            model=ExtractModelStatus(kind=self.model_kind, elapsed_ms=outcome.model_ms),  # type: ignore[arg-type]
            transcript=ExtractTranscriptStatus(**summary),
        )
        if outcome.failure is not None:
            self.counters.model_failures += 1
            return result
        by_relative = {d.relative_path: d for d in docs}
        for item in outcome.items:
            kind, request_ = self._write_request(item, params, by_relative, apply)
            if kind == "skip":
                assert isinstance(request_, WriteSkipped)
                result.skipped.append(request_)
                continue
            stored = result_wire(await write.writer.run_async(kind, request_))
            result.operations.extend(stored.operations)
            result.skipped.extend(stored.skipped)
            result.indexes = stored.indexes or result.indexes
        return result

    @staticmethod
    def _write_request(
        item: ExtractedItem, params: ExtractParams, docs: dict[str, Any], apply: bool
    ) -> tuple[str, object]:
        """The writer request for one item: remember it, or update the memory it names.

        The model was shown the root's memories; an item whose `updates` names one is
        that memory's new version by the model's judgement — validated, never trusted:
        it rewrites the memory only when the rules too read it as an update of it that
        leaves out none of its values (docs/writing.md, "The zero-loss rule"); else it
        is remembered like any new fact (an unrelated memory a model named is never
        overwritten). The gate runs with origin `extract` first: an update must not
        escape the ephemeral rule.
        """
        target = docs.get(item.updates) if item.updates else None
        if target is not None and apply:
            rejection = check(
                MemoryDraft(item.title, item.description, item.body), origin="extract"
            )
            if rejection is not None:
                return "skip", WriteSkipped(
                    title=redact(item.title) or None,
                    reason=rejection.rule,
                    message=rejection.message,
                )
            new = MemoryText(item.title, item.description, item.body, item.type)
            verdict = judge(new, MemoryText.of(target))
            left_out = verdict.judgement.left_out if verdict.judgement is not None else ()
            if verdict.kind == "update" and not left_out:
                return "update", UpdateRequest(
                    path=target.path,
                    title=item.title,
                    description=item.description,
                    type=item.type,
                    body=item.body,
                    trigger=params.trigger,
                )
        return "remember", RememberRequest(
            text=item.body,
            scope=params.scope or "project",
            type=item.type,
            title=item.title,
            description=item.description,
            category=item.category,
            origin="extract",
            trigger=params.trigger,
            apply=apply,
        )


def project_memory_request(
    memory: ProjectMemory, docs: Sequence[MemoryDocument], scope: str, apply: bool
) -> tuple[str, object]:
    """The writer request for the project memory: update the one already there (same
    title, in this root), else remember it. Running projectInit again after a change
    rewrites the same file (newer wins); with nothing changed, it is left as it was."""
    existing = next((d for d in docs if same_title(d.title, TITLE)), None)
    if existing is not None and apply:
        return "update", UpdateRequest(
            path=existing.path,
            title=memory.title,
            description=memory.description,
            type=memory.type,
            body=memory.body,
            trigger="projectInit",
        )
    return "remember", RememberRequest(
        text=memory.body,
        scope=scope,
        type=memory.type,
        title=memory.title,
        description=memory.description,
        category=memory.category,
        origin="extract",
        trigger="projectInit",
        apply=apply,
    )


def _root_index(session: CatalogSession, scope: str) -> int | None:
    for index, root in enumerate(session.catalog.roots):
        if root.scope.value == scope and not root.read_only:
            return index
    return None
