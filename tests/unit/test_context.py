"""Always-loaded memories (docs/organisation.md `memory/context`): within the budget, the rest listed."""

from __future__ import annotations

from memory_recall.server.organise.context import HEADING, build_context
from memory_recall.server.organise.tree import TopicTree
from memory_recall.server.roots import Scope

from tests.organise_docs import memory

ALWAYS = {"always": "true"}


def context(docs, budget=4000):
    return build_context(docs, budget_chars=budget, place=lambda d: TopicTree().place(d).path)


def test_only_always_memories_in_a_stable_order():
    style = memory("Answer tersely", "Short sentences, no preamble.", type="user", front=ALWAYS)
    rule = memory("No force-push", "Never force-push main.", type="feedback", front=ALWAYS,
                  scope=Scope.USER)  # fmt: skip
    other = memory("Grafana", "https://grafana.example.com", type="reference")
    c = context([rule, other, style])
    assert c.docs == (style, rule)  # project before user, then the tree's order
    assert c.prompt.startswith(HEADING + "\n\n### Answer tersely")
    assert "Never force-push main." in c.prompt and "Grafana" not in c.prompt
    assert c.omitted == () and c.used_chars == len(c.prompt) <= 4000


def test_what_does_not_fit_is_listed_never_dropped_silently():
    docs = [memory(f"Rule {i}", "x" * 300, front=ALWAYS, name=f"r{i}.md") for i in range(5)]
    huge = memory("Huge", "y" * 5000, front=ALWAYS, name="huge.md")
    c = context([*docs, huge], budget=1000)
    assert len(c.prompt) <= 1000
    assert len(c.docs) == 2
    assert {o.doc.title for o in c.omitted} == {"Rule 2", "Rule 3", "Rule 4", "Huge"}
    huge_reason = next(o.reason for o in c.omitted if o.doc.title == "Huge")
    assert "larger than the whole budget" in huge_reason


def test_a_smaller_memory_after_a_large_one_still_fits():
    big = memory("A big rule", "z" * 700, front=ALWAYS, name="a.md")
    small = memory("B small", "short", front=ALWAYS, name="b.md")
    first = memory("0 first", "w" * 200, front=ALWAYS, name="0.md")
    c = context([big, small, first], budget=600)
    assert [d.title for d in c.docs] == ["0 first", "B small"]
    assert [o.doc.title for o in c.omitted] == ["A big rule"]


def test_no_always_memory_is_an_empty_prompt():
    c = context([memory("t", "b")])
    assert c.prompt == "" and c.docs == () and c.used_chars == 0
