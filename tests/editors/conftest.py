"""Session fixtures of the editor tier: the expensive shared steps run once (npm ci, the test
bundle and the daemon preflight), and each Neovim group runs once for all its selected
cases (design: docs/editor-tests.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.editors import suites


@pytest.fixture(scope="session")
def npm() -> str:
    """npm, with editors/vscode/node_modules installed from the lockfile."""
    found = suites.node_and_npm()
    if isinstance(found, str):
        pytest.fail(found)
    _, npm = found
    lockfile = suites.VSCODE / "package-lock.json"
    installed = suites.VSCODE / "node_modules" / ".package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lockfile.stat().st_mtime:
        command = [npm, "ci" if lockfile.exists() else "install", "--no-audit", "--no-fund"]
        finished = suites.run(command, suites.VSCODE, suites.environment())
        if not finished.ok:
            pytest.fail(finished.describe())
    return npm


@pytest.fixture(scope="session")
def vscode_tests_built(npm: str) -> Path:
    """The extension and its node tests bundled (out/test/*.test.js), and the daemon command
    checked once: without a daemon every test file would fail on its own with ENOENT, so the
    preflight's message (how to get one) is what each file's item reports instead."""
    env = suites.environment()
    built = suites.run([npm, "run", "--silent", "build", "--", "--tests"], suites.VSCODE, env)
    if not built.ok:
        pytest.fail(built.describe())
    preflight = suites.run(["node", "out/preflight/preflight.js"], suites.VSCODE, env)
    if not preflight.ok:
        pytest.fail(preflight.describe(), pytrace=False)
    return suites.VSCODE / "out" / "test"


@pytest.fixture(scope="session")
def neovim_runs(request: pytest.FixtureRequest, tmp_path_factory) -> suites.NeovimRuns:
    selected = [
        item.callspec.params["neovim_case"]
        for item in request.session.items
        if hasattr(item, "callspec") and "neovim_case" in item.callspec.params
    ]
    return suites.NeovimRuns(selected, tmp_path_factory.mktemp("neovim"))
