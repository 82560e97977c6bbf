"""The semantic channel of one session: document vectors kept in step with the catalog in
the background, and one query embedding per recall, bounded by deadlines.

Documents: after the first index and after every change, the snapshot's texts are hashed;
vectors already held or in the cache are reused, the rest are sent in batches. A failed
batch is recorded (`failure`) and retried on the next change or after `RETRY_S`; recall
meanwhile uses the vectors it has. Query: a recall starts its query embedding before it
ranks; the fast phase waits for it only until `fast_deadline_s` after the recall began
(and only if the lexical top left a slot empty), the refined phase until `timeout_s`.
A query embedding that fails or comes late disables the channel for that recall only,
with the reason in the phase's `semantic.failure`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field

from memory_recall.protocol.messages import SemanticStatus
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.spec import ScoredDocument
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.semantic import fill as fill_rule
from memory_recall.server.semantic.cache import VectorCache, from_bytes, text_hash, to_bytes
from memory_recall.server.semantic.endpoint import EmbeddingError, EmbeddingsEndpoint
from memory_recall.server.semantic.vectors import (
    SemanticHit,
    VectorMatrix,
    background_texts,
    embedded_text,
)

log = logging.getLogger("memory_recall.semantic")

# The host waits 100 ms for the first result (docs/recall.md); the lexical phase takes a few
# and the prompt's assembly a few more: a query embedding later than this goes to the
# refined phase.
FAST_DEADLINE_S = 0.060
DEFAULT_TIMEOUT_S = 10.0  # one call (a batch of documents, or a query) to the endpoint
BATCH_SIZE = 64  # texts per call: what local servers (Ollama, llama.cpp) batch well
RETRY_S = 30.0  # after a failed batch, try again this much later (or on the next change)


@dataclass
class SemanticCounters:
    embedded: int = 0  # vectors computed by the endpoint this session
    reused: int = 0  # vectors found in the cache
    batches: int = 0
    query_failures: int = 0
    failure: str | None = None  # the last background failure, until a batch succeeds


@dataclass
class SemanticQuery:
    """One recall's query embedding, started before the ranking."""

    task: asyncio.Task[list[list[float]]]
    started: float = field(default_factory=time.perf_counter)
    failure: str | None = None

    def elapsed_ms(self) -> float:
        return round((time.perf_counter() - self.started) * 1000, 3)

    async def vector(self, until_s: float) -> list[float] | None:
        """The vector if it is back within `until_s` of the start, else None (the task
        goes on for a later phase, unless `final`); `failure` says why."""
        wait = until_s - (time.perf_counter() - self.started)
        if not self.task.done():
            if wait > 0:
                await asyncio.wait({self.task}, timeout=wait)
            if not self.task.done():
                self.failure = f"the query embedding was not back within {round(until_s * 1000)} ms"
                return None
        if self.task.cancelled():
            self.failure = "the query embedding was cancelled"
            return None
        exc = self.task.exception()
        if exc is not None:
            self.failure = str(exc) if isinstance(exc, EmbeddingError) else type(exc).__name__
            return None
        self.failure = None
        return self.task.result()[0]

    def abandon(self) -> None:
        """The recall is over: stop waiting, and never leave an error unretrieved."""
        if self.task.done():
            if not self.task.cancelled():
                self.task.exception()
        else:
            self.task.cancel()


