"""The system `git`, through its command line: the one place sync runs a process (docs/sync.md).

Why the CLI and not a binding (GitPython, pygit2, dulwich): GitPython is itself a
wrapper around this command line; pygit2 needs libgit2 wheels and speaks to remotes
through its own transport stack (credential helpers, `ssh` configuration and proxies
differ from what the user's `git` does); dulwich has no three-way merge of trees and
its own transports too. Sync needs exactly what the user's `git` already does — fetch
and push with the user's credentials, keys and hosts — plus plumbing commands
(`hash-object`, `update-index`, `write-tree`, `commit-tree`, `diff-tree`, `cat-file`)
whose output formats are stable by contract. The merge itself is ours (merge.py),
never git's text merge, so nothing else of a binding would be used.

Every call gets: `LC_ALL=C` (messages we may read), no terminal prompt (a background
sync must never wait for a password; ssh in batch mode unless the user set their own ssh
command), no pager, and a timeout. Errors come back as
`GitError` with git's own message, credentials redacted (a remote URL may carry a token).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from memory_recall.server.store.secrets import redact

# A local plumbing command takes milliseconds; a fetch or push over a slow link may take
# minutes for a first push of thousands of memories, and must still end.
LOCAL_TIMEOUT_S = 120.0
NETWORK_TIMEOUT_S = 600.0
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's well-known empty tree (sha1)
FILE_MODE = "100644"
_NETWORK_COMMANDS = frozenset({"fetch", "push", "ls-remote", "clone"})


class GitError(Exception):
    """A git command failed: what it was asked and what it said (credentials redacted)."""

    def __init__(self, args: Sequence[str], returncode: int | None, stderr: str) -> None:
        self.args_run = list(args)
        self.returncode = returncode
        self.stderr = redact(strip_credentials(stderr.strip()))
        what = " ".join(args[:2])
        lines = [line.strip() for line in self.stderr.splitlines() if line.strip()]
        # What the remote said (a hook's refusal, a quota) matters more than git's summary.
        said = [line for line in lines if line.startswith(("remote:", "fatal:"))][:3]
        tail = "; ".join(dict.fromkeys([*said, *lines[-1:]])) or "no message"
        code = "timed out" if returncode is None else f"exit {returncode}"
        super().__init__(f"git {what} failed ({code}): {tail}")


class GitMissing(GitError):
    """No `git` on this machine."""


def strip_credentials(text: str) -> str:
    """A URL's user and password removed wherever one appears (`https://u:t@host` →
    `https://host`): for messages and status, never for the remote itself."""
    import re

    return re.sub(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/@\s]+@", r"\1", text)


def blob_id(data: bytes) -> str:
    """The id git gives a blob of `data` (sha1 object format), computed here: a blob git
    wrote from a file is checked against the bytes that passed the gate."""
    return hashlib.sha1(b"blob %d\x00" % len(data) + data).hexdigest()


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    sha: str
    path: str


@dataclass(frozen=True)
class DiffEntry:
    """One path a commit changed against another: `status` A, M, D, R (renamed from `old`)."""

    status: str
    path: str
    old_path: str | None
    old_sha: str | None
    new_sha: str | None


class Git:
    """`git` in one work tree (a memory root)."""

    def __init__(self, work_tree: Path, env: Mapping[str, str] | None = None) -> None:
        self.work_tree = work_tree
        self.git_dir = work_tree / ".git"
        self._env = dict(env or {})
        self._ssh: dict[str, str] | None = None

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = dict(os.environ)
        env.update(
            LC_ALL="C",
            LANGUAGE="C",
            GIT_TERMINAL_PROMPT="0",
            GIT_PAGER="cat",
            GIT_EDITOR="true",
        )
        for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
            env.pop(name, None)  # a caller's own repository must not leak into ours
        env.update(self._env)
        if extra:
            env.update(extra)
        return env

    def _batch_ssh(self) -> dict[str, str]:
        """For a command that talks to a remote: ssh never asks a question (a passphrase, a
        new host key) that a background sync would wait on — unless the user chose their own
        ssh command, which is then used as they set it."""
        if self._ssh is None:
            own = "GIT_SSH_COMMAND" in os.environ or "GIT_SSH" in os.environ
            if not own:
                probe = self.run("config", "--get", "core.sshCommand", check=False)
                own = probe.returncode == 0 and bool(probe.stdout.strip())
            self._ssh = {} if own else {"GIT_SSH_COMMAND": "ssh -o BatchMode=yes"}
        return self._ssh

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = LOCAL_TIMEOUT_S,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        if args and args[0] in _NETWORK_COMMANDS:
            env = {**self._batch_ssh(), **(env or {})}
        command = ["git", "-C", str(self.work_tree), *args]
        try:
            done = subprocess.run(
                command,
                input=input,
                capture_output=True,
                env=self.environment(env),
                timeout=timeout,
                check=False,
            )
        except FileNotFoundError:
            raise GitMissing(args, 127, "git is not installed (or not on PATH)") from None
        except subprocess.TimeoutExpired as exc:
            stderr = (exc.stderr or b"").decode("utf-8", "replace")
            raise GitError(args, None, stderr or f"no answer within {timeout:.0f} s") from None
        if check and done.returncode != 0:
            raise GitError(args, done.returncode, done.stderr.decode("utf-8", "replace"))
        return done

    def text(self, *args: str, **kw: object) -> str:
        """A command's standard output as text, stripped."""
        return self.run(*args, **kw).stdout.decode("utf-8", "surrogateescape").strip()  # type: ignore[arg-type]

    def ok(self, *args: str) -> bool:
        """Whether a command succeeds (a question such as `merge-base --is-ancestor`)."""
        return self.run(*args, check=False).returncode == 0

    # -- names ---------------------------------------------------------------------------

    def rev(self, name: str) -> str | None:
        """The commit a name points at, or None."""
        done = self.run("rev-parse", "--verify", "--quiet", f"{name}^{{commit}}", check=False)
        out = done.stdout.decode().strip()
        return out if done.returncode == 0 and out else None

    def config(self, key: str) -> str | None:
        done = self.run("config", "--local", "--get", key, check=False)
        return (
            done.stdout.decode("utf-8", "surrogateescape").strip() if done.returncode == 0 else None
        )

    def set_config(self, key: str, value: str) -> None:
        self.run("config", "--local", key, value)

    # -- objects -------------------------------------------------------------------------

    def read_blobs(self, shas: Iterable[str]) -> dict[str, bytes]:
        """Many blobs in one `cat-file --batch`."""
        wanted = list(dict.fromkeys(s for s in shas if s))
        if not wanted:
            return {}
        out = self.run("cat-file", "--batch", input="".join(f"{s}\n" for s in wanted).encode())
        data, found, at = out.stdout, {}, 0
        for sha in wanted:
            end = data.index(b"\n", at)
            header = data[at:end].split()
            if len(header) < 3 or header[1] == b"missing":
                at = end + 1
                continue
            size = int(header[2])
            found[sha] = data[end + 1 : end + 1 + size]
            at = end + 1 + size + 1
        return found

    def write_blobs(self, contents: Sequence[bytes], scratch: Path) -> list[str]:
        """Blobs of exactly these bytes (no filters), in one `hash-object` call.

        The bytes go through files of our own in `scratch` — never through the work tree,
        which may change meanwhile: what passed the gate is what gets stored. Each id is
        checked against the bytes."""
        if not contents:
            return []
        scratch.mkdir(parents=True, exist_ok=True)
        files = []
        try:
            for number, data in enumerate(contents):
                path = scratch / f"blob-{os.getpid()}-{number}"
                path.write_bytes(data)
                files.append(path)
            listing = "".join(f"{p}\n" for p in files).encode("utf-8", "surrogateescape")
            shas = self.text(
                "hash-object", "-w", "--no-filters", "--stdin-paths", input=listing
            ).split()
        finally:
            for path in files:
                with contextlib.suppress(OSError):
                    path.unlink()
        for data, sha in zip(contents, shas, strict=True):
            if sha != blob_id(data):
                raise GitError(["hash-object"], 0, f"blob {sha} is not the content written")
        return shas

    def tree_entries(self, commit: str, paths: Sequence[str] | None = None) -> dict[str, TreeEntry]:
        """Every file of a commit's tree (or only `paths`), by path."""
        args = ["ls-tree", "-r", "-z", "--full-tree", commit]
        if paths is not None:
            if not paths:
                return {}
            args += ["--", *[_literal(p) for p in paths]]
        out = self.run(*args).stdout
        entries = {}
        for record in out.split(b"\0"):
            if not record:
                continue
            meta, _, raw_path = record.partition(b"\t")
            mode, kind, sha = meta.decode().split()
            if kind != "blob":
                continue
            path = raw_path.decode("utf-8", "surrogateescape")
            entries[path] = TreeEntry(mode, sha, path)
        return entries

    def diff(self, old: str, new: str, *, renames: bool = True) -> list[DiffEntry]:
        """What `new` changed against `old` (commits or trees), file by file."""
        args = ["diff-tree", "-r", "-z", "--no-commit-id"]
        args += ["-M"] if renames else ["--no-renames"]
        out = self.run(*args, old, new).stdout.split(b"\0")
        entries, at = [], 0
        while at < len(out) and out[at]:
            meta = out[at].decode().lstrip(":").split()
            status = meta[4][0]
            old_sha = None if set(meta[2]) == {"0"} else meta[2]
            new_sha = None if set(meta[3]) == {"0"} else meta[3]
            first = out[at + 1].decode("utf-8", "surrogateescape")
            if status in "RC":
                second = out[at + 2].decode("utf-8", "surrogateescape")
                entries.append(DiffEntry(status, second, first, old_sha, new_sha))
                at += 3
            else:
                entries.append(DiffEntry(status, first, None, old_sha, new_sha))
                at += 2
        return entries

    def commit_tree(
        self, tree: str, parents: Sequence[str], message: str, env: Mapping[str, str]
    ) -> str:
        args = ["commit-tree", "--no-gpg-sign", tree]
        for parent in parents:
            args += ["-p", parent]
        return self.text(*args, input=message.encode("utf-8"), env=env)


