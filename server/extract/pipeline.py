"""One extraction with a model (docs/extraction.md): assemble → ask → parse strictly.

What comes out are candidate memories and skips with reasons; the quality
gate, conflict detection and the write are the store's (the same path as
`memory/remember`, with origin `extract`). Nothing the model says is trusted:
its answer is parsed into the item schema, its paths checked against the
memories it was shown, and everything it was shown was redacted first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memory_recall.server.extract.parse import (
    AnswerError,
    ExtractedItem,
    SkippedItem,
    parse_answer,
)
from memory_recall.server.extract.prompt import (
    MAX_ANSWER_TOKENS,
    MAX_MEMORIES,
    build_messages,
    response_schema,
)
from memory_recall.server.extract.transcript import (
    Assembled,
    ExistingMemory,
    Turn,
    assemble_existing,
    assemble_files,
    assemble_transcript,
)
from memory_recall.server.models.complete import (
    Completer,
    CompletionError,
    CompletionRequest,
    complete_within,
)

TRIGGERS = ("sessionEnd", "codeAccepted", "projectInit", "explicit")
MODEL_TRIGGERS = ("sessionEnd", "codeAccepted", "explicit")
NO_MODEL_MESSAGE = "no model configured for extraction"


@dataclass(frozen=True)
class ExtractionInput:
    trigger: str
    transcript: Sequence[Turn] = ()
    files: Sequence[tuple[str, str | None]] = ()
    diff: str | None = None
    scope: str = "project"


@dataclass
class ExtractionOutcome:
    items: list[ExtractedItem] = field(default_factory=list)
    skipped: list[SkippedItem] = field(default_factory=list)
    failure: str | None = None  # the model gave no usable answer: why (nothing is written)
    model_ms: float | None = None
    transcript: Assembled | None = None
    messages: list[dict[str, str]] = field(default_factory=list)  # exactly what was sent

    def summary(self) -> dict[str, Any]:
        cut = self.transcript
        return {
            "turns": cut.total if cut else 0,
            "turnsCut": cut.cut_items if cut else 0,
            "charsCut": cut.cut_chars if cut else 0,
            "redactions": cut.redactions if cut else 0,
        }


def request_for(
    request: ExtractionInput, existing: Sequence[ExistingMemory]
) -> tuple[CompletionRequest, Assembled]:
    """The completion request for one extraction, and the transcript as assembled."""
    transcript = assemble_transcript(request.transcript)
    files = assemble_files(request.files, request.diff) if request.files or request.diff else None
    session_text = transcript.text + ("\n" + files.text if files else "")
    listed = assemble_existing(existing, session_text)
    messages = build_messages(
        trigger=request.trigger,
        scope=request.scope,
        transcript=transcript,
        existing=listed,
        files=files,
    )
    completion = CompletionRequest(
        task="extract",
        messages=messages,
        response_schema=response_schema(),
        max_tokens=MAX_ANSWER_TOKENS,
        schema_name="extracted_memories",
    )
    return completion, transcript


async def run_extraction(
    request: ExtractionInput,
    existing: Sequence[ExistingMemory],
    completer: Completer,
    deadline_s: float,
) -> ExtractionOutcome:
    """Ask the model once and parse its answer; a failure is recorded, never raised."""
    completion, transcript = request_for(request, existing)
    outcome = ExtractionOutcome(transcript=transcript, messages=completion.messages)
    try:
        answer, outcome.model_ms = await complete_within(completer, completion, deadline_s)
        outcome.items, outcome.skipped = parse_answer(
            answer, {m.relative_path for m in existing}, limit=MAX_MEMORIES
        )
    except (CompletionError, AnswerError) as exc:
        outcome.failure = str(exc)
    return outcome
