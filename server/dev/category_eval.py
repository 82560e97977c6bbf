"""How well category inference places labelled memories on the topic tree.

A labelled file (fixtures/categories/*.json) holds memories as front matter
would give them — title, description, type, body, no category — each with the
subcategory a person chose (`category`) and its language (`lang`). The report
gives the accuracy on the top-level category and on the subcategory, per
language and per category, and the most frequent confusions.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

from memory_recall.server.organise.categories import CategoryPath, explain_category

CONFUSIONS_SHOWN = 8


@dataclass(frozen=True)
class Tally:
    """Memories seen, and how many were placed right at each level."""

    total: int = 0
    top_correct: int = 0
    sub_correct: int = 0

    @property
    def top_accuracy(self) -> float:
        return self.top_correct / self.total if self.total else 0.0

    @property
    def sub_accuracy(self) -> float:
        return self.sub_correct / self.total if self.total else 0.0

    def add(self, top_ok: bool, sub_ok: bool) -> Tally:
        return Tally(self.total + 1, self.top_correct + top_ok, self.sub_correct + sub_ok)


@dataclass(frozen=True)
class Miss:
    """One memory placed elsewhere than its label."""

    id: str
    gold: str
    predicted: str
    why: str


@dataclass(frozen=True)
class CategoryReport:
    path: str
    overall: Tally
    by_language: dict[str, Tally]
    by_category: dict[str, Tally]  # keyed by the gold top-level category
    by_subcategory: dict[str, Tally]  # keyed by the gold subcategory
    top_confusions: list[tuple[str, str, int]]  # (gold, predicted, count), most frequent first
    sub_confusions: list[tuple[str, str, int]]
    misses: list[Miss]


def load_labelled(path: str | Path) -> list[dict[str, str]]:
    """The labelled memories of a fixture file; ValueError names a malformed one."""
    data = json.loads(Path(path).read_text("utf-8"))
    memories = data["memories"] if isinstance(data, dict) else data
    for i, memory in enumerate(memories):
        missing = {"id", "lang", "type", "title", "description", "body", "category"} - set(memory)
        if missing:
            raise ValueError(f"{path}: memory #{i} lacks {', '.join(sorted(missing))}")
        CategoryPath.of(memory["category"])  # a gold label off the tree is a fixture bug
    return memories


def evaluate_categories(path: str | Path) -> CategoryReport:
    """Infer the category of every labelled memory in `path` and compare with its label."""
    overall = Tally()
    by_language: dict[str, Tally] = defaultdict(Tally)
    by_category: dict[str, Tally] = defaultdict(Tally)
    by_subcategory: dict[str, Tally] = defaultdict(Tally)
    top_confusions: Counter[tuple[str, str]] = Counter()
    sub_confusions: Counter[tuple[str, str]] = Counter()
    misses = []
    for memory in load_labelled(path):
        gold = CategoryPath.of(memory["category"])
        decision = explain_category(
            type=memory["type"],
            title=memory["title"],
            description=memory["description"],
            body=memory["body"],
        )
        got = decision.path
        top_ok, sub_ok = got.top == gold.top, got == gold
        overall = overall.add(top_ok, sub_ok)
        by_language[memory["lang"]] = by_language[memory["lang"]].add(top_ok, sub_ok)
        by_category[gold.top] = by_category[gold.top].add(top_ok, sub_ok)
        by_subcategory[gold.slug] = by_subcategory[gold.slug].add(top_ok, sub_ok)
        if not top_ok:
            top_confusions[(gold.top, got.top)] += 1
        if not sub_ok:
            sub_confusions[(gold.slug, got.slug)] += 1
            misses.append(Miss(memory["id"], gold.slug, got.slug, decision.why))
    return CategoryReport(
        path=str(path),
        overall=overall,
        by_language=dict(sorted(by_language.items())),
        by_category=dict(by_category),
        by_subcategory=dict(by_subcategory),
        top_confusions=[(g, p, n) for (g, p), n in top_confusions.most_common()],
        sub_confusions=[(g, p, n) for (g, p), n in sub_confusions.most_common()],
        misses=misses,
    )


def _pct(value: float) -> str:
    return f"{100 * value:5.1f} %"


def format_report(report: CategoryReport, *, show_misses: bool = False) -> str:
    """The report as text: overall figures, tables per language and category, confusions."""
    o = report.overall
    lines = [
        f"categories: {report.path} ({o.total} memories)",
        f"  top-level category  {_pct(o.top_accuracy)}  ({o.top_correct}/{o.total})",
        f"  subcategory         {_pct(o.sub_accuracy)}  ({o.sub_correct}/{o.total})",
        "",
        f"  {'':<24}{'n':>4}  {'top':>7}  {'sub':>7}",
    ]
    for title, table in (("language", report.by_language), ("category", report.by_category)):
        lines.append(f"  by {title}")
        for key, tally in table.items():
            top, sub = _pct(tally.top_accuracy), _pct(tally.sub_accuracy)
            lines.append(f"    {key:<22}{tally.total:>4}  {top}  {sub}")
    for title, confusions in (
        ("top-level", report.top_confusions),
        ("subcategory", report.sub_confusions),
    ):
        if confusions:
            shown = ", ".join(f"{g} → {p} ×{n}" for g, p, n in confusions[:CONFUSIONS_SHOWN])
            lines.append(f"  {title} confusions: {shown}")
    if show_misses:
        lines.append("  misses:")
        lines.extend(f"    {m.id}: {m.gold} → {m.predicted} ({m.why})" for m in report.misses)
    return "\n".join(lines)
