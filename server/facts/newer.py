"""Newer wins at recall (docs/writing.md, "Newer wins at recall").

Two memories a recall would deliver may state one slot with two values: a correction
written in other words beside the old note (the rules kept both, unsure), or two notes
a user wrote months apart. Delivering both hands the agent a contradiction, and the old
value first when it ranks higher. So among the documents of a delivery, each pair is
judged with the write side's rules, the more recent memory as the new one: when they
are sure it changes the older one's slot, or a model confirmed it when it was written
(`supersedes`), the older is not delivered and the newer says which memory it
supersedes and when each was written. When the rules only lean so and the writer linked
the two unsure (`maybeSupersedes`), or the newer leaves out a value the older states
beside the one it changes, both are delivered and the newer says it perhaps corrects the
older: a lean is not a verdict, and a note that shares a subject word with
another ("Bob took over billing" beside "billing deploys use Kustomize") must not take
it out of the agent's sight. A short note the writer never judged (written by hand, by
another agent, pulled from a teammate) is marked the same way when the rules lean so and
its title and the older's say one subject.
"""

from __future__ import annotations

import datetime
import functools
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import regex
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.facts.judgement import (
    NAME_REPLACED,
    NAMED_ANEW,
    SAID_NARROWER,
    Judgement,
    MemoryText,
    holds_more,
    judge,
    read_memory,
)
from memory_recall.server.facts.slots import (
    BROADER,
    FLIPPED_BROADER,
    FLIPPED_NARROWER,
    NARROWER,
    QUALIFIED,
    UNQUALIFIED,
)
from memory_recall.server.facts.terms import read_terms
from memory_recall.server.facts.titles import title_is_derived
from memory_recall.server.tokens import normalize

# What of a memory is compared at recall: a delivered excerpt is at most 1,200
# characters; a long memory's opening says what it is about.
COMPARED_CHARS = 4_000
# A note this short states a fact or two: two such notes the writer never linked are
# still read as one correcting the other. Longer memories (session logs, runbooks) hold so
# many statements that one of them reads as another's slot changed by chance.
SHORT_NOTE_CHARS = 600
# The front-matter key the writer sets on an unsure update, as the parser reads it.
MAYBE_SUPERSEDES_KEY = "maybesupersedes"


@dataclass(frozen=True)
class Superseded:
    """An older memory a newer one replaces in this delivery."""

    older: MemoryDocument
    newer: MemoryDocument
    reason: str
    # False: the rules lean so and the writer linked the two, unsure; the older is
    # delivered too, the newer marked as perhaps correcting it.
    settled: bool = True

    @property
    def narrower(self) -> bool:
        """Whether the newer says a value of a narrower case (an exception, a qualifier, a
        narrower thing): both may hold, the older is not outdated by it."""
        return any(mark in self.reason for mark in _NARROWER_REASONS)

    @property
    def case(self) -> Case:
        """How the two relate where the rules leaned: the newer "narrower" (the older may
        still hold for the rest), "broader" (the older said of a narrower case, which may
        still hold for it: "For hotfixes, deploys need one approval" / "Deploys need three
        approvals"), or "" (the newer perhaps corrects the older)."""
        if self.narrower:
            return "narrower"
        return "broader" if any(mark in self.reason for mark in _BROADER_REASONS) else ""

    @property
    def older_date(self) -> str:
        return written_on(self.older)

    @property
    def newer_date(self) -> str:
        return written_on(self.newer)


# The judgement's reasons for a newer statement said of a narrower case than the older...
_NARROWER_REASONS = (NARROWER, FLIPPED_NARROWER, QUALIFIED, SAID_NARROWER)
# ... and for an older one said of a narrower case than the newer.
_BROADER_REASONS = (BROADER, UNQUALIFIED, FLIPPED_BROADER)
Case = Literal["", "narrower", "broader"]


def written_on(doc: MemoryDocument) -> str:
    """The day a memory was last written: its `updated` date, else its file's mtime."""
    updated = doc.date_of("updated")
    if updated is not None:
        return updated.isoformat()
    return (
        datetime.datetime.fromtimestamp(doc.mtime_ms / 1000, datetime.timezone.utc)
        .date()
        .isoformat()
    )


