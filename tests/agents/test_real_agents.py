"""The real agent CLIs with our hooks (`make agents`, never `make test`): Claude Code, Codex,
Gemini CLI and qwen-code from npm, each pointed at a fake model on 127.0.0.1 inside a
loopback-only network namespace, each with `install-hooks` in a throwaway `$HOME`.

What must reach the model, read from the request bodies it received:
- the first request of the task carries the fast result (a memory matching the prompt);
- the request after the first tool call carries the refined memories, none of them one
  the first request already had.

Each run's requests and the agent's output are written to build/agents/<host>/ for the
report. The hooks run with a 3 s budget here: the machine that runs this is shared, and
what is tested is the path, not the speed (`memory-recall dev hook-bench` measures that).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.agents.fake_model import FakeModel, Recorded
from tests.memory_files import write_memory

AGENTS = Path(os.environ.get("MEMORY_RECALL_AGENTS", "build/agents"))
OUT = Path("build/agents/runs")
PROMPT = "How do we deploy the zebra service? Look at the files first, then answer."
MARKER = re.compile(r"ZEBRA-MARK-\d")
RUN_S = 240


def markers(text: str) -> set[str]:
    return set(MARKER.findall(text))


def bin_of(name: str) -> str:
    path = AGENTS / "node_modules" / ".bin" / name
    if not path.exists():
        pytest.skip(f"{name} is not installed in {AGENTS} (run `make agents`)")
    return str(path)


class Run:
    def __init__(self, host: str, base: Path, model: FakeModel) -> None:
        self.host = host
        self.base = base
        self.home = base / "home"
        self.ws = base / "zebra"
        self.model = model
        (self.ws / ".git").mkdir(parents=True)
        self.home.mkdir()
        root = self.ws / ".memory"
        memories = [
            ("freeze.md", "Zebra deploy freeze", "zebra deploys freeze on Fridays"),
            ("pipeline.md", "Zebra deploy pipeline", "the zebra deploy runs through the pipeline"),
            ("owners.md", "Zebra service owners", "who owns the zebra service deploys"),
            ("rollback.md", "Zebra rollback", "how to roll back a zebra deploy"),
            ("canary.md", "Zebra canary hosts", "zebra deploys hit the canary hosts first"),
            ("dashboards.md", "Zebra dashboards", "where the zebra service graphs are"),
        ]
        for i, (name, title, description) in enumerate(memories):
            write_memory(root, name, title, description,
                         f"{description.capitalize()}. Marker ZEBRA-MARK-{i}.")  # fmt: skip
        self.env = {
            "PATH": f"{Path(sys.executable).parent}:{AGENTS / 'node_modules' / '.bin'}:/usr/bin:/bin",
            "HOME": str(self.home),
            "MEMORY_RECALL_RUNTIME_DIR": str(base / "run"),
            "XDG_DATA_HOME": str(self.home / ".local/share"),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "MEMORY_RECALL_HOOK_BUDGET_MS": "3000",
            "TERM": "dumb",
            "NO_COLOR": "1",
            "CI": "1",
        }

    def memory_recall(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "memory_recall.server", *args],
            env=self.env, capture_output=True, text=True, timeout=60, cwd=self.ws,
        )  # fmt: skip

    def warm(self) -> None:
        """Start the daemon and index the workspace before the agent runs (a session-start
        hook does it in real use; qwen-code fires none in -p mode)."""
        subprocess.Popen(
            [sys.executable, "-m", "memory_recall.server", "daemon"],
            env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=open(self.base / "daemon.log", "wb"),  # noqa: SIM115
        )  # fmt: skip
        probe = json.dumps({"session_id": "warm", "cwd": str(self.ws), "prompt": "zebra deploy",
                            "hook_event_name": "UserPromptSubmit"})  # fmt: skip
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            done = subprocess.run(
                [sys.executable, "-m", "memory_recall.server", "hook", "claude-code",
                 "UserPromptSubmit"], input=probe, text=True, capture_output=True, env=self.env,
            )  # fmt: skip
            if done.stdout.strip():
                return
            time.sleep(0.3)
        raise AssertionError("the daemon did not answer a prompt hook")

    def install(self) -> None:
        done = self.memory_recall("install-hooks", self.host, "--scope", "user")
        assert done.returncode == 0, done.stdout + done.stderr

    def agent(self, argv: list[str], extra: dict[str, str]) -> subprocess.CompletedProcess[str]:
        return subprocess.run(argv, env={**self.env, **extra}, capture_output=True, text=True,
                              timeout=RUN_S, cwd=self.ws, stdin=subprocess.DEVNULL)  # fmt: skip

    def report(self, done: subprocess.CompletedProcess[str]) -> tuple[Recorded, Recorded]:
        out = OUT / self.host
        shutil.rmtree(out, ignore_errors=True)
        out.mkdir(parents=True)
        (out / "agent.stdout").write_text(done.stdout)
        (out / "agent.stderr").write_text(done.stderr)
        (out / "requests.json").write_text(json.dumps(
            [{"path": r.path, "body": r.body} for r in self.model.requests], indent=1))  # fmt: skip
        shutil.copy(self.base / "daemon.log", out / "daemon.log")
        status = self.memory_recall("daemon", "status")
        (out / "daemon-status.txt").write_text(status.stdout + status.stderr)
        tasks = [r for r in self.model.requests if PROMPT[:30] in r.text and '"tools"' in r.text]
        assert tasks, f"{self.host}: no request carried the prompt (exit {done.returncode})"
        first = next(r for r in tasks if "ZEBRA-MARK" in r.text or r is tasks[0])
        after = [r for r in tasks if _after_tool(r)]
        assert after, f"{self.host}: the model's tool call never came back"
        return first, after[0]


def _after_tool(r: Recorded) -> bool:
    return any(m in r.text for m in ('"tool_result"', '"role": "tool"', '"function_call_output"',
                                     '"functionResponse"'))  # fmt: skip


@pytest.fixture
def run_for(request: pytest.FixtureRequest) -> Iterator[object]:
    made: list[Run] = []

    def make(host: str, model: FakeModel) -> Run:
        base = Path(tempfile.mkdtemp(prefix=f"mra-{host[:4]}-", dir="/tmp"))
        run = Run(host, base, model)
        made.append(run)
        return run

    yield make
    for run in made:
        run.memory_recall("daemon", "stop")
        shutil.rmtree(run.base, ignore_errors=True)


def check(run: Run, done: subprocess.CompletedProcess[str]) -> None:
    first, after = run.report(done)
    fast = markers(first.text)
    assert fast, f"{run.host}: the first request carried no memory"
    refined = markers(after.text) - fast
    assert refined, f"{run.host}: the request after the tool call carried no refined memory"
    for mark in fast:  # the refined result never repeats a fast memory
        assert after.text.count(mark) == first.text.count(mark), (run.host, mark)
    print(f"\n{run.host}: first request {sorted(fast)}, after the tool call +{sorted(refined)}"
          f" ({len(run.model.requests)} requests, exit {done.returncode})")  # fmt: skip


def test_claude_code(run_for):
    claude = bin_of("claude")
    with FakeModel() as model:
        run = run_for("claude-code", model)
        run.install()
        run.warm()
        done = run.agent(
            [claude, "-p", PROMPT, "--allowedTools=Bash"],
            {"ANTHROPIC_BASE_URL": model.url, "ANTHROPIC_API_KEY": "sk-ant-fake",
             "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1"},
        )  # fmt: skip
        check(run, done)


def test_qwen_code(run_for):
    qwen = bin_of("qwen")
    with FakeModel() as model:
        run = run_for("qwen", model)
        settings = run.home / ".qwen" / "settings.json"
        settings.parent.mkdir(parents=True)
        settings.write_text(json.dumps({
            "security": {"auth": {"selectedType": "openai"}},
            "privacy": {"usageStatisticsEnabled": False},
            "telemetry": {"enabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }))  # fmt: skip
        run.install()
        run.warm()
        done = run.agent(
            [qwen, "--auth-type", "openai", "--approval-mode", "yolo", "-p", PROMPT],
            {"OPENAI_BASE_URL": f"{model.url}/v1", "OPENAI_API_KEY": "sk-fake",
             "OPENAI_MODEL": "fake-model"},
        )  # fmt: skip
        check(run, done)


def test_gemini_cli(run_for):
    gemini = bin_of("gemini")
    with FakeModel() as model:
        run = run_for("gemini", model)
        settings = run.home / ".gemini" / "settings.json"
        settings.parent.mkdir(parents=True)
        settings.write_text(json.dumps({
            "security": {"auth": {"selectedType": "gemini-api-key"},
                         "folderTrust": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"disableAutoUpdate": True, "disableUpdateNag": True},
        }))  # fmt: skip
        run.install()
        run.warm()
        done = run.agent(
            [gemini, "-m", "gemini-2.5-flash", "--yolo", "-p", PROMPT],
            {"GOOGLE_GEMINI_BASE_URL": model.url, "GEMINI_API_KEY": "fake-key",
             "GEMINI_CLI_NO_RELAUNCH": "true"},
        )  # fmt: skip
        check(run, done)


def test_codex(run_for):
    codex = bin_of("codex")
    with FakeModel() as model:
        run = run_for("codex", model)
        config = run.home / ".codex" / "config.toml"
        config.parent.mkdir(parents=True)
        config.write_text(
            'model = "fake-model"\nmodel_provider = "fake"\n\n[model_providers.fake]\n'
            f'name = "fake"\nbase_url = "{model.url}/v1"\nenv_key = "FAKE_API_KEY"\n'
            'wire_api = "responses"\n'
        )
        run.install()
        run.warm()
        done = run.agent(
            [codex, "exec", "--dangerously-bypass-hook-trust",
             "--dangerously-bypass-approvals-and-sandbox", "--skip-git-repo-check", PROMPT],
            {"FAKE_API_KEY": "sk-fake", "CODEX_HOME": str(run.home / ".codex")},
        )  # fmt: skip
        check(run, done)
