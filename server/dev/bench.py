"""`memory-recall dev bench`: how the fast result's latency depends on the number of memories.

For each corpus size it writes a synthetic memory tree (server.synthetic), then
drives the real daemon over stdio from this process, as an editor would:

- cold build: spawn → `memory/status` says ready (parse, index, snapshot save),
  the daemon's own build time, and its RSS (now and peak) once its start-up work is
  done (the memory network built);
- warm restart: the same, for a second daemon that finds the snapshot cache;
- the first recall after ready, cold and warm, beside the median (ready means
  ready: the first costs what the hundredth does, docs/ranking.md);
- `memory/recall` → `memory/fastResult` latency over a fixed query set (common
  words, rare words, CJK, no result), after one unrecorded warm-up round; a
  query with nothing to show fast is timed to its refined result instead;
- change-to-visible: write or rename a memory file, then recall until it shows;
- in-process baseline: scan-every-recall — walk, read, parse and score every
  file for each query with the same ranker, as an implementation without a
  warm catalog does.

Each size runs once per ranker asked for (`--ranker`, repeatable: by default
bm25f, spec and bm25f-window, the window-only build whose memory bm25f's is
compared with), on the same trees. Once per run, the transport floor:
`memory/status` round trips to a daemon with an empty catalog. Ratios within
one run are the figures that matter: this machine is shared and noisy, so
nothing here passes or fails on absolute times.

One job, one benchmark run: its measurements share the trees, the daemon processes and
the table, so they stay together.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from memory_recall.protocol.limits import FAST_LIMIT
from memory_recall.server.dev.synthetic import write_tree
from memory_recall.server.documents import (
    InvalidMemory,
    MemoryDocument,
    is_memory_file_name,
    parse_memory,
)
from memory_recall.server.ranking.bm25f.index import Bm25Index
from memory_recall.server.ranking.bm25f.scan import rank_scan as bm25f_scan
from memory_recall.server.ranking.registry import RANKERS, RankerSpec
from memory_recall.server.ranking.spec import rank_scan
from memory_recall.server.ranking.view import input_order_key
from memory_recall.server.roots import MemoryRoot

SIZES = (1_000, 10_000, 100_000)
QUERIES: dict[str, tuple[str, ...]] = {
    "common": (
        "how do we deploy the service to staging",
        "fix the failing test before the release",
        "database migration rollback",
    ),
    "rare": ("runbook for the oncall escalation", "kalomi", "OPS-4821"),
    "cjk": ("本番環境へのデプロイ手順", "数据库迁移的问题", "배포 서버 설정"),
    "none": ("zyxqv plorbix wumpus", "qqqzzzyyy"),
    # Identifiers whose parts are common words: checked in the text of every memory
    # holding all the parts (up to 1,024), the fast phase's costliest lookup.
    "compound": ("why does the client_job keep failing", "errors in src/release/service.py"),
}
# Past 10,000 files one scan-every-recall query takes seconds (bm25f's, tens of
# seconds: it reads every body whole): only the first few queries are scanned.
SCAN_BASELINE_QUERIES = {"spec": 3, "bm25f": 1, "bm25f-window": 1}
# How long the RSS waits for the memory network (a 100,000-memory build takes ~40 s).
NETWORK_WAIT_S = 600.0
RANKERS_BY_DEFAULT = ("bm25f", "spec", "bm25f-window")


@dataclass
class Percentiles:
    p50: float
    p95: float
    n: int

    @classmethod
    def of(cls, samples_ms: Sequence[float]) -> Percentiles:
        ordered = sorted(samples_ms)
        if not ordered:
            return cls(float("nan"), float("nan"), 0)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        return cls(round(statistics.median(ordered), 3), round(p95, 3), len(ordered))


@dataclass
class SizeResult:
    docs: int
    ranker: str  # the fast phase's, as the daemon reports it
    cold_ready_s: float  # spawn → ready, wall clock
    cold_build_ms: float | None  # the daemon's own figure for its scan
    rss_mb: float  # after the recall rounds, the memory network built
    peak_rss_mb: float
    warm_ready_s: float
    warm_build_ms: float | None
    fast: Percentiles  # every query, warm
    fast_in_daemon: Percentiles  # the same recalls, as the daemon timed its fast phase
    fast_by_kind: dict[str, Percentiles]
    first_round: Percentiles  # the unrecorded warm-up round, for the record
    # The very first recall after ready, as a host's first prompt meets it: after the
    # cold start, and after the warm restart (ready means ready: about the median).
    first_recall_ms: float
    warm_first_recall_ms: float
    scan_every_recall: Percentiles
    change_to_visible: Percentiles
    change_failures: int = 0
    notes: list[str] = field(default_factory=list)


def _rss_mb(pid: int) -> tuple[float, float]:
    """(current, peak) resident set size of a process, from /proc."""
    fields = {}
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            key, _, value = line.partition(":")
            fields[key] = value.split()
    except OSError:
        return float("nan"), float("nan")
    return int(fields["VmRSS"][0]) / 1024, int(fields["VmHWM"][0]) / 1024


async def _start(
    roots: Sequence[tuple[Path, str]],
    cache_dir: Path,
    watch: bool = True,
    ranker: str | None = None,
) -> Any:
    from memory_recall.protocol.client import MemoryRecallClient

    async def nothing_selected(_params: Any) -> list[str]:
        return []  # the refined phase is not what this measures

    return await MemoryRecallClient.start(
        roots=[(str(path), scope) for path, scope in roots],
        selector={"kind": "client"},  # a fast phase exists only with a selector
        select_handler=nothing_selected,
        watch=watch,
        # The state store beside the snapshots, made afresh with them: a cold start knows
        # no earlier session; the warm restart knows the cold daemon's (its deliveries).
        env={
            "MEMORY_RECALL_CACHE_DIR": str(cache_dir),
            "MEMORY_RECALL_STATE_DIR": str(cache_dir / "state"),
        },
        initialization_options={"ranker": ranker} if ranker else None,
    )


async def _ready(client: Any, started: float, timeout_s: float = 600) -> tuple[float, Any]:
    while True:
        status = await client.status()
        if status.ready:
            return time.perf_counter() - started, status
        elapsed = time.perf_counter() - started
        if elapsed > timeout_s:
            raise TimeoutError("the daemon did not finish indexing")
        # Each status request takes the GIL from the indexing thread: poll
        # finely for small trees, rarely for big ones.
        await asyncio.sleep(min(0.25, 0.01 + elapsed / 50))


async def _network_built(client: Any, timeout_s: float = NETWORK_WAIT_S) -> bool:
    """Until `memory/status` says the memory network is built (False after `timeout_s`)."""
    deadline = time.perf_counter() + timeout_s
    while time.perf_counter() < deadline:
        network = (await client.status()).network
        if network is not None and network.build_ms is not None:
            return True
        await asyncio.sleep(0.5)
    return False


async def _first_result_ms(client: Any, query: str) -> tuple[float, Any]:
    """Time until the recall's first phase arrives (fast, else refined), then let it finish.

    Arrival is stamped when the client has read and parsed the notification,
    not when the awaiting code resumes (the client may first be busy parsing
    the `memory/select` request that follows a fast result).
    """
    from memory_recall.protocol import methods

    arrivals: dict[str, float] = {}

    def stamp(method: str, params: Any) -> None:
        if method in (methods.FAST_RESULT, methods.REFINED_RESULT):
            arrivals.setdefault(method, time.perf_counter())

    client.on_notification = stamp
    started = time.perf_counter()
    handle = await client.recall(query, initial_wait_ms=60_000)
    result = await handle.response
    client.on_notification = None
    client.notifications.clear()
    first = arrivals.get(methods.FAST_RESULT, arrivals.get(methods.REFINED_RESULT, started))
    return (first - started) * 1000, result


async def transport_floor(rounds: int = 200) -> Percentiles:
    """`memory/status` round trips to a daemon with an empty catalog."""
    with tempfile.TemporaryDirectory() as empty:
        client = await _start([(Path(empty), "project")], Path(empty) / "cache", watch=False)
        try:
            await _ready(client, time.perf_counter())
            samples = []
            for _ in range(rounds):
                started = time.perf_counter()
                await client.status()
                samples.append((time.perf_counter() - started) * 1000)
        finally:
            await client.close()
    return Percentiles.of(samples[rounds // 10 :])


def scan_every_recall(
    roots: Sequence[MemoryRoot], query: str, ranker: RankerSpec = RANKERS["spec"]
) -> list[str]:
    """What a catalog-less implementation does per query: read, parse, score everything."""
    tokens = ranker.tokenize(query)
    docs: list[MemoryDocument] = []
    for index, root in enumerate(roots):
        for directory, _dirs, names in os.walk(root.path):
            for name in names:
                if not is_memory_file_name(name):
                    continue
                path = os.path.join(directory, name)
                try:
                    with open(path, encoding="utf-8") as f:
                        text = f.read()
                    docs.append(
                        parse_memory(
                            text,
                            path=path,
                            relative_path=os.path.relpath(path, root.path),
                            scope=root.scope,
                            mtime_ms=os.stat(path).st_mtime_ns / 1_000_000,
                            root_index=index,
                        )
                    )
                except (OSError, UnicodeDecodeError, InvalidMemory):
                    continue
    docs.sort(key=input_order_key)
    if issubclass(ranker.index_kind, Bm25Index):
        body = ranker.index_kind.body
        return [s.document.path for s in bm25f_scan(docs, tokens, body=body, limit=FAST_LIMIT)]
    return [s.document.path for s in rank_scan(docs, tokens)[:FAST_LIMIT]]


async def change_to_visible(client: Any, project: Path, samples: int) -> tuple[list[float], int]:
    """Write (even samples) or rename (odd) a memory file; recall until it is the fast result."""
    changes = project / "bench-changes"
    changes.mkdir(exist_ok=True)
    latencies, failures = [], 0
    previous: Path | None = None
    for i in range(samples):
        word = "zqvis" + "".join(chr(ord("a") + int(d)) for d in f"{i:04d}")
        if i % 2 == 1 and previous is not None:
            target = changes / f"renamed-{i:04d}.md"
            word = previous.stem.split("-")[-1]  # the renamed file still holds its word
            os.rename(previous, target)
        else:
            target = changes / f"new-{i:04d}-{word}.md"
            target.write_text(
                f"---\nname: {word} note\ndescription: change {i}\ntype: project\n---\n{word}\n",
                encoding="utf-8",
            )
        started = time.perf_counter()
        while True:
            handle = await client.recall(word, initial_wait_ms=10_000)
            result = await handle.response
            fast = result.fast.docs if result.fast else []
            if any(doc.path == str(target) for doc in fast):
                latencies.append((time.perf_counter() - started) * 1000)
                break
            if time.perf_counter() - started > 10:
                failures += 1
                break
            await asyncio.sleep(0.002)
        previous = target if i % 2 == 0 else None
    shutil.rmtree(changes, ignore_errors=True)
    return latencies, failures


async def bench_size(
    docs: int,
    work: Path,
    *,
    repeats: int,
    change_samples: int,
    seed: int,
    ranker: str,
    scan: bool = True,
) -> SizeResult:
    tree = work / f"tree-{docs}-{seed}"
    marker = tree / ".complete"
    if not marker.exists():
        shutil.rmtree(tree, ignore_errors=True)
        write_tree(tree, docs, seed)
        marker.touch()
    project, user = tree / "project", tree / "user"
    roots = [(project, "project"), (user, "user")]
    cache_dir = work / f"cache-{docs}-{seed}-{ranker}"
    shutil.rmtree(cache_dir, ignore_errors=True)
    notes = []

    started = time.perf_counter()
    client = await _start(roots, cache_dir, ranker=ranker)
    try:
        cold_ready_s, status = await _ready(client, started)
        ranker_used = status.ranker
        if status.documents != docs:
            notes.append(f"daemon sees {status.documents} documents, expected {docs}")
        cold_build_ms = status.index_build_ms
        queries = [(kind, q) for kind, qs in QUERIES.items() for q in qs]
        first = [(await _first_result_ms(client, q))[0] for _, q in queries]
        by_kind: dict[str, list[float]] = {kind: [] for kind in QUERIES}
        fast_samples: list[float] = []  # recalls that had a fast phase
        in_daemon: list[float] = []
        for _ in range(repeats):
            for kind, query in queries:
                ms, recalled = await _first_result_ms(client, query)
                by_kind[kind].append(ms)
                if recalled.fast is not None:
                    fast_samples.append(ms)
                    in_daemon.append(recalled.fast.elapsed_ms)
        while (await client.status()).watcher.state != "watching":
            await asyncio.sleep(0.05)
        changes, failures = await change_to_visible(client, project, change_samples)
        # The daemon's size in use: with the memory network its start-up work builds
        # (at 100,000 memories it takes longer than the rounds above).
        if not await _network_built(client):
            notes.append(f"the memory network was not built within {NETWORK_WAIT_S:.0f} s")
        rss, peak = _rss_mb(client.process.pid)
    finally:
        await client.close()

    started = time.perf_counter()
    client = await _start(roots, cache_dir, watch=False, ranker=ranker)
    try:
        warm_ready_s, status = await _ready(client, started)
        warm_build_ms = status.index_build_ms
        warm_first, _ = await _first_result_ms(client, queries[0][1])
    finally:
        await client.close()

    memory_roots = [MemoryRoot.of(path, scope) for path, scope in roots]
    spec = RANKERS[ranker]
    few = SCAN_BASELINE_QUERIES.get(spec.name, 1)
    scan_queries = (queries if docs <= 10_000 else queries[:few]) if scan else []
    if not scan:
        notes.append("scan-every-recall not measured at this size (--scan-up-to)")
    scans = []
    for _, query in scan_queries:
        begun = time.perf_counter()
        scan_every_recall(memory_roots, query, spec)
        scans.append((time.perf_counter() - begun) * 1000)

    # A recall with no lexical match has no fast phase: its first answer is the
    # refined one, after the model. It is reported by kind, not as a fast latency.
    return SizeResult(
        docs=docs,
        ranker=ranker_used,
        cold_ready_s=round(cold_ready_s, 3),
        cold_build_ms=cold_build_ms,
        rss_mb=round(rss, 1),
        peak_rss_mb=round(peak, 1),
        warm_ready_s=round(warm_ready_s, 3),
        warm_build_ms=warm_build_ms,
        fast=Percentiles.of(fast_samples),
        fast_in_daemon=Percentiles.of(in_daemon),
        fast_by_kind={kind: Percentiles.of(samples) for kind, samples in by_kind.items()},
        first_round=Percentiles.of(first),
        first_recall_ms=round(first[0], 3),
        warm_first_recall_ms=round(warm_first, 3),
        scan_every_recall=Percentiles.of(scans),
        change_to_visible=Percentiles.of(changes),
        change_failures=failures,
        notes=notes,
    )


def markdown_table(results: Sequence[SizeResult], floor: Percentiles) -> str:
    rows = [
        "| ranker | memories | cold ready | warm restart | RSS (peak) | fast p50 / p95"
        " | first recall cold / warm (÷ p50) | first round p95 | p95 ÷ floor"
        " | scan-every-recall p50 | scan ÷ fast | change → visible p50 / p95 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        p50 = r.fast.p50 or float("nan")
        rows.append(
            f"| {r.ranker} | {r.docs:,} | {r.cold_ready_s:.2f} s | {r.warm_ready_s:.2f} s "
            f"| {r.rss_mb:.0f} MB ({r.peak_rss_mb:.0f}) "
            f"| {r.fast.p50:.2f} / {r.fast.p95:.2f} ms "
            f"| {r.first_recall_ms:.2f} / {r.warm_first_recall_ms:.2f} ms "
            f"({r.first_recall_ms / p50:.1f}× / {r.warm_first_recall_ms / p50:.1f}×) "
            f"| {r.first_round.p95:.2f} ms "
            f"| {r.fast.p95 / floor.p50:.1f} | {_scan_columns(r)} "
            f"| {r.change_to_visible.p50:.0f} / {r.change_to_visible.p95:.0f} ms |"
        )
    rows.append("")
    rows.append(
        f"Transport floor (`memory/status` round trip, empty catalog): "
        f"p50 {floor.p50:.2f} ms, p95 {floor.p95:.2f} ms."
    )
    peaks = {(r.ranker, r.docs): r.peak_rss_mb for r in results}
    for (name, docs), peak in peaks.items():
        window = peaks.get(("bm25f-window", docs))
        if name == "bm25f" and window:
            rows.append(
                f"Peak RSS at {docs:,}: bm25f {peak:.0f} MB, {peak / window:.2f}× the "
                f"window-only build ({window:.0f} MB)."
            )
    for r in results:
        if r.docs == max(x.docs for x in results):
            kinds = ", ".join(
                f"{kind} {p.p50:.2f}/{p.p95:.2f}" for kind, p in r.fast_by_kind.items()
            )
            rows.append(
                f"{r.ranker} at {r.docs:,}: fast p50/p95 by query kind (ms): {kinds}; "
                f"the daemon's own timing of the fast phase p50/p95: "
                f"{r.fast_in_daemon.p50:.2f}/{r.fast_in_daemon.p95:.2f} ms."
            )
    return "\n".join(rows)


def _scan_columns(r: SizeResult) -> str:
    """scan-every-recall p50 | scan ÷ fast, or dashes where it was not measured."""
    if not r.scan_every_recall.n:
        return "– | –"
    scan = r.scan_every_recall.p50
    return f"{scan:,.0f} ms | {scan / r.fast.p50:,.0f}×"


def plot(results: Sequence[SizeResult], floor: Percentiles, path: Path) -> str | None:
    """Latency against corpus size per ranker, log scale; a reason when there is no plot."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is not installed (pip install 'memory-recall[bench]'): no plot"
    figure, axes = plt.subplots(figsize=(7.5, 4.8))
    for name in dict.fromkeys(r.ranker for r in results):
        mine = [r for r in results if r.ranker == name]
        sizes = [r.docs for r in mine]
        line = axes.plot(sizes, [r.fast.p95 for r in mine], "o-", label=f"{name} fast p95")
        color = line[0].get_color()
        axes.plot(sizes, [r.fast.p50 for r in mine], "o:", color=color, label=f"{name} fast p50")
        axes.plot(
            sizes, [r.scan_every_recall.p50 for r in mine], "s--", color=color, alpha=0.6,
            label=f"{name} scan-every-recall p50",
        )  # fmt: skip
    axes.axhline(floor.p50, color="grey", linestyle=":", label="transport floor p50")
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("memories (bodies 200 B–20 kB, median 1.5 kB)")
    axes.set_ylabel("latency (ms)")
    axes.set_title("memory/recall → memory/fastResult, stdio daemon")
    axes.grid(True, which="both", alpha=0.3)
    axes.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return None


