"""The consolidation planner (docs/organisation.md "dream"): orient → gather → consolidate → prune
→ report.

A pure service: the memories of one root in, a plan out; nothing is written
here. The daemon executes a plan through the writer as one journal operation
(one `memory/undo` restores every file), or returns it as the dry run.

- **orient**: the root's memories, which are protected (pinned, always
  loaded, team: never changed, only reported), which are stale.
- **gather**: pairs worth judging — memories with the same title, and memories
  that share several of their rarest words (an inverted index over each
  memory's rarest tokens: near-duplicates share them, and it never compares all
  pairs) and enough of all their words — judged by the write side's conflict
  rules (`store/conflicts.py`): `duplicate` pairs form clusters, `update` pairs
  are the same subject with a changed fact.
- **consolidate**: newer wins on a changed fact — the older memory goes to the
  archive, and so does any older duplicate of it (it states the same old fact);
  the newer records `supersedes`. Each remaining duplicate cluster is merged
  into its newest member with every distinct line kept (`merge.py`); a
  duplicate whose every line a protected memory already holds is archived as
  covered. Protected memories are never rewritten or archived.
- **prune**: a root still over its capacity archives its lowest-retention
  memories (`retention.py`); a merged memory counts with the best retention of
  its cluster, and when it goes all the same, it goes merged (its rewrite is
  kept: the archive holds the merged text).
- **report**: every action with its reason, and notices for what was only
  reported (stale memories, protected duplicates and contradictions, a root
  that its protected memories alone fill).

One job past 400 lines: the steps share one working state (which memory goes
where and why), and each decision depends on the ones before it — a merge must
not bring back a superseded line, pruning must see what merging kept.
"""

from __future__ import annotations

import time
from array import array
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from typing import Literal

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.facts.judgement import (
    CHANGE_OF_ITS_TOPIC,
    NAMED_ANEW,
    OPENS_ALIKE,
    PLACED_ELSEWHERE,
    READDRESSED,
    SWITCHED_ALIKE,
    WORD_SWAPPED,
    holds_more,
)
from memory_recall.server.facts.newer import MAYBE_SUPERSEDES_KEY, links
from memory_recall.server.organise.merge import covers, merge_bodies
from memory_recall.server.organise.pairs import Vocabulary, candidate_pairs, contains
from memory_recall.server.organise.retention import (
    NO_USAGE,
    Retention,
    RetentionFacts,
    UsageStats,
    edited_ms,
    plan_capacity,
    protection,
    retention,
)
from memory_recall.server.store.conflicts import (
    MemoryText,
    judge,
    subject_key,
    title_key,
)

ArchiveCause = Literal["merged", "superseded", "covered", "capacity"]
NoticeKind = Literal["stale", "protected", "over-capacity", "possible"]


@dataclass(frozen=True)
class Rewrite:
    """A memory kept and rewritten: merged lines, and what it now supersedes."""

    path: str
    body: str | None  # the merged body; None when only `supersedes` changes
    merged_from: tuple[str, ...] = ()
    added_lines: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()  # relative paths to add to its `supersedes`
    reason: str = ""
    merged_by: str = "rules"  # "model" when prose.py's rewording of the merge was kept
    merge_note: str = ""  # why the rules' merge was kept although a model is configured


@dataclass(frozen=True)
class Archive:
    """A memory moved to the root's archive (restorable)."""

    path: str
    cause: ArchiveCause
    reason: str
    into: str | None = None  # the memory that holds its content or its newer fact
    retention: float | None = None


@dataclass(frozen=True)
class Notice:
    """What consolidation saw and only reports."""

    path: str
    kind: NoticeKind
    reason: str


@dataclass(frozen=True)
class GatherFigures:
    memories: int
    pairs_judged: int
    duplicates: int
    updates: int
    set_aside: int = 0  # pairs not acted on: their titles name different things
    elapsed_ms: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class ConsolidationPlan:
    """What one consolidation of one root does, action by action."""

    root: str
    capacity: int
    before: int
    rewrites: tuple[Rewrite, ...]
    archives: tuple[Archive, ...]
    notices: tuple[Notice, ...]
    gather: GatherFigures

    @property
    def after(self) -> int:
        return self.before - len(self.archives)

    def archived(self, cause: ArchiveCause) -> list[Archive]:
        return [a for a in self.archives if a.cause == cause]

    @property
    def touched(self) -> list[str]:
        """Every file the plan changes or moves, in order."""
        return [r.path for r in self.rewrites] + [a.path for a in self.archives]

    @property
    def empty(self) -> bool:
        return not self.rewrites and not self.archives


