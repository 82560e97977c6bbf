"""The model merges duplicates' prose when one is configured (docs/organisation.md), under the
rules' watch.

The deterministic merge (merge.py) keeps every distinct line: nothing is lost, but
three notes saying one thing in other words read as three notes glued together. A
model writes one text. It is trusted with the wording only:

- it is shown the cluster's bodies, newest first, with what "newest wins" means;
  a cluster whose text held a credential is not shown at all (the redacted text
  would come back without the value, and the merge would lose it);
- its answer must be `{"body": text}`, not front matter, not empty, not longer
  than the glued text plus a margin;
- every *anchor* of the inputs (code spans, paths, URLs, commands' flags,
  identifiers, numbers: what an agent would copy) must be in its text, character
  for character; one missing and the rules' merge is written instead;
- its text must hold no credential.

Whatever goes wrong (no answer within the deadline, an answer that breaks a rule)
is recorded on the merge and the deterministic body is kept: a model never blocks a
consolidation and never loses a line. At most `max_clusters` clusters are sent per
root and run, and none after the model's first timeout; the rest are merged by the
rules and say so. Merges pruned for capacity right after are not sent.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from typing import Any

import regex
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.models.complete import (
    Completer,
    CompletionError,
    CompletionRequest,
    complete_within,
    json_answer,
)
from memory_recall.server.organise.consolidate import ConsolidationPlan, Rewrite
from memory_recall.server.store.injection import find_injection
from memory_recall.server.store.secrets import find_secrets

MAX_CLUSTERS = 20  # clusters sent to the model per root and run
MAX_ANSWER_TOKENS = 2048
SLACK_CHARS = 400  # the answer may be this much longer than the glued text

# What an agent copies out of a memory and a rewording must not touch.
_ANCHORS = regex.compile(
    r"""
      `[^`\n]{1,200}`                                  # a code span
    | \b[a-z][a-z0-9+.-]*://[^\s<>()\]"'`]+             # a URL
    | (?<![\w/.-])--?[A-Za-z][\w-]*                    # a command-line flag
    | (?:[\w.-]+/)+[\w.-]+                              # a path with a directory
    | \b[\w-]+\.[A-Za-z][A-Za-z0-9]{0,5}\b(?![\w/])       # a file name with an extension
    | \b\w*[a-z]\w*[A-Z]\w*\b                           # camelCase / PascalCase inner capital
    | \b\w+_\w+\b                                       # snake_case, CONSTANT_CASE
    | \b[A-Z]{2,}[0-9]*\b                               # an acronym, an env variable
    | \d+(?:[.:,/-]\d+)*                                # a number, a version, a time
    """,
    regex.X | regex.V1,
)
_TRAILING = ".,;:"

SYSTEM = (
    "You merge notes of a coding agent's memory that say the same thing into one note. "
    "Write one coherent text in the notes' own language, shorter than the notes together. "
    "Keep every fact, command, path, name, number and code span exactly as written "
    "(character for character). Where the notes disagree, the newest note is right: "
    'keep its version. Do not add facts. Answer with JSON: {"body": "<the merged note, '
    'markdown, no front matter>"}.'
)

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"body": {"type": "string"}},
    "required": ["body"],
    "additionalProperties": False,
}


def anchors(text: str) -> set[str]:
    """The spans of `text` a merged text must keep verbatim."""
    found = set()
    for match in _ANCHORS.finditer(text):
        span = match.group(0)
        if not span.startswith("`"):
            span = span.rstrip(_TRAILING)
        if span:
            found.add(span)
    return found


def check_answer(answer: str, bodies: list[str], glued: str) -> str:
    """The merged body from the model's answer, or CompletionError naming the broken rule."""
    data = json_answer(answer)
    body = data.get("body") if isinstance(data, dict) else None
    if not isinstance(body, str) or not body.strip():
        raise CompletionError('malformed answer: expected {"body": text}')
    body = body.strip() + "\n"
    if body.startswith("---"):
        raise CompletionError("the answer starts with front matter")
    if len(body) > len(glued) + SLACK_CHARS:
        raise CompletionError(f"the answer is longer than the notes together ({len(body)} chars)")
    missing = sorted(a for text in bodies for a in anchors(text) if a not in body)
    if missing:
        shown = ", ".join(repr(m) for m in missing[:3])
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise CompletionError(f"the answer drops {shown}{more}")
    if find_secrets(body):
        raise CompletionError("the answer holds a credential")
    # The gate's injection check runs on a model's merge as on any write: a merged text
    # that addresses the agent is not written (docs/safety.md).
    cue = find_injection(body)
    if cue is not None and not any(find_injection(text) == cue for text in bodies):
        raise CompletionError(f"the answer addresses the agent ({cue})")
    return body


