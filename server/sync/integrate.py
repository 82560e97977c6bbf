"""Two histories of one root as one tree: every path decided by the rules (docs/sync.md).

Against the last commit both machines share (the merge base; none for two roots that
started apart), each side's changes are read file by file, renames included. A path
only one side changed takes that change; a path both changed is merged as a memory
(merge.py); a rename on one side and an edit on the other meet at the new name. When a
merge keeps two versions as two memories, the older one gets a free name beside the
first (`deploys-2.md`), and where the rules were unsure the two name each other in
`related`.

MEMORY.md is never merged: it is regenerated from this machine's index, the lines the
other machine's user added, and the merged memories (store/index_file.py).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from memory_recall.server.documents import INDEX_FILE_NAME, InvalidMemory
from memory_recall.server.pacing import paced
from memory_recall.server.store.conflicts import MAYBE_SUPERSEDES
from memory_recall.server.store.index_file import IndexEntry, index_target, plan_index
from memory_recall.server.store.memory_file import MemoryFile
from memory_recall.server.sync.git import (
    EMPTY_TREE,
    DiffEntry,
    Git,
    GitError,
    TreeEntry,
    index_info,
)
from memory_recall.server.sync.judge import StatementJudge
from memory_recall.server.sync.merge import Outcome, Version, link, merge_memory
from memory_recall.server.sync.messages import PREFIX


@dataclass
class Merged:
    """The merged tree, and what it changes against this machine's commit."""

    tree: str
    changes: dict[str, str | None]  # path → blob (None: removed), where it differs from ours
    contents: dict[str, bytes]  # the bytes of blobs made by the merge
    reasons: dict[str, list[str]] = field(default_factory=dict)  # path → what the rules did

    @property
    def notes(self) -> list[str]:
        return [f"{path}: {why}" for path, whys in sorted(self.reasons.items()) for why in whys]


@dataclass
class _Side:
    changed: dict[str, str | None] = field(default_factory=dict)  # path → blob after
    renamed: dict[str, str] = field(default_factory=dict)  # old path → new path
    base: dict[str, str | None] = field(default_factory=dict)  # path → blob at the base


def _side(entries: Iterable[DiffEntry]) -> _Side:
    side = _Side()
    for entry in entries:
        if entry.status == "R" and entry.old_path is not None:
            side.changed[entry.old_path] = None
            side.base[entry.old_path] = entry.old_sha
            side.changed[entry.path] = entry.new_sha
            side.base.setdefault(entry.path, None)
            side.renamed[entry.old_path] = entry.path
        else:
            side.changed[entry.path] = entry.new_sha
            side.base[entry.path] = entry.old_sha
    return side


def change_times(git: Git, base: str | None, side: str) -> dict[str, float]:
    """When each path last changed on `side` since `base`: its latest commit's time, to the
    millisecond where the commit says (messages.py), else to the second."""
    span = f"{base}..{side}" if base else side
    trailer = f"%(trailers:key={PREFIX}Time,valueonly,separator=)"
    out = git.run(
        "log", "-z", f"--format=%x01%ct%x03{trailer}", "--name-only", "--no-renames", span
    ).stdout
    times: dict[str, float] = {}
    current = 0.0
    for token in out.decode("utf-8", "surrogateescape").split("\0"):
        if token.startswith("\x01"):
            seconds, _, exact = token[1:].partition("\x03")
            try:
                current = int(exact.strip()) / 1000 if exact.strip() else float(seconds)
            except ValueError:
                current = float(seconds)
            continue
        path = token.lstrip("\n")
        if path:
            times.setdefault(path, current)  # newest first: the first seen is the latest
    return times