@dataclass(frozen=True)
class _Memory:
    doc: MemoryDocument
    edited_ms: float
    protected: str | None
    words: array[int]  # distinct words, as vocabulary ids (pairs.py)
    title_words: tuple[int, ...]
    title_key: str
    subject_key: str

    @property
    def path(self) -> str:
        return self.doc.path

    def newness(self) -> tuple[float, float, str]:
        # Newest wins: the last edit as the memory says, then the file's mtime,
        # then the path (deterministic).
        return (self.edited_ms, self.doc.mtime_ms, self.doc.path)


def _orient(docs: Iterable[MemoryDocument], team: bool) -> tuple[list[_Memory], Vocabulary]:
    vocabulary = Vocabulary()
    out = []
    for doc in sorted(docs, key=lambda d: d.path):
        protected = "team memory" if team else protection(doc)
        out.append(
            _Memory(
                doc,
                edited_ms(doc),
                protected,
                vocabulary.words(f"{doc.title}\n{doc.description}\n{doc.body}"),
                tuple(vocabulary.words(doc.title)),
                title_key(doc.title),
                subject_key(doc.title),
            )
        )
    return out, vocabulary


def _linked_pairs(memories: Sequence[_Memory]) -> set[tuple[int, int]]:
    """Index pairs (i < j) the writer linked (`supersedes`, `maybeSupersedes`): judged
    whatever words they share. A correction may share too few of its memory's words for
    the word index to pair them (a short line beside a longer note, or a name changed in
    Japanese), and a lean the writer recorded is reported until it is settled."""
    at = {m.doc.relative_path: i for i, m in enumerate(memories)}
    pairs = set()
    for i, m in enumerate(memories):
        for key in ("supersedes", MAYBE_SUPERSEDES_KEY):
            for path in m.doc.paths_of(key):
                j = at.get(path)
                if j is not None and j != i:
                    pairs.add((min(i, j), max(i, j)))
    return pairs


# Leans of the rules that read a newer note as perhaps correcting an older one although no
# value changed: never merged as a rewording (`reworded` in `Gather`), reported.
PERHAPS_CORRECTED = (
    WORD_SWAPPED,
    NAMED_ANEW,
    OPENS_ALIKE,
    PLACED_ELSEWHERE,
    SWITCHED_ALIKE,
    READDRESSED,
    CHANGE_OF_ITS_TOPIC,
)


def _same_subject(a: _Memory, b: _Memory, kind: str) -> bool:
    """Whether a verdict's two memories are about one thing, as unattended consolidation needs.

    The conflict rules are built for one new memory against its candidates;
    consolidation applies them to every pair of a root, unattended, so it acts
    on a verdict only when the titles agree. A changed fact needs the same title
    (or the same content words in it): every labelled update of the conflict
    corpora has one, while two facts of one shape about different things
    ("batch size of billing" / "… of search") can read as one fact changed. A
    duplicate may be retitled, but not when each title names something the
    other memory never mentions (3 of the corpora's 80 labelled duplicates do;
    60 of their 64 independent pairs do).
    """
    if a.title_key == b.title_key:
        return True
    if kind == "update":
        return a.subject_key == b.subject_key
    a_names_more = any(not contains(b.words, w) for w in a.title_words)
    b_names_more = any(not contains(a.words, w) for w in b.title_words)
    return not (a_names_more and b_names_more)


class _Clusters:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def plan_root(
    docs: Iterable[MemoryDocument],
    *,
    root: str,
    capacity: int,
    now_ms: float | None = None,
    usage: Mapping[str, UsageStats] | None = None,
    stale: Mapping[str, str] | None = None,
    team: bool = False,
) -> ConsolidationPlan:
    """The consolidation of one root's memories.

    `stale`: path → reason for the root's stale memories (`staleness.py`);
    `usage`: the state store's statistics, if any; `team`: a team root, only
    reported on.
    """
    planner = _Planner(
        root=root,
        capacity=capacity,
        now_ms=time.time() * 1000 if now_ms is None else now_ms,
        usage=usage or {},
        stale=stale or {},
        team=team,
    )
    return planner.run(docs)


