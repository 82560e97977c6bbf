"""The command line as a user meets it: mistakes, help, tables."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from memory_recall.server.cli.main import build_parser, main
from memory_recall.server.cli.show import clip, display_width, plural, table
from memory_recall.server.ranking.registry import RANKERS

from tests.memory_files import write_memory


def _error(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    with pytest.raises(SystemExit) as exited:
        main(list(argv))
    assert exited.value.code == 2
    return capsys.readouterr().err


@pytest.mark.parametrize("command", ["recall", "status"])
def test_a_missing_root_is_an_error_not_an_empty_answer(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "nope"
    argv = [command, "deploy"] if command == "recall" else [command]
    err = _error(capsys, *argv, "--root", str(missing))
    assert f"{missing} does not exist" in err


def test_a_file_given_as_root_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    file = tmp_path / "notes.md"
    file.write_text("x", encoding="utf-8")
    assert "is not a folder" in _error(capsys, "recall", "q", "--root", str(file))


def test_an_unknown_scope_names_the_valid_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    err = _error(capsys, "recall", "q", "--root", f"{tmp_path}:bogus")
    assert "unknown scope 'bogus'" in err and "project" in err and "user" in err


def test_a_folder_whose_name_has_a_colon_is_still_a_root(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    odd = tmp_path / "notes:2024"
    write_memory(odd, "deploy.md", title="Deploy freeze", description="no deploys on Friday")
    assert main(["recall", "deploy friday", "--root", str(odd)]) == 0
    out = capsys.readouterr().out
    assert "Deploy freeze" in out and "1 document in 1 root," in out


def test_explain_tells_the_fast_phase_that_recall_prints(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # `recall` prints the fast phase the agents' hooks inject without a model; `explain`
    # said of the same memory that it went in the refined phase.
    monkeypatch.setenv("MEMORY_RECALL_STATE_DIR", "off")
    write_memory(tmp_path, "deploy.md", title="Deploy freeze", description="no deploys on Friday")
    write_memory(tmp_path, "ci.md", title="CI runners", description="CI runs on Buildkite")
    assert main(["recall", "deploy freeze friday", "--root", str(tmp_path), "--json"]) == 0
    assert "deploy.md" in capsys.readouterr().out.split('"refined"')[0]  # in the fast phase
    assert main(["explain", "deploy freeze friday", "deploy.md", "--root", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Sent in the fast phase" in out and "its confidence, " in out


def test_a_scoped_root_is_accepted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_memory(tmp_path, "a.md", title="Editor", description="I use Neovim with tmux")
    assert main(["status", "--root", f"{tmp_path}:user"]) == 0
    assert "user" in capsys.readouterr().out


def test_a_missing_demo_folder_is_an_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "does not exist" in _error(capsys, "demo", str(tmp_path / "nope"))


def test_help_names_the_users_commands_and_leaves_the_developers_to_dev(
    capsys: pytest.CaptureFixture[str],
) -> None:
    top = build_parser().format_help()
    for command in ("serve", "recall", "search", "explain", "status", "remember", "demo", "dev"):
        assert command in top
    for developers in ("bench-write", "delivery", "eval-write", "messy-year"):
        assert developers not in top
    from memory_recall.server.cli.dev import build_parser as dev_parser

    dev_help = dev_parser().format_help()
    for command in ("eval", "bench", "delivery", "eval-write", "messy-year"):
        assert command in dev_help
    with pytest.raises(SystemExit):
        main(["recall", "--help"])
    recall_help = capsys.readouterr().out
    for name, spec in RANKERS.items():
        assert name in recall_help and spec.description.split()[0] in recall_help


def test_plurals() -> None:
    assert plural(1, "document") == "1 document"
    assert plural(0, "root") == "0 roots"
    assert plural(2, "root") == "2 roots"


def test_wide_characters_take_two_columns() -> None:
    assert display_width("abc") == 3
    assert display_width("配布") == 4
    assert display_width("배포") == 4
    assert display_width("e\u0301") == 1  # a combining accent takes no column


def test_clip_never_exceeds_the_columns_asked() -> None:
    assert clip("short", 10) == "short"
    clipped = clip("事故复盘：2024-05-08 Redis 缓存雪崩", 12)
    assert clipped.endswith("…") and display_width(clipped) <= 12


@given(
    st.lists(
        st.lists(st.text(alphabet="ab配布배포éД ", min_size=0, max_size=8), min_size=3, max_size=3),
        min_size=1,
        max_size=5,
    )
)
def test_table_columns_start_at_the_same_display_column_on_every_line(
    rows: list[list[str]],
) -> None:
    rows = [[cell.strip() or "x" for cell in row] for row in rows]
    lines = table(rows, ["one", "two", "three"]).splitlines()

    def starts(line: str, cells: list[str]) -> list[int]:
        at, found = 0, []
        for cell in cells:
            index = line.index(cell, at)
            found.append(display_width(line[:index]))
            at = index + len(cell)
        return found

    expected = starts(lines[0], ["one", "two", "three"])
    for line, row in zip(lines[2:], rows, strict=True):
        assert starts(line, row) == expected


def test_eval_over_a_glob_skips_the_baseline_and_says_so(capsys) -> None:
    from memory_recall.server.cli.main import main

    code = main(["dev", "eval", "fixtures/eval/baseline.json", "fixtures/eval/coding.json"])
    captured = capsys.readouterr()
    assert code == 0
    assert "skipped fixtures/eval/baseline.json: a baseline" in captured.err
    assert "R@5" in captured.out


def test_eval_over_the_category_sets_skips_their_baseline_and_says_so(capsys) -> None:
    from memory_recall.server.cli.main import main

    code = main(
        ["dev", "eval", "fixtures/categories/baseline.json", "fixtures/categories/labelled.json"]
    )
    captured = capsys.readouterr()
    assert code == 0
    assert "skipped fixtures/categories/baseline.json: the category sets' baseline" in captured.err
    assert "by category" in captured.out


def test_eval_refuses_a_file_that_is_no_corpus_and_says_why(capsys, tmp_path: Path) -> None:
    from memory_recall.server.cli.main import main

    other = tmp_path / "other.json"
    other.write_text('{"transcripts": []}', encoding="utf-8")
    assert main(["dev", "eval", "fixtures/eval/coding.json", str(other)]) == 2
    assert f"{other}: neither a ranking corpus" in capsys.readouterr().err
    other.write_text("[1, 2", encoding="utf-8")
    assert main(["dev", "eval", str(other)]) == 2
    assert "not readable as JSON" in capsys.readouterr().err


def test_agent_wrapped_asks_every_question_with_each_instruction(capsys) -> None:
    from memory_recall.server.cli.main import main
    from memory_recall.server.dev.evaluation import load_corpus
    from memory_recall.server.dev.wrapped import INSTRUCTIONS, agent_wrapped

    corpus = load_corpus("fixtures/eval/coding.json")
    wrapped = agent_wrapped(corpus)
    assert len(wrapped.cases) == len(corpus.cases) * len(INSTRUCTIONS)
    first = [c for c in wrapped.cases if c.id == corpus.cases[0].id]
    assert len({c.query for c in first}) == len(INSTRUCTIONS)
    assert all(corpus.cases[0].query in c.query and c.query != corpus.cases[0].query
               for c in first)  # fmt: skip
    assert {c.relevant_ids for c in first} == {corpus.cases[0].relevant_ids}
    assert main(["dev", "eval", "fixtures/eval/coding.json", "--agent-wrapped", "--json"]) == 2
    assert "--agent-wrapped prints the tables only" in capsys.readouterr().err
