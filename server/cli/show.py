"""Output for people: counts in words, tables aligned by display width (CJK titles take
two columns), and a recall's two phases as the command line prints them."""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from memory_recall.protocol.messages import PhaseResult


def plural(count: int, noun: str) -> str:
    """`1 document`, `2 documents`."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def display_width(text: str) -> int:
    """Columns a terminal gives the text: wide CJK characters take two, marks none."""
    width = 0
    for char in text:
        if unicodedata.combining(char) or unicodedata.category(char) in {"Mn", "Me", "Cf"}:
            continue
        width += 2 if unicodedata.east_asian_width(char) in {"W", "F"} else 1
    return width


def clip(text: str, columns: int) -> str:
    """The text cut to at most `columns` display columns, with … when cut."""
    if display_width(text) <= columns:
        return text
    out, used = [], 0
    for char in text:
        step = display_width(char)
        if used + step > columns - 1:
            break
        out.append(char)
        used += step
    return "".join(out) + "…"


def _pad(text: str, width: int) -> str:
    return text + " " * (width - display_width(text))


def table(rows: Sequence[Sequence[str]], headers: Sequence[str]) -> str:
    """Columns aligned by display width, so CJK titles line up too."""
    widths = [
        max(display_width(h), *(display_width(r[i]) for r in rows)) for i, h in enumerate(headers)
    ]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(_pad(c, w) for c, w in zip(cells, widths, strict=True)).rstrip()

    return "\n".join([line(headers), line(["-" * w for w in widths]), *map(line, rows)])


def print_phases(query: str, ranker: str, fast: PhaseResult | None, refined: PhaseResult) -> None:
    """Both phases of a recall for people: a table per phase, then the prompt block."""
    from memory_recall.server.ranking.registry import RANKERS
    from memory_recall.server.recall.prompt import format_age

    spec = RANKERS[ranker]
    tokens = spec.tokenize(query)
    print(f"query: {query!r}")
    print(f"ranker: {spec.name}; tokens ({len(tokens)}): {' '.join(tokens) or '(none)'}")
    for label, phase in (
        ("fast (sent first when a model is configured)", fast),
        (
            "refined without a model (the ranker's top 5; network finds only by the fast rule)",
            refined,
        ),
    ):
        docs = phase.docs if phase else []
        print(f"\n{label}: {len(docs)}")
        if not docs:
            print("  (nothing relevant)")
            continue
        rows = [
            [
                f"{d.score:g}",
                d.scope,
                d.type,
                format_age(d.mtime_ms),
                clip(d.title, 48),
                d.relative_path,
                f"{d.excerpt.start}–{d.excerpt.end}" if d.excerpt and d.truncated else "whole",
            ]
            for d in docs
        ]
        print(table(rows, ["score", "scope", "type", "age", "title", "path", "body"]))
        for d in docs:
            if d.via:
                hops = ", then ".join(
                    f"{h.kind}{' ' + repr(h.keyword) if h.keyword else ''} ({h.direction}) "
                    f"from {h.from_}"
                    for h in d.via
                )
                print(f"  {d.relative_path}: found by the network ({hops})")
    if refined.prompt:
        print("\nprompt (what a host without a model injects):\n")
        print(refined.prompt)
