"""Paths inside a root as the state store keys them (server/roots.py)."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from memory_recall.server.roots import posix_relative


@settings(max_examples=2000, deadline=None)
@given(st.text(alphabet=st.sampled_from(["a", "b", ".", "/", "é", "\\"]), max_size=10))
def test_a_relative_path_is_keyed_as_path_writes_it(relative: str) -> None:
    assert posix_relative(relative) == Path(relative).as_posix()


def test_a_path_from_relpath_is_kept_as_it_is() -> None:
    relative = os.path.relpath("/r/notes/deploy.md", "/r")
    assert posix_relative(relative) == "notes/deploy.md"
    if os.sep == "/":
        assert posix_relative(relative) is relative  # no Path made
