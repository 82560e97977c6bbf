"""Memory files as the writer edits them: docs/writing.md keys written, everything else kept verbatim."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from memory_recall.server.documents import InvalidMemory, parse_memory, split_front_matter
from memory_recall.server.roots import Scope
from memory_recall.server.store.memory_file import MemoryFile, render_scalar

HAND_WRITTEN = """---
name: Deploy freeze
description: "No deploys on Friday: the release train leaves Tuesday"
type: project
owner: platform-team   # the on-call rota owns it
tags:
  - release
  - deploy
summary: >
  folded text that a YAML tool
  wrote over two lines
x-claude-id: 7f3a
---

- Production deploys stop on Friday at 15:00.
"""


def test_an_unedited_file_renders_byte_for_byte() -> None:
    for text in (HAND_WRITTEN, HAND_WRITTEN.replace("\n", "\r\n"), "\ufeff" + HAND_WRITTEN):
        assert MemoryFile.parse(text).render() == text


def test_setting_keys_keeps_unknown_keys_and_their_lines_in_place() -> None:
    memory = MemoryFile.parse(HAND_WRITTEN)
    memory.set("description", "No deploys on Friday after 15:00")
    memory.set("updated", "2025-06-01")
    memory.set("supersedes", ["old-freeze.md"])
    out = memory.render()
    for kept in (
        "owner: platform-team   # the on-call rota owns it",
        "tags:\n  - release\n  - deploy",
        "summary: >\n  folded text that a YAML tool\n  wrote over two lines",
        "x-claude-id: 7f3a",
        "name: Deploy freeze",
    ):
        assert kept in out
    head = out.split("---")[1]
    assert head.index("name:") < head.index("description:") < head.index("owner:")
    assert head.rstrip().endswith("supersedes: [old-freeze.md]")
    assert out.endswith("- Production deploys stop on Friday at 15:00.\n")


def test_the_body_and_line_endings_survive_an_edit() -> None:
    memory = MemoryFile.parse(HAND_WRITTEN.replace("\n", "\r\n"))
    memory.set("updated", "2025-06-01")
    memory.set_body("New body.\nSecond line.")
    out = memory.render()
    assert "\r\nupdated: 2025-06-01\r\n" in out
    assert out.endswith("\r\n\r\nNew body.\r\nSecond line.\r\n")
    assert "\n" not in out.replace("\r\n", "")


def test_removing_a_flag_and_reading_lists_both_ways() -> None:
    memory = MemoryFile.parse(HAND_WRITTEN)
    assert memory.get_list("tags") == ["release", "deploy"]
    memory.set("related", ["a.md", "b c.md"])
    assert memory.get_list("related") == ["a.md", "b c.md"]
    memory.set("pinned", True)
    assert memory.get_bool("pinned")
    memory.set("pinned", None)
    assert memory.get("pinned") is None


def test_a_new_file_has_the_keys_in_reading_order() -> None:
    memory = MemoryFile.new(
        {"updated": "2025-06-01", "type": "user", "name": "Terse", "description": "d"}, "Body."
    )
    assert memory.render() == (
        "---\nname: Terse\ndescription: d\ntype: user\nupdated: 2025-06-01\n---\n\nBody.\n"
    )


def test_text_without_front_matter_is_refused() -> None:
    with pytest.raises(InvalidMemory):
        MemoryFile.parse("just text\n")
    with pytest.raises(InvalidMemory):
        MemoryFile.parse("---\nname: x\n")


_VALUES = st.text(
    alphabet=st.characters(blacklist_categories=("Cs", "Cc", "Zl", "Zp")), min_size=1, max_size=80
).filter(lambda v: v.strip() == v and "\x85" not in v)


@given(_VALUES)
def test_every_value_reads_back_the_same_through_the_spec_reader(value: str) -> None:
    """What the daemon writes, the docs/memory-files.md line reader gives back unchanged (a value with
    both kinds of quote and a backslash excepted: it cannot be written for both readers)."""
    if "'" in value and ('"' in value or "\\" in value):
        return
    memory = MemoryFile.new({"name": value, "type": "project"}, "body")
    fields = split_front_matter(memory.render()).fields
    assert fields["name"] == value
    doc = parse_memory(
        memory.render(), path="/m/x.md", relative_path="x.md", scope=Scope.PROJECT, mtime_ms=0
    )
    assert doc.title == value


@pytest.mark.parametrize(
    ("value", "written"),
    [
        ("Deploy freeze", "Deploy freeze"),
        ("Deploy: freeze", "'Deploy: freeze'"),
        ("yes", "'yes'"),
        ("2024", "'2024'"),
        ("- bullet", "'- bullet'"),
        ("it's #1", '"it\'s #1"'),
        ("a # b", "'a # b'"),
    ],
)
def test_values_are_quoted_only_when_yaml_would_misread_them(value: str, written: str) -> None:
    assert render_scalar(value) == written
