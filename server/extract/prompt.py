"""The extraction prompt: prompts/extract.md filled in, and the answer's JSON Schema.

The template is a readable markdown file in six parts (role, rules, task,
output schema, examples, emphasis); this module only splits it into the
system and user messages and fills its `{{placeholders}}`.
"""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Any

import regex
from memory_recall.server.documents import MEMORY_TYPES
from memory_recall.server.extract.transcript import Assembled
from memory_recall.server.organise.categories import CATEGORIES

MAX_MEMORIES = 5  # per extraction call (docs/extraction.md)
MAX_ANSWER_TOKENS = 2_048  # five memories of a few hundred words, in any script
PARTS = ("role", "rules", "output schema", "examples", "task", "emphasis")
SYSTEM_PARTS = ("role", "rules", "output schema", "examples")
USER_PARTS = ("task", "emphasis")
_PLACEHOLDER = regex.compile(r"\{\{(\w+)\}\}")


@cache
def template_parts() -> dict[str, str]:
    """The template's sections by name (its HTML comment dropped)."""
    text = resources.files(__package__).joinpath("prompts/extract.md").read_text("utf-8")
    text = regex.sub(r"<!--.*?-->", "", text, flags=regex.S)
    parts: dict[str, str] = {}
    for match in regex.finditer(r"^## (.+?)\n(.*?)(?=^## |\Z)", text, flags=regex.M | regex.S):
        parts[match.group(1).strip()] = match.group(2).strip()
    missing = [p for p in PARTS if p not in parts]
    if missing:  # a broken template is a packaging bug, not a user's problem
        raise RuntimeError(f"prompts/extract.md lacks the parts {missing}")
    return parts


def category_slugs() -> list[str]:
    return [sub.slug for top in CATEGORIES for sub in top.subcategories]


def _fill(text: str, values: dict[str, str]) -> str:
    return _PLACEHOLDER.sub(lambda m: values.get(m.group(1), m.group(0)), text)


def build_messages(
    *,
    trigger: str,
    scope: str,
    transcript: Assembled,
    existing: Assembled,
    files: Assembled | None = None,
    limit: int = MAX_MEMORIES,
) -> list[dict[str, str]]:
    """[system, user] for the chat-completions API and `memory/complete` alike."""
    parts = template_parts()
    files_block = ""
    if files is not None and files.text:
        files_block = f"\nThe code the user accepted:\n<files>\n{files.text}\n</files>\n"
    values = {
        "limit": str(limit),
        "categories": ", ".join(category_slugs()),
        "trigger": trigger,
        "scope": scope,
        "existing": existing.text,
        "transcript": transcript.text,
        "cut_note": transcript.cut_note,
        "files_block": files_block,
    }
    # Values are filled once, after splitting: text from the session that looks
    # like a placeholder stays as it is.
    system = "\n\n".join(
        f"# {name.title()}\n\n{_fill(parts[name], values)}" for name in SYSTEM_PARTS
    )
    user = "\n\n".join(_fill(parts[name], values) for name in USER_PARTS)
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def response_schema(limit: int = MAX_MEMORIES) -> dict[str, Any]:
    """The JSON Schema of an answer (docs/extraction.md item schema), for structured output."""
    item = {
        "type": "object",
        "properties": {
            "title": {"type": "string", "maxLength": 100},
            "description": {"type": "string", "maxLength": 300},
            "type": {"type": "string", "enum": list(MEMORY_TYPES)},
            "category": {"type": "string", "enum": category_slugs()},
            "body": {"type": "string", "maxLength": 4000},
            "updates": {"type": ["string", "null"]},
            "why": {"type": "string"},
        },
        "required": ["title", "description", "type", "category", "body", "why"],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {"memories": {"type": "array", "items": item, "maxItems": limit}},
        "required": ["memories"],
        "additionalProperties": False,
    }
