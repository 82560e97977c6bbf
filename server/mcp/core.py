"""The daemon's core in one process for the MCP face: the same service objects, built the same way.

An MCP host has no `initialize` with `initializationOptions`; its configuration
arrives as command-line flags and environment variables (`config.py`), which
become the daemon's `InitializationOptions` and go through the daemon's own
option rules (`daemon/options.py`). From there the objects are the daemon's:
the `CatalogSession` (warm catalog and watcher over the watched roots), the
`RecallService` (ranker, selector), the `WriteSide` (writer, quality and secret
gate, state store), the `OrganiseSide` (topic tree, context, staleness) and the
search service (`server/search.py`) with the memory network it reads.
Nothing here ranks, writes or gates; it only holds them for one MCP session.
"""

from __future__ import annotations

import asyncio
import logging
from concurrent.futures import Future
from typing import Any

from memory_recall.protocol.messages import InitializationOptions, SelectorOptions
from memory_recall.server.daemon.options import (
    build_selector,
    choose_ranker,
    choose_roots,
    selector_timeout_s,
)
from memory_recall.server.daemon.organising import OrganiseSide
from memory_recall.server.daemon.session import CatalogSession, TaskRegistry
from memory_recall.server.daemon.writing import WriteSide
from memory_recall.server.recall import RecallService
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.search import MemorySearch, NetworkFollower

log = logging.getLogger("memory_recall")

# Selector kind `client` asks the editor's model over our own protocol; an MCP host
# offers no such channel (MCP sampling is not one every host implements).
CLIENT_KIND_PROBLEM = (
    "selector.kind 'client' needs a host that answers memory/select; "
    "over MCP use --model-url (an OpenAI-compatible endpoint) or none"
)


def _no_client_request(method: str, params: dict[str, Any]) -> tuple[str, Future[Any]]:
    raise RuntimeError(CLIENT_KIND_PROBLEM)  # never reached: kind `client` is refused below


def _no_cancel(msg_id: str) -> None:
    return None


class MemoryCore:
    """The daemon's services for one MCP session; `start` once inside the event loop."""

    def __init__(
        self,
        options: InitializationOptions,
        workspace: str | None,
        problems: list[str] | None = None,
    ) -> None:
        self.problems = list(problems or [])
        if options.selector.kind == "client":
            self.problems.append(CLIENT_KIND_PROBLEM + "; using none")
            options.selector = SelectorOptions()
        self.options = options
        self.workspace = workspace
        self.roots: list[MemoryRoot] = choose_roots(options, workspace)
        ranker, problem = choose_ranker(options.ranker)
        if problem:
            self.problems.append(problem)
        self.tasks = TaskRegistry()
        self.session = CatalogSession(self.roots, self.tasks, ranker.index_kind, self._fault)
        self.recall = RecallService(
            build_selector(options.selector, _no_client_request, _no_cancel),
            ranker,
            timeout_s=selector_timeout_s(options.selector),
        )
        self.write = WriteSide.open(self.session.catalog, ranker, options.write)
        self.organise = OrganiseSide(self.roots, workspace, options, self.write)
        self.recall.staleness = self.organise.staleness.for_recall
        # `memory/search`'s service, placing memories on the organiser's own topic tree;
        # the memory network follows the catalog's views (built on first use).
        self.search = MemorySearch(ranker, topics=self.organise.organiser.topics)
        self.network = NetworkFollower()
        # The watcher's echo of our own writes is not a change to re-read.
        self.session.ignore = self.write.writer.own_writes.filter

    @property
    def model(self) -> str | None:
        """The model channel in words, or None without one."""
        selector = self.options.selector
        if selector.kind != "http":
            return None
        return f"{selector.model or 'the default model'} at {selector.url}"

    def _fault(self, message: str) -> None:
        log.warning("memory-recall: %s", message)

    def start(self) -> None:
        """Index in the background, watch the roots, count deliveries, warm the writer."""
        for problem in self.problems:
            log.warning("memory-recall: %s", problem)
        self.tasks.spawn(self.write.flush_periodically(), "delivery-statistics")
        self.tasks.spawn(self._warm_writer(), "writer-warm-up")
        self.session.start(watch=self.options.watch)

    async def _warm_writer(self) -> None:
        await self.session.ready.wait()
        await asyncio.to_thread(self.write.writer.warm_up)

    def stop(self) -> None:
        self.tasks.cancel_all()
        self.session.stop()
        self.write.flush()  # the last deliveries counted, before the process ends
