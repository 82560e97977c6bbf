"""Staleness from citations (docs/organisation.md): cited paths re-checked at delivery, `expires` honoured."""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

import pytest
from memory_recall.server.organise.staleness import Citation, StalenessChecker, citations
from memory_recall.server.roots import Scope

from tests.organise_docs import memory


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("See src/app/pay.ts.", [Citation("src/app/pay.ts")]),
        ("crash in server/lsp.py:120, fixed", [Citation("server/lsp.py", 120)]),
        ("[the hook](web/src/App.tsx#L42-L50)", [Citation("web/src/App.tsx", 42)]),
        ("ADRs live in `docs/adr/`", [Citation("docs/adr", None, True)]),
        ("`./scripts/release.sh` then .github/workflows/ci.yml",
         [Citation("scripts/release.sh"), Citation(".github/workflows/ci.yml")]),
        ("Windows: src\\app\\main.rs:12", [Citation("src/app/main.rs", 12)]),
        ("见 `src/支付/退款.py` 第 3 行", [Citation("src/支付/退款.py")]),
        ("/home/maya/proj/src/x.ts", [Citation("/home/maya/proj/src/x.ts")]),
    ],
)  # fmt: skip
def test_what_counts_as_a_citation(text, expected):
    assert list(citations(text)) == expected


@pytest.mark.parametrize(
    "text",
    [
        "https://github.com/org/repo/blob/main/src/a.py",
        "docs.example.com/guide.md",
        "npm i @types/node and @org/pkg/index.js",
        "globs: src/**/*.ts, src/<name>/index.ts, $HOME/.bashrc/x.sh, {a,b}/c.py",
        "../other/x.md and ~/dotfiles/zshrc.sh",
        "TCP/IP, and/or, 24/7, 1/2, lib/python3.11, km/h, I/O.",
        "version v1.2/3.4 and origin/main",
        "README.md and Makefile:12 (no folder: too ambiguous to check)",
    ],
)
def test_what_does_not(text):
    assert citations(text) == ()


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "src" / "app").mkdir(parents=True)
    (tmp_path / "src" / "app" / "pay.ts").write_text("".join(f"l{i}\n" for i in range(10)))
    (tmp_path / "docs" / "adr").mkdir(parents=True)
    return tmp_path


def check(workspace: Path, body: str, **kw):
    return StalenessChecker(workspace, today=lambda: date(2025, 6, 1)).check(
        memory("t", body, **kw)
    )


def test_a_cited_file_that_exists_is_fresh(workspace):
    assert check(workspace, "Pay flow: src/app/pay.ts:7 and docs/adr/") is None


def test_a_deleted_file_makes_the_memory_stale(workspace):
    stale = check(workspace, "Refunds in src/app/refund.ts and src/app/pay.ts")
    assert stale is not None and stale.kind == "missing"
    assert stale.reason == "cites src/app/refund.ts, which no longer exists"


def test_a_line_past_the_end_of_its_file(workspace):
    stale = check(workspace, "the bug was at src/app/pay.ts:42")
    assert stale is not None and stale.kind == "line"
    assert "has 10 lines" in stale.reason


def test_a_deleted_folder_that_was_cited_as_a_folder(workspace):
    assert check(workspace, "see docs/rfcs/ and docs/adr/").kind == "missing"


def test_a_tree_the_workspace_never_had_is_not_checked(workspace):
    """`infra/k8s/deploy.yaml` of another repository is not ours to judge."""
    assert check(workspace, "the chart is infra/k8s/deploy.yaml in the ops repo") is None


def test_expired_memories_are_stale_in_every_scope(workspace):
    for scope in (Scope.PROJECT, Scope.USER):
        stale = check(workspace, "promo", front={"expires": "2025-05-31"}, scope=scope)
        assert stale is not None and stale.reason == "expired on 2025-05-31"
    assert check(workspace, "promo", front={"expires": "2025-06-01"}) is None
    assert check(workspace, "promo", front={"expires": "soon"}) is None  # unreadable: no claim


def test_user_memories_span_projects_so_their_paths_are_not_checked(workspace):
    assert check(workspace, "src/app/gone.ts", scope=Scope.USER) is None


def test_without_a_workspace_only_expiry_is_read():
    checker = StalenessChecker(None, today=lambda: date(2025, 6, 1))
    assert checker.check(memory("t", "src/app/gone.ts")) is None


def test_an_unreadable_path_is_unknown_not_stale(workspace, monkeypatch):
    real = os.stat

    def stat(path, *args, **kwargs):
        if "locked" in str(path):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", stat)
    assert check(workspace, "src/locked/secret.py") is None


def test_one_recall_stats_each_path_once(workspace, monkeypatch):
    calls: list[str] = []
    real = os.stat
    monkeypatch.setattr(os, "stat", lambda p, *a, **k: (calls.append(str(p)), real(p, *a, **k))[1])
    docs = [memory("a", "src/app/pay.ts src/app/gone.ts"), memory("b", "src/app/gone.ts")]
    per_recall = StalenessChecker(workspace).for_recall()
    assert set(per_recall(docs)) == {d.path for d in docs}
    first = len(calls)
    assert first <= 3  # src, src/app/pay.ts, src/app/gone.ts
    per_recall(docs)
    assert len(calls) == first  # cached within the recall
    StalenessChecker(workspace).for_recall()(docs)
    assert len(calls) > first  # a new recall looks again: files change between recalls


def test_status_lists_every_stale_memory(workspace):
    docs = [memory("ok", "src/app/pay.ts"), memory("gone", "src/app/old.ts"),
            memory("over", "x", front={"expires": "2020-01-01"})]  # fmt: skip
    found = StalenessChecker(workspace).check_all(docs)
    assert [d.title for d, _ in found] == ["gone", "over"]
