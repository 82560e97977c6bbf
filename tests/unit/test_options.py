"""`initializationOptions` (protocol/README.md): invalid options fall back key by key, and say so.

A user who mistypes one option must keep every other option they set, and be
told which one was ignored.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types
from memory_recall.protocol.messages import InitializationOptions, SelectorOptions
from memory_recall.server.core.options import (
    build_selector,
    choose_ranker,
    choose_roots,
    parse_options,
    selector_timeout_s,
)
from memory_recall.server.lsp.server import workspace_path
from memory_recall.server.models import HostModel
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS
from memory_recall.server.roots import Scope


def _no_send(method, params):  # pragma: no cover - never called by these tests
    raise AssertionError("the selector must not be used here")


def _no_cancel(msg_id):  # pragma: no cover
    raise AssertionError("the selector must not be used here")


# -- parse_options ------------------------------------------------------------------


def test_no_options_are_the_defaults_without_complaint():
    options, problems = parse_options(None)
    assert problems == []
    assert options == InitializationOptions()
    assert options.selector.kind == "none"
    assert options.watch is True
    assert options.roots is None


@pytest.mark.parametrize("raw", ["roots", 3, ["selector"], True])
def test_options_that_are_not_an_object_are_the_defaults_with_a_problem(raw):
    options, problems = parse_options(raw)
    assert options == InitializationOptions()
    assert len(problems) == 1
    assert type(raw).__name__ in problems[0]


def test_a_full_valid_camel_case_configuration_is_kept():
    raw = {
        "roots": [{"path": "/tmp/m", "scope": "user", "followSymlinks": True}],
        "selector": {
            "kind": "http",
            "url": "http://127.0.0.1:11434/v1",
            "model": "qwen",
            "apiKeyEnv": "MY_KEY",
            "timeoutMs": 1500,
        },
        "watch": False,
        "ranker": "reference",
    }
    options, problems = parse_options(raw)
    assert problems == []
    assert options.watch is False
    assert options.ranker == "reference"
    assert options.roots is not None
    assert (options.roots[0].path, options.roots[0].scope) == ("/tmp/m", "user")
    assert options.roots[0].follow_symlinks is True
    sel = options.selector
    assert (sel.kind, sel.url, sel.model, sel.api_key_env, sel.timeout_ms) == (
        "http",
        "http://127.0.0.1:11434/v1",
        "qwen",
        "MY_KEY",
        1500,
    )


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        ({"watch": "yes"}, "watch"),
        ({"ranker": 5}, "ranker"),
        ({"selector": {"kind": "gpt"}}, "selector.kind"),
        ({"selector": {"kind": "http", "url": "http://x", "timeoutMs": 0}}, "selector.timeoutMs"),
        ({"selector": {"kind": "client", "timeoutMs": 1.5}}, "selector.timeoutMs"),
        ({"roots": [{"path": ""}]}, "roots.0.path"),
        ({"roots": [{"path": "/m", "scope": "everyone"}]}, "roots.0.scope"),
        ({"roots": "/m"}, "roots"),
    ],
)
def test_one_bad_key_falls_back_alone_with_a_problem_naming_it(bad, named):
    good = {"watch": False, "ranker": "reference", "selector": {"kind": "client"}}
    good.update({"roots": [{"path": "/keep/me"}]})
    raw = {**good, **bad}
    options, problems = parse_options(raw)
    assert len(problems) == 1
    assert problems[0].startswith(f"{named}:")
    defaults = InitializationOptions()
    bad_key = next(iter(bad))
    # The bad key is back to its default, every other key is as the user set it.
    assert getattr(options, bad_key) == getattr(defaults, bad_key)
    for key in good.keys() - {bad_key}:
        expected = InitializationOptions.model_validate({key: good[key]})
        assert getattr(options, key) == getattr(expected, key)


def test_several_bad_keys_give_one_problem_each():
    _, problems = parse_options({"watch": 1, "ranker": [], "roots": {}})
    assert sorted(p.split(":")[0] for p in problems) == ["ranker", "roots", "watch"]


def test_http_without_url_runs_without_a_selector_and_says_so():
    options, problems = parse_options({"selector": {"kind": "http", "model": "m"}})
    assert options.selector == SelectorOptions()
    assert options.selector.kind == "none"
    assert len(problems) == 1
    assert "selector.url" in problems[0] and "'none'" in problems[0]


def test_empty_roots_use_the_default_roots_and_say_so():
    options, problems = parse_options({"roots": [], "watch": False})
    assert options.roots is None
    assert options.watch is False
    assert problems == ["roots: empty list; using the default roots"]


def test_unknown_keys_from_a_newer_protocol_are_ignored_quietly():
    options, problems = parse_options({"context": {"budgetChars": 100}, "watch": False})
    assert problems == []
    assert options.watch is False


# -- choose_ranker --------------------------------------------------------------------


@pytest.mark.parametrize("name", [None, ""])
def test_no_ranker_name_is_the_default(name):
    assert choose_ranker(name) == (RANKERS[DEFAULT_RANKER], None)


SERVED = sorted(name for name, spec in RANKERS.items() if spec.served)


def test_the_default_is_bm25f_and_spec_is_served():
    assert DEFAULT_RANKER == "bm25f"
    assert {"bm25f", "spec"} <= set(SERVED)


@pytest.mark.parametrize("name", SERVED)
def test_every_served_ranker_is_chosen_by_name(name):
    ranker, problem = choose_ranker(name)
    assert problem is None
    assert ranker.name == name


@pytest.mark.parametrize(
    ("old", "new"), [("default", "bm25f"), ("indexed", "spec"), ("reference", "spec")]
)
def test_the_names_of_protocol_v1_are_aliases(old, new):
    ranker, problem = choose_ranker(old)
    assert problem is None
    assert ranker.name == new


@pytest.mark.parametrize("name", sorted(set(RANKERS) - set(SERVED)))
def test_an_eval_baseline_is_not_served(name):
    ranker, problem = choose_ranker(name)
    assert ranker == RANKERS[DEFAULT_RANKER]
    assert problem is not None and repr(name) in problem


def test_an_unknown_ranker_is_the_default_and_the_problem_lists_the_known_ones():
    ranker, problem = choose_ranker("bm26")
    assert ranker == RANKERS[DEFAULT_RANKER]
    assert problem is not None
    assert "'bm26'" in problem
    for known in [*SERVED, "default", "indexed", "reference"]:
        assert known in problem
    assert repr(DEFAULT_RANKER) in problem


# -- choose_roots -----------------------------------------------------------------------


@pytest.fixture
def user_data(tmp_path, monkeypatch):
    """Pins the platform user data dir (XDG on Linux, LOCALAPPDATA on Windows)."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("LOCALAPPDATA", str(tmp_path / "xdg"))
    return tmp_path / "xdg"


