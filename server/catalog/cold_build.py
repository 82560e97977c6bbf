"""A cold start's reading and indexing, spread over worker processes.

With no snapshot to start from, the catalog reads, parses and indexes every
file: at 100,000 memories about 45 s of one core, nearly all of it per
document and independent of the others — and one Python process runs on one
core. So a large cold scan hands contiguous runs of the file list to worker
processes (one per available core). Each reads its files exactly as the catalog
would (`read`, the catalog's own function) and posts the documents' terms at
the slots its run starts at (`TermIndex.partial`: flat columns, cheap to send
back). The catalog's process then merges the runs in slot order
(`TermIndex.of_partials`) and builds what needs the whole corpus (bitmaps,
trigrams, the recency order).

Below `MIN_FILES`, on one core, when `MEMORY_RECALL_BUILD_WORKERS` is 1, or when
worker processes cannot be started here, the catalog scans on its own (None).
"""

from __future__ import annotations

import gc
import logging
import multiprocessing
import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any, Protocol, TypeVar

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.postings import Partial, TermIndex
from memory_recall.server.roots import MemoryRoot

log = logging.getLogger("memory_recall.catalog")

# Below this many files a pool's start (a few hundred ms) costs more than it saves.
MIN_FILES = 4_000
MAX_WORKERS = 8
RUNS_PER_WORKER = 2  # smaller runs even out workers that were given slower files
WORKERS_VARIABLE = "MEMORY_RECALL_BUILD_WORKERS"

Job = tuple[int, str, bool]  # (root index, path, inside: not a symlink, found in the root)


class Read(Protocol):
    """What the catalog's reading function gives for one file (its `FileRead`)."""

    @property
    def document(self) -> MemoryDocument | None: ...


R = TypeVar("R", bound=Read)
ReadFile = Callable[[MemoryRoot, Path, int, bool], R]


def worker_count(files: int) -> int:
    """How many worker processes a cold scan of `files` files uses (1: none)."""
    configured = os.environ.get(WORKERS_VARIABLE, "").strip()
    if configured:
        try:
            return max(1, int(configured))
        except ValueError:
            log.warning("%s=%r is not a number; using the default", WORKERS_VARIABLE, configured)
    if files < MIN_FILES:
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cores = os.cpu_count() or 1
    return max(1, min(cores, MAX_WORKERS))


def read_in_workers(
    roots: Sequence[MemoryRoot],
    jobs: Sequence[Job],
    read: ReadFile[R],
    index_kind: type[TermIndex],
    tiebreak: Callable[[MemoryDocument], Any],
) -> tuple[list[R], TermIndex] | None:
    """Every job's read, and the index of the documents read; None when the catalog
    should scan on its own (too few files, one core, or no worker could start)."""
    workers = worker_count(len(jobs))
    if workers <= 1 or not jobs:
        return None
    size = -(-len(jobs) // (workers * RUNS_PER_WORKER))
    starts = range(0, len(jobs), size)
    try:
        with ProcessPoolExecutor(workers, mp_context=_context()) as pool:
            futures = [
                pool.submit(_read_run, tuple(roots), jobs[at : at + size], read, index_kind, at)
                for at in starts
            ]
            results = [future.result() for future in futures]
    except Exception as exc:  # no processes here (a sandbox), a worker killed: scan alone
        log.warning(
            "could not index in %d worker processes (%s: %s); indexing in one",
            workers,
            type(exc).__name__,
            exc,
        )
        return None
    reads = [read for run_reads, _ in results for read in run_reads]
    runs = [
        ([r.document for r in run_reads if r.document is not None], part)
        for run_reads, part in results
    ]
    return reads, index_kind.of_partials(runs, tiebreak)


def _read_run(
    roots: tuple[MemoryRoot, ...],
    jobs: Sequence[Job],
    read: ReadFile[R],
    index_kind: type[TermIndex],
    first_slot: int,
) -> tuple[list[R], Partial]:
    """In a worker: read a run of files, and post its documents from `first_slot` on."""
    gc.disable()  # millions of new objects, none of them garbage
    try:
        reads = [read(roots[index], Path(path), index, inside) for index, path, inside in jobs]
        docs = [r.document for r in reads if r.document is not None]
        return reads, index_kind.partial(docs, first_slot)
    finally:
        gc.enable()


def _context() -> multiprocessing.context.BaseContext:
    """Workers forked from a small server process that has already imported the catalog
    (never from the daemon itself, whose threads a fork would copy mid-step); spawned
    where there is no fork."""
    if "forkserver" in multiprocessing.get_all_start_methods():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["memory_recall.server.catalog.catalog"])
        return context
    return multiprocessing.get_context("spawn")