def _messages(sources: list[MemoryDocument]) -> list[dict[str, str]]:
    notes = [
        {
            "note": n + 1,
            "newest": n == 0,
            "title": doc.title,
            "updated": doc.meta("updated") or doc.meta("created") or "",
            "body": doc.body,
        }
        for n, doc in enumerate(sources)
    ]
    user = "Notes, newest first:\n" + json.dumps(notes, ensure_ascii=False, indent=1)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


class ProseMerger:
    """Asks the model to reword each merge of a plan; the rules' body stays where it fails."""

    def __init__(
        self, completer: Completer, deadline_s: float, *, max_clusters: int = MAX_CLUSTERS
    ) -> None:
        self.completer = completer
        self.deadline_s = deadline_s
        self.max_clusters = max_clusters

    async def merge(
        self, plan: ConsolidationPlan, docs: Mapping[str, MemoryDocument]
    ) -> ConsolidationPlan:
        """`plan` with its merged bodies reworded where the model's text passes the rules."""
        rewrites = []
        sent = 0
        gave_up = ""
        archived = {a.path for a in plan.archives}  # merged, then pruned for capacity
        for rewrite in plan.rewrites:
            if not rewrite.merged_from or rewrite.body is None or rewrite.path in archived:
                rewrites.append(rewrite)
                continue
            if sent >= self.max_clusters:
                note = f"merged by the rules: at most {self.max_clusters} merges go to the model"
                rewrites.append(dataclasses.replace(rewrite, merge_note=note))
                continue
            if gave_up:
                rewrites.append(dataclasses.replace(rewrite, merge_note=gave_up))
                continue
            sent += 1
            done = await self._one(rewrite, docs)
            if "timed out" in done.merge_note:  # a model that is this slow once stays slow
                gave_up = f"{done.merge_note} on an earlier merge; not asked again this run"
            rewrites.append(done)
        return dataclasses.replace(plan, rewrites=tuple(rewrites))

    async def _one(self, rewrite: Rewrite, docs: Mapping[str, MemoryDocument]) -> Rewrite:
        assert rewrite.body is not None
        sources = [docs[p] for p in (rewrite.path, *rewrite.merged_from) if p in docs]
        if len(sources) < 2:
            return rewrite
        bodies = [doc.body for doc in sources]
        if any(find_secrets(f"{doc.title}\n{doc.body}") for doc in sources):
            note = "merged by the rules: a note holds a credential and is not shown to a model"
            return dataclasses.replace(rewrite, merge_note=note)
        request = CompletionRequest(
            task="consolidate",
            messages=_messages(sources),
            response_schema=SCHEMA,
            max_tokens=MAX_ANSWER_TOKENS,
            schema_name="merged_note",
        )
        try:
            answer, _elapsed = await complete_within(self.completer, request, self.deadline_s)
            body = check_answer(answer, bodies, rewrite.body)
        except CompletionError as exc:
            return dataclasses.replace(rewrite, merge_note=f"merged by the rules: {exc}")
        return dataclasses.replace(rewrite, body=body, merged_by="model")
