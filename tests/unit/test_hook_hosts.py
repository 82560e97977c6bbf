"""The hosts' dialects, their transcripts and their own memory folders (docs/hooks.md)."""

from __future__ import annotations

import json
from pathlib import Path

from memory_recall.server.hooks.host_memory import canonical_root, host_memories, sanitize
from memory_recall.server.hooks.hosts import HOSTS, Point, host_named, output, read_event
from memory_recall.server.hooks.mirror import derive, refresh
from memory_recall.server.hooks.transcript import read_transcript

from tests.hook_inputs import HOST_EVENTS, injected, payload


def test_every_event_of_every_host_is_read_and_answered_in_its_own_format():
    for name, events in HOST_EVENTS.items():
        host = HOSTS[name]
        for event, (point, _build) in events.items():
            data = payload(name, event, session="abc", cwd="/w", prompt="deploy?")
            found = read_event(host, event, data)
            assert found is not None and found.point is Point(point), (name, event)
            assert found.session == "abc" and found.cwd == "/w"
            if point == "prompt":
                assert found.prompt == "deploy?"
            text = injected(name, event, output(host, event, "## Relevant memory\n\nx\n"))
            assert text == "## Relevant memory\n\nx\n"
            assert output(host, event, "") == ""  # nothing to add: nothing printed


def test_unknown_events_and_non_objects_are_not_served():
    claude = HOSTS["claude-code"]
    assert read_event(claude, "PreToolUse", {"session_id": "x"}) is None
    assert read_event(claude, "UserPromptSubmit", ["not", "an", "object"]) is None
    assert read_event(claude, "userpromptsubmit", {"prompt": "x"}).event == "UserPromptSubmit"
    assert host_named("claude") is claude and host_named("gemini-cli") is HOSTS["gemini"]
    assert host_named("cursor") is None


def test_transcripts_of_each_host_keep_what_people_said(tmp_path):
    claude = tmp_path / "claude.jsonl"
    claude.write_text("\n".join(json.dumps(r) for r in [
        {"type": "user", "message": {"role": "user", "content": "We use pnpm, never npm."}},
        {"type": "assistant", "message": {"role": "assistant", "content": [
            {"type": "text", "text": "Noted."}, {"type": "tool_use", "name": "Bash", "input": {}}]}},
        {"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "content": "ok"}]}},
        {"type": "user", "isMeta": True, "message": {"role": "user", "content": "caveat"}},
        {"type": "user", "message": {"role": "user", "content": "## Relevant memory\n\nold"}},
    ]) + "\nnot json\n", encoding="utf-8")  # fmt: skip
    assert [(t.role, t.content) for t in read_transcript(claude)] == [
        ("user", "We use pnpm, never npm."), ("assistant", "Noted.")]  # fmt: skip
    codex = tmp_path / "rollout.jsonl"
    codex.write_text("\n".join(json.dumps(r) for r in [
        {"type": "session_meta", "payload": {"id": "x"}},
        {"type": "response_item", "payload": {"type": "message", "role": "user",
                                              "content": [{"type": "input_text", "text": "Use uv."}]}},
        {"type": "response_item", "payload": {"type": "function_call", "name": "shell"}},
        {"type": "response_item", "payload": {"type": "message", "role": "assistant",
                                              "content": [{"type": "output_text", "text": "OK"}]}},
    ]), encoding="utf-8")  # fmt: skip
    assert [t.content for t in read_transcript(codex)] == ["Use uv.", "OK"]
    gemini = tmp_path / "session.json"
    gemini.write_text(json.dumps({"sessionId": "x", "messages": [
        {"type": "user", "content": [{"text": "Tabs, not spaces."}]},
        {"type": "gemini", "content": "Sure."}]}), encoding="utf-8")  # fmt: skip
    assert [(t.role, t.content) for t in read_transcript(gemini)] == [
        ("user", "Tabs, not spaces."), ("assistant", "Sure.")]  # fmt: skip
    assert read_transcript(tmp_path / "missing.jsonl") == []


def test_claude_and_qwen_memory_folders_follow_their_rules(tmp_path):
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".qwen").mkdir()
    ws = tmp_path / "src" / "shop"
    (ws / ".git").mkdir(parents=True)
    (ws / "api").mkdir()
    env = {"HOME": str(home)}
    found = {m.host: m for m in host_memories(ws / "api", env)}
    key = sanitize(str(ws))
    assert key == str(ws).replace("/", "-").replace("_", "-").replace(".", "-")
    assert found["claude-code"].source == home / ".claude" / "projects" / key / "memory"
    assert found["qwen"].source == home / ".qwen" / "projects" / key / "memory"
    assert all(m.scope == "project" and not m.mirrored for m in found.values())
    long = "/" + "a" * 300
    assert len(sanitize(long, limit=200)) > 200 and sanitize(long, limit=200).startswith("-aaa")
    # Their own settings move them.
    (home / ".claude" / "settings.json").write_text('{"autoMemoryDirectory": "~/notes/claude"}')
    env["QWEN_CODE_MEMORY_LOCAL"] = "1"
    found = {m.host: m for m in host_memories(ws, env)}
    assert found["claude-code"].source == home / "notes" / "claude"
    assert found["qwen"].source == ws / ".qwen" / "memory"


