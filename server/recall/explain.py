"""Why a memory was or was not delivered (`memory/explain`, `recall --explain`; docs/network.md).

For one memory and one query (given, or the query of a recall the daemon ran,
named by its token): its rank and score, the score's parts per field and term
as the ranker itself accounts for them (`explain` of each ranker), the silence
rule's coverage, the network path that reached it, staleness, active-tool
noise and exclusion, whether it was among the model's candidates, and which
phase sent it or why none did.

A pure service over a snapshot: the daemon and the command line hand it the
ranker, the network and the staleness check they use for recalls.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from memory_recall.protocol.limits import REFINED_LIMIT
from memory_recall.protocol.messages import (
    ExplainResult,
    NetworkExplain,
    PhaseExplain,
    ScorePart,
    SilenceExplain,
    StaleMark,
)
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.network.activation import Reached
from memory_recall.server.ranking.explanation import ScoreExplanation
from memory_recall.server.ranking.noise import NoiseFilter
from memory_recall.server.ranking.registry import RankerSpec
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.recall.network import NetworkRecall, RecallNetwork, hops_wire

StaleOf = Callable[[MemoryDocument], str | None]


@dataclass(frozen=True)
class Delivered:
    """What a recall the daemon ran actually sent (when the explanation names one)."""

    fast: Sequence[str]
    refined: Sequence[str]
    refined_strategy: str
    failure: str | None = None


@dataclass(frozen=True)
class ExplainRequest:
    path: str
    query: str
    recent_tools: Sequence[str] = ()
    exclude_paths: Collection[str] = ()
    with_selector: bool = False  # whether recalls have a fast phase (a model is configured)
    delivered: Delivered | None = None  # None: what a recall would send now


def find_document(snapshot: CorpusView, path: str) -> MemoryDocument | None:
    """A served memory by its path or its relative path."""
    for doc in snapshot.documents:
        if doc.path == path:
            return doc
    matches = [d for d in snapshot.documents if d.relative_path == path]
    return matches[0] if len(matches) == 1 else None


def ranker_explanation(
    ranker: RankerSpec, snapshot: CorpusView, tokens: Sequence[str], doc: MemoryDocument
) -> ScoreExplanation:
    explain = getattr(ranker.rank, "explain", None)
    if explain is None:
        raise ValueError(f"the ranker {ranker.name!r} cannot explain its scores")
    found: ScoreExplanation = explain(snapshot, tokens, doc)
    return found


def explain(
    snapshot: CorpusView,
    request: ExplainRequest,
    ranker: RankerSpec,
    *,
    network: RecallNetwork | None = None,
    stale_of: StaleOf | None = None,
    via: Mapping[str, Reached] | None = None,
) -> ExplainResult:
    doc = find_document(snapshot, request.path)
    query = ranker.query(
        snapshot,
        request.query,
        recent_tools=request.recent_tools,
        exclude_paths=request.exclude_paths,
    )
    shortlist = query.shortlist()
    joined = NetworkRecall(network, query.keep) if network is not None else None
    if joined is not None:
        shortlist = joined.candidates(shortlist)
    ranked_paths = [s.document.path for s in shortlist.ranked]
    base: dict[str, Any] = {
        "query": request.query,
        "ranker": ranker.name,
        "tokens": list(query.tokens),  # replaced by the ranker's own terms below
        "ranked": len(ranked_paths),
    }
    if doc is None:
        return ExplainResult(
            path=request.path, relative_path=None, title=None, found=False, rank=None,
            score=None, parts=[], silence=None, network=None, stale=None, noise=False,
            excluded=False, candidate=False, phases=[],
            summary="no memory the daemon serves has this path (or relative path)",
            **base,
        )  # fmt: skip
    scored = ranker_explanation(ranker, snapshot, query.tokens, doc)
    base["tokens"] = list(scored.tokens)
    rank = ranked_paths.index(doc.path) + 1 if doc.path in ranked_paths else None
    noise = NoiseFilter.from_recent_tools(request.recent_tools).is_noise(doc)
    excluded = doc.path in set(request.exclude_paths)
    reached = (via or {}).get(doc.path)
    if reached is None and joined is not None:
        reached = next((r for r in joined.spread(shortlist.ranked) if r.path == doc.path), None)
    stale = stale_of(doc) if stale_of is not None else None
    place = next((i for i, d in enumerate(shortlist.candidates, 1) if d.path == doc.path), None)
    candidate = place is not None
    # What was (or would be) sent.
    confidences: dict[str, float] = {}  # the fast phase's, when ranked here
    if request.delivered is not None:
        sent = request.delivered
    else:
        # The fast phase as a recall decides it: what the confidence gate is sure of (a
        # prompt of several sentences also asked sentence by sentence), then the
        # network's conservative fill.
        fast_docs, confidences = query.fast() if request.with_selector else ([], {})
        if joined is not None and fast_docs:
            fast_docs = joined.fast(fast_docs, shortlist.ranked)
        fast = [s.document.path for s in fast_docs]
        fallback = joined.fallback(shortlist, REFINED_LIMIT) if joined else shortlist.fallback
        refined = [s.document.path for s in fallback if s.document.path not in fast]
        # Without a recall to read, what the daemon would send: the fast phase a host
        # with a model gets first, and the refined phase without a model (or when the
        # model fails); what a model would choose is not known.
        sent = Delivered(fast, refined, "heuristic")
    phases = _phases(
        doc.path,
        sent,
        request.with_selector,
        network_pick=rank is None,
        confidence=confidences.get(doc.path),
    )
    summary = _summary(
        doc.path, sent, rank=rank, scored=scored, noise=noise, excluded=excluded,
        reached=reached, candidate=place, stale=stale, with_selector=request.with_selector,
    )  # fmt: skip
    return ExplainResult(
        path=doc.path,
        relative_path=doc.relative_path,
        title=doc.title,
        found=True,
        rank=rank,
        score=float(shortlist.scores.get(doc.path, scored.score)) if reached else scored.score,
        parts=[
            ScorePart(field=p.field, term=p.term, value=p.value, detail=p.detail)
            for p in scored.parts
        ],
        silence=(
            SilenceExplain(
                coverage=scored.coverage.share,
                threshold=scored.coverage.threshold,
                silenced=scored.coverage.silenced,
                detail=scored.coverage.detail,
            )
            if scored.coverage is not None
            else None
        ),
        network=(
            NetworkExplain(
                activation=round(reached.activation, 4),
                seed=reached.seed,
                via=hops_wire(reached),
                describe=reached.describe(),
            )
            if reached is not None
            else None
        ),
        stale=StaleMark(reason=stale) if stale else None,
        noise=noise,
        excluded=excluded,
        candidate=candidate,
        phases=phases,
        summary=summary,
        **base,
    )


def _phases(
    path: str,
    sent: Delivered,
    with_selector: bool,
    *,
    network_pick: bool = False,
    confidence: float | None = None,
) -> list[PhaseExplain]:
    out = []
    if with_selector:
        in_fast = path in sent.fast
        out.append(
            PhaseExplain(
                phase="fast",
                delivered=in_fast,
                rank=list(sent.fast).index(path) + 1 if in_fast else None,
                reason=(
                    "the network's conservative pick: a free place, or the memory that "
                    "supersedes a fast one"
                    if network_pick
                    else "the ranking was sure of it (the fast phase's confidence gate)"
                    if confidence is None
                    else f"its confidence, {confidence:.2f}, passed the fast phase's gate"
                )
                if in_fast
                else "not among what the fast phase sent"
                if sent.fast
                else "the fast phase was silent: the ranking was sure of no memory enough "
                "to inject it unasked",
            )
        )
    in_refined = path in sent.refined
    by = {
        "model": "the model chose it",
        "heuristic": "in the ranker's top 5 (sent without a model, or when the model fails)",
    }
    out.append(
        PhaseExplain(
            phase="refined",
            delivered=in_refined,
            rank=list(sent.refined).index(path) + 1 if in_refined else None,
            reason=_refined_reason(path, sent, in_refined, by),
        )
    )
    return out


def _refined_reason(path: str, sent: Delivered, in_refined: bool, by: dict[str, str]) -> str:
    if in_refined:
        return by.get(sent.refined_strategy, sent.refined_strategy)
    if path in sent.fast:
        return "already sent in the fast phase"
    failed = f"; the model failed: {sent.failure}" if sent.failure else ""
    return f"not chosen ({sent.refined_strategy}){failed}"


def _summary(
    path: str,
    sent: Delivered,
    *,
    rank: int | None,
    scored: ScoreExplanation,
    noise: bool,
    excluded: bool,
    reached: Reached | None,
    candidate: int | None,
    stale: str | None,
    with_selector: bool,
) -> str:
    stale_note = f" It may be outdated: {stale}." if stale else ""
    if path in sent.fast:
        how = "the network" if reached is not None and rank is None else f"rank {rank}"
        return f"Sent in the fast phase ({how}).{stale_note}"
    if path in sent.refined:
        how = (
            f"rank {rank}"
            if rank is not None
            else f"found by the network: {reached.describe()}"
            if reached
            else "a recent memory in the manifest"
        )
        return f"Sent in the refined phase ({how}).{stale_note}"
    if excluded:
        return "Not sent: the recall's excludePaths holds it."
    if noise:
        return "Not sent: removed as active-tool noise (it documents a tool in recentTools)."
    if scored.coverage is not None and scored.coverage.silenced:
        return (
            "Not sent: the ranker stayed silent for this query (no memory among the best covers "
            f"{scored.coverage.threshold:.0%} of the query's content weight; this one covers "
            f"{scored.coverage.share:.0%})."
        )
    if rank is None and reached is None:
        if scored.score == 0:
            return "Not sent: it matches no term of the query and no lexical hit links to it."
        return "Not sent: it scores, but below the ranker's candidates."
    where = f"rank {rank}" if rank is not None else f"the network reached it ({reached.describe()})"  # type: ignore[union-attr]
    if with_selector and sent.refined_strategy == "model":
        return f"Not sent: {where}, among the model's candidates, but the model did not choose it."
    if candidate and rank is None:
        return (
            f"Not sent without a model: {where}; a recall without a model sends the ranker's "
            f"top {REFINED_LIMIT}, which the network joins only under its conservative rule. "
            f"It is among the model's candidates (place {candidate}), so a model may choose "
            f"it.{stale_note}"
        )
    if candidate:
        return (
            f"Not sent without a model: {where}, outside the top {REFINED_LIMIT}; it is among "
            f"the model's candidates (place {candidate}), so a model may choose it.{stale_note}"
        )
    return f"Not sent: {where}, but other memories took the places.{stale_note}"