# A pair's verdict depends on their texts alone: a recall asks again for the pairs the
# last recalls judged (the same memories answer the same questions).
_judge = functools.lru_cache(maxsize=2048)(judge)


def read_ahead(docs: Iterable[MemoryDocument]) -> None:
    """Read now what judging these memories at recall will read (what is read is kept, by
    the memory's text; in a worker thread, recalls go first between statements). Reading
    the two memories of a fast phase is most of its time when they are new to the process
    (docs/performance.md, "A question asked for the first time")."""
    for doc in docs:
        read_memory(_text(doc))


def _newness(doc: MemoryDocument) -> tuple[str, float, str]:
    return (written_on(doc), doc.mtime_ms, doc.path)


def _text(doc: MemoryDocument) -> MemoryText:
    return MemoryText(doc.title, doc.description, doc.body[:COMPARED_CHARS], doc.type)


def _titled(doc: MemoryDocument) -> bool:
    """Whether a memory's title was given (not its body's first sentence)."""
    return not title_is_derived(doc.title, doc.body)


def title_key(title: str) -> str:
    return " ".join(regex.sub(r"[^\p{L}\p{M}\p{N}]+", " ", normalize(title)).split())


def links(source: MemoryDocument, target: MemoryDocument, key: str) -> bool:
    """Whether the writer linked `source` to `target` under front-matter `key`
    (`supersedes`, `MAYBE_SUPERSEDES_KEY`)."""
    return target.relative_path in source.paths_of(key)


def _short(doc: MemoryDocument) -> bool:
    return len(doc.body) <= SHORT_NOTE_CHARS


def _titles_share(a: MemoryDocument, b: MemoryDocument) -> bool:
    """Whether two titles share half the words of the shorter, values left out ("Staging
    database" / "Staging DB moved", "Node version" / "Node 22 upgrade"): perhaps one
    subject, so the pair is read. Not when a title is dated ("Session 2025-05-02: RTB
    dispute"): a dated note tells what happened then, and a later one follows it, it
    does not correct it."""
    first, second = _title_terms(a.title), _title_terms(b.title)
    if first is None or second is None or not first or not second:
        return False
    return 2 * len(first & second) >= min(len(first), len(second))


@functools.lru_cache(maxsize=4096)
def _title_terms(title: str) -> frozenset[str] | None:
    """A title's plain words (None for a dated title)."""
    terms = read_terms(title).terms
    if any(t.shape == "date" for t in terms):
        return None
    return frozenset(t.key for t in terms if not t.valued)


def _linked(a: MemoryDocument, b: MemoryDocument, key: str) -> bool:
    return links(a, b, key) or links(b, a, key)


