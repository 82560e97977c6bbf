"""`memory-recall dev sync-bench`: what sync through git costs at 10,000 memories (docs/sync.md).

Two machines and a bare remote in a temporary folder, the real writer and the real sync
(server/sync), a synthetic multilingual tree (dev/synthetic.py) on the first machine:

- first push: `sync init --remote` of the whole tree (every file through the secret
  detector, one commit, the push);
- first pull: the second machine's `sync init` (fetch, the incoming versions checked for
  credentials, every file written through the journal);
- a one-memory change: one `remember` on the first machine, then its sync (a commit from
  the journal, fetch, push) and the second machine's pull, rounds repeated;
- a pull of 100 changes: 100 remembers, their sync (100 commits), the other's pull
  (100 operations recorded in its journal, 100 files written);
- a sync with nothing to do (what the daemon runs every interval);
- recalls while sync works: the same lexical recalls over the second machine's 10,000
  memories, alone and while a worker thread runs sync's heaviest Python loop (every
  committed version through the secret detector, `sync check`), recalls marked in flight
  as the daemon marks them (server/pacing.py).

The baseline, measured in the same run on the same remote: plain git in a plain clone
(`git add -A && git commit && git push`; `git pull --ff-only`) doing the same change.
Figures are printed, never asserted: machines here are shared.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from memory_recall.server.dev.bench import Percentiles
from memory_recall.server.dev.synthetic import synthetic_memories


@dataclass
class SyncBenchResult:
    docs: int
    first_push_s: float
    first_pull_s: float
    one_change_push: Percentiles
    one_change_pull: Percentiles
    one_change_git_push: Percentiles  # baseline: plain git, the same kind of change
    one_change_git_pull: Percentiles
    hundred_push_s: float
    hundred_pull_s: float
    hundred_git_pull_s: float
    idle_sync: Percentiles
    recall_alone: Percentiles
    recall_while_syncing: Percentiles
    remote_mb: float
    held: int  # memories the detector kept on the first machine
    converged: bool


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(cwd), *args], check=True, capture_output=True)


def _commit_and_push(clone: Path) -> None:
    _git(clone, "add", "-A")
    _git(clone, "commit", "-qm", "x")
    _git(clone, "push", "-q")


def _timed(action: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    value = action()
    return time.perf_counter() - started, value


class _Machine:
    def __init__(self, base: Path, name: str) -> None:
        from memory_recall.server.catalog.catalog import MemoryCatalog
        from memory_recall.server.core.writing import categorize
        from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS
        from memory_recall.server.roots import MemoryRoot
        from memory_recall.server.store.state import StateStore
        from memory_recall.server.store.writer import MemoryWriter
        from memory_recall.server.sync.service import SyncService

        self.root = base / name / "memory"
        self.root.mkdir(parents=True, exist_ok=True)
        state = StateStore(base / name / "state.sqlite3")
        roots = [MemoryRoot.of(self.root, "user")]
        self.catalog = MemoryCatalog(roots)
        self.writer = MemoryWriter(
            self.catalog, state, ranker=RANKERS[DEFAULT_RANKER], categorize=categorize
        )
        self.sync = SyncService(roots, state)

    def remember(self, text: str, title: str) -> None:
        from memory_recall.server.store.writer import RememberRequest

        self.writer.remember(RememberRequest(text, scope="user", title=title))


RECALLS = 300
QUERY_COUNT = 16  # questions made of words of the tree's own titles, as a user's would be


def _recalls_beside_sync(machine: _Machine) -> tuple[list[float], list[float]]:
    """Lexical recalls (ms) over the machine's memories: alone, then while a thread runs a
    full history check, each recall in flight as the daemon marks it."""
    import threading

    from memory_recall.server import pacing
    from memory_recall.server.catalog.catalog import MemoryCatalog
    from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS
    from memory_recall.server.recall.service import RecallRequest, lexical_phases

    spec = RANKERS[DEFAULT_RANKER]
    catalog = MemoryCatalog(machine.catalog.roots, spec.index_kind)  # indexed, as the daemon's
    catalog.scan()
    view = catalog.snapshot()
    # Latin-script questions: what is measured is what a sync costs a recall, and a long
    # CJK question costs recall seconds of its own here (the facts' newer-wins judging
    # every delivered pair), which would drown it.
    titles = (m.title for m in synthetic_memories(QUERY_COUNT * 50, seed=11))
    queries = [" ".join(t.split()[:3]) for t in titles if t.isascii()][:QUERY_COUNT]

    def recalls(count: int, until: Callable[[], bool] = lambda: False) -> list[float]:
        out = []
        for n in range(count):
            if until():
                break
            started = time.perf_counter()
            with pacing.foreground():
                lexical_phases(view, RecallRequest(n, queries[n % len(queries)]), spec)
            out.append((time.perf_counter() - started) * 1000)
            time.sleep(0.002)  # a host's pace, not a tight loop
        return out

    recalls(20)  # warm
    alone = recalls(RECALLS)
    worker = threading.Thread(target=lambda: machine.sync.check(0))
    worker.start()
    during = recalls(RECALLS, until=lambda: not worker.is_alive())
    worker.join()
    return alone, during


def _checked(outcome: Any) -> Any:
    if outcome.state not in ("synced", "local"):
        raise RuntimeError(f"sync of {outcome.root}: {outcome.state}: {outcome.error}")
    return outcome


def _memories(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in root.rglob("*.md")
        if not any(part.startswith(".") for part in p.relative_to(root).parts)
    }


def run(docs: int, rounds: int, changes: int) -> SyncBenchResult:
    base = Path(tempfile.mkdtemp(prefix="memory-recall-sync-bench-"))
    try:
        remote = base / "remote.git"
        subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
        a, b = _Machine(base, "a"), _Machine(base, "b")
        for memory in synthetic_memories(docs, seed=7):
            path = a.root / memory.relative_path
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(memory.text(), encoding="utf-8")
        first_push, _ = _timed(lambda: _checked(a.sync.init(0, str(remote))[1]))
        first_pull, _ = _timed(lambda: _checked(b.sync.init(0, str(remote))[1]))
        # The baseline: the same history in a remote of its own, two plain clones.
        plain_remote, plain, other = base / "plain.git", base / "plain", base / "plain-other"
        subprocess.run(["git", "clone", "-q", "--bare", str(remote), str(plain_remote)], check=True)
        for clone in (plain, other):
            subprocess.run(["git", "clone", "-q", str(plain_remote), str(clone)], check=True)
            for name in ("user.name", "user.email"):
                _git(clone, "config", name, "bench@example.invalid")
        a.catalog.scan()

        push, pull, git_push, git_pull = [], [], [], []
        for n in range(rounds):
            a.remember(f"Service svc-{n} listens on port {9000 + n}; its owner is team-{n}.",
                       f"Service svc-{n}")  # fmt: skip
            push.append(_timed(lambda: _checked(a.sync.sync(0)))[0] * 1000)
            pull.append(_timed(lambda: _checked(b.sync.sync(0)))[0] * 1000)
            # The baseline: the same kind of change through plain git.
            (plain / f"plain-{n}.md").write_text(f"---\nname: plain {n}\ntype: user\n---\nx{n}\n")
            git_push.append(_timed(lambda: _commit_and_push(plain))[0] * 1000)
            git_pull.append(_timed(lambda: _git(other, "pull", "-q", "--ff-only"))[0] * 1000)
        _checked(a.sync.sync(0))
        _checked(b.sync.sync(0))

        for n in range(changes):
            a.remember(f"Bucket logs-{n} keeps access logs for {n + 1} days in eu-west-{n % 3}.",
                       f"Bucket logs-{n}")  # fmt: skip
        hundred_push, _ = _timed(lambda: _checked(a.sync.sync(0)))
        hundred_pull, _ = _timed(lambda: _checked(b.sync.sync(0)))
        for n in range(changes):
            (plain / f"bucket-{n}.md").write_text(f"---\nname: bucket {n}\ntype: user\n---\n{n}\n")
            _git(plain, "add", "-A")
            _git(plain, "commit", "-qm", f"bucket {n}")
        _git(plain, "push", "-q")
        hundred_git_pull, _ = _timed(lambda: _git(other, "pull", "-q", "--ff-only"))

        idle = [_timed(lambda: _checked(b.sync.sync(0)))[0] * 1000 for _ in range(rounds)]
        alone, during = _recalls_beside_sync(b)
        # What stays on the first machine (a credential the synthetic text happens to
        # hold): the rest, MEMORY.md as committed, must be the same bytes on both.
        from memory_recall.server.sync.outgoing import public_index

        held = set(a.sync.status(0).held)
        mine = {k: v for k, v in _memories(a.root).items() if k not in held}
        mine["MEMORY.md"] = public_index(mine.get("MEMORY.md", b""), lambda p: p in held)
        converged = mine == _memories(b.root)
        size = sum(p.stat().st_size for p in remote.rglob("*") if p.is_file()) / 1e6
        return SyncBenchResult(
            docs=docs,
            first_push_s=round(first_push, 2),
            first_pull_s=round(first_pull, 2),
            one_change_push=Percentiles.of(push),
            one_change_pull=Percentiles.of(pull),
            one_change_git_push=Percentiles.of(git_push),
            one_change_git_pull=Percentiles.of(git_pull),
            hundred_push_s=round(hundred_push, 2),
            hundred_pull_s=round(hundred_pull, 2),
            hundred_git_pull_s=round(hundred_git_pull, 3),
            idle_sync=Percentiles.of(idle),
            recall_alone=Percentiles.of(alone),
            recall_while_syncing=Percentiles.of(during),
            remote_mb=round(size, 1),
            held=len(held),
            converged=converged,
        )
    finally:
        shutil.rmtree(base, ignore_errors=True)


def format_result(result: SyncBenchResult) -> str:
    r = result

    def ratio(ours: Percentiles, plain: Percentiles) -> str:
        return f"{ours.p50 / plain.p50:.1f}×" if plain.p50 else "—"

    push, pull = r.one_change_push, r.one_change_pull
    git_push, git_pull, idle = r.one_change_git_push, r.one_change_git_pull, r.idle_sync
    return "\n".join(
        [
            f"sync through git, {r.docs:,} memories (two machines, a bare remote on this disk)",
            f"  first push (sync init --remote)       {r.first_push_s:8.2f} s",
            f"  first pull (second machine's init)    {r.first_pull_s:8.2f} s",
            f"  one-memory change, push   p50 {push.p50:8.1f} ms  p95 {push.p95:8.1f} ms"
            f"  (plain git add+commit+push p50 {git_push.p50:.1f} ms: {ratio(push, git_push)})",
            f"  one-memory change, pull   p50 {pull.p50:8.1f} ms  p95 {pull.p95:8.1f} ms"
            f"  (plain git pull --ff-only p50 {git_pull.p50:.1f} ms: {ratio(pull, git_pull)})",
            f"  100 changes: push {r.hundred_push_s:.2f} s (100 commits), pull "
            f"{r.hundred_pull_s:.2f} s (plain git pull {r.hundred_git_pull_s:.3f} s)",
            f"  sync with nothing to do   p50 {idle.p50:8.1f} ms  p95 {idle.p95:8.1f} ms",
            f"  a recall alone            p50 {r.recall_alone.p50:8.2f} ms  p95 "
            f"{r.recall_alone.p95:8.2f} ms",
            f"  a recall while syncing    p50 {r.recall_while_syncing.p50:8.2f} ms  p95 "
            f"{r.recall_while_syncing.p95:8.2f} ms  ({r.recall_while_syncing.n} recalls; p95 "
            f"{r.recall_while_syncing.p95 / r.recall_alone.p95:.2f}× alone)",
            f"  remote size {r.remote_mb} MB; {r.held} memories held back (a credential);"
            f" both machines byte-identical otherwise: {r.converged}",
        ]
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="memory-recall dev sync-bench", description=__doc__)
    parser.add_argument("--docs", type=int, default=10_000, help="memories in the tree")
    parser.add_argument("--rounds", type=int, default=10, help="one-memory changes timed")
    parser.add_argument("--changes", type=int, default=100, help="changes in the big pull")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    result = run(args.docs, args.rounds, args.changes)
    print(json.dumps(asdict(result), indent=2) if args.json else format_result(result))
    return 0 if result.converged else 1
