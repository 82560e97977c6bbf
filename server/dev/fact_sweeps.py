"""`memory-recall dev sweep-facts`: the labelled pairs judged again as real notes vary
(docs/writing.md, "Measuring").

A labelled pair says how two notes relate; a user or an agent writes the same two notes
in many ways and in either order. Each sweep rewrites every pair of the tuning sets
(slots.json, pairs.json — never the blind ones, which would stop being blind) one way
(server/dev/note_variants.py lists them) and judges it again with the rules alone.

A loss is an independent pair answered with a sure update or duplicate, a real update
answered with a sure duplicate, or a sure rewrite that drops the unrelated statement a
sweep added. Only a pair the plain judgement does not already lose counts (those are
`eval-facts`' figures). Beside the losses, each sweep counts the pairs judged surely as
labelled, its variant against the plain pair: a variant may lose nothing and still leave a
correction unapplied (a lean). Figures are printed; tests/unit/test_fact_sweeps.py holds
each sweep to the pairs it is known to lose.
"""

from __future__ import annotations

import argparse
import functools
import json
from collections.abc import Iterator
from dataclasses import dataclass

from memory_recall.server.dev.fact_eval import FIXTURES, memory_of
from memory_recall.server.dev.note_variants import EXTRA_MARKS, SWEEPS, Variant
from memory_recall.server.facts.judgement import Judgement, judge
from memory_recall.server.facts.rewrite import rewrite

TUNING_SETS = ("slots", "pairs")


def _loses(verdict: str, found: Judgement) -> bool:
    if not found.sure:
        return False
    if verdict == "independent":
        return found.kind in ("update", "duplicate")
    return verdict == "update" and found.kind == "duplicate"


def variants(sweep: str, sets: tuple[str, ...] = TUNING_SETS) -> Iterator[Variant]:
    for name in sets:
        for p in json.loads((FIXTURES / f"{name}.json").read_text(encoding="utf-8"))["pairs"]:
            found = SWEEPS[sweep](p, memory_of(p["old"]), memory_of(p["new"]))
            if found is not None:
                yield found


def losses(sweep: str, sets: tuple[str, ...] = TUNING_SETS) -> dict[str, str]:
    """Pair id → how the sweep's variant of it loses a fact (see the module's docstring)."""
    return measure(sweep, sets).lost


@dataclass(frozen=True)
class Measured:
    """What one sweep did to the tuning pairs."""

    lost: dict[str, str]  # pair id → how its variant loses a fact
    pairs: int  # the pairs the sweep rewrote
    right: int  # … whose variant is judged as labelled, and surely
    right_plainly: int  # … whose plain pair is


# The plain pairs are the same for every sweep: judged once.
_judged_plainly = functools.lru_cache(maxsize=None)(judge)


def measure(sweep: str, sets: tuple[str, ...] = TUNING_SETS) -> Measured:
    lost: dict[str, str] = {}
    pairs = right = right_plainly = 0
    for v in variants(sweep, sets):
        found, plain = judge(v.new, v.old), _judged_plainly(v.plain_new, v.plain_old)
        pairs += 1
        right += found.sure and found.kind == v.verdict
        right_plainly += plain.sure and plain.kind == v.verdict
        if _loses(v.verdict, found):
            if not _loses(v.verdict, plain):
                lost[v.pair_id] = f"{found.kind}, sure: {found.reason}"
        elif v.extra and found.kind == "update" and found.sure:
            body = rewrite(v.old, found).body
            if not any(mark in body for mark in EXTRA_MARKS):
                lost[v.pair_id] = f"the rewrite dropped {v.extra!r}"
    return Measured(lost, pairs, right, right_plainly)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="memory-recall dev sweep-facts",
        description="the tuning pairs judged again as real notes vary, one way of writing "
        "them per sweep (a generic title, the other order, 'Note:', 'now', dated, a closing "
        "'(TBD)', '#ops', 'Going forward, …' and more: the sweeps table of docs/writing.md): "
        "the facts each variant would lose, and how many pairs it still judges surely as "
        "labelled",
    )
    parser.add_argument("sweeps", nargs="*", choices=[[], *SWEEPS], default=[])
    parser.add_argument("--json", action="store_true", help="one JSON object: sweep → losses")
    args = parser.parse_args(argv)
    found = {name: measure(name) for name in (args.sweeps or SWEEPS)}
    if args.json:
        print(json.dumps({name: m.lost for name, m in found.items()}, ensure_ascii=False, indent=1))
        return 0
    for name, m in found.items():
        print(
            f"{name}: {len(m.lost)} lost; judged surely as labelled {m.right} of {m.pairs}"
            f" ({m.right_plainly} written plainly)"
        )
        for pair_id, how in sorted(m.lost.items()):
            print(f"  {pair_id:22} {how}")
    return 0