class _Planner:
    """One plan's working state; each step is one method, in the order they run."""

    def __init__(
        self,
        *,
        root: str,
        capacity: int,
        now_ms: float,
        usage: Mapping[str, UsageStats],
        stale: Mapping[str, str],
        team: bool,
    ) -> None:
        self.root, self.capacity, self.now_ms = root, capacity, now_ms
        self.usage, self.stale, self.team = usage, stale, team
        self.memories: list[_Memory] = []
        self.vocabulary = Vocabulary()
        self.duplicate_edges: list[tuple[int, int]] = []
        self.update_edges: list[tuple[int, int]] = []  # (older, newer)
        # Verdicts too weak to act on unattended: (older, newer, kind, reason), reported.
        self.undecided: list[tuple[int, int, str, str]] = []
        self.set_aside = 0  # verdicts between memories whose titles name different things
        self.pairs = 0
        self.archives: dict[int, Archive] = {}
        self.rewrites: dict[int, Rewrite] = {}
        self.notices: list[Notice] = []
        self.elapsed: dict[str, float] = {}
        self._clock = time.perf_counter()

    def _lap(self, name: str) -> None:
        now = time.perf_counter()
        self.elapsed[name] = round((now - self._clock) * 1000, 3)
        self._clock = now

    def run(self, docs: Iterable[MemoryDocument]) -> ConsolidationPlan:
        self.memories, self.vocabulary = _orient(docs, self.team)
        self._lap("orient")
        self.gather()
        self._lap("gather")
        self.supersede()
        self.merge()
        self._lap("consolidate")
        self.prune()
        self._lap("prune")
        if self.team:  # a team root is only reported on
            self.notices.extend(
                Notice(a.path, "protected", f"team memory, left as is: would be {a.cause}")
                for a in self.archives.values()
            )
            self.archives, self.rewrites = {}, {}
        return ConsolidationPlan(
            root=self.root,
            capacity=self.capacity,
            before=len(self.memories),
            rewrites=tuple(self.rewrites[i] for i in sorted(self.rewrites)),
            archives=tuple(sorted(self.archives.values(), key=lambda a: (a.cause, a.path))),
            notices=tuple(sorted(self.notices, key=lambda x: (x.kind, x.path))),
            gather=GatherFigures(
                len(self.memories),
                self.pairs,
                len(self.duplicate_edges),
                len(self.update_edges),
                self.set_aside,
                self.elapsed,
            ),
        )

    # -- gather ----------------------------------------------------------------------

    def gather(self) -> None:
        """Judge the candidate pairs, the newer memory as the new one."""
        memories = self.memories
        keys = [m.title_key for m in memories]
        found = candidate_pairs([m.words for m in memories], keys, len(self.vocabulary))
        for i, j in sorted(set(found) | _linked_pairs(memories)):
            a, b = memories[i], memories[j]
            older, newer = (i, j) if a.newness() < b.newness() else (j, i)
            # The writer's links (docs/writing.md): `supersedes`, a correction a model
            # confirmed, whatever the titles say; `maybeSupersedes`, a lean of the rules it
            # could not settle — reported when they still lean so, never acted on.
            linked = links(memories[newer].doc, memories[older].doc, "supersedes")
            leaned = links(memories[newer].doc, memories[older].doc, MAYBE_SUPERSEDES_KEY)
            if not (
                linked
                or leaned
                or _same_subject(a, b, "update")
                or _same_subject(a, b, "duplicate")
            ):
                self.set_aside += 1  # no verdict could be acted on: see _same_subject
                continue
            self.pairs += 1
            verdict = judge(MemoryText.of(memories[newer].doc), MemoryText.of(memories[older].doc))
            if verdict.kind == "independent":
                continue
            corrects = (
                linked
                and verdict.kind == "update"
                and verdict.judgement is not None
                and verdict.judgement.replaces_value
            )
            reworded = (
                verdict.kind == "update"
                and not verdict.decided
                and a.title_key == b.title_key
                and verdict.judgement is not None
                and not any(
                    r.valued for c in verdict.judgement.changes for r in c.comparison.regions
                )
                and verdict.reason not in PERHAPS_CORRECTED
            )
            if reworded:
                # One title, no value changed, only a word or two: a merge keeps every line
                # of both, so nothing is lost whichever it was. Not a lean that reads the
                # newer as perhaps correcting the older ("… at most once a day" / "… at least
                # once a day", "Sam was the tech lead"): merged, the two lines stood side by
                # side unmarked; reported instead.
                verdict = replace(verdict, kind="duplicate")
            judged = verdict.judgement
            left_out = judged.left_out if judged is not None else ()
            # ... or a statement of its own, with a value or in plain words ("The staging
            # cache is now redis-stg-4" / a note of the staging cache and database).
            more = judged is not None and holds_more(
                MemoryText.of(memories[older].doc), MemoryText.of(memories[newer].doc), judged
            )
            if verdict.kind == "update" and (left_out or more) and (corrects or verdict.decided):
                # The newer leaves out a value the older states besides the one it changes
                # ("port 6432" / "…at db-test-2.internal, port 5433"): archiving the older
                # would take that value out of recall. Reported, left as is.
                what = left_out[0] if left_out else "a statement of the older"
                why = f"{verdict.reason}; the newer leaves out {what}"
                self.undecided.append((older, newer, verdict.kind, why))
            elif corrects:
                self.update_edges.append((older, newer))  # newer wins; the older is archived
            elif (
                leaned
                and verdict.kind == "update"
                and not (
                    verdict.decided and _same_subject(memories[newer], memories[older], "update")
                )
            ):
                # The writer's lean: superseding takes a fact out of recall, only on a
                # settled verdict between memories of one subject (a shared subject word is
                # not one). Settled now but under other titles, it is still reported.
                self.undecided.append((older, newer, verdict.kind, verdict.reason))
            elif not _same_subject(memories[newer], memories[older], verdict.kind):
                self.set_aside += 1  # taken as independent: see _same_subject
            elif verdict.kind == "duplicate" and not verdict.decided and a.title_key != b.title_key:
                # Perhaps the same fact in other words, under two titles: merging could join
                # two facts the zero-loss rule keeps apart; reported, left as is.
                self.undecided.append((older, newer, verdict.kind, verdict.reason))
            elif verdict.kind == "update" and not verdict.decided:
                # Superseding takes a fact out of recall: only on a settled verdict.
                # A merge loses nothing (every distinct line is kept), so a duplicate
                # near its threshold is still merged.
                self.undecided.append((older, newer, verdict.kind, verdict.reason))
            elif verdict.kind == "duplicate":
                self.duplicate_edges.append((older, newer))
            else:
                self.update_edges.append((older, newer))

    # -- consolidate -------------------------------------------------------------------

    def supersede(self) -> None:
        """Newer wins on a changed fact; older duplicates of the old fact go with it."""
        memories = self.memories
        newer_of: dict[int, int] = {}
        for older, newer in self.update_edges:
            current = newer_of.get(older)
            if current is None or memories[newer].newness() > memories[current].newness():
                newer_of[older] = newer
        duplicates_of: dict[int, list[int]] = defaultdict(list)
        for a, b in self.duplicate_edges:
            duplicates_of[a].append(b)
            duplicates_of[b].append(a)
        frontier = sorted(newer_of)
        while frontier:
            old = frontier.pop()
            winner = newer_of[old]
            for other in duplicates_of[old]:
                if (
                    other not in newer_of
                    and other != winner
                    and memories[other].newness() < memories[winner].newness()
                ):
                    newer_of[other] = winner
                    frontier.append(other)

        def newest(i: int) -> int:
            seen = {i}
            while i in newer_of and newer_of[i] not in seen:
                i = newer_of[i]
                seen.add(i)
            return i

        supersedes: dict[int, list[int]] = defaultdict(list)
        for old in sorted(newer_of):
            winner = newest(old)
            m, w = memories[old], memories[winner]
            if m.protected:
                self.notices.append(
                    Notice(
                        m.path,
                        "protected",
                        f"{m.protected}; a newer memory changes its fact: {w.doc.relative_path}",
                    )
                )
                continue
            self.archives[old] = Archive(
                m.path,
                "superseded",
                f"newer wins: {w.doc.relative_path} changes this fact",
                into=w.path,
            )
            if not w.protected:
                supersedes[winner].append(old)
        for winner, olds in supersedes.items():
            rel = tuple(memories[o].doc.relative_path for o in sorted(olds))
            self.rewrites[winner] = Rewrite(memories[winner].path, None, supersedes=rel)

    def merge(self) -> None:
        """Each duplicate cluster of what remains into its newest unprotected member."""
        memories = self.memories
        clusters = _Clusters(len(memories))
        for a, b in self.duplicate_edges:
            if a not in self.archives and b not in self.archives:
                clusters.union(a, b)
        groups: dict[int, list[int]] = defaultdict(list)
        for i in range(len(memories)):
            if i not in self.archives:
                groups[clusters.find(i)].append(i)
        for members in groups.values():
            if len(members) >= 2:
                self._merge_cluster(members)

    def _merge_cluster(self, members: list[int]) -> None:
        memories = self.memories
        protected = [i for i in members if memories[i].protected]
        for i in protected:
            others = ", ".join(memories[j].doc.relative_path for j in members if j != i)
            self.notices.append(
                Notice(
                    memories[i].path, "protected", f"{memories[i].protected}; duplicates: {others}"
                )
            )
        kept = []
        newest_first = sorted(
            (i for i in members if not memories[i].protected),
            key=lambda i: memories[i].newness(),
            reverse=True,
        )
        for i in newest_first:
            holder = next(
                (p for p in protected if covers(memories[p].doc.body, memories[i].doc.body)), None
            )
            if holder is None:
                kept.append(i)
                continue
            self.archives[i] = Archive(
                memories[i].path,
                "covered",
                f"every line is already in {memories[holder].doc.relative_path}"
                f" ({memories[holder].protected})",
                into=memories[holder].path,
            )
        if len(kept) < 2:
            return
        target, sources = kept[0], kept[1:]
        merged = merge_bodies(memories[target].doc.body, [memories[s].doc.body for s in sources])
        earlier = self.rewrites.get(target)
        self.rewrites[target] = Rewrite(
            memories[target].path,
            merged.body if merged.added else None,
            merged_from=tuple(memories[s].path for s in sources),
            added_lines=merged.added,
            supersedes=earlier.supersedes if earlier else (),
            reason=f"merged {len(sources)} duplicate(s) into the newest",
        )
        for s in sources:
            self.archives[s] = Archive(
                memories[s].path,
                "merged",
                f"duplicate of {memories[target].doc.relative_path}; its distinct lines kept there",
                into=memories[target].path,
            )

    # -- prune -------------------------------------------------------------------------

    def prune(self) -> None:
        """Archive the lowest-retention memories beyond the capacity; report the stale."""
        memories = self.memories
        day = datetime.fromtimestamp(self.now_ms / 1000, timezone.utc).date()
        scores: dict[int, Retention] = {}
        for i, m in enumerate(memories):
            facts = RetentionFacts.of(m.doc, stale=self.stale.get(m.path), today=day)
            if m.protected != facts.protected:
                facts = replace(facts, protected=m.protected)
            scores[i] = retention(facts, self.usage.get(m.path, NO_USAGE), self.now_ms)
        index_of = {m.path: i for i, m in enumerate(memories)}
        for target, rewrite in self.rewrites.items():
            # A merged memory holds its cluster's knowledge: it keeps the best retention.
            cluster = [target, *(index_of[p] for p in rewrite.merged_from)]
            best = scores[max(cluster, key=lambda i: scores[i].score)]
            scores[target] = replace(best, path=memories[target].path)
        remaining = [scores[i] for i in range(len(memories)) if i not in self.archives]
        capacity_plan = plan_capacity(remaining, self.capacity)
        for r in capacity_plan.archive:
            i = index_of[r.path]
            self.archives[i] = Archive(
                r.path,
                "capacity",
                f"over the capacity of {self.capacity}: {r.why}",
                retention=r.score,
            )
        if capacity_plan.protected_over:
            self.notices.append(
                Notice(
                    self.root,
                    "over-capacity",
                    f"{capacity_plan.protected_over} protected memories beyond the capacity of"
                    f" {self.capacity}: none of them can be archived",
                )
            )
        for m in memories:
            if m.path in self.stale:
                self.notices.append(Notice(m.path, "stale", self.stale[m.path]))
        for older, newer, kind, reason in self.undecided:
            if older in self.archives or newer in self.archives:
                continue
            self.notices.append(
                Notice(
                    memories[older].path,
                    "possible",
                    f"may be {'a duplicate of' if kind == 'duplicate' else 'changed by'}"
                    f" {memories[newer].doc.relative_path} ({reason}); left as is",
                )
            )
