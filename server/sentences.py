"""Where a sentence ends, in any script: for a memory's headline (server.facts.headline)
and for the fast phase, which asks each sentence of a prompt on its own
(server.ranking.shortlist).

A sentence ends at . ! ? followed by a space or the end (not inside 3.11, v1.2, a URL,
nor after e.g. / i.e. and their kin), at the CJK stops 。！？ (no space follows them),
at the Arabic question mark, the Devanagari danda, or a line end.
"""

from __future__ import annotations

import regex

SENTENCE_END = regex.compile(
    r"(?<!\b(?:e\.g|i\.e|etc|vs|cf|z\.b|bzw|ca|approx|incl|usw|p\.ex|d\.h|u\.a)\.)"
    r"(?<=[.!?؟।])(?=\s|$)"
    r"|(?<=[。！？])|\n+"
)


def split_sentences(text: str) -> list[str]:
    """The text's sentences in order, stripped, empty ones left out."""
    return [part.strip() for part in SENTENCE_END.split(text) if part.strip()]
