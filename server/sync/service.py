"""One sync of a root: commit this machine's changes, pull and merge the others', push
(docs/sync.md). The command line and the daemon both run this.

    record (record.py) → fetch → import the other machines' operations (history.py)
    → merge by the rules (integrate.py) or fast-forward → apply to the files (apply.py)
    → check what would leave for credentials (scan.py) → push

One sync of a root at a time, across processes (a lock in `.git/memory-recall/`). Offline
work is never blocked: a remote that cannot be reached ends the sync after the local
commits, with the error kept for the status and the daemon's back-off (ledger.py). A
push the remote rejects because it moved meanwhile is fetched, merged and pushed again.

Past 500 lines with one job, the order of a sync's steps and what happens when one
fails (a remote out of reach, a push rejected because the remote moved, a lock held,
a credential found): the steps themselves live in the modules named above.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from memory_recall.server.roots import MemoryRoot
from memory_recall.server.store.commit import Committer, OwnWrites, Plan, PlannedChange
from memory_recall.server.store.edits import title_of
from memory_recall.server.store.files import read_or_none, root_key
from memory_recall.server.store.index_file import DEFAULT_INDEX_CAP
from memory_recall.server.store.journal import Change, new_operation_id
from memory_recall.server.store.state import StateStore, now_ms
from memory_recall.server.sync.apply import Applied, Applier, StaleApply
from memory_recall.server.sync.git import (
    EMPTY_TREE,
    NETWORK_TIMEOUT_S,
    Git,
    GitError,
    blob_id,
    strip_credentials,
)
from memory_recall.server.sync.history import record_operations, remote_commits, removals
from memory_recall.server.sync.integrate import TreeMerge
from memory_recall.server.sync.judge import RulesJudge, StatementJudge
from memory_recall.server.sync.ledger import SYNC_KIND, Ledger, machine_id
from memory_recall.server.sync.messages import OperationMessage, render
from memory_recall.server.sync.outgoing import is_synced_path
from memory_recall.server.sync.record import Recorded, Recorder
from memory_recall.server.sync.repo import (
    REMOTE,
    SyncBusy,
    SyncRefused,
    SyncRepo,
    enclosing_tracker,
    refusal,
)
from memory_recall.server.sync.scan import (
    CommittedSecret,
    rewrite,
    secrets_between,
    secrets_in_history,
)

PUSH_ATTEMPTS = 3  # a remote that moves between our fetch and our push, again and again
State = Literal["synced", "local", "offline", "blocked", "busy", "error"]


@dataclass
class SyncOutcome:
    """What one sync of one root did, for people and for the status."""

    root: str
    state: State
    commits: int = 0  # made here for this machine's changes
    pulled: int = 0  # the other machines' commits brought in
    pushed: bool = False
    merged: bool = False
    operation: str | None = None  # the journal operation that changed the files (undoable)
    changed: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the merge rules decided
    held: dict[str, str] = field(default_factory=dict)
    kept_here: list[str] = field(default_factory=list)
    secrets: list[str] = field(default_factory=list)  # credentials found in the history
    error: str | None = None


@dataclass
class RootSync:
    """A root's sync as the status shows it."""

    path: str
    scope: str
    set_up: bool
    refused: str | None = None
    remote: str | None = None
    branch: str | None = None
    auto: bool = False
    ahead: int = 0
    behind: int = 0
    pending: int = 0  # journal operations not committed yet
    last_sync_ms: int | None = None
    last_attempt_ms: int | None = None
    last_error: str | None = None
    failures: int = 0
    held: dict[str, str] = field(default_factory=dict)
    secrets: list[str] = field(default_factory=list)


