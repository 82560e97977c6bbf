"""The recall lifecycle (docs/recall.md) as a host sees it: notifications, phases, telemetry.

`RecallService` is driven in-process with a fake selector and a listener that
records every notification in order, over a small corpus whose docs/ranking.md ranking
is known: A > B > C > D > E > G > F for the query "deploy release checklist".
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import pytest
from memory_recall.protocol.messages import MemoryDoc, PhaseNotification, RecallTelemetry
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.models import SelectionRequest, SelectorError
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.service import RecallRequest, RecallService

from tests.conftest import make_doc

QUERY = "deploy release checklist"
SPEC_RANKER = RANKERS[
    "spec"
]  # the reference scorer exactly (docs/ranking.md): the expected order is derivable by hand

# Title +4, description +3, body +1 per query token; mtime breaks no tie here.
A = make_doc("deploy release checklist", path="/mem/a.md")
B = make_doc("deploy release", path="/mem/b.md")
C = make_doc("deploy", "release steps", path="/mem/c.md")
D = make_doc("deploy notes", path="/mem/d.md")
E = make_doc("notes", "how we deploy", path="/mem/e.md")
F = make_doc("misc", body="we deploy on fridays", path="/mem/f.md")
G = make_doc("misc two", body="deploy checklist inside", path="/mem/g.md")
UNRELATED = make_doc("cooking pasta", "boil the water first", path="/mem/pasta.md")
CORPUS = [A, B, C, D, E, F, G, UNRELATED]
RANKED = [A, B, C, D, E, G, F]


def paths(docs: Iterable[MemoryDocument | MemoryDoc]) -> list[str]:
    return [d.path for d in docs]


class Listener:
    """Records every notification and telemetry event, in arrival order."""

    def __init__(self, events: list[str] | None = None) -> None:
        self.events = events if events is not None else []
        self.fast: list[PhaseNotification] = []
        self.refined: list[PhaseNotification] = []
        self.telemetry_events: list[RecallTelemetry] = []

    def fast_result(self, note: PhaseNotification) -> None:
        self.events.append("fast")
        self.fast.append(note)

    def refined_result(self, note: PhaseNotification) -> None:
        self.events.append("refined")
        self.refined.append(note)

    def telemetry(self, event: RecallTelemetry) -> None:
        self.events.append("telemetry")
        self.telemetry_events.append(event)


class FakeSelector:
    """A selector whose answer is a function of the request; it logs when it is asked."""

    kind = "client"

    def __init__(
        self,
        answer: Callable[[SelectionRequest], list[str]] | list[str] | None = None,
        *,
        error: Exception | None = None,
        block: asyncio.Event | None = None,
        events: list[str] | None = None,
    ) -> None:
        self.answer = answer
        self.error = error
        self.block = block
        self.events = events if events is not None else []
        self.requests: list[SelectionRequest] = []
        self.entered = asyncio.Event()

    async def select(self, request: SelectionRequest) -> list[str]:
        self.events.append("select")
        self.requests.append(request)
        self.entered.set()
        if self.block is not None:
            await self.block.wait()
        if self.error is not None:
            raise self.error
        if callable(self.answer):
            return self.answer(request)
        return list(self.answer or [])


def source(docs: Sequence[MemoryDocument] = CORPUS):
    view = CorpusView.of(docs)

    async def snapshot() -> CorpusView:
        return view

    return snapshot


async def run(
    service: RecallService,
    query: str = QUERY,
    *,
    docs: Sequence[MemoryDocument] = CORPUS,
    request_id: str | int = 1,
    **kw: Any,
):
    listener = Listener(getattr(service.selector, "events", None))
    request = RecallRequest(request_id=request_id, query=query, token="tok", **kw)
    result = await service.recall(request, source(docs), listener)
    return result, listener


def assert_one_terminal(listener: Listener) -> RecallTelemetry:
    assert len(listener.refined) == 1
    assert len(listener.fast) <= 1
    assert len(listener.telemetry_events) == 1
    assert listener.events[-1] == "telemetry"
    return listener.telemetry_events[0]


# -- no selector ---------------------------------------------------------------------


async def test_without_selector_there_is_no_fast_phase_and_refined_is_the_lexical_top_5():
    service = RecallService(None, SPEC_RANKER)
    result, listener = await run(service)
    assert result.fast is None
    assert listener.fast == []
    refined = result.refined
    assert refined is not None
    assert (refined.strategy, refined.status, refined.failure) == ("heuristic", "delivered", None)
    assert paths(refined.docs) == paths(RANKED[:5])
    assert refined.prompt.startswith("## Relevant memory")
    assert "### deploy release checklist (a.md)" in refined.prompt
    note = listener.refined[0]
    assert (note.request_id, note.token) == (1, "tok")
    assert paths(note.docs) == paths(refined.docs)
    event = assert_one_terminal(listener)
    assert (event.outcome, event.selector_kind, event.selector_latency_ms) == (
        "completed",
        "none",
        None,
    )
    assert (event.fast_docs, event.refined_docs, event.docs_selected) == (0, 5, 5)
    assert event.docs_scanned == len(CORPUS) == result.docs_scanned


async def test_without_selector_a_query_matching_nothing_is_strategy_none():
    service = RecallService(None, SPEC_RANKER)
    result, listener = await run(service, "kubernetes helm chart")
    assert result.refined is not None
    assert (result.refined.strategy, result.refined.status) == ("none", "no_relevant_results")
    assert result.refined.docs == []
    assert result.refined.prompt == ""
    assert_one_terminal(listener)


async def test_the_request_limit_caps_the_fallback():
    service = RecallService(None, SPEC_RANKER)
    result, _ = await run(service, limit=1)
    assert result.refined is not None
    assert paths(result.refined.docs) == [A.path]


@pytest.mark.parametrize("query", ["", "   ", "a ! ? 1", "x"])
@pytest.mark.parametrize("with_selector", [False, True])
async def test_a_query_without_tokens_still_ends_with_one_refined_notification(
    query, with_selector
):
    selector = FakeSelector([A.path]) if with_selector else None
    service = RecallService(selector, SPEC_RANKER)
    result, listener = await run(service, query)
    assert result.fast is None
    assert listener.fast == []
    assert result.refined is not None
    assert (result.refined.strategy, result.refined.status) == ("none", "no_relevant_results")
    assert result.refined.docs == []
    if selector:
        assert selector.requests == []  # nothing to choose from: the model is not asked
    event = assert_one_terminal(listener)
    assert event.outcome == "completed"


@pytest.mark.parametrize("with_selector", [False, True])
async def test_an_empty_corpus_still_ends_with_one_refined_notification(with_selector):
    service = RecallService(FakeSelector([]) if with_selector else None, SPEC_RANKER)
    result, listener = await run(service, docs=[])
    assert result.fast is None
    assert result.refined is not None
    assert (result.refined.strategy, result.refined.status) == ("none", "no_relevant_results")
    assert result.docs_scanned == 0
    assert_one_terminal(listener)


# -- with a selector ------------------------------------------------------------------


async def test_fast_top_2_is_sent_before_the_selector_is_asked():
    selector = FakeSelector([C.path, D.path])
    service = RecallService(selector, SPEC_RANKER)
    result, listener = await run(service)
    assert listener.events == ["fast", "select", "refined", "telemetry"]
    assert result.fast is not None
    assert (result.fast.phase, result.fast.strategy, result.fast.status) == (
        "fast",
        "heuristic",
        "delivered",
    )
    assert paths(result.fast.docs) == [A.path, B.path]
    assert paths(listener.fast[0].docs) == [A.path, B.path]
    assert listener.fast[0].token == "tok"
    # The model saw every matching document, and the fast ones too.
    manifest = paths(selector.requests[0].candidates)
    assert set(paths(RANKED)) <= set(manifest)
    assert selector.requests[0].query == QUERY
    assert selector.requests[0].limit == 5


async def test_refined_is_the_selectors_choice_in_its_order():
    service = RecallService(FakeSelector([D.path, C.path]), SPEC_RANKER)
    result, listener = await run(service)
    refined = result.refined
    assert refined is not None
    assert (refined.strategy, refined.status, refined.failure) == ("model", "delivered", None)
    assert paths(refined.docs) == [D.path, C.path]
    event = assert_one_terminal(listener)
    assert (event.phase, event.strategy, event.status) == ("refined", "model", "delivered")
    assert (event.fast_docs, event.refined_docs, event.docs_selected) == (2, 2, 4)
    assert event.selector_kind == "client"
    assert event.selector_latency_ms is not None


async def test_refined_never_repeats_what_the_fast_phase_delivered():
    service = RecallService(FakeSelector([A.path, C.path, B.path]), SPEC_RANKER)
    result, _ = await run(service)
    assert result.refined is not None
    assert paths(result.refined.docs) == [C.path]
    assert result.refined.status == "delivered"


async def test_a_choice_of_only_fast_docs_is_already_delivered():
    service = RecallService(FakeSelector([B.path, A.path]), SPEC_RANKER)
    result, listener = await run(service)
    assert result.refined is not None
    assert (result.refined.strategy, result.refined.status) == ("model", "already_delivered")
    assert result.refined.docs == []
    assert listener.refined[0].status == "already_delivered"


async def test_an_empty_choice_is_no_relevant_results():
    service = RecallService(FakeSelector([]), SPEC_RANKER)
    result, _ = await run(service)
    assert result.refined is not None
    assert (result.refined.strategy, result.refined.status) == ("model", "no_relevant_results")


async def test_a_query_matching_nothing_sends_no_fast_phase_but_still_asks_the_model():
    selector = FakeSelector(lambda req: [req.candidates[0].path])
    service = RecallService(selector, SPEC_RANKER)
    result, listener = await run(service, "kubernetes helm chart")
    assert result.fast is None
    assert listener.events == ["select", "refined", "telemetry"]
    # The manifest still offers the most recent memories (docs/ranking.md R list).
    assert len(selector.requests[0].candidates) == len(CORPUS)
    assert result.refined is not None
    assert result.refined.strategy == "model"
    assert len(result.refined.docs) == 1


async def test_duplicate_paths_in_an_answer_are_delivered_once():
    service = RecallService(FakeSelector([C.path, C.path, D.path, C.path]), SPEC_RANKER)
    result, _ = await run(service)
    assert result.refined is not None
    assert paths(result.refined.docs) == [C.path, D.path]


# -- selector failures: fallback, with the reason ----------------------------------------


def fallback_after_fast() -> list[str]:
    return paths(RANKED[2:5])  # the lexical top 5 minus the two fast docs


@pytest.mark.parametrize(
    ("selector", "reason"),
    [
        (FakeSelector(error=SelectorError("client declined: busy")), "client declined: busy"),
        (FakeSelector([C.path, D.path, E.path, F.path, G.path, A.path]), "more than the limit"),
        (FakeSelector([C.path, "/mem/invented.md"]), "/mem/invented.md"),
        (FakeSelector([C.path, UNRELATED.path.upper()]), "not in its manifest"),
    ],
    ids=["raises", "over-limit", "unknown-path", "case-changed-path"],
)
async def test_a_failed_selector_falls_back_to_the_lexical_top_5_minus_fast(selector, reason):
    service = RecallService(selector, SPEC_RANKER)
    result, listener = await run(service)
    refined = result.refined
    assert refined is not None
    assert (refined.strategy, refined.status) == ("heuristic", "delivered")
    assert paths(refined.docs) == fallback_after_fast()
    assert refined.failure is not None and reason in refined.failure
    assert listener.refined[0].failure == refined.failure
    event = assert_one_terminal(listener)
    assert event.outcome == "completed"
    assert event.failure == refined.failure
    assert event.strategy == "heuristic"


async def test_a_selector_over_the_request_limit_falls_back():
    service = RecallService(FakeSelector([C.path, D.path]), SPEC_RANKER)
    result, _ = await run(service, limit=1)
    assert result.refined is not None
    assert result.refined.strategy == "heuristic"
    assert result.refined.failure is not None and "limit 1" in result.refined.failure


async def test_a_slow_selector_times_out_at_the_ceiling_and_falls_back():
    never = asyncio.Event()
    selector = FakeSelector([C.path], block=never)
    service = RecallService(selector, SPEC_RANKER, ceiling_s=0.05)
    result, listener = await run(service)
    assert result.refined is not None
    assert result.refined.strategy == "heuristic"
    assert paths(result.refined.docs) == fallback_after_fast()
    assert result.refined.failure == "timed out after 50 ms"
    assert_one_terminal(listener)


async def test_a_client_timeout_shorter_than_the_ceiling_wins():
    selector = FakeSelector([C.path], block=asyncio.Event())
    service = RecallService(selector, SPEC_RANKER, ceiling_s=30, timeout_s=0.05)
    result, _ = await run(service)
    assert result.refined is not None
    assert result.refined.failure == "timed out after 50 ms"


async def test_a_fallback_made_only_of_fast_docs_is_already_delivered():
    service = RecallService(FakeSelector(error=SelectorError("down")), SPEC_RANKER)
    result, _ = await run(service, docs=[A, B, UNRELATED])
    assert result.fast is not None and paths(result.fast.docs) == [A.path, B.path]
    assert result.refined is not None
    assert (result.refined.strategy, result.refined.status) == ("heuristic", "already_delivered")
    assert result.refined.failure == "down"


async def test_a_selector_crash_is_a_failed_recall_with_one_telemetry_event():
    service = RecallService(FakeSelector(error=RuntimeError("bug")), SPEC_RANKER)
    listener = Listener()
    with pytest.raises(RuntimeError):
        await service.recall(RecallRequest(1, QUERY), source(), listener)
    assert listener.refined == []
    assert len(listener.telemetry_events) == 1
    event = listener.telemetry_events[0]
    assert event.outcome == "failed"
    assert event.failure is not None and "bug" in event.failure
    assert service.active == {}


# -- cancellation -------------------------------------------------------------------------


async def test_cancelling_while_the_selector_thinks_sends_nothing_more():
    selector = FakeSelector([C.path], block=asyncio.Event())
    service = RecallService(selector, SPEC_RANKER)
    listener = Listener(selector.events)
    task = asyncio.create_task(service.recall(RecallRequest(7, QUERY, "t"), source(), listener))
    await selector.entered.wait()
    assert set(service.active) == {7}
    assert service.active[7].paths == {A.path, B.path}  # what fast delivered, held per request
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert listener.events == ["fast", "select", "telemetry"]
    assert listener.refined == []
    event = listener.telemetry_events[0]
    assert (event.outcome, event.request_id, event.token) == ("cancelled", 7, "t")
    assert (event.phase, event.fast_docs) == ("fast", 2)
    assert service.active == {}
    assert service.counters.cancelled == 1
    assert service.counters.active == 0


async def test_cancelling_before_the_snapshot_is_ready_reports_cancelled():
    gate = asyncio.Event()
    entered = asyncio.Event()

    async def slow_snapshot() -> CorpusView:
        entered.set()
        await gate.wait()
        return CorpusView.of(CORPUS)

    service = RecallService(None, SPEC_RANKER)
    listener = Listener()
    task = asyncio.create_task(service.recall(RecallRequest(3, QUERY), slow_snapshot, listener))
    await entered.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert listener.events == ["telemetry"]
    assert listener.telemetry_events[0].outcome == "cancelled"
    assert service.active == {}


# -- exclusions ---------------------------------------------------------------------------


async def test_exclude_paths_are_never_delivered_without_selector():
    service = RecallService(None, SPEC_RANKER)
    result, _ = await run(service, exclude_paths=[A.path, C.path])
    assert result.refined is not None
    assert paths(result.refined.docs) == [B.path, D.path, E.path, G.path, F.path]


async def test_exclude_paths_leave_the_fast_phase_and_the_manifest():
    selector = FakeSelector([A.path])
    service = RecallService(selector, SPEC_RANKER)
    result, _ = await run(service, exclude_paths=[A.path])
    assert result.fast is not None
    assert paths(result.fast.docs) == [B.path, C.path]
    assert A.path not in paths(selector.requests[0].candidates)
    # Choosing an excluded path is choosing outside the manifest: fallback.
    assert result.refined is not None
    assert result.refined.strategy == "heuristic"
    assert A.path not in paths(result.refined.docs)
    assert paths(result.refined.docs) == [D.path, E.path, G.path]


async def test_concurrent_recalls_never_mix_their_exclusions():
    # Both recalls are inside the selector at once; each must remove only its own fast docs.
    release = asyncio.Event()
    both_in: list[str] = []

    async def choose(request: SelectionRequest) -> list[str]:
        return [A.path, C.path, D.path, F.path]

    class Gate(FakeSelector):
        async def select(self, request: SelectionRequest) -> list[str]:
            both_in.append(request.query)
            if len(both_in) == 2:
                release.set()
            await release.wait()
            return await choose(request)

    service = RecallService(Gate(), SPEC_RANKER)
    first, second = Listener(), Listener()
    r1 = RecallRequest("one", QUERY)
    r2 = RecallRequest("two", "fridays deploy notes")  # fast: D (8) and E (7)
    res1, res2 = await asyncio.gather(
        service.recall(r1, source(), first),
        service.recall(r2, source(), second),
    )
    assert res1.fast is not None and paths(res1.fast.docs) == [A.path, B.path]
    assert res2.fast is not None and paths(res2.fast.docs) == [D.path, E.path]
    assert res1.refined is not None and paths(res1.refined.docs) == [C.path, D.path, F.path]
    assert res2.refined is not None and paths(res2.refined.docs) == [A.path, C.path, F.path]
    assert [n.request_id for n in first.refined + first.fast] == ["one", "one"]
    assert [n.request_id for n in second.refined + second.fast] == ["two", "two"]
    assert service.active == {}
