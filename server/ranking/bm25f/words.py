"""The word lists bm25f reads, from plain text files in `data/` (each says where it comes from).

Lines starting with `#` are comments; words are separated by white space. Read once,
at import.
"""

from __future__ import annotations

from memory_recall.server import datafiles


def data_lines(name: str) -> list[str]:
    """The non-comment, non-blank lines of `data/<name>`, stripped."""
    return list(datafiles.data_lines("memory_recall.server.ranking.bm25f", name))


def data_words(name: str) -> list[str]:
    """Every word of `data/<name>`, in file order."""
    return [word for line in data_lines(name) for word in line.split()]


def data_sections(name: str) -> list[list[str]]:
    """The words of each section of `data/<name>` (sections are separated by blank lines)."""
    sections = datafiles.data_sections("memory_recall.server.ranking.bm25f", name)
    return [[word for line in section for word in line.split()] for section in sections]