class SyncService:
    """Sync for the roots of one core."""

    def __init__(
        self,
        roots: Sequence[MemoryRoot],
        state: StateStore,
        *,
        judge: StatementJudge | None = None,
        index_cap: int = DEFAULT_INDEX_CAP,
        network_timeout_s: float = NETWORK_TIMEOUT_S,
    ) -> None:
        self.roots = list(roots)
        self.state = state
        self.ledger = Ledger(state)
        self.judge: StatementJudge = judge or RulesJudge()
        self.index_cap = index_cap
        self.network_timeout_s = network_timeout_s
        # Its own record of its writes: the daemon's watcher must see what a pull changed.
        self.committer = Committer(state, index_cap=index_cap, own_writes=OwnWrites())
        self._machine: str | None = None

    @property
    def machine(self) -> str:
        if self._machine is None:
            self._machine = machine_id(self.state)
        return self._machine

    # -- roots ----------------------------------------------------------------------------------

    def repo(self, index: int) -> SyncRepo:
        root = self.roots[index]
        nested = [
            other.path.relative_to(root.path).as_posix()
            for other in self.roots
            if other.path != root.path and root.path in other.path.parents
        ]
        return SyncRepo(root, nested)

    def refusal(self, index: int) -> str | None:
        root = self.roots[index]
        found = refusal(root, self.roots)
        if found is not None:
            return found
        tracker = enclosing_tracker(root.path)
        if tracker is not None:
            return (
                f"{root.path} is already tracked by the git repository at {tracker}: it travels"
                " with that project's commits. memory-recall sync leaves it to that workflow."
            )
        return None

    def synced(self) -> list[int]:
        """The roots set up for sync."""
        return [i for i in range(len(self.roots)) if self.repo(i).is_set_up]

    def root_id(self, index: int) -> int:
        return self.state.root_id(root_key(self.roots[index]))

    # -- setting up -----------------------------------------------------------------------------

    def init(
        self, index: int, remote: str | None, *, auto: bool = True
    ) -> tuple[list[str], SyncOutcome]:
        """Make a root a synced work tree and sync it once; what was done, and the sync."""
        why = self.refusal(index)
        if why is not None:
            raise SyncRefused(why)
        repo = self.repo(index)
        fresh = repo.head() is None
        done = repo.set_up(remote, auto=auto)
        hidden = _exclude_from_enclosing(repo.root.path)
        if hidden:
            done.append(f"{hidden} now leaves this folder to its own repository (info/exclude)")
        repo.adopt_remote_branch()
        repo.write_exclude(repo.held())
        root_id = self.root_id(index)
        if fresh:  # what the journal holds from before is in the first commit, as it is now
            self.ledger.set_committed(root_id, self.ledger.settled_seq(root_id))
        return done, self.sync(index)

    # -- one sync --------------------------------------------------------------------------------

    def sync(self, index: int, *, wait_s: float = 30.0) -> SyncOutcome:
        root = self.roots[index]
        repo = self.repo(index)
        outcome = SyncOutcome(str(root.path), "synced")
        if not repo.is_set_up:
            why = self.refusal(index) or f"{root.path} is not set up: memory-recall sync init"
            outcome.state, outcome.error = "error", why
            return outcome
        root_id = self.root_id(index)
        try:
            with repo.locked(wait_s):
                self._settle(repo, index)
                recorded = Recorder(repo, self.ledger, root_id, self.machine).record()
                outcome.commits = recorded.commits
                outcome.held = recorded.held.all()
                if repo.remote_url is None:
                    outcome.state = "local"
                else:
                    self._exchange(repo, index, recorded, outcome)
        except SyncBusy as busy:
            outcome.state, outcome.error = "busy", str(busy)
            return outcome
        except GitError as exc:
            outcome.state = "offline" if _unreachable(exc) else "error"
            outcome.error = str(exc)
        except StaleApply as exc:
            outcome.state = "error"
            outcome.error = f"memories changed while syncing ({exc}); the next sync takes them"
        self.ledger.attempted(
            root_id, outcome.error if outcome.state in ("offline", "error", "blocked") else None
        )
        _save_secrets(repo, outcome.secrets)
        return outcome

    def _settle(self, repo: SyncRepo, index: int) -> None:
        """A sync killed after changing the files and before moving HEAD: finish it."""
        pending = repo.applying()
        if pending is None:
            return
        target, ours, operation = pending
        record = self.ledger.journal.get(operation)
        head = repo.head()
        expected = None if ours == "-" else ours
        if record is not None and record.state == "applied" and head == expected:
            changes = {
                d.path: d.new_sha
                for d in repo.git.diff(ours if expected else EMPTY_TREE, target, renames=False)
            }
            self._applier(repo, index).move_head(expected, target, changes)
        repo.clear_applying()

    def _applier(self, repo: SyncRepo, index: int) -> Applier:
        return Applier(
            repo, self.committer, self.ledger.journal, root_index=index, index_cap=self.index_cap
        )

    def _exchange(
        self, repo: SyncRepo, index: int, recorded: Recorded, outcome: SyncOutcome
    ) -> None:
        git = repo.git
        for _attempt in range(PUSH_ATTEMPTS):
            before = repo.remote_head()
            remote = self._fetch(repo)
            head = repo.head()
            lease = repo.rewritten()
            if lease is not None and head is not None:
                # This machine rewrote its history (rewrite_history) and has not pushed it:
                # the remote's old history must not come back through a merge.
                if remote is not None and remote != lease and remote != head:
                    self._integrate(repo, index, head, remote, lease, recorded, outcome,
                                    keep_theirs_history=False)  # fmt: skip
                if self._push(repo, lease=remote):
                    repo.clear_rewritten()
                    outcome.pushed, outcome.state = True, "synced"
                    return
                continue
            if (
                remote is not None
                and remote != head
                and (head is None or not git.ok("merge-base", "--is-ancestor", remote, head))
            ):
                self._integrate(repo, index, head, remote, before, recorded, outcome)
            head = repo.head()
            if head is None or head == remote:
                outcome.state = "synced"
                return
            leaving = secrets_between(git, remote, head, recorded.verified)
            if leaving:
                outcome.state = "blocked"
                outcome.secrets += [s.message for s in leaving]
                outcome.error = (
                    f"not pushed: {leaving[0].message}. `memory-recall sync rewrite-history`"
                    " takes it out of the commits not pushed yet"
                )
                return
            if self._push(repo):
                outcome.pushed = True
                outcome.state = "synced"
                return
        raise GitError(["push"], 1, "the remote kept moving while this machine merged; try again")

    def _fetch(self, repo: SyncRepo) -> str | None:
        branch = repo.branch
        done = repo.git.run(
            "fetch", "--no-tags", "--quiet", REMOTE,
            f"+refs/heads/{branch}:{repo.tracking_ref}",
            timeout=self.network_timeout_s, check=False,
        )  # fmt: skip
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace")
            if "couldn't find remote ref" in message:  # an empty remote: nothing to pull
                repo.git.run("update-ref", "-d", repo.tracking_ref, check=False)
                return None
            raise GitError(["fetch", REMOTE], done.returncode, message)
        return repo.remote_head()

    def _push(self, repo: SyncRepo, *, lease: str | None = None) -> bool:
        """Push HEAD; False when the remote moved meanwhile (fetch and merge again).
        `lease`: a rewritten history, forced over exactly that remote commit (or over an
        empty remote when None)."""
        ref = f"refs/heads/{repo.branch}"
        force = [f"--force-with-lease={ref}:{lease or ''}"] if repo.rewritten() else []
        done = repo.git.run(
            "push", "--porcelain", "--quiet", *force, REMOTE, f"HEAD:{ref}",
            timeout=self.network_timeout_s, check=False,
        )  # fmt: skip
        said = (done.stdout + done.stderr).decode("utf-8", "replace")
        if done.returncode == 0:
            repo.git.run("update-ref", repo.tracking_ref, "HEAD")
            return True
        if "[rejected]" in said and (
            "fetch first" in said or "non-fast-forward" in said or "stale info" in said
        ):
            return False
        raise GitError(["push", REMOTE], done.returncode, said)

    def _integrate(
        self,
        repo: SyncRepo,
        index: int,
        head: str | None,
        remote: str,
        before: str | None,
        recorded: Recorded,
        outcome: SyncOutcome,
        *,
        keep_theirs_history: bool = True,
    ) -> None:
        git = repo.git
        root_id = self.root_id(index)
        commits = remote_commits(git, head, remote)
        outcome.pulled += len(commits)
        how_removed = removals(commits)
        if head is not None and _merge_base(git, head, remote) is not None:
            # The other machines' operations since the histories met; at first contact this
            # machine starts from the remote's state, and its journal from then on.
            record_operations(git, self.ledger, root_id, commits)
        theirs = sorted({c.message.machine for c in commits if c.message.machine} - {self.machine})
        who = ", ".join(theirs) or "the remote"
        applier = self._applier(repo, index)
        applied: Applied
        if head is None or git.ok("merge-base", "--is-ancestor", head, remote):
            changes = {
                d.path: d.new_sha for d in git.diff(head or EMPTY_TREE, remote, renames=False)
            }
            applied = applier.apply(
                head, remote, changes, contents={}, removals=how_removed,
                held=recorded.held, note=f"pulled {len(commits)} commits from {who}",
            )  # fmt: skip
        else:
            # A history rewritten elsewhere (or here): merged as contents against the last
            # remote commit this machine knew, never joined to the old commits.
            rewritten = not keep_theirs_history or (
                before is not None and not git.ok("merge-base", "--is-ancestor", before, remote)
            )
            base = before if rewritten else _merge_base(git, head, remote)
            merge = TreeMerge(
                git, self.judge, scratch=repo.own_dir / "scratch",
                machines=(self.machine, who), taken=lambda p: (repo.root.path / p).exists(),
                index_cap=self.index_cap,
            )  # fmt: skip
            merged = merge.merge(base, head, remote)
            operation = new_operation_id()
            shown = strip_credentials(repo.remote_url or REMOTE)
            title = (
                "merged the other machines' changes into the rewritten history"
                if not keep_theirs_history
                else f"adopted the rewritten history of {shown}"
                if rewritten
                else f"merged {len(commits)} commit{'' if len(commits) == 1 else 's'} from {who}"
            )
            message = OperationMessage(
                kind="sync", title=title, operation=operation, machine=self.machine,
                note="\n".join(merged.notes[:40]) or None,
            )  # fmt: skip
            parents = (
                [head, remote] if not rewritten else [remote] if keep_theirs_history else [head]
            )
            commit = git.commit_tree(
                merged.tree,
                parents,
                render(message),
                repo.commit_env(self.machine, now_ms() / 1000),
            )
            applied = applier.apply(
                head, commit, merged.changes, contents=merged.contents, removals=how_removed,
                held=recorded.held, note=title, operation=operation,
            )  # fmt: skip
            outcome.merged = True
            outcome.notes += merged.notes
        outcome.operation = applied.operation or outcome.operation
        outcome.changed += applied.changed
        outcome.kept_here += applied.kept_here
        # What came in is read for credentials once the files are here: it is a report
        # (the remote holds it already), and the memories should not wait for it.
        outcome.secrets += [s.message for s in secrets_between(git, head, remote)]

    # -- a credential already committed ----------------------------------------------------------

    def check(self, index: int) -> list[CommittedSecret]:
        """Every credential in the root's history (each version of each file)."""
        repo = self.repo(index)
        found = secrets_in_history(repo.git, f"refs/heads/{repo.branch}")
        _save_secrets(repo, [s.message for s in found], replace=True)
        return found

    def rewrite_history(self, index: int, *, wait_s: float = 30.0) -> tuple[str, int]:
        """The history without the credentials `check` finds (each version redacted), pushed
        over the remote's; (the new head, commits rewritten). Only when the user asks."""
        repo = self.repo(index)
        git = repo.git
        with repo.locked(wait_s):
            ref = f"refs/heads/{repo.branch}"
            found = secrets_in_history(git, ref)
            if not found:
                _save_secrets(repo, [], replace=True)
                return repo.head() or "", 0
            lease = repo.remote_head()
            head, count, replaced = rewrite(git, ref, found)
            git.run("reset", "-q", "--mixed", "HEAD")  # the index as the new HEAD
            self._redact_files(repo, index, replaced)
            repo.mark_rewritten(lease)
            _save_secrets(repo, [], replace=True)
            if repo.remote_url is not None:
                with contextlib.suppress(GitError):  # offline: the next sync pushes it
                    if self._push(repo, lease=lease):
                        repo.clear_rewritten()
            if repo.rewritten() is None:
                # The old versions leave this repository now (the remote's copy is replaced).
                git.run("reflog", "expire", "--expire=now", "--all", check=False)
                git.run("gc", "--prune=now", "--quiet", check=False)
        return head, count

    def _redact_files(self, repo: SyncRepo, index: int, replaced: dict[str, str]) -> None:
        """A file that still holds exactly a version the rewrite redacted is redacted the
        same way (through the write side: journaled, under the root's lock), so that the
        memory reads the same here as in the history and on the other machines."""
        nested = repo.nested
        wanted = []
        for path in repo.git.tree_entries("HEAD"):
            if not is_synced_path(path, nested):
                continue
            data = read_or_none(repo.root.path / path)
            if data is not None and blob_id(data) in replaced:
                wanted.append((path, data, replaced[blob_id(data)]))
        if not wanted:
            return
        clean = repo.git.read_blobs(new for _p, _d, new in wanted)
        plan = Plan(index, repo.root, SYNC_KIND, "rewrite", [], uses_view=False)
        for path, data, new in wanted:
            plan.changes.append(
                PlannedChange(Change(path, "updated", data, clean[new], title_of(clean[new], path)))
            )
        plan.note = "credentials redacted, as in the rewritten history"
        plan.seen_seq = self.ledger.journal.last_seq()
        self.committer.commit(plan)
        repo.git.run("update-index", "-q", "--refresh", check=False)

    # -- status ----------------------------------------------------------------------------------

    def status(self, index: int) -> RootSync:
        root = self.roots[index]
        repo = self.repo(index)
        found = RootSync(str(root.path), root.scope.value, repo.is_set_up)
        if not found.set_up:
            found.refused = refusal(root, self.roots)
            return found
        git = repo.git
        found.remote = repo.remote_shown
        found.branch = repo.branch
        found.auto = repo.auto
        head, remote = repo.head(), repo.remote_head()
        try:
            if head and remote:
                left, right = git.text(
                    "rev-list", "--left-right", "--count", f"{head}...{remote}"
                ).split()
                found.ahead, found.behind = int(left), int(right)
            elif head and found.remote:
                found.ahead = int(git.text("rev-list", "--count", head))
        except GitError:
            pass
        root_id = self.root_id(index)
        record = self.ledger.record(root_id)
        found.pending = self.ledger.pending_count(root_id, record.committed_seq)
        found.last_sync_ms = record.last_sync_ms
        found.last_attempt_ms = record.last_attempt_ms
        found.last_error = record.last_error
        found.failures = record.failures
        found.held = repo.held().all()
        found.secrets = _load_secrets(repo)
        return found