class SemanticChannel:
    """Vectors for the session's memories and the query side of recall."""

    def __init__(
        self,
        endpoint: EmbeddingsEndpoint,
        cache: VectorCache,
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        fast_deadline_s: float = FAST_DEADLINE_S,
        batch_size: int = BATCH_SIZE,
    ) -> None:
        self.endpoint = endpoint
        self.cache = cache
        self.timeout_s = timeout_s
        self.fast_deadline_s = min(fast_deadline_s, timeout_s)
        self.batch_size = batch_size
        self.matrix = VectorMatrix([], [])
        self.counters = SemanticCounters()
        self.changed = asyncio.Event()
        self.synced = asyncio.Event()  # set after each sync (tests and benchmarks wait on it)
        self._held: dict[str, bytes] = {}  # text hash → vector, for the current documents
        self._background = background_texts()

    @property
    def model(self) -> str:
        return self.endpoint.model

    # -- documents ------------------------------------------------------------------------

    async def run(self, views: Callable[[], Awaitable[CorpusView]]) -> None:
        """Keep the vectors in step with the catalog: after the first index, then after
        every change (`changed`), or `RETRY_S` after a failure."""
        self.changed.set()
        while True:
            retry = RETRY_S if self.counters.failure else None
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self.changed.wait(), retry)
            self.changed.clear()
            view = await views()
            try:
                await self.sync(view)
            except Exception as exc:  # our bug or the store's: recall keeps what it has
                self.counters.failure = f"embedding failed: {type(exc).__name__}: {exc}"
                log.error("embeddings: %s", self.counters.failure)

    async def sync(self, view: CorpusView) -> None:
        """Vectors for every document of `view`: held, cached, or embedded now."""
        docs = list(view.documents)
        hashes = await asyncio.to_thread(lambda: [text_hash(embedded_text(d)) for d in docs])
        back_hashes = [text_hash(t) for t in self._background]
        wanted = back_hashes + hashes
        held = {h: self._held[h] for h in wanted if h in self._held}
        missing = [h for h in dict.fromkeys(wanted) if h not in held]
        if missing:
            cached = await asyncio.to_thread(self.cache.get_many, missing)
            self.counters.reused += len(cached)
            held.update(cached)
        todo: dict[str, str] = {}
        for h, text in zip(back_hashes, self._background, strict=True):
            if h not in held:
                todo[h] = text
        for doc, h in zip(docs, hashes, strict=True):
            if h not in held and h not in todo:
                todo[h] = embedded_text(doc)
        failure = None
        items = list(todo.items())
        for start in range(0, len(items), self.batch_size):
            batch = items[start : start + self.batch_size]
            try:
                vectors = await asyncio.wait_for(
                    self.endpoint.embed([t for _, t in batch]), self.timeout_s
                )
            except asyncio.TimeoutError:
                failure = f"a batch of {len(batch)} took longer than {self.timeout_s:g} s"
                break
            except EmbeddingError as exc:
                failure = str(exc)
                break
            blobs = {h: to_bytes(v) for (h, _), v in zip(batch, vectors, strict=True)}
            await asyncio.to_thread(self.cache.put_many, blobs, len(vectors[0]))
            held.update(blobs)
            self.counters.embedded += len(blobs)
            self.counters.batches += 1
        if failure:
            log.warning("embeddings: %s; %d memories wait for a vector", failure, len(todo))
        self.counters.failure = failure
        self._held = held
        # One dimension: a server that changed its model under the same name gives vectors
        # of another size, which are dropped (and re-embedded on the next change).
        size = (self.endpoint.dimension or 0) * 4 or next((len(b) for b in held.values()), 0)
        held = {h: b for h, b in held.items() if len(b) == size}
        pairs = [(d, held[h]) for d, h in zip(docs, hashes, strict=True) if h in held]
        background = [held[h] for h in back_hashes if h in held]
        self.matrix = await asyncio.to_thread(
            VectorMatrix, [d for d, _ in pairs], [b for _, b in pairs], background
        )
        if self.endpoint.dimension is None and self.matrix.dimension:
            self.endpoint.dimension = self.matrix.dimension  # vectors from the cache
        self.synced.set()

    def status(self, total: int) -> SemanticStatus:
        """For `memory/status`: how many memories have a vector, how many wait."""
        c = self.counters
        return SemanticStatus(
            model=self.model,
            documents=len(self.matrix),
            pending=max(0, total - len(self.matrix)),
            embedded=c.embedded,
            reused=c.reused,
            query_failures=c.query_failures,
            failure=c.failure or self.cache.problem,
        )

    # -- queries --------------------------------------------------------------------------

    def begin(self, text: str) -> SemanticQuery | None:
        """Start the query embedding of one recall (None: no document has a vector yet)."""
        if not len(self.matrix):
            return None

        async def embed() -> list[list[float]]:
            try:
                return await asyncio.wait_for(self.endpoint.embed([text]), self.timeout_s)
            except asyncio.TimeoutError:
                raise EmbeddingError(
                    f"the query embedding took longer than {self.timeout_s:g} s"
                ) from None

        return SemanticQuery(asyncio.ensure_future(embed()))

    def hits(
        self, vector: Sequence[float], keep: Callable[[MemoryDocument], bool], limit: int
    ) -> list[SemanticHit]:
        return self.matrix.hits(vector, keep, limit)

    def fill(
        self,
        lexical: Sequence[ScoredDocument],
        hits: Sequence[SemanticHit],
        limit: int,
        reserve: int = 0,
        alone: bool = False,
    ) -> tuple[list[ScoredDocument], dict[str, float]]:
        """The fill rule (semantic.fill) over this channel's hits; a filled document's
        lexical score is 0. Hits fill a result with no lexical document only when
        `alone` (the caller knows the lexical result was not silent)."""
        return fill_rule.fill(
            lexical, _as_scored(hits), limit, fill_rule.Z_FLOOR, reserve, alone=alone
        )

    @property
    def reserved_slots(self) -> int:
        return fill_rule.RESERVED_SLOTS

    def candidates(
        self, candidates: Sequence[MemoryDocument], hits: Sequence[SemanticHit]
    ) -> tuple[list[MemoryDocument], dict[str, float]]:
        """The model's candidates and, appended, the hits above the candidate floor that
        are not among them; the similarity of every hit that is in the result."""
        out = list(candidates)
        present = {d.path for d in out}
        similarity: dict[str, float] = {}
        for hit in hits[: fill_rule.CANDIDATE_HITS]:
            if hit.z < fill_rule.CANDIDATE_Z_FLOOR:
                continue
            similarity[hit.document.path] = hit.similarity
            if hit.document.path not in present:
                out.append(hit.document)
                present.add(hit.document.path)
        return out, similarity

    async def aclose(self) -> None:
        await self.endpoint.aclose()


def _as_scored(hits: Sequence[SemanticHit]) -> list[tuple[ScoredDocument, float, float]]:
    return [(ScoredDocument(h.document, 0), h.similarity, h.z) for h in hits]


def open_channel(
    url: str,
    model: str | None,
    api_key_env: str | None,
    timeout_s: float | None,
    store: object | None,
) -> SemanticChannel:
    """A channel for these options, its vectors cached in `store` (a StateStore) if any."""
    from memory_recall.server.store.state import StateStore

    endpoint = EmbeddingsEndpoint(url, model, api_key_env)
    cache = VectorCache(store if isinstance(store, StateStore) else None, endpoint.model)
    return SemanticChannel(endpoint, cache, timeout_s=timeout_s or DEFAULT_TIMEOUT_S)


__all__ = ["SemanticChannel", "SemanticQuery", "from_bytes", "open_channel"]