def sizes_up_to(limit: int | None) -> list[int]:
    """The standard sizes not above `limit`, and `limit` itself when it is not one."""
    if limit is None:
        return list(SIZES)
    chosen = [s for s in SIZES if s <= limit]
    if limit not in chosen:
        chosen.append(limit)
    return chosen


async def run(args: argparse.Namespace) -> dict[str, Any]:
    work = Path(args.work) if args.work else Path(tempfile.mkdtemp(prefix="memory-recall-bench-"))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    peers: list[Any] = []
    try:
        floor = await transport_floor()
        results = []
        for docs in sizes_up_to(args.docs):
            if args.peers:
                peers += _peers(docs, args)
            for ranker in args.ranker or RANKERS_BY_DEFAULT:
                print(f"bench: {docs:,} documents, {ranker} …", file=sys.stderr, flush=True)
                result = await bench_size(
                    docs,
                    work,
                    repeats=args.repeats,
                    change_samples=args.changes,
                    seed=args.seed,
                    ranker=ranker,
                    scan=args.scan_up_to is None or docs <= args.scan_up_to,
                )
                results.append(result)
                print(markdown_table(results[-1:], floor).splitlines()[2], file=sys.stderr)
    finally:
        if not args.work:
            shutil.rmtree(work, ignore_errors=True)
    table = markdown_table(results, floor)
    if peers:
        from memory_recall.server.dev.engine_peers import peers_table

        table += "\n\nIn process, beside the search engines (`--peers`):\n\n" + peers_table(peers)
    (out / "bench.md").write_text(table + "\n", encoding="utf-8")
    problem = plot(results, floor, out / "bench.png")
    return {
        "floor": asdict(floor),
        "sizes": [asdict(r) for r in results],
        "peers": [asdict(p) for p in peers],
        "table": str(out / "bench.md"),
        "plot": problem or str(out / "bench.png"),
        "machine": {"cpus": os.cpu_count(), "python": sys.version.split()[0]},
        "_table_text": table,
    }