def classify(error: str | None) -> Literal["idle", "offline", "error", "blocked"]:
    """A last error as the state a status shows."""
    if not error:
        return "idle"
    if error.startswith("not pushed"):
        return "blocked"
    lowered = error.lower()
    return "offline" if any(marker in lowered for marker in _UNREACHABLE) else "error"


def _merge_base(git: Git, head: str, remote: str) -> str | None:
    done = git.run("merge-base", head, remote, check=False)
    out = done.stdout.decode().strip()
    return out if done.returncode == 0 and out else None  # None: two unrelated histories


_UNREACHABLE = (
    "could not resolve host",
    "connection refused",
    "connection timed out",
    "network is unreachable",
    "could not read from remote repository",
    "does not appear to be a git repository",
    "unable to access",
    "no answer within",
    "timed out",
)


def _unreachable(exc: GitError) -> bool:
    text = f"{exc} {exc.stderr}".lower()
    return any(marker in text for marker in _UNREACHABLE)


def _exclude_from_enclosing(root: Path) -> Path | None:
    """A root inside another repository's work tree (that does not track it): that
    repository is told to leave the folder alone (its local info/exclude), so that its
    `git add .` never takes a nested repository in."""
    parent = Git(root.parent)
    done = parent.run("rev-parse", "--show-toplevel", "--git-dir", check=False)
    if done.returncode != 0:
        return None
    top, git_dir = done.stdout.decode("utf-8", "surrogateescape").split("\n")[:2]
    top_path = Path(top)
    git_path = Path(git_dir) if os.path.isabs(git_dir) else root.parent / git_dir
    rel = os.path.relpath(root, top_path).replace(os.sep, "/")
    exclude = git_path / "info" / "exclude"
    line = f"/{rel}/"
    try:
        text = exclude.read_text(encoding="utf-8")
    except OSError:
        text = ""
    if line in text.splitlines():
        return None
    exclude.parent.mkdir(parents=True, exist_ok=True)
    with open(exclude, "a", encoding="utf-8") as out:
        out.write(("" if not text or text.endswith("\n") else "\n") + line + "\n")
    return top_path


_SECRETS_FILE = "secrets.json"


def _save_secrets(repo: SyncRepo, found: Sequence[str], *, replace: bool = False) -> None:
    """The credentials found in the history, kept for the status until a full check finds
    none (or the history is rewritten)."""
    import json

    path = repo.own_dir / _SECRETS_FILE
    known = set() if replace else set(_load_secrets(repo))
    wanted = sorted(known | set(found))
    if not wanted:
        if path.exists():
            path.unlink()
        return
    repo.own_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(wanted, indent=1), encoding="utf-8")


def _load_secrets(repo: SyncRepo) -> list[str]:
    import json

    try:
        data = json.loads((repo.own_dir / _SECRETS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [str(x) for x in data] if isinstance(data, list) else []
