"""The deterministic merge keeps every distinct line (docs/organisation.md)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from memory_recall.server.organise.merge import covers, line_key, merge_bodies


def test_newest_first_then_the_lines_it_lacks_in_order():
    newest = "- Run tests with make test.\n- CI runs them on every push."
    older = ["* run tests with  make test\nUse -k to pick one test.", "Use -k to pick one test"]
    merged = merge_bodies(newest, older)
    assert merged.body == newest + "\n\nUse -k to pick one test."
    assert merged.added == ("Use -k to pick one test.",)


def test_nothing_new_leaves_the_newest_as_it_is():
    assert merge_bodies("a line\n\nanother", ["Another.", "- a line"]).body == "a line\n\nanother"


def test_same_lines_across_scripts_and_widths():
    assert line_key("１. Ｄｅｐｌｏｙ　now！") == line_key("deploy now")
    assert line_key("- 部署前先跑测试。") == line_key("部署前先跑测试")


lines = st.lists(st.text(alphabet="ab cé漢-*.\t", min_size=0, max_size=12), max_size=6)


@given(lines, st.lists(lines, max_size=3))
def test_every_distinct_line_survives_and_the_newest_leads(newest_lines, older_lines):
    newest = "\n".join(newest_lines)
    older = ["\n".join(ls) for ls in older_lines]
    merged = merge_bodies(newest, older)
    assert merged.body.startswith(newest.rstrip())
    kept = {line_key(line) for line in merged.body.splitlines()}
    for body in [newest, *older]:
        assert covers(merged.body, body)
        assert {line_key(line) for line in body.splitlines()} - {""} <= kept
    assert merge_bodies(merged.body, older).body == merged.body  # idempotent
