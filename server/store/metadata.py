"""A memory's metadata by rules, when the user gave only the text (docs/writing.md).

- title: the first sentence, markdown markers removed, cut to a short line;
- description: the opening sentences as one line (what a model's manifest and
  MEMORY.md show), cut at a sentence or word boundary;
- type: cue words in many languages (`data/type_cues.txt`): "I prefer…" is
  `user`, "always/never/don't…" is `feedback`, URLs and dashboards are
  `reference`, anything else `project`.

No model is needed; with one configured, a caller may ask it instead.
"""

from __future__ import annotations

import functools
from collections import defaultdict
from dataclasses import dataclass
from importlib import resources
from typing import cast

import regex
from memory_recall.server.documents import MEMORY_TYPES, MemoryType
from memory_recall.server.facts.headline import (  # noqa: F401 (re-exported)
    CJK_TITLE_CHARS,
    DESCRIPTION_CHARS,
    TITLE_CHARS,
    derive_description,
    derive_title,
    sentences,
)
from memory_recall.server.tokens import normalize

# The title and description rules live with the facts (an update re-derives them).
# Ties go to the more specific type.
_TIE_ORDER: tuple[MemoryType, ...] = ("user", "feedback", "reference", "project")


@dataclass(frozen=True)
class DerivedMetadata:
    title: str
    description: str
    type: MemoryType
    why: str  # the cue that decided the type, for logs and the CLI


@dataclass(frozen=True)
class _Cue:
    type: MemoryType
    weight: float
    pattern: regex.Pattern[str]


@functools.cache
def _cues() -> tuple[_Cue, ...]:
    text = resources.files(__package__).joinpath("data/type_cues.txt").read_text("utf-8")
    cues = []
    for line in text.splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        kind, weight, pattern = line.split("\t", 2)
        if kind not in MEMORY_TYPES:
            raise ValueError(f"type_cues.txt: unknown type {kind!r}")
        cues.append(_Cue(cast(MemoryType, kind), float(weight), regex.compile(pattern, regex.M)))
    return tuple(cues)


def infer_type(text: str) -> tuple[MemoryType, str]:
    """The type the text's cue words point to, and which cue decided it."""
    normalized = normalize(text)
    opening = "\n".join(sentences(normalized)[:1])
    scores: dict[MemoryType, float] = defaultdict(float)
    first_cue: dict[MemoryType, str] = {}
    for cue in _cues():
        # Weighted-3 cues are anchored at the start: they read the opening sentence.
        target = opening if cue.pattern.pattern.startswith("^") else normalized
        found = cue.pattern.findall(target)
        if found:
            scores[cue.type] += cue.weight * min(len(found), 3)
            first_cue.setdefault(cue.type, str(found[0]).strip()[:40])
    if not scores:
        return "project", "no cue word: project by default"
    best = max(_TIE_ORDER, key=lambda t: (scores[t], -_TIE_ORDER.index(t)))
    if scores[best] <= 0:
        return "project", "no cue word: project by default"
    return best, f"{best}: {first_cue[best]!r}"


def derive(text: str) -> DerivedMetadata:
    """Title, description and type of a memory from its text alone."""
    memory_type, why = infer_type(text)
    return DerivedMetadata(derive_title(text), derive_description(text), memory_type, why)
