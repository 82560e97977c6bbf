"""The tiers above the rules: vectors and a model for the pairs the rules are unsure of
(docs/writing.md, "Tiers").

The rules are the floor and always run. A pair they leave unsure (an update or duplicate
they lean to but cannot settle) may be put to:

1. the semantic channel's vectors, where an embeddings endpoint is configured: one batch
   call embeds both memories of every unsure pair; a cosine above a threshold settles a
   lean, a low one says the two are different facts;
2. a model (`reconcile` task, through `memory/complete` or the configured endpoint),
   once for all the pairs still unsure, within the caller's deadline.

An answer is validated against the rules, never trusted: a tier may settle a pair only
the way the rules lean (a duplicate where they found no value, name, number or
identifier of the new memory's own and the same polarity; an update where they located
the changed statement and its values are of one kind, outside the subject), or call it
independent (which creates, the safe answer). Nothing a tier says can turn a pair the
rules call independent into an update or a duplicate. A model's confirmation never
rewrites or drops anything: the new memory is created and linked as superseding (or
related to) the old one, which recall and consolidation read. When a tier fails (no endpoint,
an error, a late or malformed answer) the rules' verdict stands.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from memory_recall.server.facts.judgement import (
    ALIKE,
    Judgement,
    Kind,
    MemoryText,
    pair_capitals,
    read_memory,
)
from memory_recall.server.facts.replaced import FROM_TO, WITHIN_LONGER
from memory_recall.server.facts.slots import (
    ANNOUNCED_REWORDING,
    ANNOUNCED_SHAPE,
    BROADER,
    FLIPPED_BROADER,
    FLIPPED_NARROWER,
    NARROWER,
    NEGATED_SWAP,
    QUALIFIED,
    REORDERED,
    UNQUALIFIED,
    WORD_BESIDE,
)

Embed = Callable[[list[str]], Awaitable[list[list[float]]]]
# What a model is asked, as the model channel's caller builds it: messages and a schema in,
# the answer's text out (CompletionError, or any exception, when there is none).
Ask = Callable[[list[dict[str, str]], dict[str, Any]], Awaitable[str]]

# Cosines of the bundled measuring encoder (Universal Sentence Encoder multilingual v3),
# tuned on fixtures/conflicts/slots.json (never on slots-blind.json): an unsure duplicate
# this close is one, an unsure update this close is one, and a pair this far apart is
# two facts.
DUPLICATE_COSINE = 0.7
UPDATE_COSINE = 0.75
DIFFERENT_BELOW = 0.35
# A plain word swapped ("black" → "ruff", "ausführen" → "laufen") is as close for the
# vectors whether it is a change or a rewording: they leave it to a model.
_WORD_SWAP = "a word changed"
# Reasons of an unsure update a tier may not settle: the subject itself may have changed,
# or the value a rewrite would replace may not be the one changed (across a negation).
_SUBJECT_DOUBT = (
    "where the subject stands",
    ALIKE,
    "several things differ",
    NARROWER,
    BROADER,
    UNQUALIFIED,
    FLIPPED_NARROWER,
    FLIPPED_BROADER,
    QUALIFIED,
    WORD_BESIDE,
    NEGATED_SWAP,
)
# ... and that a tier may confirm as a link but never have rewritten: several values
# changed at once may be another thing of the same shape; a value read as replaced by the
# one beside it may be its subject or object; a value of a longer statement may not be the
# one a short announcement replaces; in a sentence said the other way round, the value
# paired with the new one may be a peer of the one replaced ("uses Slack for chat and Zoom
# for calls" / "moved from Zoom to Google Meet for calls": Slack paired, and written over).
_LINK_ONLY = (
    "values changed in the same slot",
    ANNOUNCED_SHAPE,
    ANNOUNCED_REWORDING,
    FROM_TO,
    WITHIN_LONGER,
    REORDERED,
)
# Characters of a memory a model is shown per pair.
SHOWN_CHARS = 1_500


class Tier(Protocol):
    name: str

    async def settle(self, questions: Sequence[Question]) -> dict[str, Judgement]:
        """The pairs this tier settles, by question id (validated with `settle`)."""
        ...


@dataclass(frozen=True)
class Question:
    """An unsure pair put to a tier."""

    id: str
    new: MemoryText
    old: MemoryText
    rules: Judgement


def settle(question: Question, kind: Kind, by: str, *, overwrite: bool = True) -> Judgement | None:
    """A tier's answer as a judgement, if the rules allow it; None when they do not.

    `overwrite=False` (a model): a confirmed lean stays unsure, so the write creates the new
    memory beside the old one, linked (`supersedes` for an update, `related` for a
    duplicate): a model that is wrong, or lies, can then never lose a fact.
    """
    rules = question.rules
    if kind == "independent":
        return replace(rules, kind="independent", sure=True, reason=f"{by}: a different fact")
    if kind != rules.kind or rules.sure:
        return None  # a tier may confirm a lean, never turn it
    if kind == "update":
        if not rules.changes or any(doubt in rules.reason for doubt in _SUBJECT_DOUBT):
            return None
        if not all(c.comparison.regions for c in rules.changes):
            return None
        if any(c.loses for c in rules.changes):
            # The old memory holds a value the new one does not say: rewritten, or hidden
            # at recall as superseded, that value would be gone. It stays a lean.
            return None
    if (
        not overwrite
        or any(doubt in rules.reason for doubt in _LINK_ONLY)
        or (kind == "duplicate" and _says_more(question))
    ):
        return replace(rules, confirmed=True, reason=f"{by} confirms: {rules.reason}")
    return replace(rules, sure=True, reason=f"{by}: {rules.reason}")


def _says_more(question: Question) -> bool:
    """Whether the new memory says a word the old one does not: a duplicate settled on
    closeness alone would drop it ("I prefer detailed answers with a short summary" beside
    "I prefer concise answers without summaries", "The user is a frontend engineer" beside
    "… a backend engineer": a sentence encoder puts each pair above DUPLICATE_COSINE). It
    is kept beside the old one, linked, for consolidation or the user to settle."""
    capitals = pair_capitals(question.new, question.old)
    new = read_memory(question.new, capitals).keys
    return bool(new - read_memory(question.old, capitals).keys)


def _text(memory: MemoryText) -> str:
    return "\n".join(p for p in (memory.title, memory.description, memory.body) if p)


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    norm = (sum(x * x for x in a) ** 0.5) * (sum(y * y for y in b) ** 0.5)
    return dot / norm if norm else 0.0


class VectorTier:
    """Unsure pairs settled by the cosine of their two memories' vectors."""

    name = "vectors"

    def __init__(self, embed: Embed) -> None:
        self.embed = embed

    async def settle(self, questions: Sequence[Question]) -> dict[str, Judgement]:
        if not questions:
            return {}
        texts = [t for q in questions for t in (_text(q.new), _text(q.old))]
        vectors = await self.embed(texts)
        if len(vectors) != len(texts):
            raise ValueError(f"{len(vectors)} vectors for {len(texts)} texts")
        out: dict[str, Judgement] = {}
        for n, question in enumerate(questions):
            cosine = _cosine(vectors[2 * n], vectors[2 * n + 1])
            found = judge_by_cosine(question, cosine)
            if found is not None:
                out[question.id] = found
        return out


