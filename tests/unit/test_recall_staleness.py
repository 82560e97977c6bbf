"""Stale memories in a recall (docs/organisation.md): demoted, marked on the wire, explained in the prompt."""

from __future__ import annotations

from pathlib import Path

from memory_recall.server.organise.staleness import StalenessChecker
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.recall.prompt import render_prompt
from memory_recall.server.recall.service import RecallService

from tests.organise_docs import memory
from tests.unit.test_recall_service import FakeSelector, run


def corpus(workspace: Path):
    (workspace / "src" / "pay").mkdir(parents=True)
    (workspace / "src" / "pay" / "charge.ts").write_text("x\n")
    gone = memory("deploy release checklist", "Steps in src/pay/refund.ts", name="gone.md",
                  root=str(workspace / ".memory"))  # fmt: skip
    fresh = memory("deploy release", "Steps in src/pay/charge.ts", name="fresh.md",
                   root=str(workspace / ".memory"))  # fmt: skip
    return gone, fresh


async def test_a_stale_memory_goes_after_the_fresh_ones_with_its_reason(tmp_path):
    gone, fresh = corpus(tmp_path)
    checker = StalenessChecker(tmp_path)
    service = RecallService(FakeSelector([]), RANKERS["reference"], staleness=checker.for_recall)
    result, listener = await run(service, docs=[gone, fresh])
    fast = listener.fast[0]
    assert [d.path for d in fast.docs] == [fresh.path, gone.path]  # gone ranked first lexically
    assert fast.docs[0].stale is None
    assert fast.docs[1].stale is not None
    assert fast.docs[1].stale.reason == "cites src/pay/refund.ts, which no longer exists"
    assert "_May be outdated: it cites src/pay/refund.ts, which no longer exists._" in fast.prompt
    assert fast.prompt.index("deploy release (fresh.md)") < fast.prompt.index("(gone.md)")
    wire = result.fast.wire()["docs"][1]  # type: ignore[union-attr]
    assert wire["stale"] == {"reason": "cites src/pay/refund.ts, which no longer exists"}


async def test_without_the_check_nothing_changes(tmp_path):
    gone, fresh = corpus(tmp_path)
    result, _ = await run(RecallService(None, RANKERS["reference"]), docs=[gone, fresh])
    assert [d.path for d in result.refined.docs] == [gone.path, fresh.path]  # type: ignore[union-attr]
    assert all(d.stale is None for d in result.refined.docs)  # type: ignore[union-attr]
    assert (
        "stale" in result.refined.docs[0].wire() and result.refined.docs[0].wire()["stale"] is None
    )  # type: ignore[union-attr]


def test_the_prompt_section_says_why():
    doc = memory("Promo codes", "Use code SPRING.", front={"expires": "2020-01-01"})
    text = render_prompt([doc], stale={doc.path: "expired on 2020-01-01"})
    assert "_May be outdated: it expired on 2020-01-01._" in text
    assert "May be outdated" not in render_prompt([doc])
