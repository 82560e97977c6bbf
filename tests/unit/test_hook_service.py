"""One hook event served with a real core (docs/hooks.md): the fast result at the prompt, the
refined one at the first tool hook (never a fast one again), the context at session start,
extraction at the end; silence for anything it cannot serve."""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import uuid
from pathlib import Path
from typing import Any

import pytest
from memory_recall.protocol.messages import InitializationOptions
from memory_recall.server.core.core import MemoryCore
from memory_recall.server.hooks.hosts import HOSTS
from memory_recall.server.hooks.service import HookService, workspace_of
from memory_recall.server.models import HostModel

from tests.hook_inputs import GARBAGE, HOST_EVENTS, injected, payload
from tests.memory_files import write_memory

WAIT = 20.0  # every wait bounded; generous on a loaded machine


def deploy_memories(root: Path) -> None:
    write_memory(root, "deploy-freeze.md", "Deploy freeze", "no deploys on Friday afternoon",
                 "We never deploy to production on Friday after 14:00.")  # fmt: skip
    write_memory(root, "deploy-train.md", "Release train", "deploys leave on Tuesday",
                 "The release train deploys every Tuesday morning.")  # fmt: skip
    write_memory(root, "deploy-rollback.md", "Deploy rollback", "how to roll back a deploy",
                 "Roll back a bad deploy with `make rollback`; it takes five minutes.")  # fmt: skip
    write_memory(root, "deploy-canary.md", "Canary deploys", "deploys go to the canary first",
                 "Every deploy goes to the canary pool for ten minutes first.")  # fmt: skip
    write_memory(root, "pg-pool.md", "Postgres pool", "pgbouncer pool size is 40",
                 "The pgbouncer pool of the orders database has 40 connections.")  # fmt: skip
    (root / "tone.md").write_text(
        "---\nname: Tone\ndescription: be terse\ntype: user\nalways: true\n---\nNo preamble.\n",
        encoding="utf-8",
    )


class SlowModel:
    """The host's model (selector kind `client`): answers after `delay_s` with `choose`."""

    def __init__(self, choose: Any, delay_s: float) -> None:
        self.choose, self.delay_s, self.asked = choose, delay_s, 0

    def send(self, method: str, params: dict[str, Any]) -> tuple[str, concurrent.futures.Future]:
        self.asked += 1
        future: concurrent.futures.Future = concurrent.futures.Future()
        loop = asyncio.get_running_loop()
        paths = self.choose(params)
        loop.call_later(
            self.delay_s, lambda: future.done() or future.set_result({"selected": paths})
        )
        return str(uuid.uuid4()), future

    def cancel(self, msg_id: str) -> None:
        return None


async def started_core(root: Path, model: SlowModel | None = None) -> MemoryCore:
    options = InitializationOptions.model_validate(
        {
            "roots": [{"path": str(root), "scope": "project"}],
            "watch": False,
            "selector": {"kind": "client" if model else "none"},
        }
    )
    host = HostModel(model.send, model.cancel) if model else None
    core = MemoryCore(options, str(root.parent), host=host)
    core.start()
    await asyncio.wait_for(core.ready(), WAIT)
    return core


def paths_in(text: str) -> set[str]:
    return {
        line.split("(")[-1].rstrip(")") for line in text.splitlines() if line.startswith("### ")
    }


async def test_prompt_gets_the_fast_result_then_the_first_tool_hook_the_rest(tmp_path):
    root = tmp_path / ".memory"
    deploy_memories(root)
    core = await started_core(root)
    hooks = HookService(lambda ws: core)
    host = HOSTS["claude-code"]
    try:
        prompt = payload("claude-code", "UserPromptSubmit", cwd=str(tmp_path),
                         prompt="when can we deploy? friday?")  # fmt: skip
        fast = injected("claude-code", "UserPromptSubmit",
                        await hooks.serve(host, "UserPromptSubmit", prompt, WAIT))  # fmt: skip
        fast_paths = paths_in(fast)
        assert 1 <= len(fast_paths) <= 2 and "deploy-freeze.md" in fast_paths
        tool = payload("claude-code", "PostToolUse", cwd=str(tmp_path))
        refined = injected("claude-code", "PostToolUse",
                           await hooks.serve(host, "PostToolUse", tool, WAIT))  # fmt: skip
        refined_paths = paths_in(refined)
        assert refined_paths and len(refined_paths) <= 5 - len(fast_paths)
        assert not refined_paths & fast_paths  # never a memory the fast phase sent
        assert await hooks.serve(host, "PostToolUse", tool, WAIT) == ""  # the first only
        assert hooks.counters.fast_sent == 1 and hooks.counters.refined_sent == 1
    finally:
        hooks.close()
        await core.stop()


