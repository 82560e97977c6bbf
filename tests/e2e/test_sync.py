"""Sync through git (issue 34): two machines and a bare remote on this disk, the real writer
and the real sync. No fact lost, no secret committed, no conflict marker, and both
machines converge — byte-identical memories after two syncs each."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.state import StateStore
from memory_recall.server.sync.judge import Judged, Statement
from memory_recall.server.sync.repo import SyncRefused
from memory_recall.server.sync.service import SyncService

from tests.sync_helpers import (
    Machine,
    bare_remote,
    converge,
    everything_ever_pushed,
    git,
    no_conflict_markers,
    same_memories,
)

AWS_KEY = "AKIAZ7QWERTY2PLMNB4X"
AWS_SECRET = "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"


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Machine, Machine]:
    remote = bare_remote(tmp_path)
    a = Machine(tmp_path, "laptop", remote)
    b = Machine(tmp_path, "desktop", remote)
    a.remember("The staging database listens on port 5432. Its owner is Keiko.",
               title="Staging database")  # fmt: skip
    a.remember("Deploys go out on Tuesdays after the standup.", title="Deploy day")
    assert a.init().state == "synced"
    assert b.init().state == "synced"
    assert b.memories() == a.memories()
    return a, b


def _path_of(result) -> str:  # type: ignore[no-untyped-def]
    return Path(result.operations[0].path).name


def test_a_second_machine_gets_every_memory_byte_for_byte(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    files = same_memories(a, b)
    assert "staging-database.md" in files and "MEMORY.md" in files
    assert b"Staging database" in files["MEMORY.md"]


def test_concurrent_new_memories_on_both_machines_are_both_kept(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    a.remember("The VPN config lives in 1Password under Infra/VPN.", title="VPN config")
    b.remember("Use ruff for formatting Python code in every repository.", title="Formatter")
    converge(a, b)
    files = same_memories(a, b)
    assert "vpn-config.md" in files and "formatter.md" in files
    index = files["MEMORY.md"].decode()
    assert "VPN config" in index and "Formatter" in index
    no_conflict_markers(a, b)


def test_the_same_memory_changed_in_different_places_keeps_both_changes(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    body = a.text("staging-database.md").split("---\n", 2)[2].strip()
    a.update("staging-database.md", body=body.replace("5432", "6543"))
    b.update(
        "staging-database.md",
        body=body.replace("Keiko", "Ravi") + "\nBackups run nightly at 02:00.",
    )
    converge(a, b)
    text = same_memories(a, b)["staging-database.md"].decode()
    body = text.split("---\n", 2)[2]
    assert "6543" in body and "Ravi" in body and "Backups run nightly" in body
    assert "5432" not in body and "Keiko" not in body
    no_conflict_markers(a, b)


def test_the_same_slot_changed_on_both_machines_newer_wins_older_stays_in_history(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    body = a.text("staging-database.md").split("---\n", 2)[2].strip()
    a.update("staging-database.md", body=body.replace("5432", "6543"))
    assert a.sync().state == "synced"
    b.update("staging-database.md", body=body.replace("5432", "7000"))  # later: newer
    converge(b, a)
    text = same_memories(a, b)["staging-database.md"].decode()
    body = text.split("---\n", 2)[2]
    assert "7000" in body and "6543" not in body
    assert "6543" in git(b.root, "log", "-p", "--all")  # the older version: in the history
    history = [c for op in b.journal.history(b.state.root_id(str(b.root)), ["staging-database.md"])
               for c in op.changes]  # fmt: skip
    assert any(c.after and b"6543" in c.after for c in history)  # … and in the journal
    no_conflict_markers(a, b)


class _UnsureJudge:
    def relate(self, newer: Statement, older: Statement) -> Judged:
        return Judged("unsure", "scripted: the rules cannot tell")


def test_unsure_keeps_both_memories_linked(tmp_path: Path) -> None:
    remote = bare_remote(tmp_path)
    a = Machine(tmp_path, "laptop", remote, judge=_UnsureJudge())
    b = Machine(tmp_path, "desktop", remote, judge=_UnsureJudge())
    a.write("team.md", "Team", "The payments team owns the ledger service.")
    a.init()
    b.init()
    a.write("team.md", "Team", "The payments team owns the ledger service and billing.")
    b.write("team.md", "Team", "The platform team owns the ledger service.")
    converge(a, b)
    files = same_memories(a, b)
    assert "team-2.md" in files, sorted(files)
    first, second = files["team.md"].decode(), files["team-2.md"].decode()
    assert "related: [team-2.md]" in first and "related: [team.md]" in second
    assert {
        "billing" in first or "billing" in second,
        "platform" in first or "platform" in second,
    } == {True}
    no_conflict_markers(a, b)


def test_a_deletion_against_an_edit_keeps_the_edit(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    a.forget("deploy-day.md")
    b.update("deploy-day.md", body="Deploys go out on Thursdays after the standup.")
    converge(a, b)
    files = same_memories(a, b)
    assert "Thursdays" in files["deploy-day.md"].decode()
    no_conflict_markers(a, b)


def test_a_forget_on_one_machine_archives_the_memory_on_the_other(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    a.forget("deploy-day.md")
    converge(a, b)
    assert "deploy-day.md" not in b.memories()
    assert b.archived() == ["deploy-day.md"]  # restorable there too
    b.catalog.scan()
    b.writer.restore(str(b.root / "deploy-day.md"))
    converge(b, a)
    assert "deploy-day.md" in same_memories(a, b)


def test_a_rename_meets_an_edit(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    os.rename(a.root / "deploy-day.md", a.root / "deploys.md")
    b.update(
        "deploy-day.md", body="Deploys go out on Tuesdays after the standup. Never on Fridays."
    )
    converge(a, b)
    files = same_memories(a, b)
    assert "deploy-day.md" not in files
    assert "Never on Fridays" in files["deploys.md"].decode()
    assert "deploys.md" in files["MEMORY.md"].decode()
    no_conflict_markers(a, b)


def test_a_hard_delete_is_gone_on_both_machines_journals_included(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    a.forget("deploy-day.md", hard=True)
    converge(a, b)
    for machine in (a, b):
        assert "deploy-day.md" not in machine.memories()
        assert "deploy-day.md" not in machine.archived()
        root_id = machine.state.root_id(str(machine.root))
        rows = machine.state.query(
            "SELECT COUNT(*) FROM changes WHERE root_id = ? AND path = ? AND"
            " (before IS NOT NULL OR after IS NOT NULL)",
            (root_id, "deploy-day.md"),
        )
        assert rows[0][0] == 0, machine.name


def test_a_remote_that_fails_mid_push_loses_nothing(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    hook = a.remote / "hooks" / "pre-receive"  # type: ignore[operator]
    hook.write_text("#!/bin/sh\ncat >/dev/null\necho 'remote: disk quota exceeded' >&2\nexit 1\n")
    hook.chmod(hook.stat().st_mode | stat.S_IEXEC)
    a.remember("The on-call rota is in PagerDuty under Platform.", title="On-call rota")
    failed = a.sync()
    assert failed.state == "error" and not failed.pushed and "quota" in (failed.error or "")
    assert "on-call-rota.md" in a.memories()  # offline work is never blocked
    a.remember("Grafana lives at grafana.internal.", title="Grafana")
    status = a.service.status(0)
    assert status.ahead >= 1 and status.pending >= 1 and status.last_error
    hook.unlink()
    converge(a, b)
    files = same_memories(a, b)
    assert "on-call-rota.md" in files and "grafana.md" in files


def test_an_unreachable_remote_never_blocks_writes(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    moved = a.remote.with_name("elsewhere.git")  # type: ignore[union-attr]
    a.remote.rename(moved)  # type: ignore[union-attr]
    a.remember("Releases are cut on the first Monday of the month.", title="Release cut")
    outcome = a.sync()
    assert outcome.state in ("offline", "error") and outcome.error
    assert a.service.status(0).failures == 1
    moved.rename(a.remote)  # type: ignore[arg-type]
    converge(a, b)
    assert "release-cut.md" in same_memories(a, b)


def test_a_secret_written_by_hand_never_leaves_the_machine(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    a.write(
        "aws.md",
        "AWS access",
        f"aws_access_key_id = {AWS_KEY}\naws_secret_access_key = {AWS_SECRET}",
    )
    outcome = a.sync()
    assert outcome.state == "synced" and "aws.md" in outcome.held
    assert "credential" in a.service.status(0).held["aws.md"]
    converge(a, b)
    assert "aws.md" not in b.memories()
    pushed = everything_ever_pushed(a.remote)  # type: ignore[arg-type]
    assert AWS_KEY not in pushed and AWS_SECRET not in pushed
    assert "aws.md" not in pushed  # not even its line in MEMORY.md
    # Once the credential is gone from it, the memory travels.
    a.write("aws.md", "AWS access", "The AWS keys live in 1Password under Infra/AWS.")
    converge(a, b)
    assert "1Password" in b.text("aws.md")
    assert a.service.status(0).held == {}


def test_a_secret_committed_by_hand_is_not_pushed_and_history_can_be_rewritten(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    a.write(
        "notes.md", "Notes", f"aws_access_key_id = {AWS_KEY}\naws_secret_access_key = {AWS_SECRET}"
    )
    git(a.root, "add", "-f", "notes.md")
    git(a.root, "-c", "user.name=me", "-c", "user.email=me@example.com", "commit", "-qm", "notes")
    blocked = a.sync()
    assert blocked.state == "blocked" and not blocked.pushed
    assert AWS_SECRET not in everything_ever_pushed(a.remote)  # type: ignore[arg-type]
    assert any("notes.md" in s for s in a.service.status(0).secrets)
    _head, count = a.service.rewrite_history(0)
    assert count >= 1
    a.write("notes.md", "Notes", "The temporary key was revoked.")
    converge(a, b)
    pushed = everything_ever_pushed(a.remote)  # type: ignore[arg-type]
    assert AWS_SECRET not in pushed and AWS_KEY not in pushed
    assert "revoked" in b.text("notes.md")


def test_a_private_memory_stays_on_its_machine(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    a.write("salary.md", "Salary talk", "The raise I asked for.", private="true")
    converge(a, b)
    assert "salary.md" not in b.memories()
    pushed = everything_ever_pushed(a.remote)  # type: ignore[arg-type]
    assert "raise I asked" not in pushed and "Salary talk" not in pushed
    assert "salary.md" in a.memories()


def test_an_undo_on_one_machine_is_undone_everywhere(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    created = a.remember("The design review happens on Wednesdays.", title="Design review")
    operation = created.operations[0].operation
    converge(a, b)
    assert "design-review.md" in b.memories()
    b_root = b.state.root_id(str(b.root))
    recorded = b.journal.get(operation)
    assert recorded is not None and recorded.root_id == b_root
    assert b.state.query("SELECT machine FROM operations WHERE id = ?", (operation,))[0][0]
    undone = a.undo(operation)
    converge(a, b)
    assert "design-review.md" not in b.memories()
    assert b.journal.get(operation).undone_by == undone.operations[0].operation  # type: ignore[union-attr]
    # And the other way: an operation of A undone on B.
    made = a.remember("Lunch is at noon on Fridays.", title="Team lunch")
    converge(a, b)
    b.undo(made.operations[0].operation)
    converge(b, a)
    assert "team-lunch.md" not in a.memories()
    assert a.journal.get(made.operations[0].operation).undone_by  # type: ignore[union-attr]


def test_the_team_root_is_left_to_the_projects_git(tmp_path: Path) -> None:
    team = tmp_path / "project" / ".memory" / "team"
    team.mkdir(parents=True)
    state = StateStore(tmp_path / "state.sqlite3")
    service = SyncService([MemoryRoot.of(team, "team")], state)
    with pytest.raises(SyncRefused, match="project's git"):
        service.init(0, None)
    assert not (team / ".git").exists()


def test_a_project_root_the_project_already_commits_is_refused(tmp_path: Path) -> None:
    project = tmp_path / "project"
    root = project / ".memory"
    root.mkdir(parents=True)
    (root / "a.md").write_text("---\nname: a\ntype: project\n---\nbody\n")
    git(project, "init", "-q")
    git(project, "add", ".")
    state = StateStore(tmp_path / "state.sqlite3")
    service = SyncService([MemoryRoot.of(root, "project")], state)
    with pytest.raises(SyncRefused, match="already tracked"):
        service.init(0, None)


def test_many_rounds_of_mixed_work_converge(pair: tuple[Machine, Machine]) -> None:
    a, b = pair
    on_a = [
        ("Grafana", "Grafana dashboards live at grafana.internal."),
        ("Kafka", "The Kafka cluster has twelve brokers in eu-west-1."),
        ("Lint", "Run ruff check before every commit."),
        ("Rota", "The on-call rota rotates every Monday at 09:00."),
    ]
    on_b = [
        ("Docs", "Architecture docs are in the docs/adr folder."),
        ("Secrets", "Credentials are kept in Vault under kv/platform."),
        ("Tests", "Integration tests need docker compose up first."),
        ("Holidays", "Nobody deploys during the December freeze."),
    ]
    for (ta, fa), (tb, fb) in zip(on_a, on_b, strict=True):
        a.remember(fa, title=ta)
        b.remember(fb, title=tb)
        a.sync()
        b.sync()
    converge(a, b)
    files = same_memories(a, b)
    for title, _ in on_a + on_b:
        assert f"{title.lower()}.md" in files, sorted(files)
    no_conflict_markers(a, b)


def test_a_secret_another_machine_pushed_is_reported_and_rewritten_out_everywhere(
    pair: tuple[Machine, Machine],
) -> None:
    a, b = pair
    # A machine with an older detector (here: plain git by hand) pushed a credential.
    a.write(
        "notes.md", "Notes", f"aws_access_key_id = {AWS_KEY}\naws_secret_access_key = {AWS_SECRET}"
    )
    git(a.root, "add", "-f", "notes.md")
    git(a.root, "-c", "user.name=me", "-c", "user.email=me@example.com", "commit", "-qm", "notes")
    git(a.root, "push", "-q", "origin", "HEAD:refs/heads/main")
    pulled = b.sync()
    assert pulled.state == "synced" and any("notes.md" in s for s in pulled.secrets)
    assert any("notes.md" in s for s in b.service.status(0).secrets)
    b.remember("The design review happens on Wednesdays.", title="Design review")
    # Rewritten where it was found; the other machine adopts the new history.
    _head, count = b.service.rewrite_history(0)
    assert count >= 1
    a.remember("Lunch is at noon on Fridays.", title="Team lunch")
    converge(a, b)
    files = same_memories(a, b)
    assert "design-review.md" in files and "team-lunch.md" in files
    assert "[REDACTED:aws_secret_access_key]" in files["notes.md"].decode()
    for where in (a.remote, a.root, b.root):
        reachable = everything_ever_pushed(where)  # type: ignore[arg-type]
        assert AWS_SECRET not in reachable and AWS_KEY not in reachable, where
    assert b.service.status(0).secrets == []
