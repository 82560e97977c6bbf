"""The passage of a long body to deliver: at most 1,200 characters, the part that matched.

A body of at most 1,200 characters is delivered whole. A longer one is cut into
segments on line and sentence boundaries (a segment longer than the window is
cut at a space, or hard where there is none); the passage is the run of
consecutive segments, at most 1,200 characters in all and opening with a segment
that holds one of the query's terms, that holds the most of them, each distinct
term counted once with its weight (IDF), the earliest run on a tie. A body that
holds none of them is delivered from its start, cut on a boundary.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import regex
from memory_recall.protocol.limits import BODY_WINDOW_CHARS
from memory_recall.server.tokens import normalize

ACRONYM_MARK = "\x01"
_ACRONYM = regex.compile(r"(?<![\p{L}\p{M}\p{N}])\p{Lu}{2}(?![\p{L}\p{M}\p{N}])")
# Bodies up to this long keep their segments and normal form between recalls (at most
# 512 of them: a few MB).
KEPT_BODY_CHARS = 20_000
# Where a segment ends: after line breaks, after a sentence's end and the spaces
# that follow it, or after a CJK full stop.
_SEGMENT_END = re.compile(r"\n+|[.!?][ \t\u3000]+|[。！？][ \t\u3000]*")
# A cut inside a segment too long for the window prefers a space.
_SPACE = re.compile(r"\s")
# A window that must end on a boundary ends at the last one in its second half.
MIN_SHARE_KEPT = 0.5


@dataclass(frozen=True)
class Excerpt:
    """Code-point offsets of the delivered part of a body: body[start:end]."""

    start: int
    end: int


@dataclass(frozen=True)
class PassageTerm:
    token: str  # normalized (as the ranker matched it)
    weight: float
    # "acronym": an acronym term, found as written; "folded": a term found in the text's
    # folded form (its token is marked by one leading character, the ranker's mark).
    kind: str = "text"


# How a ranker folds a text, for its "folded" terms (bm25f.folding.fold_text).
Folding = Callable[[str], str]


def opening(body: str, limit: int = BODY_WINDOW_CHARS, *, exact: bool = False) -> Excerpt:
    """The start of a body: all of it when it fits; else its first `limit` characters,
    `exact`ly (the reference scorer's window) or cut at the last boundary in
    their second half."""
    if len(body) <= limit or exact:
        return Excerpt(0, min(len(body), limit))
    ends = [end for end in _segment_ends(body[: limit + 1]) if end <= limit]
    good = [end for end in ends if end >= limit * MIN_SHARE_KEPT]
    end = good[-1] if good else _cut(body, 0, limit)
    return Excerpt(0, _rstrip(body, 0, end))


def best_passage(
    body: str,
    terms: Sequence[PassageTerm],
    limit: int = BODY_WINDOW_CHARS,
    folding: Folding | None = None,
) -> Excerpt:
    """The passage of at most `limit` characters that holds the most weight of `terms`."""
    if len(body) <= limit:
        return Excerpt(0, len(body))
    if not terms:
        return opening(body, limit)
    segments = _segments(body, limit)
    found = _terms_by_segment(body, segments, terms, folding)
    if not any(found):
        return opening(body, limit)
    best: tuple[float, int, int] | None = None  # (weight, first segment, past the last)
    held: Counter[int] = Counter()
    weight = 0.0
    last = 0  # the window is segments[first:last]
    for first in range(len(segments)):
        if last < first:
            last = first
        while last < len(segments) and segments[last][1] - segments[first][0] <= limit:
            for term in found[last]:
                if not held[term]:
                    weight += terms[term].weight
                held[term] += 1
            last += 1
        # A passage opens with a segment that matched: what follows a match (the
        # explanation, the fix) is worth more than what came before it.
        if found[first] and (best is None or weight > best[0] + 1e-12):
            best = (weight, first, last)
        for term in found[first]:
            held[term] -= 1
            if not held[term]:
                weight -= terms[term].weight
    assert best is not None
    _, first, last = best
    start = segments[first][0]
    end = segments[last - 1][1] if last > first else min(len(body), start + limit)
    start = _lstrip(body, start, end)
    return Excerpt(start, _rstrip(body, start, end))


def densest(
    body: str,
    terms: Sequence[PassageTerm],
    also: Sequence[int] = (),
    limit: int = 300,
    folding: Folding | None = None,
) -> float:
    """The most weight of distinct `terms` that one stretch of the body of at most
    `limit` characters holds (a sentence or a few), counting `also` (indices of
    terms held elsewhere, such as in the title) in every stretch."""
    if not terms:
        return 0.0
    segments = _segments(body, limit) if body else ()
    found = _terms_by_segment(body, segments, terms, folding) if segments else []
    base = set(also)
    weight = best = sum(terms[t].weight for t in base)
    held: Counter[int] = Counter()
    last = 0  # the stretch is segments[first:last]
    for first in range(len(segments)):
        if last < first:
            last = first
        while last < len(segments) and segments[last][1] - segments[first][0] <= limit:
            for term in found[last]:
                if not held[term] and term not in base:
                    weight += terms[term].weight
                held[term] += 1
            last += 1
        best = max(best, weight)
        for term in found[first]:
            held[term] -= 1
            if not held[term] and term not in base:
                weight -= terms[term].weight
    return best


def _terms_by_segment(
    body: str,
    segments: Sequence[tuple[int, int]],
    terms: Sequence[PassageTerm],
    folding: Folding | None = None,
) -> list[list[int]]:
    """Per segment, which terms it holds (indices into `terms`)."""
    normalized = _normalized(body)
    folded = ""
    if folding is not None and any(t.kind == "folded" for t in terms):
        folded = folding(normalized)
    if len(normalized) != len(body) or (folded and len(folded) != len(body)):
        # Normalizing or folding moved offsets: each segment on its own.
        return [_terms_in(body[start:end], terms, folding) for start, end in segments]
    starts = [start for start, _ in segments]
    found: list[list[int]] = [[] for _ in segments]

    def mark(term: int, at: int) -> int:
        """Mark `term` held by the segment `at` is in; where that segment ends (a term
        repeated in a segment is found once: a CJK pair of a long body is in most)."""
        segment = bisect_right(starts, at) - 1
        held = found[segment]
        if not held or held[-1] != term:
            held.append(term)
        return segments[segment][1]

    for i, term in enumerate(terms):
        if term.kind == "acronym":
            for match in _ACRONYM.finditer(body):
                if ACRONYM_MARK + normalize(match.group()) == term.token:
                    mark(i, match.start())
            continue
        if term.kind == "folded":
            if not folded:
                continue
            text, token = folded, term.token[1:]
        else:
            text, token = normalized, term.token
        at = text.find(token)
        while at >= 0:
            at = text.find(token, mark(i, at))
    return found


def _normalized(body: str) -> str:
    """`normalize(body)`, kept per body (as `_segments`)."""
    return normalize(body) if len(body) > KEPT_BODY_CHARS else _kept_normalized(body)


_kept_normalized = functools.lru_cache(maxsize=512)(normalize)


def _terms_in(text: str, terms: Sequence[PassageTerm], folding: Folding | None = None) -> list[int]:
    normalized = normalize(text)
    acronyms = None
    folded = None
    out = []
    for i, term in enumerate(terms):
        if term.kind == "acronym":
            if acronyms is None:
                acronyms = {ACRONYM_MARK + normalize(a) for a in _ACRONYM.findall(text)}
            if term.token in acronyms:
                out.append(i)
        elif term.kind == "folded":
            if folding is not None:
                if folded is None:
                    folded = folding(normalized)
                if term.token[1:] in folded:
                    out.append(i)
        elif term.token in normalized:
            out.append(i)
    return out


def _segment_ends(text: str) -> list[int]:
    return [match.end() for match in _SEGMENT_END.finditer(text)]


def _segments(body: str, limit: int) -> tuple[tuple[int, int], ...]:
    """(start, end) of every segment, in order, each at most `limit` long, covering the body.
    Kept per body up to `KEPT_BODY_CHARS`: the memories a recall reads passages of are
    mostly those the last ones did, and a long body's segments are a pass over all of it."""
    if len(body) > KEPT_BODY_CHARS:
        return _segments_of(body, limit)
    return _kept_segments(body, limit)


def _segments_of(body: str, limit: int) -> tuple[tuple[int, int], ...]:
    out = []
    start = 0
    for end in [*_segment_ends(body), len(body)]:
        while end - start > limit:
            cut = _cut(body, start, start + limit)
            out.append((start, cut))
            start = cut
        if end > start:
            out.append((start, end))
            start = end
    return tuple(out)


_kept_segments = functools.lru_cache(maxsize=512)(_segments_of)


def _cut(body: str, start: int, end: int) -> int:
    """Where to cut `body[start:end]` short of its end: after its last space in the
    second half, else at `end`."""
    floor = start + int((end - start) * MIN_SHARE_KEPT)
    for at in range(end - 1, floor, -1):
        if _SPACE.match(body, at):
            return at + 1
    return end


def _rstrip(body: str, start: int, end: int) -> int:
    while end > start and body[end - 1].isspace():
        end -= 1
    return end


def _lstrip(body: str, start: int, end: int) -> int:
    while start < end and body[start].isspace():
        start += 1
    return start
