"""Normalization and query tokenization (docs/ranking.md): the exact spec tokens, nothing more.

The rules here are the published reference: two implementations must produce
the same tokens for the same text, so nothing in this module is tunable. The
`bm25f` ranker's extra tokens (identifier parts, acronyms, dates, trigrams of
unspaced scripts) live with it, in `server.ranking.bm25f.tokens`.
"""

from __future__ import annotations

import unicodedata
from collections import OrderedDict
from collections.abc import Iterable, Iterator

import regex
from memory_recall.protocol.limits import HEAD_TOKENS, TAIL_TOKENS

# Exactly these properties; Katakana by its script extensions so that the
# prolonged sound mark (ー) and the middle dot (・) stay inside Japanese runs.
CJK_CLASS = r"\p{Script=Han}\p{Script=Hiragana}\p{Script_Extensions=Katakana}\p{Script=Hangul}"
CJK_CHAR = regex.compile(f"[{CJK_CLASS}]")

# A maximal CJK run, or a non-CJK letter/number followed by at least two more
# non-CJK letters/marks/numbers.
_RUN = regex.compile(
    rf"[{CJK_CLASS}]+"
    rf"|[[\p{{L}}\p{{N}}]--[{CJK_CLASS}]][[\p{{L}}\p{{M}}\p{{N}}]--[{CJK_CLASS}]]{{2,}}",
    flags=regex.VERSION1,
)

# Long queries keep their opening words and their most recent ones: the head
# says what the question is, the tail is what the user typed last
# (HEAD_TOKENS + TAIL_TOKENS, protocol.limits).


def normalize(text: str) -> str:
    """Unicode NFKC, then lowercase: the form every field and query is compared in."""
    return unicodedata.normalize("NFKC", text).lower()


def runs(normalized: str) -> Iterator[str]:
    """The runs of docs/ranking.md in an already normalized text, left to right."""
    for match in _RUN.finditer(normalized):
        yield match.group()


def is_cjk_run(run: str) -> bool:
    return CJK_CHAR.match(run) is not None


def run_tokens(run: str) -> Iterator[str]:
    """A CJK run yields its code-point bigrams; any other run is one token."""
    if is_cjk_run(run):
        for i in range(len(run) - 1):
            yield run[i : i + 2]
    else:
        yield run


def raw_tokens(normalized: str) -> Iterator[str]:
    """Every token of a normalized text, in order, repeats included."""
    for run in runs(normalized):
        yield from run_tokens(run)


def cap_tokens(tokens: Iterable[str]) -> list[str]:
    """Distinct tokens, at most 64: the first 32, then a rolling window of the last 32.

    A token seen again while in the tail window moves to the window's end; one
    already in the head stays where it is.
    """
    head: dict[str, None] = {}
    tail: OrderedDict[str, None] = OrderedDict()
    for token in tokens:
        if token in head:
            continue
        if len(head) < HEAD_TOKENS:
            head[token] = None
        elif token in tail:
            tail.move_to_end(token)
        else:
            tail[token] = None
            if len(tail) > TAIL_TOKENS:
                tail.popitem(last=False)
    return [*head, *tail]


def query_tokens(query: str) -> list[str]:
    """The query-side tokens of docs/ranking.md: normalized, bigrammed, distinct, capped."""
    return cap_tokens(raw_tokens(normalize(query)))