def superseded(docs: Sequence[MemoryDocument]) -> dict[str, Superseded]:
    """Older path → what supersedes it, among `docs` (a delivery: a handful); an
    unsettled entry (`settled` False) hides nothing."""
    out: dict[str, Superseded] = {}
    replaced: dict[str, frozenset[str]] = {}  # per older hidden, the values replaced
    ordered = sorted(docs, key=_newness)
    for i, older in enumerate(ordered):
        for newer in reversed(ordered[i + 1 :]):
            settled_away = newer.path in out and out[newer.path].settled
            if newer.path == older.path or settled_away:
                continue
            # The writer's links, in either direction (the older of a linked pair may have
            # been updated since): `supersedes` a model confirmed, `maybeSupersedes` a
            # lean of the rules it could not settle.
            confirmed = _linked(newer, older, "supersedes")
            leaned = _linked(newer, older, MAYBE_SUPERSEDES_KEY)
            # Two titles given by hand that differ name two things unless the writer said
            # otherwise: a recall does not hide one on the rules' word alone. Such a pair
            # is not read at all (reading two memories new to the process is most of a
            # first-time question's fast phase), unless the newer is `unseen` (below).
            titled_apart = (
                title_key(older.title) != title_key(newer.title)
                and _titled(older)
                and _titled(newer)
            )
            # A newer note the writer never judged (no `created` date, which it always
            # writes: a note written by hand, by another agent, pulled from a teammate) is
            # judged here as the writer would have judged it, when both are short notes of
            # one subject ("Staging database" / "Staging DB moved"). A note the writer did
            # judge carries its verdict in its links.
            unseen = (
                not (confirmed or leaned)
                and newer.date_of("created") is None
                and _short(older)
                and _short(newer)
                and _titles_share(older, newer)
            )
            if titled_apart and not (confirmed or leaned or unseen):
                continue
            verdict = _judge(_text(newer), _text(older))
            # A lean the writer linked marks the older even when it changes no value the
            # rules point to ("Alice left the platform team" / "Alice is on the platform
            # team", "at most once a day" / "at least …"), and so does a name perhaps
            # replaced or given anew where a sentence opens on a note the writer never
            # judged ("Bob is the new on-call engineer" / "The on-call engineer is Alice"):
            # they mark, never hide.
            marks = (leaned and verdict.kind == "update" and not verdict.sure) or (
                unseen and verdict.reason in (NAME_REPLACED, NAMED_ANEW)
            )
            if verdict.kind != "update" or not (verdict.replaces_value or marks):
                continue
            # The newer may leave out a value the older states beside the one it changes
            # ("the test database port is now 6432" / "…at db-test-2.internal, port
            # 5433"), or in statements of its own ("The staging cache is now redis-stg-4"
            # / a list of the staging database, cache and owner): hiding the older would
            # take those values out of sight.
            # The writer linked the newer to several memories it perhaps corrects: it could
            # not tell which one it meant ("The owner is now Bob." beside two services'
            # owners), so the rules' verdict on one pair alone hides nothing.
            several = leaned and len(newer.paths_of(MAYBE_SUPERSEDES_KEY)) > 1
            settles = (verdict.sure and not titled_apart and not several) or confirmed
            if (
                settles
                and not verdict.left_out
                and not holds_more(_text(older), _text(newer), verdict)
            ):
                out[older.path] = Superseded(older, newer, verdict.reason)
                replaced[older.path] = _replaced_values(verdict)
                break
            # Both delivered, the newer marked as perhaps correcting the older: the writer's
            # links, a sure verdict that leaves out a value or crosses two titles, and the
            # rules' lean on a note the writer never judged. Not a lean between long
            # memories: they hold so many statements that one reads as another's slot
            # changed by chance.
            if older.path not in out and (confirmed or leaned or verdict.sure or unseen):
                out[older.path] = Superseded(older, newer, verdict.reason, settled=False)
    return _told_apart(out, replaced)


def _replaced_values(verdict: Judgement) -> frozenset[str]:
    return frozenset(t.key for c in verdict.changes for r in c.comparison.regions for t in r.old)


def _told_apart(
    out: dict[str, Superseded], replaced: dict[str, frozenset[str]]
) -> dict[str, Superseded]:
    """`out`, where one newer memory would hide two older ones titled by hand as two
    things and replaces different values of them, with neither hidden: "The owner is now
    Bob." beside the billing service's "The owner is Alice." and the search service's "The
    owner is Carol." does not say which it corrects (docs/writing.md, "Which memory a
    correction means"); hiding both took both owners out of sight. Both are delivered,
    marked. A note the writer made carries its doubt in its links (`several`, above);
    this is for one it never linked to both, written by hand or by another agent. Notes
    of the same old value ("Node 18" said twice), and a chain of corrections of one thing
    (untitled notes: "CI runs on Jenkins", "We moved CI to GitHub Actions", "CI now runs
    on Buildkite") are still hidden."""
    hidden: dict[str, list[Superseded]] = defaultdict(list)
    for entry in out.values():
        if entry.settled:
            hidden[entry.newer.path].append(entry)
    for entries in hidden.values():
        things = {title_key(e.older.title) for e in entries if _titled(e.older)}
        if len(things) > 1 and len({replaced[e.older.path] for e in entries}) > 1:
            for entry in entries:
                out[entry.older.path] = replace(entry, settled=False)
    return out
