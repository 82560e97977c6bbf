"""The word lists bm25f reads, from plain text files in `data/` (each says where it comes from).

Lines starting with `#` are comments; words are separated by white space. Read once,
at import.
"""

from __future__ import annotations

from importlib import resources


def data_lines(name: str) -> list[str]:
    """The non-comment, non-blank lines of `data/<name>`, stripped."""
    text = resources.files(__package__).joinpath("data").joinpath(name).read_text(encoding="utf-8")
    stripped = (line.strip() for line in text.splitlines())
    return [line for line in stripped if line and not line.startswith("#")]


def data_words(name: str) -> list[str]:
    """Every word of `data/<name>`, in file order."""
    return [word for line in data_lines(name) for word in line.split()]
