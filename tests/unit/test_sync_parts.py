"""The small parts of sync: commit messages, what may leave the machine, the ledger, the
daemon's back-off, and git errors that never show a token."""

from __future__ import annotations

from pathlib import Path

from memory_recall.server.core.syncing import retry_delay_s
from memory_recall.server.store.journal import Change, Journal
from memory_recall.server.store.state import StateStore
from memory_recall.server.sync.git import GitError, blob_id, strip_credentials
from memory_recall.server.sync.ledger import Ledger, machine_id
from memory_recall.server.sync.messages import OperationMessage, parse, render
from memory_recall.server.sync.outgoing import held, is_synced_path, public_index
from memory_recall.server.sync.service import classify


def test_a_commit_message_carries_the_operation_and_reads_back() -> None:
    message = OperationMessage(
        kind="forget", title="Old VPN notes", operation="op-123456789abc", trigger="explicit",
        machine="laptop-7c1e", undoes=None, note="outdated", time_ms=1_767_261_600_123,
        hard_deleted=["vpn.md"],
    )  # fmt: skip
    text = render(message)
    assert text.startswith("forget: Old VPN notes\n\noutdated\n\n")
    back = parse(text)
    assert (back.kind, back.title, back.operation, back.machine) == (
        "forget", "Old VPN notes", "op-123456789abc", "laptop-7c1e",
    )  # fmt: skip
    assert back.time_ms == 1_767_261_600_123 and back.hard_deleted == ["vpn.md"]


def test_a_message_never_carries_a_credential() -> None:
    token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789"
    text = render(OperationMessage(kind="remember", title=f"token {token}", note=f"was {token}"))
    assert token not in text and "[REDACTED:" in text


def test_a_commit_made_by_hand_reads_as_an_edit() -> None:
    back = parse("fix a typo\n\nby hand")
    assert back.kind == "edit" and back.operation is None and back.title == "fix a typo"


def test_only_memory_files_outside_hidden_folders_and_other_roots_travel() -> None:
    assert is_synced_path("deploys.md") and is_synced_path("notes/db.md")
    assert is_synced_path("MEMORY.md")
    for path in (".archive/x.md", "notes/.draft.md", ".memory-recall.lock", "a.txt", "img.png"):
        assert not is_synced_path(path), path
    assert not is_synced_path("team/rules.md", ["team"])
    assert is_synced_path("teams.md", ["team"])


def test_private_memories_and_credentials_are_held() -> None:
    private = b"---\nname: Salary\ntype: user\nprivate: true\n---\nThe raise.\n"
    assert held(private) is not None and held(private).reason == "private"  # type: ignore[union-attr]
    secret = b"---\nname: AWS\ntype: user\n---\naws_access_key_id = AKIAZ7QWERTY2PLMNB4X\n"
    found = held(secret)
    assert found is not None and found.reason == "credential"
    assert "AKIA" not in found.message  # the kind, never the value
    assert held(b"---\nname: Fine\ntype: user\n---\nNothing secret.\n") is None


def test_memory_md_leaves_without_the_lines_of_what_stays() -> None:
    index = b"# Memory\n- [Salary](salary.md) \xe2\x80\x94 mine\n- [Deploys](deploys.md) \xe2\x80\x94 ours\n"
    public = public_index(index, lambda path: path == "salary.md")
    assert b"salary" not in public.lower() and b"deploys.md" in public and b"# Memory" in public


def test_git_errors_and_urls_never_show_a_token() -> None:
    url = "https://me:ghp_abcdefghijklmnopqrstuvwxyz0123456789@github.com/me/memory.git"
    assert strip_credentials(url) == "https://github.com/me/memory.git"
    error = GitError(["push", "origin"], 128, f"fatal: unable to access '{url}/': 403")
    assert "ghp_" not in str(error) and "unable to access" in str(error)


def test_blob_ids_are_gits() -> None:
    assert blob_id(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"


def test_the_machine_name_is_chosen_once_per_state_store(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.sqlite3")
    first = machine_id(store)
    assert first == machine_id(store) == machine_id(StateStore(tmp_path / "state.sqlite3"))
    assert first == machine_id(store) and "-" in first


def test_an_undo_from_another_machine_marks_what_it_undid(tmp_path: Path) -> None:
    store = StateStore(tmp_path / "state.sqlite3")
    ledger = Ledger(store)
    root = store.root_id("/m")
    made = Change("a.md", "created", None, b"---\nname: a\ntype: user\n---\nx\n", "a")
    assert ledger.record_remote(
        root, operation="op-aaaaaaaaaaaa", kind="remember", trigger="explicit", machine="laptop",
        when_ms=1000, changes=[made], undoes=None, note="a",
    )  # fmt: skip
    undo = Change("a.md", "deleted", made.after, None, "a")
    ledger.record_remote(
        root, operation="op-bbbbbbbbbbbb", kind="undo", trigger="undo", machine="laptop",
        when_ms=2000, changes=[undo], undoes="op-aaaaaaaaaaaa", note="undo",
    )  # fmt: skip
    journal = Journal(store)
    assert journal.get("op-aaaaaaaaaaaa").undone_by == "op-bbbbbbbbbbbb"  # type: ignore[union-attr]
    assert ledger.machine_of("op-aaaaaaaaaaaa") == "laptop"
    # A redo (the undo undone) makes the first count again.
    ledger.record_remote(
        root, operation="op-cccccccccccc", kind="undo", trigger="undo", machine="desktop",
        when_ms=3000, changes=[made], undoes="op-bbbbbbbbbbbb", note="redo",
    )  # fmt: skip
    assert journal.get("op-aaaaaaaaaaaa").undone_by is None  # type: ignore[union-attr]
    # The same operation twice is recorded once.
    assert not ledger.record_remote(
        root, operation="op-aaaaaaaaaaaa", kind="remember", trigger="explicit", machine="laptop",
        when_ms=1000, changes=[made], undoes=None, note="a",
    )  # fmt: skip
    # This machine's own writes are what gets committed; others' never are.
    assert ledger.local_operations(root, 0) == []


def test_the_back_off_doubles_to_half_an_hour() -> None:
    assert [retry_delay_s(n) for n in range(0, 4)] == [0.0, 30.0, 60.0, 120.0]
    assert retry_delay_s(20) == 1800.0


def test_a_last_error_as_the_state_a_status_shows() -> None:
    assert classify(None) == "idle"
    assert (
        classify("git fetch origin failed (exit 128): fatal: Could not resolve host: x")
        == "offline"
    )
    assert classify("not pushed: notes.md holds a credential") == "blocked"
    assert classify("git push origin failed (exit 1): remote: quota") == "error"
