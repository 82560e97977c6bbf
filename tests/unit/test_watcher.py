"""The watcher's pieces that need no file events: failure words and the rescan's tree state."""

from __future__ import annotations

import os
from pathlib import Path

from memory_recall.server.catalog.watcher import describe_failure, tree_state


def test_a_failure_inside_an_exception_group_is_told_by_its_own_message():
    inner = RuntimeError(
        "error in underlying watcher: File system loop found: /m/selfdir points to an ancestor /m"
    )

    class Group(Exception):  # anyio's task group raises an ExceptionGroup of these
        exceptions = (inner,)

    group = Group("unhandled errors in a TaskGroup")
    assert describe_failure(group) == "File system loop found: /m/selfdir points to an ancestor /m"
    assert describe_failure(OSError()) == "OSError"


def test_tree_state_sees_what_the_catalog_must_reread(tmp_path: Path):
    root = tmp_path / "memory"
    (root / "sub").mkdir(parents=True)
    (root / "a.md").write_text("a")
    (root / ".hidden.md").write_text("h")
    os.symlink(".", root / "selfdir")  # a loop: recorded, never followed
    before = tree_state([root, tmp_path / "missing"])
    assert set(before) == {str(root), str(root / "a.md"), str(root / "sub"), str(root / "selfdir")}
    (root / "sub" / "b.md").write_text("b")
    os.chmod(root / "a.md", 0o600)  # a mode change is a change (permissions restored)
    after = tree_state([root])
    changed = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
    assert str(root / "sub" / "b.md") in changed and str(root / "a.md") in changed
