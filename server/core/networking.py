"""The session's memory network (docs/network.md): built once from the warm catalog, then kept
up to date per changed memory, with the co-use links feedback teaches.

- Built from scratch off the event loop after the first index (recalls run
  without the network until it exists: lexical results, never a wait).
- Kept up to date from the catalog's own record of what it put or dropped
  (`MemoryCatalog.drain_changes`), read at the next recall: one `upsert` per
  changed memory, whether the watcher saw the change or the daemon wrote it. A
  rescan of the catalog, or a batch of many changes (a branch switch), rebuilds
  in the background instead. A title that appears is looked for in the bodies
  already there for at most `MENTION_BUDGET_S` on that recall's path, the rest
  between recalls (the bodies' mention forms are not kept: docs/network.md).
- Edges are not persisted: every edge but co-use is a function of the files,
  and a rebuild at 10,000 memories takes about as long as reading the edges
  back would (see `memory-recall dev network-eval --bench`), without the risk of
  serving edges of files that changed while the daemon was down. Co-use edges
  are what the files cannot give: they live in the state store (`co_use`) and
  are loaded at every build.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from pathlib import Path

from memory_recall.protocol.messages import NetworkStatus
from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.network.activation import DEFAULT_ACTIVATION, Reached, spread
from memory_recall.server.network.graph import MemoryNetwork, NetworkDocument
from memory_recall.server.pacing import until_quiet
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.roots import posix_relative
from memory_recall.server.store.files import root_key
from memory_recall.server.store.state import MemoryKey, StateStore

log = logging.getLogger("memory_recall.network")

# More changes than this at once (a branch switch, a sync) rebuild in the
# background rather than re-link memory by memory on a recall's path.
INCREMENTAL_LIMIT = 200
# How long an update on a recall's path may look for a title that appeared in the bodies
# already there; the rest is looked for between recalls (`_settle_mentions`).
MENTION_BUDGET_S = 0.002
KEYS_KEPT = 1_000_000  # memories' state-store keys kept (past it, worked out afresh)


class NetworkSide:
    """The memory network of one session's catalog (a `recall.network.RecallNetwork`)."""

    seeds = DEFAULT_ACTIVATION.max_seeds

    def __init__(self, catalog: MemoryCatalog, state: StateStore | None = None) -> None:
        self.catalog = catalog
        self.state = state
        self.network: MemoryNetwork | None = None
        self.build_ms: float | None = None
        self.loaded_from_state = False
        self._docs: dict[str, MemoryDocument] = {}
        self._scans = -1
        self._building: asyncio.Task[None] | None = None
        self._settling: asyncio.Task[None] | None = None
        self.root_keys = [root_key(r) for r in catalog.roots]
        self._co_use: dict[tuple[str, str], int] = {}
        self._keys: dict[str, MemoryKey] = {}

    # -- keeping it up to date -------------------------------------------------------------

    async def ensure_built(self) -> None:
        """The first build, once: started here or already under way (awaited)."""
        if self.network is not None:
            return
        self._rebuild_soon()
        assert self._building is not None
        await asyncio.shield(self._building)

    async def build(self) -> None:
        """Build from the catalog as it is now (off the event loop)."""
        scans, _changed = self.catalog.drain_changes()
        docs = self.catalog.snapshot().documents
        started = time.perf_counter()
        co_use = await asyncio.to_thread(self._load_co_use)
        network = await asyncio.to_thread(_build, docs, co_use)
        network.mention_budget_s = MENTION_BUDGET_S
        self.build_ms = (time.perf_counter() - started) * 1000
        self.network = network
        self._docs = {d.path: d for d in docs}
        self._co_use = co_use
        self._scans = scans
        log.info(
            "memory network: %d memories, %d edges in %.0f ms",
            len(network),
            network.edge_count(),
            self.build_ms,
        )

    def _rebuild_soon(self) -> None:
        if self._building is None or self._building.done():
            self._building = asyncio.get_running_loop().create_task(self._rebuild())

    async def _rebuild(self) -> None:
        try:
            await self.build()
        except Exception as exc:  # our bug: recalls go on without the network
            log.error("the memory network could not be built: %s: %s", type(exc).__name__, exc)

    def sync(self) -> MemoryNetwork | None:
        """Apply what the catalog changed since the last call; the network, or None while
        it is (re)built."""
        if self.network is None or (self._building is not None and not self._building.done()):
            return self.network  # None before the first build; the old one during a rebuild
        scans, changed = self.catalog.drain_changes()
        if scans != self._scans or len(changed) > INCREMENTAL_LIMIT:
            self._rebuild_soon()
            return self.network  # the old one until the new one is there
        for path in changed:
            doc = self.catalog.get(path)
            if doc is None:
                self.network.remove(path)
                self._docs.pop(path, None)
            else:
                self.network.upsert(NetworkDocument.of(doc))
                self._docs[path] = doc
        if self.network.mentions_pending and (self._settling is None or self._settling.done()):
            try:  # a search syncs from its worker thread: the next recall starts it then
                loop = asyncio.get_running_loop()
            except RuntimeError:
                return self.network
            self._settling = loop.create_task(self._settle_mentions())
        return self.network

    async def _settle_mentions(self) -> None:
        """Look for the titles that appeared in the bodies already there, a budget at a
        time between recalls, on the event loop (which owns the network)."""
        network = self.network
        try:
            while network is not None and network is self.network and network.mentions_pending:
                await until_quiet(MENTION_BUDGET_S * 5, at_most=0.05)
                network.settle_mentions(MENTION_BUDGET_S)
        except Exception as exc:  # our bug: the mentions wait for the next rebuild
            log.error("mentions of new titles not looked for: %s: %s", type(exc).__name__, exc)

    # -- what a recall asks ----------------------------------------------------------------

    def graph(self, _view: CorpusView | None = None) -> MemoryNetwork | None:
        """The network, synced (what `memory/search` spreads over), or None before the
        first build."""
        return self.sync()

    def current(self) -> NetworkSide | None:
        """Itself, synced, when the network exists (the recall's `NetworkSource`)."""
        return self if self.sync() is not None else None

    def reach(self, seeds: Sequence[tuple[str, float]]) -> list[Reached]:
        network = self.network
        return spread(network, seeds, DEFAULT_ACTIVATION) if network is not None else []

    def document(self, path: str) -> MemoryDocument | None:
        return self._docs.get(path)

    # -- co-use (memory/feedback) ----------------------------------------------------------

    def key_of(self, path: str) -> MemoryKey | None:
        """A served memory's key in the state store: (root key, path inside the root)."""
        doc = self.catalog.get(path)
        if doc is None:
            return None
        key = self._keys.get(path)
        if key is None:
            # A path's root and place in it never change: worked out once (a recall asks
            # for every candidate's key, and the status figures for every memory's).
            if len(self._keys) >= KEYS_KEPT:
                self._keys.clear()
            key = self._keys[path] = (
                self.root_keys[doc.root_index],
                posix_relative(doc.relative_path),
            )
        return key

    def used_together(self, paths: Sequence[str]) -> int:
        """Memories used together in one recall: one more co-use for every pair."""
        unique = sorted(set(paths))
        pairs = 0
        for i, a in enumerate(unique):
            for b in unique[i + 1 :]:
                count = self._co_use[(a, b)] = self._co_use.get((a, b), 0) + 1
                if self.network is not None:
                    self.network.set_co_use_pair(a, b, count)
                pairs += 1
        return pairs

    def _load_co_use(self) -> dict[tuple[str, str], int]:
        if self.state is None:
            return {}
        try:
            stored = self.state.co_use(self.root_keys)
        except Exception as exc:
            log.warning("could not read co-use links from the state store: %s", exc)
            return {}
        by_key = {key: i for i, key in enumerate(self.root_keys)}
        out: dict[tuple[str, str], int] = {}
        for (ka, kb), count in stored.items():
            a, b = self._path_of(ka, by_key), self._path_of(kb, by_key)
            if a is not None and b is not None and a != b:
                out[(min(a, b), max(a, b))] = count
        self.loaded_from_state = bool(out)
        return out

    def _path_of(self, key: MemoryKey, by_key: dict[str, int]) -> str | None:
        index = by_key.get(key[0])
        if index is None:
            return None
        root = self.catalog.roots[index]
        return str(Path(root.path) / key[1])

    def status(self) -> NetworkStatus:
        network = self.network
        return NetworkStatus(
            memories=len(network) if network else 0,
            edges=network.edge_count() if network else 0,
            co_use_pairs=network.co_use_pairs() if network else 0,
            build_ms=round(self.build_ms, 1) if self.build_ms is not None else None,
            loaded_from_state=self.loaded_from_state,
        )


def _build(docs: Sequence[MemoryDocument], co_use: dict[tuple[str, str], int]) -> MemoryNetwork:
    network = MemoryNetwork.build(NetworkDocument.of(d) for d in docs)
    if co_use:
        network.set_co_use(co_use)
    network.warm()
    return network
