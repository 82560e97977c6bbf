"""`memory/extract` through the real daemon: every trigger, the scripted model over real HTTP
and over the client channel (`memory/complete`), every hostile answer.

What must hold whatever the model says: nothing invalid is written, every skip has a
reason, nothing secret leaves the process (files, results, notifications, the requests
the model got).
"""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from memory_recall.server.dev.scripted_model import (
    PREPARED,
    SECRET_IN_ANSWER,
    ScriptedModel,
    content_for,
)
from pygls.exceptions import JsonRpcException

from tests.e2e.conftest import WAIT, request, wait_ready

REPO = Path(__file__).resolve().parents[2]
TOKEN = "ghp_" + "Zq7Lm2Xv9K" * 3 + "Zq7Lm2"
API_KEY = "sk-e2e-extract-0123456789abcdef"
SESSION = [
    {"role": "user", "content": "Set up the integration tests. Always use pnpm here, never npm."},
    {"role": "assistant", "content": "They fail with ECONNREFUSED 5432."},
    {"role": "user", "content": f"Start postgres first. The CI token is {TOKEN}"},
]
# answer → (files written, skip reasons, failure substring)
OUTCOMES: dict[str, tuple[int, list[str], str | None]] = {
    "good": (2, [], None),
    "malformed-json": (0, [], "malformed answer"),
    "malformed-items": (1, ["malformed", "malformed", "malformed"], None),
    "extra-fields": (1, [], None),
    "secret": (0, ["secret"], None),
    "injection": (0, ["injection"], None),
    "fifty": (5, ["limit"], None),
    "outside-path": (0, ["malformed", "malformed"], None),
    "ephemeral": (0, ["ephemeral"], None),
    "hang": (0, [], "timed out after 800 ms"),
    "error-500": (0, [], "HTTP 500"),
}


def deadline_ms(answer: str) -> int:
    """The model's deadline: short where the deadline is what is tested, else long enough
    that a loaded machine's slow answer is still an answer."""
    return 800 if answer == "hang" else 20_000


def memory_files(root: Path) -> list[Path]:
    return sorted(
        p for p in root.rglob("*.md") if p.name != "MEMORY.md" and ".archive" not in p.parts
    )


async def start_daemon(client, root: Path, workspace: Path | None = None, **options: Any):
    opts = {"roots": [{"path": str(root), "scope": "project"}], "watch": False, **options}
    await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                initialization_options=opts,
                root_uri=workspace.as_uri() if workspace else None,
            )
        ),
        WAIT,
    )
    await wait_ready(client)


def leak_free(root: Path, *texts: str) -> None:
    everything = "\n".join(
        [*(p.read_text("utf-8") for p in root.rglob("*") if p.is_file()), *texts]
    )
    for secret in (TOKEN, SECRET_IN_ANSWER, API_KEY):
        assert secret not in everything


def check_outcome(root: Path, result: dict[str, Any], answer: str) -> None:
    files, reasons, failure = OUTCOMES[answer]
    assert len(memory_files(root)) == files, (answer, result)
    assert [s["reason"] for s in result["skipped"]] == reasons, (answer, result)
    assert all(s["message"] for s in result["skipped"])
    if failure:
        assert failure in (result["failure"] or "")
        assert result["operations"] == []
    for path in memory_files(root):
        text = path.read_text("utf-8")
        front = text.split("\n---", 1)[0]
        assert (
            "\npinned:" not in front and "\nalways:" not in front
        )  # extra fields never reach a file
        assert "\nscope:" not in front and "/etc/" not in text
        assert path.resolve().is_relative_to(root.resolve())


