"""docs/memory-files.md: what a memory file is and how it is read."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from memory_recall.server.documents import (
    BODY_WINDOW_CHARS,
    InvalidMemory,
    Scope,
    is_memory_file_name,
    parse_memory,
    split_front_matter,
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


# -- YAML front matter (issue 21): where the line reader would cut values short --------------


def test_a_value_folded_onto_continuation_lines_reads_whole():
    doc = parse(
        "---\nname: Release train\ndescription: The train leaves every second Tuesday\n"
        "  at noon; the branch is cut the evening before\ntype: project\n---\nBody.\n"
    )
    assert doc.description == (
        "The train leaves every second Tuesday at noon; the branch is cut the evening before"
    )
    assert doc.title == "Release train" and doc.type == "project"


@pytest.mark.parametrize(
    ("block", "expected"),
    [
        ('description: "first line\n  second line"', "first line second line"),
        ("description: 'it''s quoted\n  on two lines'", "it's quoted on two lines"),
        ('description: "an \\"escaped\\" quote"', 'an "escaped" quote'),
        ("description: >\n  folded\n  block", "folded block"),
        ("description: |\n  literal\n  block\n", "literal\nblock"),
    ],
    ids=["double-quoted", "single-quoted", "escapes", "folded-block", "literal-block"],
)
def test_quoted_and_block_values_read_as_yaml(block, expected):
    doc = parse(f"---\nname: n\n{block}\ntype: user\n---\n")
    assert doc.description == expected


def test_lists_are_read_as_lists_and_as_text():
    front = split_front_matter(
        "---\nname: n\ntype: user\ntags:\n  - ci\n  - release\nrelated: [a.md, b.md]\n---\n"
    )
    assert front.lists == {"tags": ["ci", "release"], "related": ["a.md", "b.md"]}
    assert front.fields["tags"] == "ci, release"


def test_yaml_values_stay_text_never_typed():
    front = split_front_matter(
        "---\nname: 1.10\nupdated: 2024-05-01\npinned: yes\nempty:\ntype: user\ntags: [01]\n---\n"
    )
    assert front.fields == {
        "name": "1.10", "updated": "2024-05-01", "pinned": "yes", "empty": "", "type": "user",
        "tags": "01",
    }  # fmt: skip


@pytest.mark.parametrize(
    "line",
    [
        "description: Deploy rule: never on Friday",  # a colon: not YAML, read by lines
        "description: see issue #12 for why",  # a '#' is text, not a YAML comment
        "description: [WIP] the new flow",  # a bracket that is no list
        "description: *starred* words",  # an alias-like value
        "description: @owner knows",
    ],
)
def test_claude_code_style_lines_read_exactly_as_spec_2_says(line):
    text = f"---\nname: n\n{line}\ntype: project\nextra:\n  - a\n---\n"
    assert parse(text).description == line.partition(": ")[2]


def test_a_block_that_is_not_a_mapping_of_scalars_and_lists_reads_by_lines():
    front = split_front_matter("---\nname: n\nmeta:\n  owner: ada\ntype: user\n---\n")
    assert front.fields == {"name": "n", "meta": "", "owner": "ada", "type": "user"}
    assert front.lists == {}


def test_yaml_keys_are_lowercased_like_line_keys():
    doc = parse("---\nName: Upper\nDescription: 'quoted'\nType: feedback\n---\n")
    assert (doc.title, doc.description, doc.type) == ("Upper", "quoted", "feedback")


def test_the_spec_rules_hold_for_yaml_read_fields():
    # title falls back to the type, an unknown type is not a memory, CRLF is fine.
    doc = parse('---\r\ndescription: "two\r\n  lines"\r\ntype: reference\r\n---\r\nB\r\n')
    assert (doc.title, doc.description) == ("reference", "two lines")
    with pytest.raises(InvalidMemory, match="unknown type"):
        parse('---\nname: n\ntype: "banana"\ndescription: "x\n  y"\n---\n')


_plain = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="\n\r"),
    max_size=40,
).map(str.strip)


@given(name=_plain, description=_plain)
def test_single_line_plain_values_read_the_same_with_or_without_yaml(name, description):
    """Whatever makes the block YAML elsewhere, a one-line plain value keeps its plain reading."""
    if description[:1] in "\"'[{|>&*!" or name[:1] in "\"'[{|>&*!":
        return  # those are quoted or YAML syntax by construction
    lines = f"name: {name}\ndescription: {description}\ntype: user"
    by_lines = split_front_matter(f"---\n{lines}\n---\n").fields
    with_yaml = split_front_matter(f"---\n{lines}\nlist:\n  - x\n---\n").fields
    assert with_yaml["name"] == by_lines["name"]
    assert with_yaml["description"] == by_lines["description"]