def test_default_roots_are_the_workspace_project_and_team_dirs_then_the_user_dir(
    tmp_path, user_data
):
    roots = choose_roots(InitializationOptions(), str(tmp_path / "ws"))
    assert [r.scope for r in roots] == [Scope.PROJECT, Scope.TEAM, Scope.USER]
    assert roots[0].path == tmp_path / "ws" / ".memory"
    assert roots[1].path == tmp_path / "ws" / ".memory" / "team"
    assert roots[2].path.parts[-2:] == ("memory-recall", "memory")
    if sys.platform.startswith("linux"):
        assert roots[2].path == user_data / "memory-recall" / "memory"


def test_without_a_workspace_only_the_user_root_remains(user_data):
    roots = choose_roots(InitializationOptions(), None)
    assert [r.scope for r in roots] == [Scope.USER]


def test_configured_roots_replace_the_defaults_in_order(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    options, _ = parse_options(
        {
            "roots": [
                {"path": "/abs/team", "scope": "user"},
                {"path": "rel/notes", "followSymlinks": True},
            ]
        }
    )
    roots = choose_roots(options, "/some/workspace")
    assert [(r.path, r.scope) for r in roots] == [
        (Path("/abs/team"), Scope.USER),
        (
            tmp_path / "rel" / "notes",
            Scope.PROJECT,
        ),  # identity paths are absolute (protocol/README.md)
    ]
    assert [r.follow_symlinks_outside for r in roots] == [False, True]


# -- build_selector -------------------------------------------------------------------------


def test_kind_none_builds_no_selector():
    assert build_selector(SelectorOptions(), HostModel(_no_send, _no_cancel)) is None


def test_kind_client_builds_the_client_selector():
    selector = build_selector(SelectorOptions(kind="client"), HostModel(_no_send, _no_cancel))
    assert selector is not None and selector.kind == "client"


def test_kind_client_needs_a_host_model_and_says_so():
    from memory_recall.server.core.options import host_problem

    options = InitializationOptions(selector=SelectorOptions(kind="client"))
    assert build_selector(options.selector, None) is None
    assert "memory/select" in (host_problem(options, None) or "")
    assert options.selector.kind == "none"  # the face serves without it


def test_kind_http_builds_the_http_selector():
    options = SelectorOptions(kind="http", url="http://127.0.0.1:9/v1", model="m")
    selector = build_selector(options, HostModel(_no_send, _no_cancel))
    assert selector is not None and selector.kind == "http"


def test_timeout_ms_is_the_selector_deadline_in_seconds():
    assert selector_timeout_s(SelectorOptions(kind="client", timeout_ms=1500)) == 1.5
    assert selector_timeout_s(SelectorOptions(kind="client")) is None


# -- workspace_path ---------------------------------------------------------------------------


def test_workspace_is_the_first_folder_then_root_uri_then_root_path(tmp_path):
    a, b = tmp_path / "a", tmp_path / "b"
    folders = [
        types.WorkspaceFolder(uri=a.as_uri(), name="a"),
        types.WorkspaceFolder(uri=b.as_uri(), name="b"),
    ]
    caps = types.ClientCapabilities()
    full = types.InitializeParams(
        capabilities=caps, workspace_folders=folders, root_uri=b.as_uri(), root_path="/c"
    )
    assert workspace_path(full) == str(a)
    by_uri = types.InitializeParams(capabilities=caps, root_uri=b.as_uri(), root_path="/c")
    assert workspace_path(by_uri) == str(b)
    assert workspace_path(types.InitializeParams(capabilities=caps, root_path="/c")) == "/c"
    assert workspace_path(types.InitializeParams(capabilities=caps)) is None


# -- issue 21: where memories may be sent, and what may be echoed -------------------------------


@pytest.mark.parametrize(
    ("url", "allow", "refused"),
    [
        ("http://198.51.100.7:8000/v1", False, True),
        ("http://models.internal/v1", False, True),
        ("http://198.51.100.7:8000/v1", True, False),
        ("https://api.example.com/v1", False, False),
        ("http://127.0.0.1:11434/v1", False, False),
        ("http://127.8.9.10/v1", False, False),
        ("http://localhost:8080/v1", False, False),
        ("http://[::1]:8080/v1", False, False),
        ("ftp://127.0.0.1/v1", False, True),
        ("http://[::1", False, True),
        ("127.0.0.1:11434", False, True),
    ],
)
def test_plain_http_to_another_machine_is_refused_unless_allowed(url, allow, refused):
    options, problems = parse_options(
        {"selector": {"kind": "http", "url": url, "allowPlainHttp": allow}}
    )
    assert (options.selector.kind == "none") is refused
    assert bool(problems) is refused
    if refused:
        assert problems[0].startswith("selector.url: ")


def test_an_api_key_env_that_holds_a_key_is_refused_without_echo():
    key = "sk-proj-0123456789abcdef"
    options, problems = parse_options(
        {"selector": {"kind": "http", "url": "https://a.example/v1", "apiKeyEnv": key}}
    )
    assert len(problems) == 1 and "apiKeyEnv" in problems[0]
    assert "0123456789" not in problems[0]
    assert options.selector.kind == "http"  # each recall says why it sent nothing


def test_a_variable_name_in_api_key_env_is_fine():
    _, problems = parse_options(
        {"selector": {"kind": "http", "url": "https://a.example/v1", "apiKeyEnv": "OPENAI_API_KEY"}}
    )
    assert problems == []


def test_completer_follows_the_selector_and_the_capability() -> None:
    from concurrent.futures import Future

    from memory_recall.server.core.options import (
        build_completer,
        completer_problem,
        parse_options,
    )
    from memory_recall.server.models.complete import ClientCompleter, HttpCompleter
    from memory_recall.server.store.outbound import GuardedCompleter

    def send(method, params):
        return "id", Future()

    def cancel(msg_id):
        return None

    def options(raw):
        return parse_options(raw)[0]

    client = options({"selector": {"kind": "client"}, "capabilities": {"complete": True}})
    built = build_completer(client, HostModel(send, cancel))
    assert isinstance(built, GuardedCompleter)  # what it sends a model is redacted
    assert isinstance(built.inner, ClientCompleter)
    no_capability = options({"selector": {"kind": "client"}})
    assert build_completer(no_capability, HostModel(send, cancel)) is None
    http = options({"selector": {"kind": "http", "url": "http://127.0.0.1:1/v1"}})
    assert isinstance(build_completer(http, HostModel(send, cancel)).inner, HttpCompleter)  # type: ignore[union-attr]
    lonely = options({"capabilities": {"complete": True}})
    assert build_completer(lonely, HostModel(send, cancel)) is None
    assert "selector.kind 'client'" in (completer_problem(lonely) or "")
    bad, problems = parse_options({"capabilities": {"complete": "yes"}})
    assert bad.capabilities.complete is False and problems[0].startswith("capabilities.complete")