def test_a_worktree_shares_the_main_checkouts_memory(tmp_path):
    main = tmp_path / "main"
    (main / ".git" / "worktrees" / "feature").mkdir(parents=True)
    tree = tmp_path / "feature"
    tree.mkdir()
    (tree / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'feature'}\n")
    assert canonical_root(tree) == main


def test_codex_and_gemini_free_text_becomes_memory_files_never_touching_theirs(tmp_path):
    home = tmp_path / "home"
    memories = home / ".codex" / "memories"
    (memories / "rollout_summaries").mkdir(parents=True)
    (memories / "memory_summary.md").write_text(
        "# Memory\n\n## User preferences\n- Prefers uv over pip.\n\n## General tips\n- Run "
        "`make check` before pushing.\n", encoding="utf-8")  # fmt: skip
    (memories / "rollout_summaries" / "2026-12-01.md").write_text("Fixed the flaky login test.\n")
    gemini = home / ".gemini"
    gemini.mkdir()
    (gemini / "GEMINI.md").write_text(
        "# Me\n\nSome text.\n\n## Gemini Added Memories\n- My name is Ada.\n- I prefer tabs.\n"
        "\n## Other\n- not a memory\n", encoding="utf-8")  # fmt: skip
    ws = tmp_path / "ws"
    ws.mkdir()
    found = {(m.host, m.source.name): m for m in host_memories(ws, {"HOME": str(home)})}
    codex, facts = found[("codex", "memories")], found[("gemini", "GEMINI.md")]
    assert codex.mirrored and codex.scope == "user" and facts.mirrored
    titles = {d.title for d in derive(facts)}
    assert titles == {"My name is Ada.", "I prefer tabs."}
    before = {p: p.read_bytes() for p in home.rglob("*") if p.is_file()}
    data = tmp_path / "data"
    folder = refresh(data, codex)
    made = sorted(p.name for p in folder.glob("*.md"))
    assert len(made) == 3, made  # two sections (the heading-only one skipped), one summary
    text = next(folder.glob("memory-summary--user-preferences*.md")).read_text()
    assert text.startswith('---\nname: "User preferences (memory-summary)"') and "uv" in text
    assert f'source: "{memories / "memory_summary.md"}"' in text
    assert refresh(data, codex) == folder  # unchanged source: nothing rewritten
    (memories / "rollout_summaries" / "2026-12-01.md").unlink()
    assert len(list(refresh(data, codex).glob("*.md"))) == 2  # follows the source
    assert {p: p.read_bytes() for p in home.rglob("*") if p.is_file()} == {
        p: b for p, b in before.items() if p.exists()
    }  # never written


def test_no_host_memory_when_the_host_was_never_used(tmp_path):
    assert host_memories(tmp_path, {"HOME": str(tmp_path / "nobody")}) == []


def test_install_targets_honour_each_hosts_own_variables(tmp_path):
    from memory_recall.server.hooks.install import settings_path

    env = {"HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "cx")}
    project = Path("/p")
    assert settings_path(HOSTS["codex"], "user", project, env) == tmp_path / "cx" / "hooks.json"
    assert (
        settings_path(HOSTS["gemini"], "user", project, env) == tmp_path / ".gemini/settings.json"
    )
    assert settings_path(HOSTS["copilot"], "project", project, env) == Path(
        "/p/.github/hooks/memory-recall.json"
    )
