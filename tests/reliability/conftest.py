"""Fixtures of the reliability tier, and the figures it prints at the end of a run."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.reliability.harness import FULL_LOAD, Behaviour, FakeModel

# -- figures ------------------------------------------------------------------------

_FIGURES: dict[str, str] = {}


@pytest.fixture(scope="session")
def figures() -> dict[str, str]:
    """What a test proved, as `name → figure`; printed in the terminal summary."""
    return _FIGURES


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if not _FIGURES:
        return
    mode = "MEMORY_RECALL_FULL_LOAD=1" if FULL_LOAD else "default sizes"
    terminalreporter.section(f"reliability figures ({mode})")
    for name, figure in sorted(_FIGURES.items()):
        terminalreporter.line(f"{name}: {figure}")


@pytest.fixture
def fake_model() -> Iterator[Callable[..., FakeModel]]:
    started: list[FakeModel] = []

    def start(behaviour: Behaviour) -> FakeModel:
        model = FakeModel(behaviour)
        started.append(model)
        return model

    yield start
    for model in started:
        model.close()
