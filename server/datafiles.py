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
