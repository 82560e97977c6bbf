"""A fact's reason and use (server/facts/rationale.py): notes as Claude Code writes them, a
fact then "**Why:** …" and "**How to apply:** …", judged by their facts; the reasons
follow the update that writes them, and none is lost."""

from __future__ import annotations

import pytest
from memory_recall.server.facts.judgement import (
    REASON_OF_ITS_OWN,
    Judgement,
    MemoryText,
    judge,
)
from memory_recall.server.facts.rationale import blanked, reason_lines
from memory_recall.server.facts.rewrite import rewrite
from memory_recall.server.store.metadata import derive


def _note(body: str) -> MemoryText:
    derived = derive(body)
    return MemoryText(derived.title, derived.description, body, derived.type)


def _reasoned(fact: str, why: str, use: str) -> MemoryText:
    return _note(f"{fact}\n\n**Why:** {why}\n\n**How to apply:** {use}")


def _sure(found: Judgement, kind: str) -> None:
    assert (found.kind, found.sure) == (kind, True), found


@pytest.mark.parametrize(
    ("old_fact", "new_fact", "old_why", "new_why"),
    [
        (
            "Dependency updates are opened by Dependabot.",
            "Dependency updates are opened by Renovate now.",
            "it was agreed in the team retro.",
            "the user asked for it.",
        ),
        (
            "Ansprechpartner für das Deployment ist Markus Weber.",
            "Ansprechpartner für das Deployment ist jetzt Anna Schmidt.",
            "so im Team-Retro beschlossen.",
            "der Nutzer hat darum gebeten.",
        ),
        (
            "依赖更新由 Dependabot 自动提交。",
            "依赖更新改为由 Renovate 自动提交。",
            "团队复盘时定下的。",
            "用户要求的。",
        ),
    ],
)
def test_a_correction_between_two_reasoned_notes_is_written(
    old_fact: str, new_fact: str, old_why: str, new_why: str
) -> None:
    # Each note's own "Why:" was compared with the other's as a fact: "a word changed", a
    # lean, and the correction was never applied.
    old = _reasoned(old_fact, old_why, "check this before changing it.")
    new = _reasoned(new_fact, new_why, "follow it in every session.")
    found = judge(new, old)
    _sure(found, "update")
    body = rewrite(old, found).body
    # The update replaces the old note's only fact: its reasons go with it.
    assert body == new.body
    assert old_why not in rewrite(old, found).description


def test_two_reasoned_notes_of_different_things_are_not_linked() -> None:
    # The two reasons, compared as facts, linked them as perhaps one worker's update.
    old = _reasoned(
        "The billing worker reads its database from BILLING_DATABASE_URL.",
        "it was agreed in the team retro.",
        "check this before changing it.",
    )
    new = _reasoned(
        "The invoice worker reads its database from INVOICE_DATABASE_URL.",
        "the user asked for it.",
        "follow it in every session.",
    )
    _sure(judge(new, old), "independent")


def test_a_reason_added_to_a_plain_note_lands_on_lines_of_its_own() -> None:
    old = _note("Dependency updates are opened by Dependabot.")
    new = _reasoned(
        "Dependency updates are opened by Renovate now.",
        "the user asked for it.",
        "follow it in every session.",
    )
    found = judge(new, old)
    _sure(found, "update")
    assert rewrite(old, found).body == (
        "Dependency updates are opened by Renovate now.\n\n"
        "**Why:** the user asked for it.\n\n**How to apply:** follow it in every session."
    )


def test_the_reason_of_a_fact_the_update_leaves_stays() -> None:
    # The update changes one of two facts: the old reason may be the other's. Kept, and the
    # new one said beside it.
    old = _note(
        "The public API allows 100 requests per minute per key.\n"
        "Over the limit it answers 429 with a Retry-After header.\n\n"
        "**Why:** a partner overloaded the API at launch."
    )
    new = _reasoned(
        "The public API now allows 300 requests per minute per key.",
        "the user asked for it.",
        "follow it in every session.",
    )
    found = judge(new, old)
    _sure(found, "update")
    body = rewrite(old, found).body
    assert "300 requests" in body and "100 requests" not in body
    assert "Retry-After" in body
    assert "**Why:** a partner overloaded the API at launch." in body
    assert body.endswith(
        "**Why:** the user asked for it.\n\n**How to apply:** follow it in every session."
    )


def test_the_same_fact_with_a_reason_of_its_own_is_never_dropped_as_known() -> None:
    old = _reasoned(
        "Production deploys need two approvals.",
        "it was agreed in the team retro.",
        "check this before changing it.",
    )
    again = _reasoned(
        "Production deploys need two approvals.",
        "a reviewer missed a broken migration.",
        "check this before changing it.",
    )
    found = judge(again, old)
    assert (found.kind, found.sure, found.reason) == ("duplicate", False, REASON_OF_ITS_OWN)
    # Said again with its reasons as they were: known.
    _sure(judge(_note(old.body), old), "duplicate")
    plain = _note("Production deploys need two approvals.")
    _sure(judge(plain, old), "duplicate")


def test_a_why_line_names_nothing_of_its_own() -> None:
    # A label of words the old memory never says made any sure verdict a lean; "Why" is
    # the fact's reason, not what the line is about.
    old = _note("Production deploys need one approval.")
    new = _reasoned(
        "Production deploys need two approvals now.",
        "a reviewer missed a broken migration.",
        "request two reviewers.",
    )
    _sure(judge(new, old), "update")


def test_reason_lines_are_found_in_several_languages_and_blanked_in_place() -> None:
    body = (
        "Deploys need two approvals.\n\n**Why:** an incident.\n\n**How to apply:** ask two.\n"
        "**Pourquoi :** un incident.\n**Warum:** ein Vorfall.\n**原因：** 事故。\n**理由：** 事故。\n"
        "**이유:** 사고."
    )
    lines = reason_lines(body)
    labels = [line.label for line in lines]
    assert labels == ["why", "how to apply", "pourquoi", "warum", "原因", "理由", "이유"]
    assert lines[0].said.text == "an incident."
    assert body[lines[0].said.start : lines[0].said.end] == "an incident."
    facts = blanked(body, lines)
    assert facts is not None and len(facts) == len(body)
    assert facts.split() == ["Deploys", "need", "two", "approvals."]
    # A reason first, or nothing but reasons: read as written.
    assert (
        blanked(
            "**Why:** an incident.\nDeploys need two approvals.",
            reason_lines("**Why:** an incident.\nDeploys need two approvals."),
        )
        is None
    )
