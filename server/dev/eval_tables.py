"""The eval's tables for people: rankers side by side, and the fast phase corpus by
corpus and pooled (`memory-recall dev eval`). The figures are evaluation.py's; this
module only lays them out.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from memory_recall.server.dev.evaluation import SPLITS, EvalReport, pooled


def format_table(reports: Sequence[EvalReport]) -> str:
    """Side-by-side human table: one column per ranker."""
    names = [r.ranker for r in reports]
    rows: list[tuple[str, list[str]]] = []

    def pct(value: float | None) -> str:
        return "—" if value is None else f"{value * 100:5.1f}%"

    rows.append(("docs / cases", [f"{r.docs} / {r.cases}" for r in reports]))
    rows.append(("Recall@5", [pct(r.recall_at5) for r in reports]))
    rows.append(("top-1", [pct(r.top1) for r in reports]))
    rows.append(("no-result recall", [pct(r.no_result_recall) for r in reports]))
    rows.append(("no-result precision", [pct(r.no_result_precision) for r in reports]))
    rows.append(("random baseline R@5", [pct(r.random_baseline) for r in reports]))
    # The fast phase as a host with a model gets it (confidence gate, then the network).
    fast_rows = (
        ("fast: precision", "fastPrecision", pct),
        ("fast: hit@2", "hitAt2", pct),
        ("fast: memories / unanswerable", "perUnanswerable", lambda v: f"{v:5.2f}"),
        ("fast: silence on unanswerable", "fastSilence", pct),
        ("fast: answerable muted", "muted", pct),
    )
    for label, key, shown in fast_rows:
        rows.append((label, [shown(r.overall[key]) if key in r.overall else "—" for r in reports]))
    categories = sorted({c for r in reports for c in r.by_category})
    for cat in categories:
        cells = []
        for r in reports:
            t = r.by_category.get(cat, {})
            if "recallAt5" in t:
                cells.append(f"{pct(t['recallAt5'])} R@5 {pct(t['top1'])} top1")
            elif "silentRate" in t:
                cells.append(f"{pct(t['silentRate'])} silent")
            else:
                cells.append("—")
        n = reports[0].by_category.get(cat, {}).get("cases", 0)
        rows.append((f"  {cat} ({n})", cells))
    scripts = sorted({s for r in reports for s in r.by_script})
    if len(scripts) > 1:
        for script in scripts:
            cells = [_slice_cell(r.by_script.get(script, {}), pct) for r in reports]
            n = reports[0].by_script.get(script, {}).get("cases", 0)
            rows.append((f"  script {script} ({n})", cells))
    width0 = max(len(label) for label, _ in rows)
    widths = [max(len(n), *(len(cells[i]) for _, cells in rows)) for i, n in enumerate(names)]
    lines = [
        "  ".join([" " * width0, *(n.ljust(w) for n, w in zip(names, widths, strict=True))]),
    ]
    for label, cells in rows:
        padded = (c.ljust(w) for c, w in zip(cells, widths, strict=True))
        lines.append("  ".join([label.ljust(width0), *padded]))
    return "\n".join(lines)


FAST_COLUMNS = (
    ("precision", "fastPrecision"),
    ("hit@2", "hitAt2"),
    ("per unans.", "perUnanswerable"),
    ("silence", "fastSilence"),
    ("muted", "muted"),
)


def format_fast_summary(named: Sequence[tuple[str, EvalReport]]) -> str:
    """The fast phase corpus by corpus and pooled, for every split: what a host with a
    model injects before the model answers (the issue's targets: precision >= 70 %,
    <= 0.3 memories per unanswerable question, silence >= 80 %, muted <= 3 %)."""
    lines = []
    width = max(len("pooled"), *(len(name) for name, _ in named))
    for split in SPLITS:
        lines.append(
            f"\nfast phase, {split} cases"
            + {"tune": " (what the calibration was fitted on)", "blind": " (never tuned on)"}.get(
                split, ""
            )
        )
        head = "  ".join(f"{label:>10s}" for label, _ in FAST_COLUMNS)
        lines.append(f"{'':{width}s}  {'cases':>6s}  {head}")
        rows = [(name, r.tallies[split].as_dict()) for name, r in named if split in r.tallies]
        rows.append(("pooled", pooled([r for _, r in named])[split]))
        for name, t in rows:
            cells = []
            for _label, key in FAST_COLUMNS:
                value = t.get(key)
                if value is None:
                    cells.append(f"{'—':>10s}")
                elif key == "perUnanswerable":
                    cells.append(f"{value:10.2f}")
                else:
                    cells.append(f"{value * 100:9.1f}%")
            lines.append(f"{name:{width}s}  {t['cases']:6d}  " + "  ".join(cells))
    return "\n".join(lines)


def _slice_cell(t: dict[str, Any], pct: Callable[[float | None], str]) -> str:
    parts = []
    if "recallAt5" in t:
        parts.append(f"{pct(t['recallAt5'])} R@5 {pct(t['top1'])} top1")
    if "silentRate" in t:
        parts.append(f"{pct(t['silentRate'])} silent")
    return ", ".join(parts) or "—"
