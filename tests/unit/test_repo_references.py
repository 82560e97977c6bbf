"""The code cites only documents the repository holds.

Whoever picks the project up must be able to read what a comment refers to: every
`docs/….md` named in the sources exists, and nothing points at the product contract,
style guide or notes that live outside the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("server", "protocol", "tests", "editors/vscode/src", "editors/neovim/lua")
SUFFIXES = {".py", ".ts", ".lua", ".toml"}
DOC = re.compile(r"\bdocs/[\w./-]+?\.md\b")
OUTSIDE = re.compile(r"SPEC §|\bSPEC\.md\b|\bSTYLE\.md\b|\bNOTES\.md\b|\.\./shared/")


def _sources() -> list[Path]:
    files = [ROOT / "pyproject.toml"]
    for top in SOURCES:
        files += [p for p in (ROOT / top).rglob("*") if p.suffix in SUFFIXES]
    return [p for p in files if "node_modules" not in p.parts and p != Path(__file__)]


def test_every_cited_doc_exists():
    # The tests are left out: their memories name made-up pages as data.
    missing = {
        f"{path.relative_to(ROOT)}: {name}"
        for path in _sources()
        if path.relative_to(ROOT).parts[0] != "tests"
        for name in DOC.findall(path.read_text(encoding="utf-8", errors="replace"))
        if not (ROOT / name).is_file()
    }
    assert not missing, sorted(missing)


def test_nothing_cites_a_document_outside_the_repository():
    cited = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in _sources()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1)
        if OUTSIDE.search(line)
    ]
    assert not cited, cited
