"""SPEC §2: what a memory file is and how it is read."""

from __future__ import annotations

import pytest
from memory_recall.server.documents import (
    BODY_WINDOW_CHARS,
    InvalidMemory,
    Scope,
    is_memory_file_name,
    parse_memory,
)


def parse(text: str):
    return parse_memory(text, path="/m/x.md", relative_path="x.md", scope=Scope.USER, mtime_ms=5)


def test_front_matter_fields_and_body():
    doc = parse("---\nname: Terse answers\ndescription: no summaries\ntype: user\n---\n\nBody.\n")
    assert (doc.title, doc.description, doc.type, doc.body) == (
        "Terse answers", "no summaries", "user", "Body.",
    )  # fmt: skip


def test_values_may_contain_colons():
    doc = parse(
        "---\nname: Rust: error handling\ndescription: see https://x.io:8080/a\ntype: feedback\n---\n"
    )
    assert doc.title == "Rust: error handling"
    assert doc.description == "see https://x.io:8080/a"


def test_one_pair_of_matching_quotes_is_stripped():
    doc = parse('---\nname: "Quoted: title"\ndescription: \'"inner"\'\ntype: user\n---\n')
    assert doc.title == "Quoted: title"
    assert doc.description == '"inner"'


def test_mismatched_quotes_are_kept():
    doc = parse("---\nname: \"half'\ntype: user\n---\n")
    assert doc.title == "\"half'"


def test_crlf_is_accepted():
    doc = parse("---\r\nname: Win\r\ntype: project\r\n---\r\nline one\r\nline two\r\n")
    assert doc.title == "Win"
    assert doc.body == "line one\nline two"


def test_title_falls_back_to_title_key_then_type():
    assert parse("---\ntitle: From title\ntype: user\n---\n").title == "From title"
    assert parse("---\nname: N\ntitle: T\ntype: user\n---\n").title == "N"
    assert parse("---\ntype: reference\n---\n").title == "reference"


def test_description_defaults_to_empty():
    assert parse("---\ntype: user\n---\nbody").description == ""


def test_body_is_trimmed_and_placeholder_counts_as_empty():
    assert parse("---\ntype: user\n---\n\n  hello  \n\n").body == "hello"
    assert parse("---\ntype: user\n---\n\n_No entries yet._\n").body == ""
    assert parse("---\ntype: user\n---\n_No entries yet._ more").body == "_No entries yet._ more"


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no front matter\n", "first line"),
        ("", "first line"),
        ("---\ntype: user\nno closing line\n", "unterminated"),
        ("---\nname: x\n---\nbody", "no 'type'"),
        ("---\ntype: todo\n---\n", "unknown type 'todo'"),
        ("\n---\ntype: user\n---\n", "first line"),
    ],
)
def test_invalid_files_raise_with_reason(text, reason):
    with pytest.raises(InvalidMemory, match=reason):
        parse(text)


def test_all_four_types_are_memories():
    for t in ("user", "feedback", "project", "reference"):
        assert parse(f"---\ntype: {t}\n---\n").type == t


def test_index_file_is_never_a_memory():
    assert not is_memory_file_name("MEMORY.md")
    assert is_memory_file_name("memory.md")
    assert is_memory_file_name("notes.md")
    assert not is_memory_file_name("notes.txt")


def test_body_window_is_first_1200_code_points():
    body = "字" * 1300
    doc = parse(f"---\ntype: user\n---\n{body}")
    assert len(doc.body_window) == BODY_WINDOW_CHARS
    assert doc.truncated
    assert doc.norm_body_window == "字" * BODY_WINDOW_CHARS


def test_fields_are_normalized_once_at_load():
    doc = parse(
        "---\nname: ＤＥＰＬＯＹ Steps\ndescription: Ｒｅｌｅａｓｅ\ntype: project\n---\nＢｏｄｙ"
    )
    assert doc.norm_title == "deploy steps"
    assert doc.norm_description == "release"
    assert doc.norm_body_window == "body"
    # The noise text is lowercased but not NFKC-normalized.
    assert "ｄｅｐｌｏｙ" in doc.noise_text