def judge_by_cosine(question: Question, cosine: float) -> Judgement | None:
    by = f"vectors (cosine {cosine:.2f})"
    if cosine < DIFFERENT_BELOW and question.rules.kind == "duplicate":
        return settle(question, "independent", by)  # not even the same topic: no link
    kind = question.rules.kind
    if kind == "duplicate" and cosine >= DUPLICATE_COSINE:
        return settle(question, "duplicate", by)
    if kind == "update" and cosine >= UPDATE_COSINE and _WORD_SWAP not in question.rules.reason:
        return settle(question, "update", by)
    return None


RECONCILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pairs": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "id": {"type": "string"},
                    "verdict": {"enum": ["duplicate", "update", "independent"]},
                },
                "required": ["id", "verdict"],
            },
        }
    },
    "required": ["pairs"],
}

_INSTRUCTIONS = (
    "You compare notes of a coding agent's memory. For each pair, OLD is a saved note and "
    "NEW is what the user just asked to remember. Answer per pair:\n"
    "- duplicate: NEW says nothing that OLD does not already say;\n"
    "- update: NEW changes the value of something OLD states about the same thing (the same "
    "subject and property: a new version, person, tool, number, address or schedule);\n"
    "- independent: NEW is about another thing or another property, or adds a fact.\n"
    "Two different identifiers, services, paths, flags, people or hosts are two things. "
    "When unsure, answer independent. Reply with JSON only: "
    '{"pairs": [{"id": "...", "verdict": "..."}]}'
)


def reconcile_messages(questions: Sequence[Question]) -> list[dict[str, str]]:
    """The `reconcile` task's messages for a batch of pairs (callers redact secrets)."""
    blocks = []
    for q in questions:
        old, new = _text(q.old)[:SHOWN_CHARS], _text(q.new)[:SHOWN_CHARS]
        blocks.append(f"## pair {q.id}\nOLD:\n{old}\n\nNEW:\n{new}")
    return [
        {"role": "system", "content": _INSTRUCTIONS},
        {"role": "user", "content": "\n\n".join(blocks)},
    ]


def parse_reconcile(content: str, questions: Sequence[Question]) -> dict[str, Judgement]:
    """The model's verdicts, validated; malformed items and unknown ids are ignored."""
    try:
        data = json.loads(_unfenced(content))
    except ValueError:
        return {}
    items = data.get("pairs") if isinstance(data, dict) else None
    if not isinstance(items, list):
        return {}
    by_id = {q.id: q for q in questions}
    out: dict[str, Judgement] = {}
    for item in items:
        if not isinstance(item, dict):
            continue
        question = by_id.get(str(item.get("id")))
        verdict = item.get("verdict")
        if question is None or verdict not in ("duplicate", "update", "independent"):
            continue
        found = settle(question, verdict, "the model", overwrite=False)
        if found is not None:
            out[question.id] = found
    return out


def _unfenced(content: str) -> str:
    text = content.strip()
    if text.startswith("```"):
        text = text.strip("`")
        text = text[text.find("{") :] if "{" in text else text
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text


class ModelTier:
    """Unsure pairs put to a model in one `reconcile` request."""

    name = "model"

    def __init__(self, ask: Ask) -> None:
        self.ask = ask

    async def settle(self, questions: Sequence[Question]) -> dict[str, Judgement]:
        if not questions:
            return {}
        content = await self.ask(reconcile_messages(questions), RECONCILE_SCHEMA)
        return parse_reconcile(content, questions)


async def settle_all(tiers: Sequence[Tier], questions: Sequence[Question]) -> dict[str, Judgement]:
    """Each tier in turn on what the ones before left unsure; a failing tier is skipped."""
    settled: dict[str, Judgement] = {}
    for tier in tiers:
        left = [q for q in questions if q.id not in settled]
        if not left:
            break
        try:
            settled.update(await tier.settle(left))
        except Exception:  # the rules' verdict stands: a tier is an aid, never a need
            continue
    return settled
