"""Shared helpers for the unit tier."""

from __future__ import annotations

import itertools
import os

import pytest
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.roots import Scope

_ids = itertools.count()


def make_doc(
    title: str = "",
    description: str = "",
    body: str = "",
    *,
    type: str = "project",
    mtime_ms: float = 1.0,
    path: str | None = None,
    scope: Scope = Scope.PROJECT,
) -> MemoryDocument:
    path = path or f"/mem/doc{next(_ids)}.md"
    return MemoryDocument(
        path=path,
        relative_path=path.rsplit("/", 1)[-1],
        scope=scope,
        type=type,
        title=title or type,
        description=description,
        body=body,
        mtime_ms=mtime_ms,
    )


def beyond_small_folders(docs: list[MemoryDocument]) -> list[MemoryDocument]:
    """`docs` with unrelated notes added until they are more than the memories a small
    folder holds: the fast phase is then gated as a folder of hundreds is (a folder of a
    few memories has a gate of its own, docs/ranking.md "Small folders")."""
    from memory_recall.server.ranking.confidence.calibration import default_calibration

    missing = default_calibration().small_up_to + 1 - len(docs)
    notes = [
        make_doc(f"note {i}", f"topic {i}", f"word{i} " * 5, path=f"/filler/n{i}.md")
        for i in range(max(0, missing))
    ]
    return [*docs, *notes]


@pytest.fixture
def doc_factory():
    return make_doc


@pytest.fixture(autouse=True, scope="session")
def _snapshot_cache_in_tmp(tmp_path_factory):
    """Daemons started by tests keep their snapshot caches out of the user's data dir …"""
    os.environ.setdefault("MEMORY_RECALL_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    # … and their journal and statistics too (the state store, docs/writing.md).
    os.environ.setdefault("MEMORY_RECALL_STATE_DIR", str(tmp_path_factory.mktemp("state")))
    # … and never read the user's own settings (docs/configuration.md).
    os.environ.setdefault(
        "MEMORY_RECALL_CONFIG", str(tmp_path_factory.mktemp("config") / "none.toml")
    )
    for name in (
        "MEMORY_RECALL_ROOTS",
        "MEMORY_RECALL_WORKSPACE",
        "MEMORY_RECALL_RANKER",
        "MEMORY_RECALL_MODEL_URL",
        "MEMORY_RECALL_MODEL",
        "MEMORY_RECALL_API_KEY_ENV",
    ):
        os.environ.pop(name, None)