async def test_a_model_chooses_the_refined_result_after_the_prompt_hook_answered(tmp_path):
    root = tmp_path / ".memory"
    deploy_memories(root)

    def choose(params: dict[str, Any]) -> list[str]:  # the model picks two memories
        wanted = ("pg-pool.md", "deploy-freeze.md")
        return [c["path"] for c in params["candidates"] if c["path"].endswith(wanted)]

    model = SlowModel(choose, delay_s=0.3)
    core = await started_core(root, model)
    hooks = HookService(lambda ws: core)
    host = HOSTS["gemini"]
    try:
        prompt = payload("gemini", "BeforeAgent", cwd=str(tmp_path), prompt="deploy on friday?")
        fast = paths_in(injected("gemini", "BeforeAgent",
                                 await hooks.serve(host, "BeforeAgent", prompt, WAIT)))  # fmt: skip
        assert "deploy-freeze.md" in fast
        tool = payload("gemini", "AfterTool", cwd=str(tmp_path))
        early = await hooks.serve(host, "AfterTool", tool, 0.0)  # the model has not answered
        assert early == ""
        later = injected("gemini", "AfterTool", await hooks.serve(host, "AfterTool", tool, WAIT))
        assert paths_in(later) == {"pg-pool.md"}, later  # its choice minus the fast result
        assert model.asked == 1
    finally:
        hooks.close()
        await core.stop()


async def test_sessions_keep_their_own_exclusions_and_an_empty_prompt_changes_nothing(tmp_path):
    root = tmp_path / ".memory"
    deploy_memories(root)
    core = await started_core(root)
    hooks = HookService(lambda ws: core)
    qwen = HOSTS["qwen"]
    try:
        asked = "when can we deploy? friday?"
        a = payload("qwen", "UserPromptSubmit", session="a", cwd=str(tmp_path), prompt=asked)
        b = payload("qwen", "UserPromptSubmit", session="b", cwd=str(tmp_path), prompt=asked)
        fast_a = await hooks.serve(qwen, "UserPromptSubmit", a, WAIT)
        fast_b = await hooks.serve(qwen, "UserPromptSubmit", b, WAIT)
        assert fast_a and fast_a == fast_b  # b's session never saw a's memories
        # qwen-code sends UserPromptSubmit again, empty, when a tool result goes back.
        empty = payload("qwen", "UserPromptSubmit", session="a", cwd=str(tmp_path), prompt="")
        assert await hooks.serve(qwen, "UserPromptSubmit", empty, WAIT) == ""
        tool_a = payload("qwen", "PostToolUse", session="a", cwd=str(tmp_path))
        refined_a = paths_in(injected("qwen", "PostToolUse",
                                      await hooks.serve(qwen, "PostToolUse", tool_a, WAIT)))  # fmt: skip
        assert refined_a and not refined_a & paths_in(
            json.loads(fast_a)["hookSpecificOutput"]["additionalContext"]
        )
    finally:
        hooks.close()
        await core.stop()


async def test_session_start_injects_the_always_loaded_context(tmp_path):
    root = tmp_path / ".memory"
    deploy_memories(root)
    core = await started_core(root)
    hooks = HookService(lambda ws: core)
    try:
        for host_name, events in HOST_EVENTS.items():
            event = next(e for e, (point, _b) in events.items() if point == "start")
            out = await hooks.serve(HOSTS[host_name], event, payload(host_name, event,
                                    cwd=str(tmp_path)), WAIT)  # fmt: skip
            text = injected(host_name, event, out)
            assert text.startswith("## Always-loaded memory") and "No preamble." in text
    finally:
        hooks.close()
        await core.stop()


