"""The MCP face without a process: its configuration, its core, its names for memories."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest
from memory_recall.protocol.messages import PhaseResult
from memory_recall.server.core.core import MemoryCore
from memory_recall.server.mcp.config import add_arguments, config_from
from memory_recall.server.mcp.face import find_memory, memory_uri, recall_answer, uri_of
from memory_recall.server.roots import MemoryRoot, Scope

from tests.memory_files import write_memory


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_flags_win_over_the_environment(tmp_path: Path) -> None:
    env = {
        "MEMORY_RECALL_WORKSPACE": str(tmp_path / "from-env"),
        "MEMORY_RECALL_MODEL_URL": "http://127.0.0.1:1/v1",
        "MEMORY_RECALL_MODEL": "env-model",
        "MEMORY_RECALL_API_KEY_ENV": "ENV_KEY",
    }
    config = config_from(parse("--model", "flag-model"), None, env)
    assert config.workspace == str(tmp_path / "from-env")
    selector = config.options.selector
    assert (selector.kind, selector.url, selector.model, selector.api_key_env) == (
        "http", "http://127.0.0.1:1/v1", "flag-model", "ENV_KEY",
    )  # fmt: skip
    flagged = config_from(parse("--workspace", str(tmp_path / "ws")), None, env)
    assert flagged.workspace == str(tmp_path / "ws")
    assert config_from(parse(), None, {}, cwd=str(tmp_path)).options.selector.kind == "none"


def test_the_daemons_option_rules_apply(tmp_path: Path) -> None:
    plain = config_from(parse("--model-url", "http://models.example.com/v1"), None, {})
    assert plain.options.selector.kind == "none"
    assert any("unencrypted" in p for p in plain.problems)
    key = config_from(
        parse("--model-url", "https://models.example.com/v1", "--api-key-env", "sk-abc def"),
        None,
        {},
    )
    assert any("apiKeyEnv" in p for p in key.problems)
    assert not any("sk-abc" in p for p in key.problems)  # never echoed
    ranker = config_from(parse("--ranker", "nonsense"), None, {})
    assert (
        MemoryCore(
            ranker.options, str(tmp_path), problems=ranker.problems
        ).recall_service.ranker.name
        == "bm25f"
    )


def test_roots_are_the_given_ones_else_project_team_user(tmp_path: Path) -> None:
    given = [MemoryRoot.of(tmp_path / "a", Scope.TEAM)]
    core = MemoryCore(config_from(parse(), given, {}).options, str(tmp_path))
    assert [(r.path, r.scope) for r in core.roots] == [(tmp_path / "a", Scope.TEAM)]
    defaults = MemoryCore(config_from(parse(), None, {}).options, str(tmp_path / "ws"))
    assert [r.scope for r in defaults.roots] == [Scope.PROJECT, Scope.TEAM, Scope.USER]
    assert defaults.roots[1].path == tmp_path / "ws" / ".memory" / "team"


def test_a_client_selector_is_refused_with_the_reason(tmp_path: Path) -> None:
    config = config_from(parse(), None, {})
    config.options.selector.kind = "client"
    core = MemoryCore(config.options, str(tmp_path))
    assert core.recall_service.selector is None
    assert any("memory/select" in p for p in core.problems)


def test_uris_name_each_memory_once_and_read_back(tmp_path: Path) -> None:
    project, team = tmp_path / ".memory", tmp_path / ".memory" / "team"
    write_memory(project, "deploy.md", "Deploy")
    write_memory(team, "deploy.md", "Team deploy")
    write_memory(project, "a b/ü.md", "Spaces and umlauts")
    core = MemoryCore(config_from(parse(), None, {}).options, str(tmp_path))
    core.session.catalog.roots = core.roots[:2]  # no user root: nothing of the machine's
    core.session.catalog.scan()
    docs = core.session.catalog.snapshot().documents
    uris = {uri_of(d): d for d in docs}
    assert set(uris) == {
        "memory://memories/project/deploy.md",
        "memory://memories/team/deploy.md",
        "memory://memories/project/a%20b/%C3%BC.md",
    }
    for uri, doc in uris.items():
        assert find_memory(core, uri) is doc
        assert find_memory(core, doc.path) is doc
    assert find_memory(core, memory_uri("user", "deploy.md")) is None
    assert find_memory(core, "memory://memories/project/") is None


@pytest.mark.parametrize(
    ("strategy", "failure", "model", "says"),
    [
        ("model", None, "https://m/v1", "refined by the model"),
        ("heuristic", None, None, "no model configured"),
        ("heuristic", "HTTP 500", "https://m/v1", "not used (HTTP 500)"),
    ],
)
def test_the_answer_says_how_it_was_refined(
    tmp_path: Path, strategy: str, failure: str | None, model: str | None, says: str
) -> None:
    args = ("--model-url", model) if model else ()
    core = MemoryCore(config_from(parse(*args), None, {}).options, str(tmp_path))
    refined = PhaseResult(phase="refined", strategy=strategy, status="no_relevant_results",
                          docs=[], prompt="", elapsed_ms=1.0, failure=failure)  # fmt: skip
    assert says in recall_answer(core, None, refined)["refined"]