@pytest.mark.parametrize("answer", sorted(OUTCOMES))
async def test_http_model_every_answer(client, tmp_path: Path, answer: str) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    with ScriptedModel(answer=answer) as model:
        await start_daemon(
            client, root,
            selector={"kind": "http", "url": model.url, "model": "scripted",
                      "timeoutMs": deadline_ms(answer)},
        )  # fmt: skip
        result = await request(
            client, "memory/extract", {"trigger": "sessionEnd", "transcript": SESSION}
        )
        sent = model.sent_text()
    check_outcome(root, result, answer)
    assert "[REDACTED:github_token]" in sent
    leak_free(root, json.dumps(result), sent)
    status = await request(client, "memory/status", {})
    assert status["extract"]["calls"] == 1
    assert status["extract"]["modelFailures"] == (1 if OUTCOMES[answer][2] else 0)
    if answer == "hang":
        for _ in range(100):  # the deadline abandons the request: its connection closes
            if model.disconnects:
                break
            await asyncio.sleep(0.02)
        assert model.disconnects == 1


@pytest.mark.parametrize("answer", sorted(OUTCOMES))
async def test_client_channel_every_answer(client, tmp_path: Path, answer: str) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    asked: list[dict[str, Any]] = []
    cancelled: list[Any] = []

    @client.feature("memory/complete")
    async def complete(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        prepared = PREPARED[answer]
        if prepared.hang_s:
            try:
                await asyncio.sleep(prepared.hang_s)
            except asyncio.CancelledError:  # the daemon's $/cancelRequest reached the host
                cancelled.append(True)
                raise
        if prepared.status != 200:  # a host without a usable answer: not the reply shape
            return {"error": "the host's model is overloaded"}
        return {"content": content_for(answer)}

    await start_daemon(
        client, root, selector={"kind": "client", "timeoutMs": deadline_ms(answer)},
        capabilities={"complete": True},
    )  # fmt: skip
    result = await request(client, "memory/extract", {"trigger": "explicit", "transcript": SESSION})
    if answer == "error-500":  # the host's reply is not {content}: a recorded failure
        assert "malformed answer" in result["failure"] and memory_files(root) == []
    else:
        check_outcome(root, result, answer)
    assert asked[0]["task"] == "extract" and asked[0]["maxTokens"] > 0
    assert asked[0]["responseSchema"]["required"] == ["memories"]
    leak_free(root, json.dumps(result), json.dumps(asked))
    if answer == "hang":
        for _ in range(100):
            if cancelled:
                break
            await asyncio.sleep(0.02)
        assert cancelled, "the daemon must cancel the host's model call at its deadline"


async def serve_good(client, root: Path, **extra: Any) -> None:
    @client.feature("memory/complete")
    async def complete(params: dict[str, Any]) -> dict[str, Any]:
        return {"content": content_for("good")}

    await start_daemon(
        client, root, selector={"kind": "client"}, capabilities={"complete": True}, **extra
    )


async def test_apply_false_proposes_and_writes_nothing(client, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    await serve_good(client, root)
    result = await request(
        client, "memory/extract", {"trigger": "sessionEnd", "transcript": SESSION, "apply": False}
    )
    assert [o["action"] for o in result["operations"]] == ["proposed", "proposed"]
    assert memory_files(root) == [] and not (root / "MEMORY.md").exists()


async def test_team_scope_is_always_a_proposal(client, tmp_path: Path) -> None:
    project, team = tmp_path / "memory", tmp_path / "team"
    project.mkdir()
    team.mkdir()

    @client.feature("memory/complete")
    async def complete(params: dict[str, Any]) -> dict[str, Any]:
        return {"content": content_for("good")}

    await asyncio.wait_for(
        client.initialize_session(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(),
                initialization_options={
                    "roots": [{"path": str(project), "scope": "project"},
                              {"path": str(team), "scope": "team"}],
                    "watch": False, "selector": {"kind": "client"},
                    "capabilities": {"complete": True},
                },
            )
        ),
        WAIT,
    )  # fmt: skip
    await wait_ready(client)
    result = await request(
        client, "memory/extract", {"trigger": "sessionEnd", "transcript": SESSION, "scope": "team"}
    )
    assert {o["action"] for o in result["operations"]} == {"proposed"}
    assert memory_files(team) == [] and memory_files(project) == []


@pytest.mark.parametrize("trigger", ["sessionEnd", "codeAccepted", "explicit"])
async def test_without_a_model_the_model_triggers_refuse(
    client, tmp_path: Path, trigger: str
) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    await start_daemon(client, root)
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "memory/extract", {"trigger": trigger, "transcript": SESSION})
    assert caught.value.code == -32803
    assert "no model configured for extraction" in str(caught.value)
    assert memory_files(root) == []


