"""Machines for the sync tests: each a memory root, its own state store (so its own journal
and machine name), the real writer and the real sync, all sharing one bare remote on disk."""

from __future__ import annotations

import subprocess
from pathlib import Path

from memory_recall.server.catalog.catalog import MemoryCatalog
from memory_recall.server.core.writing import categorize
from memory_recall.server.ranking.registry import DEFAULT_RANKER, RANKERS
from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.journal import Journal
from memory_recall.server.store.state import StateStore
from memory_recall.server.store.writer import (
    ForgetRequest,
    MemoryWriter,
    RememberRequest,
    UpdateRequest,
    WriteResult,
)
from memory_recall.server.sync.judge import StatementJudge
from memory_recall.server.sync.service import SyncOutcome, SyncService

CONFLICT_MARKERS = ("<<<<<<<", ">>>>>>>", "\n=======\n", "|||||||")


def bare_remote(where: Path) -> Path:
    remote = where / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    return remote


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, check=True)
    return done.stdout.decode("utf-8", "replace")


def everything_ever_pushed(remote: Path) -> str:
    """Every object the remote holds, as text: no secret may be anywhere in it."""
    listing = git(remote, "rev-list", "--all", "--objects")
    shas = [line.split()[0] for line in listing.splitlines() if line.strip()]
    if not shas:
        return ""
    done = subprocess.run(
        ["git", "-C", str(remote), "cat-file", "--batch"],
        input="".join(f"{s}\n" for s in shas).encode(),
        capture_output=True,
        check=True,
    )
    return done.stdout.decode("utf-8", "replace")


class Machine:
    """One machine: a root of scope `user`, its state store, writer and sync."""

    def __init__(
        self,
        base: Path,
        name: str,
        remote: Path | None,
        *,
        judge: StatementJudge | None = None,
        scope: str = "user",
    ) -> None:
        self.name = name
        self.remote = remote
        self.root = base / name / "memory"
        self.root.mkdir(parents=True, exist_ok=True)
        self.state = StateStore(base / name / "state" / "state.sqlite3")
        self.roots = [MemoryRoot.of(self.root, scope)]
        self.catalog = MemoryCatalog(self.roots)
        self.catalog.scan()
        self.writer = MemoryWriter(
            self.catalog, self.state, ranker=RANKERS[DEFAULT_RANKER], categorize=categorize
        )
        self.service = SyncService(self.roots, self.state, judge=judge)
        self.journal = Journal(self.state)

    # -- writes, as the daemon makes them --------------------------------------------------

    def remember(self, text: str, **kw: object) -> WriteResult:
        self.catalog.scan()
        return self.writer.remember(RememberRequest(text, scope="user", **kw))  # type: ignore[arg-type]

    def update(self, name: str, **kw: object) -> WriteResult:
        self.catalog.scan()
        return self.writer.update(UpdateRequest(str(self.root / name), **kw))  # type: ignore[arg-type]

    def forget(self, name: str, *, hard: bool = False) -> WriteResult:
        self.catalog.scan()
        return self.writer.forget(ForgetRequest(str(self.root / name), hard=hard))

    def undo(self, operation: str) -> WriteResult:
        self.catalog.scan()
        return self.writer.undo(operation)

    # -- sync ----------------------------------------------------------------------------------

    def init(self) -> SyncOutcome:
        _done, outcome = self.service.init(0, str(self.remote) if self.remote else None)
        self.catalog.scan()
        return outcome

    def sync(self) -> SyncOutcome:
        outcome = self.service.sync(0)
        self.catalog.scan()
        return outcome

    # -- what is on disk -------------------------------------------------------------------------

    def memories(self) -> dict[str, bytes]:
        """Every memory file (MEMORY.md included), hidden folders aside."""
        return {
            p.relative_to(self.root).as_posix(): p.read_bytes()
            for p in sorted(self.root.rglob("*.md"))
            if not any(part.startswith(".") for part in p.relative_to(self.root).parts)
        }

    def text(self, name: str) -> str:
        return (self.root / name).read_text(encoding="utf-8")

    def write(self, name: str, title: str, body: str, **front: str) -> Path:
        lines = ["---", f"name: {title}", f"description: {title}", "type: user"]
        lines += [f"{k}: {v}" for k, v in front.items()]
        path = self.root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join([*lines, "---", "", body, ""]), encoding="utf-8")
        return path

    def archived(self) -> list[str]:
        archive = self.root / ".archive"
        return sorted(p.relative_to(archive).as_posix() for p in archive.rglob("*.md"))


def no_conflict_markers(*machines: Machine) -> None:
    for machine in machines:
        for path, data in machine.memories().items():
            text = data.decode("utf-8", "replace")
            for marker in CONFLICT_MARKERS:
                assert marker not in text, f"{machine.name}:{path} holds {marker!r}"


def converge(*machines: Machine, rounds: int = 2) -> None:
    """Each machine syncs `rounds` times, in turn; every sync must succeed."""
    for _ in range(rounds):
        for machine in machines:
            outcome = machine.sync()
            assert outcome.state in ("synced", "local"), (machine.name, outcome)


def same_memories(*machines: Machine) -> dict[str, bytes]:
    first = machines[0].memories()
    for other in machines[1:]:
        assert other.memories() == first, (machines[0].name, other.name)
    return first
