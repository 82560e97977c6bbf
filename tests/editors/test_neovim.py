"""The Neovim plugin's headless spec (editors/neovim/tests/spec.lua) against this daemon:
each case of the spec is its own item (design: docs/editor-tests.md)."""

from __future__ import annotations

import pytest

from tests.editors import suites
from tests.editors.suites import NeovimCase, NeovimRuns


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "neovim_case" in metafunc.fixturenames:
        cases = suites.neovim_cases()
        metafunc.parametrize("neovim_case", cases, ids=[c.name for c in cases])


def test_neovim(neovim_case: NeovimCase, neovim_runs: NeovimRuns) -> None:
    if neovim_case.problem:
        pytest.fail(neovim_case.problem, pytrace=False)
    group = neovim_runs.run_for(neovim_case)
    outcome = group.outcomes.get(neovim_case.name)
    if outcome is None:
        pytest.fail(
            f"the run of the group {neovim_case.group!r} ended before this case: "
            + group.finished.describe(),
            pytrace=False,
        )
    if not outcome.ok:
        pytest.fail(outcome.error or "failed", pytrace=False)
    print(f"{neovim_case.name}: {outcome.ms:.0f} ms")