@dataclass
class NewCommit:
    """A commit for `import_commits`: its files' new bytes (None: removed)."""

    message: str
    env: Mapping[
        str, str
    ]  # GIT_AUTHOR_NAME, _EMAIL, _DATE (`@epoch +0000`), the same for the committer
    files: dict[str, bytes | None]


def _quoted(path: str) -> str:
    """A path for a fast-import command: C-style quoted, bytes kept as they are."""
    out = []
    for char in path:
        if char in '"\\':
            out.append("\\" + char)
        elif ord(char) < 0x20 or char == "\x7f":
            out.append(f"\\{ord(char):03o}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'


def _person(env: Mapping[str, str], who: str) -> bytes:
    name = env[f"GIT_{who}_NAME"].replace("<", "").replace(">", "").replace("\n", " ")
    email = env[f"GIT_{who}_EMAIL"].replace("<", "").replace(">", "").replace("\n", "")
    stamp = env[f"GIT_{who}_DATE"].lstrip("@")
    return f"{name} <{email}> {stamp}".encode()


def import_commits(git: Git, parent: str | None, commits: Sequence[NewCommit]) -> list[str]:
    """A chain of commits on `parent` (None: from nothing) in one `git fast-import`: the
    file bytes go in exactly as given, in one pack, instead of a handful of processes per
    commit. Returns the commits' ids, in order; moves no branch."""
    if not commits:
        return []
    ref = "refs/memory-recall/import"
    chunks: list[bytes] = []
    for number, commit in enumerate(commits, start=1):
        message = commit.message.encode("utf-8")
        chunks += [
            f"commit {ref}\nmark :{number}\n".encode(),
            b"author " + _person(commit.env, "AUTHOR") + b"\n",
            b"committer " + _person(commit.env, "COMMITTER") + b"\n",
            b"data %d\n" % len(message), message, b"\n",
        ]  # fmt: skip
        if number > 1:
            chunks.append(f"from :{number - 1}\n".encode())
        elif parent is not None:
            chunks.append(f"from {parent}\n".encode())
        for path, data in commit.files.items():
            quoted = _quoted(path).encode("utf-8", "surrogateescape")
            if data is None:
                chunks.append(b"D " + quoted + b"\n")
            else:
                chunks += [
                    b"M 100644 inline " + quoted + b"\n",
                    b"data %d\n" % len(data),
                    data,
                    b"\n",
                ]
        chunks.append(b"\n")
    chunks.append(b"done\n")
    marks = git.git_dir / "memory-recall" / "scratch" / f"marks-{os.getpid()}"
    marks.parent.mkdir(parents=True, exist_ok=True)
    try:
        git.run(
            "fast-import", "--quiet", "--done", "--force", f"--export-marks={marks}",
            input=b"".join(chunks),
        )  # fmt: skip
        found = dict(line.split() for line in marks.read_text().splitlines() if line.strip())
    finally:
        with contextlib.suppress(OSError):
            marks.unlink()
        git.run("update-ref", "-d", ref, check=False)
    return [found[f":{n}"] for n in range(1, len(commits) + 1)]


def _literal(path: str) -> str:
    """A path as a pathspec that matches itself only (no globbing)."""
    return f":(literal){path}"


def index_info(entries: Iterable[tuple[str, str | None]]) -> bytes:
    """`update-index --index-info -z` input: `(path, blob)` set, `(path, None)` removed."""
    lines = []
    for path, sha in entries:
        if sha is None:
            lines.append(f"0 {'0' * 40}\t{path}")
        else:
            lines.append(f"{FILE_MODE} {sha}\t{path}")
    return "".join(line + "\0" for line in lines).encode("utf-8", "surrogateescape")
