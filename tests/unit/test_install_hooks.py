"""`install-hooks`: merged into the host's own settings, idempotent, and `--uninstall` removes
exactly what it added (docs/hooks.md)."""

from __future__ import annotations

import json

import pytest
from memory_recall.server.hooks.hosts import HOSTS
from memory_recall.server.hooks.install import InstallError, apply, is_ours, plan

EXE = "/opt/venv/bin/memory-recall"

USERS_OWN = {
    "model": "opus",
    "hooks": {
        "UserPromptSubmit": [{"hooks": [{"type": "command", "command": "~/bin/audit.sh"}]}],
        "PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]}],
        "BeforeAgent": [{"hooks": [{"type": "command", "command": "mine"}]}],
    },
}


def run(host, tmp_path, **kw):
    change = plan(HOSTS[host], "project", tmp_path, executable=EXE, env={"HOME": str(tmp_path)},
                  **kw)  # fmt: skip
    apply(change)
    return change


@pytest.mark.parametrize("host", sorted(HOSTS))
def test_install_keeps_the_users_hooks_is_idempotent_and_uninstall_restores(tmp_path, host):
    first = plan(HOSTS[host], "project", tmp_path, executable=EXE, env={"HOME": str(tmp_path)})
    if host != "copilot":  # copilot gets a file of its own
        first.path.parent.mkdir(parents=True)
        first.path.write_text(json.dumps(USERS_OWN, indent=4) + "\n")
    original = first.path.read_text() if first.path.exists() else None
    change = run(host, tmp_path)
    assert change.changed and "+" in change.diff()
    data = json.loads(change.path.read_text())
    ours = [
        h
        for entries in data["hooks"].values()
        for e in entries
        for h in (e.get("hooks", [e]) if isinstance(e, dict) else [])
        if is_ours(h)
    ]
    assert len(ours) == len(HOSTS[host].installed)
    for event in HOSTS[host].installed:
        assert any(f"hook {host} {event}" in (h.get("command") or h.get("bash")) for h in ours)
    if host != "copilot":
        assert data["model"] == "opus"
        kept = json.dumps(data)
        assert "~/bin/audit.sh" in kept and '"fmt"' in kept and '"mine"' in kept
    again = run(host, tmp_path)
    assert not again.changed  # idempotent
    removed = run(host, tmp_path, uninstall=True)
    assert removed.changed
    if original is None:
        assert not change.path.exists()  # our own file, gone
    else:
        assert json.loads(change.path.read_text()) == USERS_OWN
    assert not run(host, tmp_path, uninstall=True).changed


def test_a_file_that_is_not_json_is_never_rewritten(tmp_path):
    path = tmp_path / ".claude" / "settings.json"
    path.parent.mkdir()
    path.write_text("{ // a comment\n}")
    with pytest.raises(InstallError, match="not JSON"):
        plan(HOSTS["claude-code"], "project", tmp_path, executable=EXE)
    assert path.read_text() == "{ // a comment\n}"


def test_http_hooks_carry_the_token_and_keep_session_hooks_as_commands(tmp_path):
    change = plan(HOSTS["claude-code"], "user", tmp_path, executable=EXE,
                  http=("http://127.0.0.1:47931", "t0k"), env={"HOME": str(tmp_path)})  # fmt: skip
    hooks = json.loads(change.after)["hooks"]
    prompt = hooks["UserPromptSubmit"][0]["hooks"][0]
    assert prompt == {"type": "http", "url": "http://127.0.0.1:47931/hook/claude-code/UserPromptSubmit",
                      "headers": {"Authorization": "Bearer t0k"}, "timeout": 10}  # fmt: skip
    assert hooks["SessionStart"][0]["hooks"][0]["type"] == "command"  # starts the daemon
    assert change.path == tmp_path / ".claude" / "settings.json"


def test_what_counts_as_ours():
    assert is_ours({"command": "/x/memory-recall hook qwen UserPromptSubmit"})
    assert is_ours({"bash": "'/a b/memory-recall' hook copilot sessionStart"})
    assert is_ours({"command": "/usr/bin/python3 -m memory_recall.server hook codex Stop"})
    assert is_ours({"url": "http://127.0.0.1:47931/hook/qwen/PostToolUse"})
    assert not is_ours({"command": "memory-recall recall x"})
    assert not is_ours({"url": "http://example.com/hook/x"})
    assert not is_ours("memory-recall hook")
