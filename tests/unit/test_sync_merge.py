"""One memory changed on two machines: the merge by the write side's rules (server/sync/merge.py)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from memory_recall.server.sync.judge import Judged, Relation, RulesJudge, Statement
from memory_recall.server.sync.merge import Version, merge_memory, units

RULES = RulesJudge()


class Scripted:
    """A judge that answers one relation, and remembers what it was asked."""

    def __init__(self, relation: Relation) -> None:
        self.relation = relation
        self.asked: list[tuple[str, str]] = []

    def relate(self, newer: Statement, older: Statement) -> Judged:
        self.asked.append((newer.text, older.text))
        return Judged(self.relation, "scripted")


def memory(body: str, **front: str) -> bytes:
    fields = {"name": "Staging database", "description": "the staging DB", "type": "project"}
    fields.update(front)
    head = "".join(f"{k}: {v}\n" for k, v in fields.items())
    return f"---\n{head}---\n\n{body}\n".encode()


BASE = memory("The staging database listens on port 5432.\nOwner: Keiko.\nBackups run nightly.")


def body_of(data: bytes | None) -> str:
    assert data is not None
    return data.decode().split("---\n", 2)[2].strip()


@given(st.text(alphabet=st.sampled_from("ab. \n。!?x"), max_size=40))
def test_statements_put_back_together_are_the_body_exactly(text: str) -> None:
    assert "".join(units(text)) == text


def test_statements_are_lines_and_sentences() -> None:
    assert units("One. Two.\nThree\n\nFour。五") == [
        "One. ",
        "Two.\n",
        "Three\n",
        "\n",
        "Four。",
        "五",
    ]


def test_changes_to_different_statements_are_both_kept() -> None:
    ours = memory("The staging database listens on port 6543.\nOwner: Keiko.\nBackups run nightly.")
    theirs = memory(
        "The staging database listens on port 5432.\nOwner: Ravi.\nBackups run nightly."
    )
    judge = Scripted("same-slot")
    merged = merge_memory(BASE, Version(ours, 10, "a"), Version(theirs, 20, "b"), judge)
    assert body_of(merged.data) == (
        "The staging database listens on port 6543.\nOwner: Ravi.\nBackups run nightly."
    )
    assert judge.asked == []  # nothing both changed: nothing to judge
    assert not merged.split


def test_the_same_slot_changed_on_both_machines_the_newer_value_wins() -> None:
    older = memory(
        "The staging database listens on port 6543.\nOwner: Keiko.\nBackups run nightly."
    )
    newer = memory(
        "The staging database listens on port 7000.\nOwner: Keiko.\nBackups run nightly."
    )
    for ours, theirs in ((older, newer), (newer, older)):  # whichever machine merges
        when = {older: 10.0, newer: 20.0}
        merged = merge_memory(BASE, Version(ours, when[ours]), Version(theirs, when[theirs]), RULES)
        assert "port 7000" in body_of(merged.data) and "6543" not in body_of(merged.data)
        assert any("newer value wins" in r for r in merged.reasons)


def test_different_facts_written_in_one_place_are_both_kept_older_first() -> None:
    older = memory("The staging database listens on port 5432.\nOwner: Keiko.\nAlerts go to #ops.")
    newer = memory(
        "The staging database listens on port 5432.\nOwner: Keiko.\nDeploys are frozen in December."
    )
    merged = merge_memory(BASE, Version(older, 10), Version(newer, 20), Scripted("different"))
    assert body_of(merged.data).endswith("Alerts go to #ops.\nDeploys are frozen in December.")


def test_unsure_keeps_both_versions_as_two_memories_to_be_linked() -> None:
    older = memory(
        "The staging database listens on port 5432.\nOwner: the payments team.\nBackups run nightly."
    )
    newer = memory(
        "The staging database listens on port 5432.\nOwner: the platform team.\nBackups run nightly."
    )
    merged = merge_memory(BASE, Version(older, 10), Version(newer, 20), Scripted("unsure"))
    assert merged.split and merged.linked
    assert merged.data == newer and merged.beside == older  # nothing lost, nothing merged by text


def test_an_edit_against_a_deletion_keeps_the_edit() -> None:
    edited = memory(
        "The staging database listens on port 6543.\nOwner: Keiko.\nBackups run nightly."
    )
    for ours, theirs in ((None, edited), (edited, None)):
        merged = merge_memory(BASE, Version(ours, 10), Version(theirs, 20), RULES)
        assert merged.data == edited


def test_a_statement_removed_on_one_side_and_edited_on_the_other_stays_edited() -> None:
    removed = memory("The staging database listens on port 5432.\nBackups run nightly.")
    edited = memory(
        "The staging database listens on port 5432.\nOwner: Ravi.\nBackups run nightly."
    )
    merged = merge_memory(BASE, Version(removed, 20), Version(edited, 10), Scripted("same-slot"))
    assert "Owner: Ravi." in body_of(merged.data)


def test_front_matter_key_by_key() -> None:
    base = memory("Body.", related="[a.md]", updated="2025-01-01")
    ours = memory("Body.", related="[a.md, b.md]", updated="2025-02-01", pinned="true")
    theirs = memory("Body.", related="[a.md, c.md]", updated="2025-03-01", description="renamed")
    merged = merge_memory(base, Version(ours, 10), Version(theirs, 20), RULES).data
    assert merged is not None
    text = merged.decode()
    assert "related: [a.md, c.md, b.md]" in text  # lists joined
    assert "updated: 2025-03-01" in text  # the later date
    assert "pinned: true" in text  # only ours set it
    assert "description: renamed" in text  # only theirs changed it


def test_created_on_both_machines_by_the_rules() -> None:
    ours = memory("Deploys go out on Tuesdays.", name="Deploys")
    same = memory("Deploys go out on Tuesdays.", name="Deploys", description="deploys")
    other = memory("The VPN config lives in 1Password.", name="Deploys")
    kept = merge_memory(None, Version(ours, 10), Version(same, 20), Scripted("restated"))
    assert kept.data == same and not kept.split
    both = merge_memory(None, Version(ours, 10), Version(other, 20), Scripted("different"))
    assert both.split and not both.linked and both.beside == ours


def test_a_file_the_rules_cannot_read_is_kept_twice_never_merged_as_text() -> None:
    merged = merge_memory(
        b"plain\n", Version(b"plain one\n", 10), Version(b"plain two\n", 20), RULES
    )
    assert merged.data == b"plain two\n" and merged.beside == b"plain one\n"


def test_a_tie_in_time_is_decided_by_content_alone() -> None:
    a = memory("The staging database listens on port 6543.\nOwner: Keiko.\nBackups run nightly.")
    b = memory("The staging database listens on port 7000.\nOwner: Keiko.\nBackups run nightly.")
    one = merge_memory(BASE, Version(a, 10, "x"), Version(b, 10, "y"), RULES)
    two = merge_memory(BASE, Version(b, 10, "y"), Version(a, 10, "x"), RULES)
    assert one.data == two.data