async def test_code_accepted_sends_the_files_redacted(client, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    asked: list[dict[str, Any]] = []

    @client.feature("memory/complete")
    async def complete(params: dict[str, Any]) -> dict[str, Any]:
        asked.append(params)
        return {"content": content_for("good")}

    await start_daemon(client, root, selector={"kind": "client"}, capabilities={"complete": True})
    params = {
        "trigger": "codeAccepted",
        "transcript": SESSION[:1],
        "files": [{"path": "src/db.ts", "content": f"const token = '{TOKEN}';"}],
        "diff": "+ await pool.connect()",
    }
    result = await request(client, "memory/extract", params)
    assert len(result["operations"]) == 2
    prompt = json.dumps(asked)
    assert "src/db.ts" in prompt and "pool.connect" in prompt and TOKEN not in prompt


async def test_project_init_creates_then_updates_the_same_memory(client, tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    shutil.copytree(REPO / "fixtures" / "projects" / "python-poetry-fastapi", workspace)
    (workspace / "broken").mkdir()
    (workspace / "broken" / "package.json").write_text("{ nope", "utf-8")
    root = workspace / ".memory"
    root.mkdir()
    await start_daemon(client, root, workspace=workspace)  # no model needed
    first = await request(client, "memory/extract", {"trigger": "projectInit"})
    assert [o["action"] for o in first["operations"]] == ["created"]
    assert [s["reason"] for s in first["skipped"]] == ["unreadable"]
    files = memory_files(root)
    assert len(files) == 1
    text = files[0].read_text("utf-8")
    assert "name: Project stack and commands" in text and "poetry run pytest -q --maxfail=1" in text
    again = await request(client, "memory/extract", {"trigger": "projectInit"})
    assert [o["action"] for o in again["operations"]] == ["unchanged"]
    (workspace / "justfile").write_text("test:\n    poetry run pytest -x\n", "utf-8")
    changed = await request(client, "memory/extract", {"trigger": "projectInit"})
    assert [o["action"] for o in changed["operations"]] == ["updated"]
    assert memory_files(root) == files
    assert "`just test`" in files[0].read_text("utf-8")
    proposal = await request(client, "memory/extract", {"trigger": "projectInit", "apply": False})
    assert [o["action"] for o in proposal["operations"]] == ["proposed"]


async def test_bad_params_name_the_field(client, tmp_path: Path) -> None:
    root = tmp_path / "memory"
    root.mkdir()
    await start_daemon(client, root)
    with pytest.raises(JsonRpcException) as caught:
        await request(client, "memory/extract", {"trigger": "whenever"})
    assert caught.value.code == -32602 and "trigger" in str(caught.value)


async def test_python_client_extracts_with_the_key_only_in_the_header(tmp_path: Path) -> None:
    from memory_recall.protocol.client import MemoryRecallClient

    from tests.e2e.conftest import SERVER_COMMAND

    root = tmp_path / "memory"
    root.mkdir()
    with ScriptedModel(answer="good") as model:
        client = await MemoryRecallClient.start(
            SERVER_COMMAND,
            roots=[(str(root), "project")],
            selector={
                "kind": "http",
                "url": model.url,
                "model": "scripted",
                "apiKeyEnv": "E2E_KEY",
            },
            env={"E2E_KEY": API_KEY},
            watch=False,
        )
        try:
            result = await client.extract(
                "sessionEnd", [(t["role"], t["content"]) for t in SESSION]
            )
        finally:
            await client.close()
        headers = model.headers
        sent = model.sent_text()
    assert [o.action for o in result.operations] == ["created", "created"]
    assert result.model is not None and result.model.kind == "http"
    assert result.transcript is not None and result.transcript.redactions == 1
    assert headers[0]["Authorization"] == f"Bearer {API_KEY}"
    wire = json.dumps([p for _, p in client.notifications]) + result.model_dump_json()
    leak_free(root, wire, sent)
