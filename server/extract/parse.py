"""The model's answer, parsed strictly into the docs/extraction.md item schema.

An answer that is not a JSON object with a `memories` list fails the whole
call (`AnswerError`, recorded as the failure; nothing is written). Inside it,
each item either becomes an `ExtractedItem` or a `SkippedItem` with a reason:

- `malformed`: not an object, a required field missing or not text, an
  unknown `type`, or `updates` naming anything but one of the existing
  memories the model was shown (an absolute path, `..`, another root);
- `limit`: the items past the first five (one entry says how many).

Extra fields are ignored: the model cannot set `pinned`, `always`, a path or
any other key the daemon owns. A `category` that is not a known slug is
replaced by the rule-based inference (organise/categories.py): metadata the
rules can decide is not the model's to get wrong. Nothing from the answer is
echoed into a message except its title, redacted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from memory_recall.server.documents import MEMORY_TYPES
from memory_recall.server.extract.prompt import MAX_MEMORIES
from memory_recall.server.models.complete import CompletionError, json_answer
from memory_recall.server.organise.categories import infer_category, parse_category
from memory_recall.server.store.secrets import redact

REQUIRED_TEXT = ("title", "description", "body")


class AnswerError(Exception):
    """The answer as a whole is unusable; the message is the recorded failure."""


@dataclass(frozen=True)
class ExtractedItem:
    title: str
    description: str
    type: str
    category: str  # a known slug: the model's when valid, else inferred
    body: str
    updates: str | None  # relative path of an existing memory in the target root
    why: str
    category_inferred: bool = False


@dataclass(frozen=True)
class SkippedItem:
    reason: str  # malformed | limit | a gate rule | a write refusal
    message: str
    title: str | None = None


def _loads(content: str) -> Any:
    try:
        return json_answer(content)
    except CompletionError as exc:
        raise AnswerError(str(exc)) from None


def parse_answer(
    content: str, existing_paths: set[str], *, limit: int = MAX_MEMORIES
) -> tuple[list[ExtractedItem], list[SkippedItem]]:
    """Items and skips from the model's text (module docstring for the rules)."""
    data = _loads(content)
    memories = data.get("memories") if isinstance(data, dict) else None
    if not isinstance(memories, list):
        raise AnswerError('malformed answer: expected {"memories": [...]}')
    items: list[ExtractedItem] = []
    skipped: list[SkippedItem] = []
    for position, raw in enumerate(memories):
        if len(items) >= limit:
            skipped.append(
                SkippedItem(
                    "limit",
                    f"{len(memories) - position} more memories than the limit of {limit}"
                    " per call were dropped.",
                )
            )
            break
        item, problem = _item(raw, existing_paths)
        if item is not None:
            items.append(item)
        else:
            skipped.append(problem)  # type: ignore[arg-type]
    return items, skipped


def _title_of(raw: Any) -> str | None:
    title = raw.get("title") if isinstance(raw, dict) else None
    return redact(" ".join(title.split()))[:100] or None if isinstance(title, str) else None


def _item(raw: Any, existing: set[str]) -> tuple[ExtractedItem | None, SkippedItem | None]:
    def malformed(why: str) -> tuple[None, SkippedItem]:
        return None, SkippedItem("malformed", f"the model's item {why}; skipped.", _title_of(raw))

    if not isinstance(raw, dict):
        return malformed(f"is {type(raw).__name__}, not an object")
    for name in REQUIRED_TEXT:
        if not isinstance(raw.get(name), str):
            return malformed(f"has no text `{name}`")
    memory_type = raw.get("type")
    if memory_type not in MEMORY_TYPES:
        return malformed("has no known `type` (user, feedback, project, reference)")
    why = raw.get("why")
    if why is not None and not isinstance(why, str):
        return malformed("has a `why` that is not text")
    updates = raw.get("updates")
    if updates in ("", None):
        updates = None
    elif not isinstance(updates, str):
        return malformed("has an `updates` that is not a path")
    elif updates not in existing:
        return malformed("names in `updates` a file that is not one of this root's memories")
    title = " ".join(raw["title"].split())
    description = " ".join(raw["description"].split())
    body = raw["body"].strip()
    declared = raw.get("category") if isinstance(raw.get("category"), str) else None
    parsed = parse_category(declared) if declared else None
    category = infer_category(
        type=memory_type, title=title, description=description, body=body, declared=declared
    )
    item = ExtractedItem(
        title=title,
        description=description,
        type=memory_type,
        category=category.slug,
        body=body,
        updates=updates,
        why=" ".join((why or "").split()),
        category_inferred=parsed is None or parsed.sub is None,
    )
    return item, None
