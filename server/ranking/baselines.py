"""Baselines printed beside our rankers in eval, never used to serve recalls."""

from __future__ import annotations

import regex
from memory_recall.server.tokens import cap_tokens

_ASCII_WORD = regex.compile(r"[a-z0-9]{3,}")


def ascii_tokens(query: str) -> list[str]:
    """A naive English-only tokenizer: `[a-z0-9]{3,}` on the lowercased query."""
    return cap_tokens(_ASCII_WORD.findall(query.lower()))
