"""The organisation commands as a user runs them: tree, context, consolidate, status, sims."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from memory_recall.server.cli.main import main
from memory_recall.server.store.files import ROOT_LOCK_NAME

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def write(root: Path, name: str, title: str, body: str, front: str = "", type: str = "project"):
    path = root / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {title}\ndescription: d\ntype: {type}\n{front}---\n{body}\n")


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text("x\n")
    root = tmp_path / ".memory"
    write(root, "a.md", "Lint command", "Lint with `ruff check .` before pushing.\nCI runs it too.")
    write(root, "b.md", "Lint command", "Before pushing, lint with `ruff check .`.")
    os.utime(root / "a.md", (1_700_000_000, 1_700_000_000))  # written first
    write(root, "gone.md", "Old module", "The parser lived in src/parser.py.")
    write(root, "style.md", "Answer tersely", "Short sentences.", "always: true\n", type="user")
    return tmp_path


def run(capsys, *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    return code, capsys.readouterr().out


def test_tree(capsys, workspace):
    code, out = run(capsys, "tree", "--root", str(workspace / ".memory"), "--members")
    assert code == 0 and out.startswith("4 memories")
    assert "User preferences (user)" in out and "· Answer tersely (style.md)" in out


def test_context(capsys, workspace):
    code, out = run(capsys, "context", "--root", str(workspace / ".memory"))
    assert code == 0 and "## Always-loaded memory" in out and "Short sentences." in out


def test_status_lists_stale_memories(capsys, workspace):
    code, out = run(capsys, "status", "--root", str(workspace / ".memory"),
                    "--workspace", str(workspace))  # fmt: skip
    assert code == 0
    assert f"stale    {workspace / '.memory' / 'gone.md'}: cites src/parser.py" in out


def test_consolidate_dry_run_changes_nothing(capsys, workspace):
    before = {p: p.read_bytes() for p in (workspace / ".memory").rglob("*")}
    code, out = run(capsys, "consolidate", "--dry-run", "--root", str(workspace / ".memory"),
                    "--workspace", str(workspace), "--limit", "0")  # fmt: skip
    assert code == 0 and out.startswith("dry run: nothing is changed")
    assert "b.md ← a.md" in out and "gone.md: stale: cites src/parser.py" in out
    assert before == {p: p.read_bytes() for p in (workspace / ".memory").rglob("*")}


def test_consolidate_for_real_then_undo_puts_every_byte_back(capsys, workspace):
    root = workspace / ".memory"
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    code, out = run(capsys, "consolidate", "--root", str(root), "--workspace", str(workspace))
    assert code == 0, out
    assert not (root / "a.md").exists() and (root / ".archive" / "a.md").exists()
    assert "CI runs it too." in (root / "b.md").read_text()  # merged: every distinct line
    operation = out.split("operation ", 1)[1].split()[0]
    code, out = run(capsys, "undo", operation, "--root", str(root))
    assert code == 0, out
    after = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    after.pop(root / ROOT_LOCK_NAME, None)  # the root's write lock stays (docs/safety.md)
    assert after == before


def test_eval_prints_category_figures(capsys):
    code, out = run(capsys, "dev", "eval", str(FIXTURES / "categories" / "labelled-blind.json"))
    assert code == 0 and "top-level category" in out and "subcategory" in out


def test_retention_sim_and_messy_year(capsys, tmp_path):
    code, out = run(capsys, "dev", "retention-sim", "--capacity", "200")
    assert code == 0 and "retention" in out and "recalled=used" in out and "pinned" in out
    code, out = run(
        capsys, "dev", "messy-year", str(tmp_path / "year"), "--memories", "60", "--check"
    )
    assert code == 0, out
    assert "corrected facts: old archived, newer kept" in out


def test_bench_organise_prints_its_figures(capsys):
    import json

    code, out = run(capsys, "dev", "bench-organise", "--docs", "200", "--dry-docs", "40",
                    "--recalls", "20", "--repeats", "1", "--json")  # fmt: skip
    figures = json.loads(out)
    assert code == 0 and set(figures) == {"plan", "dry_run", "staleness"}
    assert figures["plan"]["memories"] == 200 and figures["plan"]["merged"] > 0
    assert figures["staleness"]["recalls"] == 20