def _peers(docs: int, args: argparse.Namespace) -> list[Any]:
    """Today's index beside tantivy, bm25s and SQLite FTS5 on the same memories, in
    process (server/dev/engine_peers.py; the `engines` extra)."""
    from memory_recall.server.dev.engine_peers import bench_peers, peers_table
    from memory_recall.server.dev.synthetic import synthetic_documents

    if args.ranker and args.ranker != ["bm25f"] and "bm25f" not in args.ranker:
        return []
    print(f"bench: {docs:,} documents, search engines …", file=sys.stderr, flush=True)
    queries = [q for qs in QUERIES.values() for q in qs]
    found = bench_peers(synthetic_documents(docs, args.seed), queries, args.repeats)
    print(peers_table(found), file=sys.stderr, flush=True)
    return found


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--docs", type=int, help=f"largest corpus (default: {', '.join(map(str, SIZES))})"
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--out", default="bench-results", help="where bench.md and bench.png go")
    parser.add_argument("--work", help="keep generated trees here and reuse them across runs")
    parser.add_argument("--repeats", type=int, default=10, help="rounds over the query set")
    parser.add_argument("--changes", type=int, default=20, help="change-to-visible samples")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--scan-up-to", type=int, metavar="DOCS",
        help="measure scan-every-recall only up to this many memories (at 100,000 one"
        " bm25f scan takes minutes); default: every size",
    )  # fmt: skip
    parser.add_argument(
        "--peers", action="store_true",
        help="also measure tantivy, bm25s and SQLite FTS5 in process on the same memories "
        "(pip install '.[engines]')",
    )  # fmt: skip
    parser.add_argument(
        "--ranker", action="append", choices=sorted(n for n, r in RANKERS.items() if r.served),
        help=f"a ranker to measure; repeatable (default: {', '.join(RANKERS_BY_DEFAULT)})",
    )  # fmt: skip


def main(args: argparse.Namespace) -> int:
    report = asyncio.run(run(args))
    table = report.pop("_table_text")
    if args.json:
        print(json.dumps(report, ensure_ascii=False, indent=2))
    else:
        print(table)
        print(f"\nplot: {report['plot']}")
    return 0
