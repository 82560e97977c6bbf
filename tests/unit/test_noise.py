"""docs/ranking.md active-tool noise."""

from __future__ import annotations

from memory_recall.server.ranking.noise import NoiseFilter, tool_aliases
from memory_recall.server.ranking.shortlist import build_shortlist
from memory_recall.server.ranking.view import CorpusView

from tests.conftest import make_doc


def test_aliases_of_plain_and_namespaced_names():
    assert tool_aliases("  Bash ") == {"bash"}
    assert tool_aliases("functions::Read_File") == {"functions::read_file", "read_file"}


def test_aliases_of_mcp_names():
    assert tool_aliases("mcp__github__create_issue") == {
        "mcp__github__create_issue",
        "create_issue",
    }
    assert tool_aliases("mcp__srv__ns__tool") == {"mcp__srv__ns__tool", "ns__tool", "tool"}


def test_noise_needs_alias_and_usage_marker_and_no_durable_marker():
    noise = NoiseFilter.from_recent_tools(["mcp__github__create_issue"])
    usage = make_doc("create_issue tool usage", "how to call it")
    assert noise.is_noise(usage)
    no_marker = make_doc("create_issue notes", "we file bugs with it")
    assert not noise.is_noise(no_marker)
    durable = make_doc("create_issue tool usage", "gotcha: labels must exist first")
    assert not noise.is_noise(durable)
    other_tool = make_doc("search_code tool usage", "")
    assert not noise.is_noise(other_tool)


def test_noise_reads_the_whole_body_lowercased():
    noise = NoiseFilter.from_recent_tools(["Deploy"])
    doc = make_doc("x", "", "a" * 5000 + " DEPLOY Parameter Schema")
    assert noise.is_noise(doc)


def test_noise_text_is_not_nfkc_normalized():
    noise = NoiseFilter.from_recent_tools(["deploy"])
    assert not noise.is_noise(make_doc("ｄｅｐｌｏｙ tool usage"))


def test_no_recent_tools_means_no_noise():
    noise = NoiseFilter.from_recent_tools([])
    assert not noise
    assert not noise.is_noise(make_doc("anything tool usage"))


def test_noise_is_removed_before_ranking_and_from_candidates():
    usage = make_doc("create_issue parameter schema", "fields for create_issue")
    useful = make_doc("create_issue labels", "team conventions")
    snapshot = CorpusView((usage, useful), (usage, useful))
    with_tool = build_shortlist(snapshot, "create_issue", recent_tools=["mcp__gh__create_issue"])
    assert [s.document for s in with_tool.ranked] == [useful]
    assert usage not in with_tool.candidates
    without = build_shortlist(snapshot, "create_issue")
    assert [s.document for s in without.ranked] == [usage, useful]
