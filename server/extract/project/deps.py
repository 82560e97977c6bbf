"""Dependency names: parsed from each ecosystem's notation, mapped to frameworks (data file)."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cache

import regex
from memory_recall.server.datafiles import data_lines

# PEP 508: the name is the leading run of letters, digits, `.`, `_`, `-`.
_PEP508_NAME = regex.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)")


def pep508_name(requirement: str) -> str | None:
    """`Django>=4.2; python_version>'3.8'` → `django` (normalized as PEP 503 says)."""
    match = _PEP508_NAME.match(requirement)
    return regex.sub(r"[-_.]+", "-", match.group(1)).lower() if match else None


@cache
def _table() -> dict[str, list[tuple[str, str]]]:
    table: dict[str, list[tuple[str, str]]] = {}
    for line in data_lines("memory_recall.server.extract.project", "frameworks.txt"):
        ecosystem, name, label = line.split("\t")
        table.setdefault(ecosystem, []).append((name, label))
    return table


def frameworks(ecosystem: str, dependencies: Iterable[str]) -> list[str]:
    """Framework labels for `dependencies`, in the data file's order, without repeats."""
    names = {d.lower() for d in dependencies}
    found: list[str] = []
    for pattern, label in _table().get(ecosystem, []):
        lowered = pattern.lower()
        if lowered.endswith("*"):
            hit = any(n.startswith(lowered[:-1]) for n in names)
        else:
            hit = lowered in names
        if hit and label not in found:
            found.append(label)
    return found
