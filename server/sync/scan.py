"""Credentials already in the history: found, reported, and — only when the user asks —
rewritten out of it (docs/sync.md, "A secret already committed").

Sync commits nothing that fails the secret detector, but a history can still hold one:
a commit made by hand with git, another machine running an older detector, or a
detector that learned a new format since. So sync looks at

- what it is about to push: every file a commit made outside this sync run adds
  (a hand commit is pushed only when clean: a found credential stops the push);
- what it pulls: a credential another machine pushed is reported at once;
- on request (`memory-recall sync check`), every version of every file ever committed.

`rewrite` replaces each version that holds a credential by the same text with the
credential redacted (`[REDACTED:kind]`, store/secrets.py) in every commit of the branch,
keeping messages, authors and dates; the branch is then pushed with a lease (only if
the remote still has what was rewritten), and the other machines adopt the new history
at their next sync. The old objects leave this repository at once; a hosted remote may
keep them in its caches for a while, so the credential should be revoked all the same.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from memory_recall.server.pacing import paced
from memory_recall.server.store.secrets import find_secrets, redact
from memory_recall.server.sync.git import Git, index_info


@dataclass(frozen=True)
class CommittedSecret:
    commit: str
    path: str
    blob: str
    kinds: tuple[str, ...]

    @property
    def message(self) -> str:
        return (
            f"{self.path} in commit {self.commit[:10]} holds a credential ({', '.join(self.kinds)})"
        )


def _objects(git: Git, span: Sequence[str]) -> list[tuple[str, str]]:
    """`(path, blob)` of every memory file version reachable from `span` (`^x` excluded),
    each version once: what a push of that span sends."""
    listing = git.run("rev-list", "--objects", *span).stdout.decode("utf-8", "surrogateescape")
    found = []
    for line in listing.splitlines():
        sha, _, path = line.partition(" ")
        if path.endswith(".md"):
            found.append((path, sha))
    return found


def _first_commit(git: Git, blob: str, span: Sequence[str]) -> str:
    found = git.run("log", "--format=%H", f"--find-object={blob}", *span, check=False)
    lines = found.stdout.decode().split()
    return lines[-1] if lines else ""


def _scan(
    git: Git, versions: Iterable[tuple[str, str]], skip: set[str], span: Sequence[str]
) -> list[CommittedSecret]:
    versions = [v for v in versions if v[1] not in skip]
    blobs = git.read_blobs(v[1] for v in versions)
    found = []
    for path, blob in paced(versions):
        data = blobs.get(blob, b"")
        kinds = tuple(sorted({f.kind for f in find_secrets(data.decode("utf-8", "replace"))}))
        if kinds:
            found.append(CommittedSecret(_first_commit(git, blob, span), path, blob, kinds))
    return found


def secrets_between(
    git: Git, have: str | None, head: str, verified: Iterable[str] = ()
) -> list[CommittedSecret]:
    """Credentials in the file versions `head` has and `have` (None: nothing) has not —
    what a push would send — except blobs already found clean (`verified`)."""
    span = [head] + ([f"^{have}"] if have else [])
    return _scan(git, _objects(git, span), set(verified), span)


def secrets_in_history(git: Git, branch_ref: str) -> list[CommittedSecret]:
    """Every file version ever committed on the branch."""
    return _scan(git, _objects(git, [branch_ref]), set(), [branch_ref])


def rewrite(
    git: Git, branch_ref: str, found: Sequence[CommittedSecret]
) -> tuple[str, int, dict[str, str]]:
    """The branch again, every version in `found` redacted; (the new head, commits
    rewritten, old blob → its redacted blob). The branch ref moves only if nothing else
    moved it meanwhile."""
    bad = {s.blob for s in found}
    texts = git.read_blobs(bad)
    clean_shas = git.write_blobs(
        [redact(texts[b].decode("utf-8", "replace")).encode("utf-8") for b in bad],
        git.git_dir / "memory-recall" / "scratch",
    )
    replacement = dict(zip(bad, clean_shas, strict=True))
    old_head = git.rev(branch_ref)
    if old_head is None:
        return "", 0, replacement
    order = git.text("rev-list", "--reverse", "--topo-order", "--parents", branch_ref).splitlines()
    mapped: dict[str, str] = {}
    env_index = {"GIT_INDEX_FILE": str(git.git_dir / "memory-recall" / "scratch" / "rewrite.index")}
    rewritten = 0
    for line in order:
        commit, *parents = line.split()
        git.run("read-tree", commit, env=env_index)
        entries = git.tree_entries(commit)
        changed = [(p, replacement[e.sha]) for p, e in entries.items() if e.sha in replacement]
        if changed:
            git.run("update-index", "-z", "--index-info", input=index_info(changed), env=env_index)
        tree = git.text("write-tree", env=env_index)
        new_parents = [mapped.get(p, p) for p in parents]
        if not changed and new_parents == parents:
            mapped[commit] = commit
            continue
        meta = git.run(
            "log", "-1", "--format=%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd%x00%B", "--date=raw",
            commit,
        ).stdout.decode("utf-8", "surrogateescape")  # fmt: skip
        an, ae, ad, cn, ce, cd, body = meta.split("\0", 6)
        env = {
            "GIT_AUTHOR_NAME": an, "GIT_AUTHOR_EMAIL": ae, "GIT_AUTHOR_DATE": ad,
            "GIT_COMMITTER_NAME": cn, "GIT_COMMITTER_EMAIL": ce, "GIT_COMMITTER_DATE": cd,
        }  # fmt: skip
        mapped[commit] = git.commit_tree(tree, new_parents, body.rstrip("\n") + "\n", env)
        rewritten += 1
    new_head = mapped[old_head]
    git.run("update-ref", branch_ref, new_head, old_head)
    return new_head, rewritten, replacement