@pytest.mark.parametrize("host_name", sorted(HOST_EVENTS))
async def test_garbage_unknown_events_and_turn_ends_print_nothing(tmp_path, host_name):
    root = tmp_path / ".memory"
    deploy_memories(root)
    core = await started_core(root)
    hooks = HookService(lambda ws: core, extract="off")
    host = HOSTS[host_name]
    try:
        prompt_event = next(e for e, (p, _b) in HOST_EVENTS[host_name].items() if p == "prompt")
        for raw in GARBAGE:
            try:
                data = json.loads(raw)
            except ValueError:
                data = raw.decode("utf-8", "replace")
            assert await hooks.serve(host, prompt_event, data, 1.0) == ""
        assert await hooks.serve(host, "NoSuchEvent", payload(host_name, prompt_event), 1.0) == ""
        for event, (point, _b) in HOST_EVENTS[host_name].items():
            if point in ("turn-end", "end"):
                assert await hooks.serve(host, event, payload(host_name, event), 1.0) == ""
    finally:
        hooks.close()
        await core.stop()


def test_the_workspace_is_the_folder_with_memory_or_git_above_the_cwd(tmp_path):
    (tmp_path / "proj" / ".git").mkdir(parents=True)
    (tmp_path / "proj" / "src" / "deep").mkdir(parents=True)
    assert workspace_of(str(tmp_path / "proj" / "src" / "deep")) == str(tmp_path / "proj")
    (tmp_path / "proj" / "src" / ".memory").mkdir()
    assert workspace_of(str(tmp_path / "proj" / "src" / "deep")) == str(tmp_path / "proj" / "src")
    assert workspace_of(str(tmp_path / "proj"), str(tmp_path)) == str(tmp_path)  # host says
    assert workspace_of("relative/path") is None and workspace_of(None) is None


class ScriptedExtraction:
    """The host's model (selector kind `client`, `memory/complete`): answers extraction with
    one memory, and records the transcript it was shown."""

    def __init__(self) -> None:
        self.shown: list[str] = []

    def send(self, method: str, params: dict[str, Any]) -> tuple[str, concurrent.futures.Future]:
        future: concurrent.futures.Future = concurrent.futures.Future()
        if method == "memory/complete":
            self.shown.append(json.dumps(params["messages"]))
            item = {"title": "Package manager", "description": "the project uses pnpm, never npm",
                    "type": "project", "category": "project/stack",
                    "body": "Install with pnpm; npm breaks the lockfile.", "why": "the user said so"}  # fmt: skip
            future.set_result({"content": json.dumps({"memories": [item]})})
        else:
            future.set_result({"selected": []})
        return str(uuid.uuid4()), future

    def cancel(self, msg_id: str) -> None:
        return None


@pytest.mark.parametrize("mode", ["write", "propose"])
async def test_the_end_of_a_session_extracts_its_new_turns_through_the_core(tmp_path, mode):
    root = tmp_path / ".memory"
    deploy_memories(root)
    model = ScriptedExtraction()
    options = InitializationOptions.model_validate(
        {
            "roots": [{"path": str(root), "scope": "project"}],
            "watch": False,
            "selector": {"kind": "client"},
            "capabilities": {"complete": True},
        }
    )
    core = MemoryCore(options, str(tmp_path), host=HostModel(model.send, model.cancel))
    core.start()
    await asyncio.wait_for(core.ready(), WAIT)
    hooks = HookService(lambda ws: core, extract=mode)
    codex = HOSTS["codex"]
    transcript = tmp_path / "rollout.jsonl"
    line = {"type": "response_item", "payload": {"type": "message", "role": "user",
            "content": [{"type": "input_text", "text": "We use pnpm here, never npm."}]}}  # fmt: skip
    transcript.write_text(json.dumps(line) + "\n")
    try:
        stop = payload("codex", "Stop", session="x", cwd=str(tmp_path), transcript=str(transcript))
        assert await hooks.serve(codex, "Stop", stop, WAIT) == ""  # answered at once
        await asyncio.wait_for(hooks.settle(), WAIT)
        assert len(model.shown) == 1 and "never npm" in model.shown[0]
        written = list(root.glob("package-manager*.md"))
        if mode == "write":
            assert written and hooks.counters.extracted_written == 1
        else:
            assert not written and hooks.counters.extracted_proposed == 1
        # The next Stop of the same session reads only the turns it has not read.
        assert await hooks.serve(codex, "Stop", stop, WAIT) == ""
        await asyncio.wait_for(hooks.settle(), WAIT)
        assert len(model.shown) == 1
    finally:
        hooks.close()
        await core.stop()
