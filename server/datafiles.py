"""The data files the rules read: word lists, cue tables, tuned numbers (`<room>/data/*.txt`).

One loader for every room: a file is read once from its package (so an installed
wheel finds it as a clone does), blank lines and `#` comment lines dropped, the
rest stripped. Each file says in its comments where its contents come from.
"""

from __future__ import annotations

import functools
from importlib import resources


@functools.cache
def data_lines(package: str, name: str) -> tuple[str, ...]:
    """The non-blank, non-comment lines of `<package>/data/<name>`, stripped."""
    text = resources.files(package).joinpath("data").joinpath(name).read_text(encoding="utf-8")
    stripped = (line.strip() for line in text.splitlines())
    return tuple(line for line in stripped if line and not line.startswith("#"))


@functools.cache
def data_sections(package: str, name: str) -> tuple[tuple[str, ...], ...]:
    """The sections of `<package>/data/<name>`: its runs of lines between blank lines,
    each as its non-comment lines (a run of comments alone is no section)."""
    text = resources.files(package).joinpath("data").joinpath(name).read_text(encoding="utf-8")
    sections: list[tuple[str, ...]] = []
    lines: list[str] = []
    for line in (*text.splitlines(), ""):
        line = line.strip()
        if not line:
            if lines:
                sections.append(tuple(lines))
            lines = []
        elif not line.startswith("#"):
            lines.append(line)
    return tuple(sections)
