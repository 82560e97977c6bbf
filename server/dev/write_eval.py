"""`memory-recall dev eval-write`: the write side's rules measured on their labelled sets.

- the quality gate (fixtures/gate/): the secret detector's precision and recall
  per kind, over real-looking credentials and look-alikes that are not secrets;
  the injection and ephemeral detectors;
- the conflict rules (fixtures/conflicts/): precision and recall per verdict,
  accuracy per language, on the tuning set and on the blind set;
- the type rules of `remember` (fixtures/metadata/types.json): accuracy per
  type and language.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from memory_recall.server.dev.conflict_eval import KINDS, evaluate_conflicts
from memory_recall.server.dev.conflict_eval import format_report as format_conflicts
from memory_recall.server.dev.gate_eval import (
    evaluate_ephemeral,
    evaluate_injection,
    evaluate_secrets,
    format_report,
)
from memory_recall.server.store.metadata import infer_type


def fixtures_dir() -> Path:
    """fixtures/ of the repository (the eval sets are not shipped in the package)."""
    here = Path(__file__).resolve()
    for parent in here.parents:
        if (parent / "fixtures" / "gate").is_dir():
            return parent / "fixtures"
    return Path(str(resources.files("memory_recall.fixtures")))


@dataclass
class TypeReport:
    cases: int = 0
    correct: int = 0
    by_type: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    by_lang: dict[str, list[int]] = field(default_factory=lambda: defaultdict(lambda: [0, 0]))
    confusion: Counter[tuple[str, str]] = field(default_factory=Counter)
    misses: list[tuple[str, str, str]] = field(default_factory=list)  # (id, expected, got)

    @property
    def accuracy(self) -> float:
        return self.correct / self.cases if self.cases else 1.0


def evaluate_types(path: Path | str) -> TypeReport:
    cases = json.loads(Path(path).read_text("utf-8"))["cases"]
    report = TypeReport()
    for case in cases:
        got, _why = infer_type(case["text"])
        ok = got == case["type"]
        report.cases += 1
        report.correct += ok
        for table, key in ((report.by_type, case["type"]), (report.by_lang, case["lang"])):
            table[key][0] += ok
            table[key][1] += 1
        report.confusion[(case["type"], got)] += 1
        if not ok:
            report.misses.append((case["id"], case["type"], got))
    return report


def format_types(report: TypeReport) -> str:
    lines = [f"types: {report.cases} texts, {len(report.by_lang)} languages,"
             f" accuracy {report.accuracy:.3f}"]  # fmt: skip
    for kind, (ok, n) in sorted(report.by_type.items()):
        lines.append(f"  {kind:<10} {ok:>3}/{n:<3} {ok / n:.2f}")
    lines.append("  by language: " + "  ".join(
        f"{lang} {ok}/{n}" for lang, (ok, n) in sorted(report.by_lang.items())
    ))  # fmt: skip
    lines += [f"  missed: {i} ({expected} → {got})" for i, expected, got in report.misses]
    return "\n".join(lines)


def figures() -> dict[str, Any]:
    base = fixtures_dir()
    secrets = evaluate_secrets(base / "gate" / "secrets.json")
    cases = json.loads((base / "gate" / "secrets.json").read_text("utf-8"))["cases"]
    conflicts = {
        name: evaluate_conflicts(base / "conflicts" / f"{name}.json")
        for name in ("pairs", "pairs-blind")
    }
    types = evaluate_types(base / "metadata" / "types.json")
    return {
        "secrets": {
            "texts": secrets.cases,
            "kinds": len(secrets.per_kind),
            "lookAlikes": sum(1 for c in cases if not c["secrets"]),
            "precision": round(secrets.precision, 4),
            "recall": round(secrets.recall, 4),
        },
        "injection": _yes_no(evaluate_injection(base / "gate" / "injection.json")),
        "ephemeral": _yes_no(evaluate_ephemeral(base / "gate" / "ephemeral.json")),
        "conflicts": {
            name: {
                "pairs": len(r.outcomes),
                "languages": sorted({o.lang for o in r.outcomes}),
                "accuracy": round(r.accuracy, 4),
                **{kind: _verdict(r, kind) for kind in KINDS},
            }
            for name, r in conflicts.items()
        },
        "types": {
            "texts": types.cases,
            "languages": len(types.by_lang),
            "accuracy": round(types.accuracy, 4),
        },
    }


def _verdict(report: Any, kind: Any) -> dict[str, float]:
    return {"precision": round(report.precision(kind), 4), "recall": round(report.recall(kind), 4)}


def _yes_no(report: Any) -> dict[str, Any]:
    return {
        "cases": report.cases,
        "precision": round(report.precision, 4),
        "recall": round(report.recall, 4),
    }


def main(*, as_json: bool = False) -> int:
    if as_json:
        print(json.dumps(figures(), ensure_ascii=False, indent=2))
        return 0
    base = fixtures_dir()
    secrets_path = base / "gate" / "secrets.json"
    cases = json.loads(secrets_path.read_text("utf-8"))["cases"]
    secrets = evaluate_secrets(secrets_path)
    print(
        f"secret set: {secrets.cases} texts, {len(secrets.per_kind)} kinds of credential,"
        f" {sum(1 for c in cases if not c['secrets'])} look-alikes that are not secrets"
    )
    print(
        format_report(
            secrets,
            evaluate_injection(base / "gate" / "injection.json"),
            evaluate_ephemeral(base / "gate" / "ephemeral.json"),
        )
    )
    for name in ("pairs", "pairs-blind"):
        print()
        print(format_conflicts(evaluate_conflicts(base / "conflicts" / f"{name}.json"),
                               show_errors=False))  # fmt: skip
    print()
    print(format_types(evaluate_types(base / "metadata" / "types.json")))
    return 0