class TreeMerge:
    """One merge of `ours` and `theirs` (commits) of a root."""

    def __init__(
        self,
        git: Git,
        judge: StatementJudge,
        *,
        scratch: Path,
        machines: tuple[str, str],
        taken: Callable[[str], bool],
        index_cap: int,
    ) -> None:
        self.git = git
        self.judge = judge
        self.scratch = scratch
        self.machines = machines  # (ours, theirs), for the reasons
        self.taken = taken  # whether a path is in use on this machine's disk
        self.index_cap = index_cap

    def merge(self, base: str | None, ours: str, theirs: str) -> Merged:
        base_ref = base or EMPTY_TREE
        mine = _side(self.git.diff(base_ref, ours))
        other = _side(self.git.diff(base_ref, theirs))
        ours_times = change_times(self.git, base, ours)
        theirs_times = change_times(self.git, base, theirs)
        blobs = self._blobs(mine, other)
        result: dict[str, str | None] = {}
        contents: dict[str, bytes] = {}
        reasons: dict[str, list[str]] = {}
        outcomes: dict[str, Outcome] = {}
        handled: set[str] = {INDEX_FILE_NAME}

        def version(side: _Side, path: str, times: dict[str, float], machine: str) -> Version:
            sha = side.changed[path]
            return Version(self._content(sha, blobs), times.get(path, 0.0), machine)

        # Renames meet edits: a memory renamed on one side and changed on the other is
        # merged under the new name.
        for renamer, editor, flip in ((mine, other, False), (other, mine, True)):
            for old, new in renamer.renamed.items():
                if old in handled or old not in editor.changed:
                    continue
                base_sha = renamer.base.get(old)
                ren_times, ed_times = (
                    (theirs_times, ours_times) if flip else (ours_times, theirs_times)
                )
                ren_machine, ed_machine = (
                    (self.machines[1], self.machines[0]) if flip else self.machines
                )
                if old in editor.renamed:  # renamed on both sides
                    other_new = editor.renamed[old]
                    if other_new == new:
                        continue  # the same rename: the paths below decide the content
                    a = version(renamer, new, ren_times, ren_machine)
                    b = version(editor, other_new, ed_times, ed_machine)
                    target, gone = (new, other_new) if a.newer_than(b) else (other_new, new)
                    outcomes[target] = self._merge_one(base_sha, a, b, flip, blobs)
                    result[gone] = None
                    reasons.setdefault(target, []).append(
                        f"renamed on both machines; the newer name is kept ({gone} goes)"
                    )
                    handled.update({old, new, other_new})
                    continue
                if editor.changed[old] is None:
                    handled.add(old)  # renamed here, deleted there: the rename stands
                    continue
                a = version(renamer, new, ren_times, ren_machine)
                b = version(editor, old, ed_times, ed_machine)
                outcomes[new] = self._merge_one(base_sha, a, b, flip, blobs)
                result[old] = None
                reasons.setdefault(new, []).append(
                    f"renamed from {old} on one machine and edited on the other: both changes kept"
                )
                handled.update({old, new})

        for path in paced(sorted(set(mine.changed) | set(other.changed))):
            if path in handled:
                continue
            if path not in other.changed:
                continue  # only this machine changed it: ours already has it
            if path not in mine.changed:
                result[path] = other.changed[path]
                continue
            if mine.changed[path] == other.changed[path]:
                continue
            base_sha = mine.base.get(path) or other.base.get(path)
            a = version(mine, path, ours_times, self.machines[0])
            b = version(other, path, theirs_times, self.machines[1])
            outcomes[path] = self._merge_one(base_sha, a, b, False, blobs)

        ours_entries = self.git.tree_entries(ours)
        for path, outcome in outcomes.items():
            reasons.setdefault(path, []).extend(outcome.reasons)
            self._place(path, outcome, result, contents, ours_entries, reasons)

        def ours_sha(path: str) -> str | None:
            entry = ours_entries.get(path)
            return entry.sha if entry is not None else None

        changes = {path: sha for path, sha in result.items() if ours_sha(path) != sha}
        index = self._index(base, ours, theirs, result, contents, ours_entries)
        if index is not None:
            contents[INDEX_FILE_NAME] = index
        shas = self.git.write_blobs(list(contents.values()), self.scratch) if contents else []
        for path, sha in zip(list(contents), shas, strict=True):
            if ours_sha(path) != sha:
                changes[path] = sha
            else:
                changes.pop(path, None)
        tree = self._write_tree(ours, changes)
        return Merged(tree, changes, contents, {p: r for p, r in reasons.items() if r})

    # -- pieces ----------------------------------------------------------------------------

    def _blobs(self, mine: _Side, other: _Side) -> dict[str, bytes]:
        """The contents the merge may read: both sides' versions of paths both changed."""
        wanted: set[str] = set()
        for path in (
            (set(mine.changed) & set(other.changed)) | set(mine.renamed) | set(other.renamed)
        ):
            for side in (mine, other):
                for sha in (side.changed.get(path), side.base.get(path)):
                    if sha:
                        wanted.add(sha)
                renamed = side.renamed.get(path)
                if renamed and side.changed.get(renamed):
                    wanted.add(side.changed[renamed] or "")
        return self.git.read_blobs(wanted)

    def _content(self, sha: str | None, blobs: dict[str, bytes]) -> bytes | None:
        if not sha:
            return None
        if sha not in blobs:
            blobs.update(self.git.read_blobs([sha]))
        if sha not in blobs:
            raise GitError(["cat-file"], 1, f"object {sha} is missing from the repository")
        return blobs[sha]

    def _merge_one(
        self, base_sha: str | None, a: Version, b: Version, flip: bool, blobs: dict[str, bytes]
    ) -> Outcome:
        ours, theirs = (b, a) if flip else (a, b)
        return merge_memory(self._content(base_sha, blobs), ours, theirs, self.judge)

    def _place(
        self,
        path: str,
        outcome: Outcome,
        result: dict[str, str | None],
        contents: dict[str, bytes],
        ours_entries: dict[str, TreeEntry],
        reasons: dict[str, list[str]],
    ) -> None:
        if outcome.data is None:
            result[path] = None
            return
        data = outcome.data
        if outcome.beside is not None:
            beside_path = self._free_name(path, result, contents, ours_entries)
            beside = outcome.beside
            if outcome.linked:
                data = link(data, beside_path)
                beside = link(beside, path)
            contents[beside_path] = beside
            reasons.setdefault(beside_path, []).append(f"the other version of {path}")
        contents[path] = data

    def _free_name(
        self,
        path: str,
        result: dict[str, str | None],
        contents: dict[str, bytes],
        ours_entries: dict[str, TreeEntry],
    ) -> str:
        folder, name = posixpath.split(path)
        stem = name.removesuffix(".md")
        used = {p.lower() for p in (*result, *contents, *ours_entries)}
        for number in range(2, 100_000):
            candidate = posixpath.join(folder, f"{stem}-{number}.md")
            if candidate.lower() not in used and not self.taken(candidate):
                return candidate
        raise RuntimeError(f"no free name beside {path}")

    def _index(
        self,
        base: str | None,
        ours: str,
        theirs: str,
        result: dict[str, str | None],
        contents: dict[str, bytes],
        ours_entries: dict[str, TreeEntry],
    ) -> bytes | None:
        """MEMORY.md regenerated for the merged tree; None when it would not change."""
        texts = {}
        for name, commit in (("base", base), ("ours", ours), ("theirs", theirs)):
            if commit is None:
                texts[name] = ""
                continue
            entry = self.git.tree_entries(commit, [INDEX_FILE_NAME]).get(INDEX_FILE_NAME)
            data = self.git.read_blobs([entry.sha]).get(entry.sha, b"") if entry else b""
            texts[name] = data.decode("utf-8", "replace")
        text = texts["ours"]
        seen = set(texts["ours"].splitlines()) | set(texts["base"].splitlines())
        added = [
            line
            for line in texts["theirs"].splitlines()
            if line.strip() and index_target(line) is None and line not in seen
        ]
        if added:  # the other machine's user wrote these lines: they stay
            text = text.rstrip("\n") + ("\n" if text.strip() else "") + "\n".join(added) + "\n"
        final = {p for p in ours_entries} | {p for p, sha in result.items() if sha} | set(contents)
        final -= {p for p, sha in result.items() if sha is None and p not in contents}
        changed = {p for p in result if p != INDEX_FILE_NAME} | set(contents)
        needed = [result[p] for p in changed if p not in contents and result.get(p)]
        datas = self.git.read_blobs([s for s in needed if s])
        entries: dict[str, IndexEntry] = {}
        for path in sorted(changed):
            if not path.endswith(".md") or path == INDEX_FILE_NAME or path not in final:
                continue
            found = contents.get(path) or datas.get(result.get(path) or "")
            line = _entry(path, found) if found is not None else None
            if line is not None:
                entries[path] = line
        gone = frozenset(p for p in changed if p not in final)
        planned = plan_index(
            text,
            entries,
            exists=lambda p: p in final,
            changed_ms=lambda p: 0.0,
            gone=gone,
            cap=self.index_cap,
            fresh=list(entries),
        )
        new = planned.text.encode("utf-8")
        current = texts["ours"].encode("utf-8")
        return None if new == current else new

    def _write_tree(self, ours: str, changes: dict[str, str | None]) -> str:
        env = {"GIT_INDEX_FILE": str(self.scratch / "merge.index")}
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.git.run("read-tree", ours, env=env)
        if changes:
            self.git.run(
                "update-index", "-z", "--index-info", input=index_info(changes.items()), env=env
            )
        return self.git.text("write-tree", env=env)


def _entry(path: str, data: bytes) -> IndexEntry | None:
    try:
        memory = MemoryFile.parse(data.decode("utf-8", "replace"))
    except InvalidMemory:
        return None
    title = memory.get("name") or memory.get("title") or memory.get("type") or Path(path).stem
    description, pinned = memory.get("description") or "", memory.get_bool("pinned")
    corrects = tuple(memory.get_list(MAYBE_SUPERSEDES))
    return IndexEntry(path, title, description, pinned, float("inf"), corrects)
