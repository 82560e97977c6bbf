"""One recall, end to end (docs/recall.md): fast phase, selector, refined phase.

This module knows nothing of JSON-RPC: the daemon hands it a request and a
`RecallListener`, and it returns the result. Each recall owns its
`ExclusionSet` (what the fast phase delivered), so concurrent recalls can never
mix their exclusions; the set is dropped when the recall ends.

It is one job, one recall, and long because both opt-in channels join it where the
phases are built: the memory network's finds (recall/network.py decides them) and the
semantic channel's hits (semantic/ decides them) are placed here, beside the exclusion
and the deadlines they must respect.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from memory_recall.protocol.limits import FAST_LIMIT, REFINED_LIMIT, SELECTOR_CEILING_S
from memory_recall.protocol.messages import Excerpt as WireExcerpt
from memory_recall.protocol.messages import (
    MemoryDoc,
    PhaseName,
    PhaseNotification,
    PhaseResult,
    RecallCounters,
    RecallResult,
    RecallTelemetry,
    SemanticReport,
    StaleMark,
    Status,
    Strategy,
    SupersededMark,
)
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.facts.newer import Superseded, superseded
from memory_recall.server.models import SelectionRequest, Selector, SelectorError
from memory_recall.server.network.activation import Reached
from memory_recall.server.ranking.passage import Excerpt
from memory_recall.server.ranking.registry import RankerSpec
from memory_recall.server.ranking.shortlist import RecallQuery, Shortlist
from memory_recall.server.ranking.spec import ScoredDocument
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.network import NetworkRecall, RecallNetwork, hops_wire
from memory_recall.server.recall.prompt import render_prompt

if TYPE_CHECKING:  # the channel is imported only by a daemon configured with one
    from memory_recall.server.semantic.channel import SemanticChannel, SemanticQuery

# Semantic hits read per recall: enough to fill 5 slots past excluded or lexical ones,
# and the model's candidates.
SEMANTIC_HITS = 40


@dataclass(frozen=True)
class RecallRequest:
    request_id: str | int
    query: str
    token: str | int | None = None
    recent_tools: Sequence[str] = ()
    exclude_paths: Sequence[str] = ()
    limit: int = REFINED_LIMIT
    # A host that injects at two points (a prompt hook, then a tool hook: docs/hooks.md)
    # gets the fast phase without a model too; its refined phase is then the lexical top 5
    # minus what the fast phase sent.
    fast_without_model: bool = False


# Staleness (docs/organisation.md), checked as documents are about to be delivered: a factory
# called once per recall (its `stat` cache lives as long as the recall) returning
# a check of path → why the memory may be outdated. The daemon passes
# `organise.staleness.StalenessChecker.for_recall`.
StaleCheck = Callable[[Sequence[MemoryDocument]], Mapping[str, str]]
StalenessSource = Callable[[], StaleCheck]
# The memory network (docs/network.md), or None while it is being built.
NetworkSource = Callable[[], RecallNetwork | None]
# What one recall considered and delivered, for memory/status and memory/explain:
# called once per recall after its refined phase (the daemon's bookkeeping).
RecallRecord = Callable[
    ["RecallRequest", "Shortlist", "RecallResult", "NetworkRecall | None"], None
]


class RecallListener(Protocol):
    def fast_result(self, note: PhaseNotification) -> None: ...
    def refined_result(self, note: PhaseNotification) -> None: ...
    def telemetry(self, event: RecallTelemetry) -> None: ...


@dataclass
class ExclusionSet:
    """Paths this request has already delivered; the refined phase never repeats them."""

    paths: set[str] = field(default_factory=set)

    def add(self, docs: Sequence[ScoredDocument]) -> None:
        self.paths.update(s.document.path for s in docs)

    def remove_from(self, docs: Sequence[ScoredDocument]) -> list[ScoredDocument]:
        return [s for s in docs if s.document.path not in self.paths]


def to_wire(
    scored: ScoredDocument,
    excerpt: Excerpt,
    stale: str | None = None,
    similarity: float | None = None,
    via: Reached | None = None,
    supersedes: Sequence[Superseded] = (),
    confidence: float | None = None,
) -> MemoryDoc:
    """A delivered document: its body is the excerpt the ranker chose."""
    doc = scored.document
    return MemoryDoc(
        path=doc.path,
        relative_path=doc.relative_path,
        scope=doc.scope.wire,
        type=doc.type,
        title=doc.title,
        description=doc.description,
        body=doc.body[excerpt.start : excerpt.end],
        truncated=(excerpt.start, excerpt.end) != (0, len(doc.body)),
        excerpt=WireExcerpt(start=excerpt.start, end=excerpt.end),
        mtime_ms=doc.mtime_ms,
        score=scored.score,
        stale=StaleMark(reason=stale) if stale else None,
        content_hash=doc.content_hash or None,
        similarity=similarity,
        via=hops_wire(via) if via is not None else None,
        supersedes=_marks(s for s in supersedes if s.settled),
        perhaps_corrects=_marks(s for s in supersedes if not s.settled),
        confidence=confidence,
    )


def _marks(found: Iterable[Superseded]) -> list[SupersededMark] | None:
    marks = [
        SupersededMark(
            path=s.older.path,
            relative_path=s.older.relative_path,
            title=s.older.title,
            date=s.older_date,
        )
        for s in found
    ]
    return marks or None


def refined_status(chosen: int, remaining: int) -> Status:
    """delivered if anything remains after removing fast docs; already_delivered if
    everything chosen was sent fast; no_relevant_results if nothing was chosen."""
    if remaining:
        return "delivered"
    return "already_delivered" if chosen else "no_relevant_results"


@dataclass
class _Timer:
    started: float = field(default_factory=time.perf_counter)

    def ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 3)


@dataclass(frozen=True)
class _Phases:
    """Builds the phase objects of one recall, timed from its arrival; each document's
    body is cut to the excerpt the ranking gives it."""

    timer: _Timer
    excerpt: Callable[[MemoryDocument], Excerpt]
    stale_check: StaleCheck | None = None
    via: Mapping[str, Reached] | None = None  # the network's finds and their paths
    # What earlier phases of this recall delivered: newer wins across phases too.
    delivered: list[MemoryDocument] = field(default_factory=list)

    def build(
        self,
        name: PhaseName,
        strategy: Strategy,
        status: Status,
        docs: list[ScoredDocument],
        failure: str | None = None,
        similarity: Mapping[str, float] | None = None,
        semantic: SemanticReport | None = None,
        confidence: Mapping[str, float] | None = None,
    ) -> PhaseResult:
        docs, replaced = _newer_wins(docs, self.delivered)
        self.delivered.extend(s.document for s in docs)
        stale = self.stale_check([s.document for s in docs]) if self.stale_check and docs else {}
        if stale:  # demoted: after every fresh memory of the phase
            docs = [s for s in docs if s.document.path not in stale] + [
                s for s in docs if s.document.path in stale
            ]
        excerpts = [self.excerpt(s.document) for s in docs]
        similarity = similarity or {}
        confidence = confidence or {}
        via = self.via or {}
        return PhaseResult(
            phase=name,
            strategy=strategy,
            status=status,
            docs=[
                to_wire(
                    s,
                    e,
                    stale.get(s.document.path),
                    similarity.get(s.document.path),
                    via.get(s.document.path),
                    replaced.get(s.document.path, ()),
                    confidence.get(s.document.path),
                )
                for s, e in zip(docs, excerpts, strict=True)
            ],
            prompt=render_prompt(
                [s.document for s in docs],
                excerpts=excerpts,
                stale=stale,
                supersedes={
                    path: [
                        (
                            x.older.title,
                            x.older.relative_path,
                            x.older_date,
                            x.newer_date,
                            x.settled,
                            x.case,
                        )
                        for x in found
                    ]
                    for path, found in replaced.items()
                },
                corrected_by=_corrected_by(replaced, {s.document.path for s in docs}),
            ),
            elapsed_ms=self.timer.ms(),
            failure=failure,
            semantic=semantic,
        )


def _corrected_by(
    replaced: Mapping[str, Sequence[Superseded]], delivered: set[str]
) -> dict[str, list[tuple[str, str, str, str]]]:
    """Each delivered older memory a newer one of the same prompt perhaps corrects (not
    settled): path → (the newer's title, relative path, date, `Superseded.case`)."""
    marks: dict[str, list[tuple[str, str, str, str]]] = {}
    for path, found in replaced.items():
        for item in found:
            if not item.settled and item.older.path in delivered and path in delivered:
                newer = item.newer
                marks.setdefault(item.older.path, []).append(
                    (newer.title, newer.relative_path, item.newer_date, item.case)
                )
    return marks


def _newer_wins(
    docs: list[ScoredDocument], delivered: Sequence[MemoryDocument]
) -> tuple[list[ScoredDocument], dict[str, list[Superseded]]]:
    """A phase's documents without those a newer memory of the recall replaces, and what
    each kept document supersedes or perhaps corrects (facts/newer.py; an earlier phase's
    are marked only; an unsettled one is delivered too)."""
    if len(docs) + len(delivered) < 2:
        return docs, {}
    found = superseded([*delivered, *(s.document for s in docs)])
    replaced: dict[str, list[Superseded]] = {}
    for item in found.values():
        replaced.setdefault(item.newer.path, []).append(item)
    kept = [s for s in docs if not (s.document.path in found and found[s.document.path].settled)]
    return kept, replaced


def lexical_phases(
    snapshot: CorpusView,
    request: RecallRequest,
    ranker: RankerSpec,
    network: RecallNetwork | None = None,
) -> tuple[PhaseResult | None, PhaseResult]:
    """What the daemon would send for a request, without a model: the fast phase a host
    with a selector gets first (None when nothing matches), and the refined phase a host
    without one gets (the lexical top 5). `memory-recall recall` prints these."""
    query = ranker.query(
        snapshot,
        request.query,
        recent_tools=request.recent_tools,
        exclude_paths=request.exclude_paths,
    )
    shortlist = query.shortlist()
    joined = NetworkRecall(network, query.keep) if network is not None else None
    phases = _Phases(_Timer(), shortlist.excerpt, via=joined.via if joined else None)
    top, confidence = query.fast()
    if joined is not None and top:
        top = joined.fast(top, shortlist.ranked)
    fast = (
        phases.build("fast", "heuristic", "delivered", top, confidence=confidence) if top else None
    )
    if not shortlist.tokens or not shortlist.candidates:
        return fast, phases.build("refined", "none", "no_relevant_results", [])
    return fast, RecallService._fallback_phase(
        shortlist, ExclusionSet(), phases, request.limit, joined=joined
    )


def model_deadline_s(ceiling_s: float | None, timeout_s: float | None) -> float:
    """How long a model may take, for a selection or a completion: its timeout, never
    above the ceiling (30 s unless a face set another)."""
    ceiling = SELECTOR_CEILING_S if ceiling_s is None else ceiling_s
    return min(ceiling, timeout_s) if timeout_s else ceiling


class RecallService:
    """Runs recalls over the warm catalog with one selector and one ranker."""

    def __init__(
        self,
        selector: Selector | None,
        ranker: RankerSpec,
        *,
        ceiling_s: float | None = None,
        timeout_s: float | None = None,
        staleness: StalenessSource | None = None,
        network: NetworkSource | None = None,
        record: RecallRecord | None = None,
        semantic: SemanticChannel | None = None,
    ) -> None:
        self.selector = selector
        self.ranker = ranker
        self.staleness = staleness
        self.network = network
        self.record = record
        self.ceiling_s = SELECTOR_CEILING_S if ceiling_s is None else ceiling_s
        self.deadline_s = model_deadline_s(ceiling_s, timeout_s)
        self.counters = RecallCounters()
        self.active: dict[str | int, ExclusionSet] = {}
        # Semantic recall (opt-in): only when embeddings are configured.
        self.semantic = semantic

    @property
    def selector_kind(self) -> str:
        return self.selector.kind if self.selector else "none"

    async def recall(
        self,
        request: RecallRequest,
        snapshot_source: Callable[[], Awaitable[CorpusView]],
        listener: RecallListener,
    ) -> RecallResult:
        """Run one recall; the snapshot is taken (awaiting the first index) inside it."""
        timer = _Timer()
        self.counters.recalls += 1
        exclusion = self.active[request.request_id] = ExclusionSet()
        self.counters.active = len(self.active)
        outcome = _Outcome(request, self.selector_kind)
        try:
            snapshot = await snapshot_source()
            outcome.docs_scanned = len(snapshot)
            result = await self._run(request, snapshot, listener, exclusion, outcome, timer)
            outcome.finish("completed", timer)
            self.counters.completed += 1
            return result
        except asyncio.CancelledError:
            outcome.finish("cancelled", timer)
            self.counters.cancelled += 1
            raise
        except Exception as exc:
            outcome.finish("failed", timer, failure=f"{type(exc).__name__}: {exc}")
            self.counters.failed += 1
            raise
        finally:
            self.active.pop(request.request_id, None)
            self.counters.active = len(self.active)
            listener.telemetry(outcome.telemetry)

    async def _run(
        self,
        request: RecallRequest,
        snapshot: CorpusView,
        listener: RecallListener,
        exclusion: ExclusionSet,
        outcome: _Outcome,
        timer: _Timer,
    ) -> RecallResult:
        query = self.ranker.query(
            snapshot,
            request.query,
            recent_tools=request.recent_tools,
            exclude_paths=request.exclude_paths,
        )
        network = self.network() if self.network is not None else None
        joined = NetworkRecall(network, query.keep) if network is not None else None
        phases = _Phases(
            timer,
            lambda doc: query.ranking.excerpt(doc),
            self.staleness() if self.staleness else None,
            joined.via if joined else None,
        )

        def notify(result: PhaseResult) -> PhaseNotification:
            return PhaseNotification(
                **result.model_dump(), request_id=request.request_id, token=request.token
            )

        # The query embedding travels while the lexical ranking runs.
        channel = self.semantic
        semantic = channel.begin(request.query) if channel is not None and query.tokens else None
        try:
            fast, refined, shortlist = await self._phases(
                request, query, phases, listener, notify, exclusion, outcome, semantic, joined
            )
        finally:
            if semantic is not None:
                semantic.abandon()
        result = RecallResult(
            request_id=request.request_id,
            token=request.token,
            fast=fast,
            refined=refined,
            docs_scanned=len(snapshot),
            duration_ms=timer.ms(),
        )
        if self.record is not None:
            self.record(request, shortlist, result, joined)
        return result

    async def _phases(
        self,
        request: RecallRequest,
        query: RecallQuery,
        phases: _Phases,
        listener: RecallListener,
        notify: Callable[[PhaseResult], PhaseNotification],
        exclusion: ExclusionSet,
        outcome: _Outcome,
        semantic: SemanticQuery | None,
        joined: NetworkRecall | None,
    ) -> tuple[PhaseResult | None, PhaseResult, Shortlist]:
        fast: PhaseResult | None = None
        if self.selector is not None or request.fast_without_model:
            # The host is waiting for this one: send what the ranking is sure of among
            # its top 2 before building the model's 200-candidate manifest.
            top, confidence = query.fast()
            if joined is not None and top:
                top = joined.fast(top, query.top(joined.network.seeds))
            similarity: dict[str, float] = {}
            report = None
            if semantic is not None:
                hits = None
                # A slot to fill beside a memory the gate is sure of: wait, within the fast
                # deadline. A fast phase the gate left silent stays silent (the question may
                # have no answer: a similarity alone is not evidence enough to inject).
                waited = 0 < len(top) < FAST_LIMIT
                if waited:
                    hits = await self._semantic_hits(semantic, query, fast=True)
                if hits:
                    top, similarity = self._channel().fill(top, hits, FAST_LIMIT)
                report = _report(semantic, similarity, waited)
            if top:
                exclusion.add(top)
                fast = phases.build(
                    "fast",
                    "heuristic",
                    "delivered",
                    top,
                    similarity=similarity,
                    semantic=report,
                    confidence=confidence,
                )
                listener.fast_result(notify(fast))
                self.counters.fast_delivered += 1
                outcome.record(fast)
        shortlist = query.shortlist()
        if joined is not None:
            shortlist = joined.candidates(shortlist)
        hits = None
        if semantic is not None and (shortlist.candidates or self.selector is None):
            # Without a selector this is the phase the host waits for: the fast deadline.
            # It may be all the host gets when no word matched (the slots are all empty).
            hits = await self._semantic_hits(semantic, query, fast=self.selector is None)
        if (not shortlist.tokens or not shortlist.candidates) and not (
            hits and self.selector is None
        ):
            refined = phases.build("refined", "none", "no_relevant_results", [])
        elif self.selector is None:
            refined = self._fallback_phase(
                shortlist,
                exclusion,
                phases,
                request.limit,
                semantic=(semantic, hits, self.semantic),
                joined=joined,
            )
        else:
            refined = await self._model_phase(
                request, shortlist, exclusion, phases, outcome, (semantic, hits), joined
            )
        if semantic is not None and semantic.failure:
            self._channel().counters.query_failures += 1
        listener.refined_result(notify(refined))
        if refined.docs:
            self.counters.refined_delivered += 1
        outcome.record(refined)
        return fast, refined, shortlist

    def _channel(self) -> SemanticChannel:
        assert self.semantic is not None
        return self.semantic

    async def _semantic_hits(
        self, semantic: SemanticQuery, query: RecallQuery, *, fast: bool
    ) -> list[Any] | None:
        channel = self._channel()
        vector = await semantic.vector(channel.fast_deadline_s if fast else channel.timeout_s)
        if vector is None:
            return None
        hits = channel.hits(vector, query.keep, SEMANTIC_HITS)
        if not hits and len(vector) != channel.matrix.dimension:
            semantic.failure = (
                f"wrong dimension: the query vector has {len(vector)}, the memories "
                f"{channel.matrix.dimension}"
            )
            return None
        return hits

    @staticmethod
    def _fallback_phase(
        shortlist: Shortlist,
        exclusion: ExclusionSet,
        phases: _Phases,
        limit: int,
        failure: str | None = None,
        semantic: tuple[SemanticQuery | None, list[Any] | None, SemanticChannel | None] = (
            None,
            None,
            None,
        ),
        *,
        joined: NetworkRecall | None = None,
    ) -> PhaseResult:
        top = joined.fallback(shortlist, limit) if joined else shortlist.fallback[:limit]
        query, hits, channel = semantic
        similarity: dict[str, float] = {}
        report = None
        if query is not None and channel is not None:
            if hits:
                # Fill after the fast docs are removed: the slots the host sees empty. A
                # lexically silent question stays silent (docs/ranking.md).
                top, similarity = channel.fill(
                    exclusion.remove_from(top),
                    hits,
                    limit,
                    channel.reserved_slots,
                    alone=bool(top),
                )
                top = exclusion.remove_from(top)
            report = _report(query, similarity, True)
        remaining = exclusion.remove_from(top)
        strategy: Strategy = "heuristic" if top else "none"
        status = refined_status(len(top), len(remaining))
        return phases.build(
            "refined", strategy, status, remaining, failure, similarity=similarity, semantic=report
        )

    async def _model_phase(
        self,
        request: RecallRequest,
        shortlist: Shortlist,
        exclusion: ExclusionSet,
        phases: _Phases,
        outcome: _Outcome,
        semantic: tuple[SemanticQuery | None, list[Any] | None] = (None, None),
        joined: NetworkRecall | None = None,
    ) -> PhaseResult:
        assert self.selector is not None
        query, hits = semantic
        candidates = list(shortlist.candidates)
        similarity: dict[str, float] = {}
        report = None
        if query is not None:
            if hits:
                candidates, similarity = self._channel().candidates(candidates, hits)
            report = _report(query, {}, True)
        selection = SelectionRequest(
            query=request.query,
            candidates=candidates,
            limit=request.limit,
            recent_tools=list(request.recent_tools),
            similarity=similarity,
            via={p: hops_wire(r) for p, r in joined.via.items()} if joined and joined.via else {},
        )
        started = time.perf_counter()
        try:
            chosen = await asyncio.wait_for(self.selector.select(selection), self.deadline_s)
            docs = _validate_selection(chosen, shortlist, request.limit, candidates)
        except (SelectorError, asyncio.TimeoutError) as exc:
            reason = (
                f"timed out after {round(self.deadline_s * 1000)} ms"
                if isinstance(exc, asyncio.TimeoutError)
                else str(exc)
            )
            outcome.selector_done(started, reason)
            self.counters.selector_failures += 1
            return self._fallback_phase(
                shortlist,
                exclusion,
                phases,
                request.limit,
                reason,
                semantic=(query, hits, self.semantic),
                joined=joined,
            )
        outcome.selector_done(started, None)
        remaining = exclusion.remove_from(docs)
        status = refined_status(len(docs), len(remaining))
        if report is not None:
            filled = [s for s in remaining if s.document.path in similarity and not s.score]
            report = report.model_copy(update={"filled": len(filled)})
        return phases.build(
            "refined", "model", status, remaining, similarity=similarity, semantic=report
        )


def _report(
    semantic: SemanticQuery, similarity: Mapping[str, float], asked: bool
) -> SemanticReport:
    """The channel's part in one phase; `asked`: the phase waited for the vector."""
    back = semantic.task.done() and not semantic.task.cancelled() and not semantic.task.exception()
    return SemanticReport(
        filled=len(similarity),
        query_ms=semantic.elapsed_ms() if back and asked else None,
        failure=semantic.failure if asked else None,
    )


def _validate_selection(
    chosen: Sequence[str],
    shortlist: Shortlist,
    limit: int,
    candidates: Sequence[MemoryDocument] | None = None,
) -> list[ScoredDocument]:
    """The selector's paths as documents, or SelectorError when the answer breaks the rules."""
    unique = list(dict.fromkeys(chosen))
    if len(unique) > limit:
        raise SelectorError(f"selector chose {len(unique)} memories, more than the limit {limit}")
    manifest = {
        doc.path: doc for doc in (shortlist.candidates if candidates is None else candidates)
    }
    unknown = [p for p in unique if p not in manifest]
    if unknown:
        shown = unknown[0] if len(unknown[0]) <= 200 else unknown[0][:199] + "…"
        raise SelectorError(f"selector chose a path not in its manifest: {shown!r}")
    # `ranked` holds only the lexical top 180; a recent candidate may score too.
    return [ScoredDocument(manifest[p], shortlist.score_of(manifest[p])) for p in unique]


class _Outcome:
    """Accumulates what the terminal telemetry event will say."""

    def __init__(self, request: RecallRequest, selector_kind: str) -> None:
        self.request = request
        self.docs_scanned = 0
        self.selector_kind = selector_kind
        self.last: PhaseResult | None = None
        self.fast_docs = 0
        self.refined_docs = 0
        self.selector_latency_ms: float | None = None
        self.failure: str | None = None
        self.telemetry: RecallTelemetry

    def record(self, result: PhaseResult) -> None:
        self.last = result
        if result.phase == "fast":
            self.fast_docs = len(result.docs)
        else:
            self.refined_docs = len(result.docs)

    def selector_done(self, started: float, failure: str | None) -> None:
        self.selector_latency_ms = round((time.perf_counter() - started) * 1000, 3)
        self.failure = failure

    def finish(self, outcome: str, timer: _Timer, failure: str | None = None) -> None:
        last = self.last
        self.telemetry = RecallTelemetry(
            request_id=self.request.request_id,
            token=self.request.token,
            outcome=outcome,  # type: ignore[arg-type]
            phase=last.phase if last else None,
            strategy=last.strategy if last else None,
            status=last.status if last else None,
            docs_scanned=self.docs_scanned,
            docs_selected=self.fast_docs + self.refined_docs,
            fast_docs=self.fast_docs,
            refined_docs=self.refined_docs,
            duration_ms=timer.ms(),
            selector_kind=self.selector_kind,  # type: ignore[arg-type]
            selector_latency_ms=self.selector_latency_ms,
            failure=failure or self.failure,
        )
