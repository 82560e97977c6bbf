"""The memory network of one set of memories, built from scratch or kept up to date.

Nodes are memories (by path) and rare keywords. Edges, each with a kind:

- `link`, `wikilink`, `related`, `supersedes`: what a memory writes (`links`),
  resolved to the memory it names — path links within the memory's own root,
  titles in its own root first, then in any;
- `mention`: a memory's body writes another memory's title (an unlinked
  mention: "ask Priya Raman" where `Priya Raman` is a memory's title);
- `keyword`: two memories hold the same rare identifier or name (`keywords`),
  through the keyword's node;
- `coUse`: memories a host's model used together (given by the feedback
  statistics, `set_co_use`).

Every edge can be walked both ways, with a weight per direction
(`NetworkParams`): following what a memory's author linked to is stronger
evidence than the link seen from its target; a superseded memory leads
strongly to the memory that replaced it and weakly back.

An update touches only what one memory changes: its own links, keywords and
mentions, the links of memories that named it (by path or title) and, when its
title changes, the memories that mention the old or new title — a title that
appears is looked for in the bodies already there, which may be left for later
(`mention_budget_s`, `settle_mentions`): bodies are read again for it, their
mention forms are not kept.

One job in one module past the usual size: keeping the edges of a set of
memories right under change. Its indexes (keys, referrers, postings, titles,
mentions, cached steps) are updated together or not at all; split, each part
would need the others' insides.
"""

from __future__ import annotations

import math
import sys
import time
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.facts.newer import MAYBE_SUPERSEDES_KEY
from memory_recall.server.network.holders import Holders, held, hold, release, size
from memory_recall.server.network.keywords import keyword_candidates
from memory_recall.server.network.links import (
    LinkTarget,
    body_links,
    front_matter_links,
    path_key,
    prose,
    title_keys,
    without_destinations,
)
from memory_recall.server.network.mentions import (
    MentionPattern,
    anchor,
    mention_bits,
    mention_form,
    mentionable,
    mentions,
    title_bits,
    units,
)
from memory_recall.server.pacing import paced
from memory_recall.server.tokens import CJK_CHAR, normalize

EdgeKind = Literal["link", "wikilink", "related", "supersedes", "mention", "keyword", "coUse"]
Direction = Literal["forward", "backward"]


@dataclass(frozen=True)
class NetworkParams:
    """Edge weights and rarity, chosen before any measurement (see the README figures).

    Weights are per direction: `forward` follows an edge as its source wrote it,
    `backward` from its target. They are multiplied along a path with the hop
    decay (`activation`).
    """

    # An author's link says "read this too": the strongest evidence there is.
    link_forward: float = 1.0
    link_backward: float = 0.5
    related: float = 1.0  # `related` says it of both ends
    # B supersedes A: a question about A should reach B (the current fact);
    # from B, the outdated A is rarely what is wanted.
    superseded_to_new: float = 1.0
    new_to_superseded: float = 0.2
    # A mention is a link the author did not mark: a little weaker.
    mention_forward: float = 0.8
    mention_backward: float = 0.4
    # Two memories sharing a keyword held by only these two; a keyword held by
    # more memories says less about any pair of them (weight / sqrt(df - 1)).
    keyword: float = 0.4
    # A keyword (or a mentioned title) is rare when held by at most this share
    # of the memories, and never by more than `max_keyword_df` (at least 2).
    keyword_df_share: float = 0.02
    max_keyword_df: int = 8
    # Used together once is a hint; three times is as strong as a link.
    co_use: float = 0.8
    co_use_saturation: int = 3
    # A memory linking to many others (an index page) passes less to each:
    # weights from it are divided by sqrt(its number of explicit links).
    fan_out_exponent: float = 0.5


DEFAULT_NETWORK_PARAMS = NetworkParams()


@dataclass(frozen=True)
class NetworkDocument:
    """What the network reads of one memory."""

    path: str
    relative_path: str
    root: int
    title: str
    description: str
    body: str
    related: tuple[str, ...] = ()
    supersedes: tuple[str, ...] = ()

    @classmethod
    def of(
        cls,
        doc: MemoryDocument,
        *,
        related: Iterable[str] | None = None,
        supersedes: Iterable[str] | None = None,
    ) -> NetworkDocument:
        """What the network reads of a memory; its links from its own front matter
        unless given (an evaluation corpus keeps them beside the text)."""
        if related is None:
            related = doc.paths_of("related")
        if supersedes is None:
            # A correction the writer only leaned to (`maybeSupersedes`) is reached the same
            # way: a question that finds the older note brings the newer one beside it.
            supersedes = (*doc.paths_of("supersedes"), *doc.paths_of(MAYBE_SUPERSEDES_KEY))
        return cls(
            doc.path,
            doc.relative_path,
            doc.root_index,
            doc.title,
            doc.description,
            doc.body,
            tuple(related),
            tuple(supersedes),
        )


@dataclass(frozen=True, slots=True)
class Neighbour:
    """One step from a memory: where it leads, how strongly, and why."""

    path: str
    weight: float
    kind: EdgeKind
    direction: Direction
    keyword: str | None = None  # the shared keyword or the mentioned title


@dataclass
class _Entry:
    doc: NetworkDocument
    links: tuple[LinkTarget, ...]
    keywords: tuple[str, ...]  # distinct, sorted
    keys: tuple[str, ...]  # the path and title keys it answers to
    mentions: frozenset[str]  # title keys its body mentions
    title: str | None  # its title in mention form, when it can be mentioned
    # Its body's bits (`mention_bits` of its mention form, code and links left out):
    # which titles it may mention. The mention form itself is not kept (a second copy of
    # every body); a title that appears is looked for in the bodies its bits allow.
    words: int = 0


@dataclass
class _TitleScan:
    """A title that appeared, looked for in the bodies that were there (`settle_mentions`):
    the memories of `MemoryNetwork._seen` up to `end`."""

    pattern: MentionPattern  # on a body's normal prose
    bits: int  # what a body's bits must hold to mention it (`title_bits`)
    end: int  # how many of `_seen` were there when it appeared
    at: int = 0  # how many of them were looked at


@dataclass
class MemoryNetwork:
    """The network of a set of memories: `build`, then `upsert`/`remove` per change."""

    params: NetworkParams = DEFAULT_NETWORK_PARAMS
    _entries: dict[str, _Entry] = field(default_factory=dict)
    # (root, key) → memories answering to it; key alone → in any root.
    # (Most keys and keywords are one memory's: these two maps and `_postings` keep that
    # memory's path itself, a set only from the second holder on: network/holders.py.)
    _by_key: dict[tuple[int, str], Holders] = field(default_factory=dict)
    _by_key_any: dict[str, Holders] = field(default_factory=dict)
    # key → memories whose links name it (resolved or not yet).
    _referrers: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    # Resolved explicit edges: source → target → kinds, and target → sources.
    _out: dict[str, dict[str, set[str]]] = field(default_factory=dict)
    _in: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    _postings: dict[str, Holders] = field(default_factory=dict)
    # Mentionable titles (their mention form, stripped) by anchor; title → the
    # memories holding it, → the memories mentioning it.
    _titles_by_anchor: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    # The first characters of CJK anchors (with how many anchors start with each):
    # where a body's CJK pairs are worth looking at.
    _cjk_starts: Counter[str] = field(default_factory=Counter)
    _title_holders: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    _mentioned_by: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    _co_use: dict[str, dict[str, float]] = field(default_factory=dict)
    # Titles that appeared and are still looked for in the bodies already there, oldest
    # first. None: every update finishes its scans; a number of seconds: an update does at
    # most that much of them, and `settle_mentions` the rest (the daemon's recall path).
    _scans: dict[str, _TitleScan] = field(default_factory=dict)
    # Scans stopped once they found more mentioners than a rare title has (`_enough`): the
    # title gives no mention edge, whoever else mentions it. Taken up again, from the
    # start, when its mentioners fall below that (`_unregister`).
    _stopped: dict[str, _TitleScan] = field(default_factory=dict)
    # Every memory registered, in order, again when updated (what scans walk: a path list
    # per title that appears would be a copy of every path per write in a burst of them);
    # made afresh from `_entries` when no scan walks it and it is twice their number.
    _seen: list[str] = field(default_factory=list)
    mention_budget_s: float | None = None
    # Each memory's steps, computed when first asked for (or all ahead, `warm`),
    # and again after a change made them stale (`_touched`).
    _steps: dict[str, tuple[Neighbour, ...]] = field(default_factory=dict)

    # -- building and updating -------------------------------------------------

    @classmethod
    def build(
        cls, docs: Iterable[NetworkDocument], params: NetworkParams = DEFAULT_NETWORK_PARAMS
    ) -> MemoryNetwork:
        """The network of `docs` from scratch: every memory read once, then linked."""
        network = cls(params)
        # Built in a thread beside the recalls: every loop paced (server.pacing).
        entries = [network._read(doc) for doc in paced(docs)]
        for entry in paced(entries):
            network._register(entry)
        for entry in paced(entries):  # mentions need every title first
            network._read_mentions(entry)
        for entry in paced(entries):
            network._link(entry.doc.path)
        return network

    def warm(self) -> None:
        """Compute every memory's steps ahead (off a recall's path: after a build)."""
        for path in paced(list(self._entries)):
            self.neighbours(path)

    def upsert(self, doc: NetworkDocument) -> None:
        """Add or replace one memory, re-linking only what it touches."""
        limit = self.rare_limit()
        touched = self._touched(doc.path)
        old = self._entries.get(doc.path)
        old_keys = old.keys if old else ()
        old_title = old.title if old else None
        if old is not None:
            self._unregister(old)
        entry = self._read(doc)
        self._register(entry)
        self._read_mentions(entry)
        if entry.title != old_title:
            if old_title is not None:
                self._title_left(old_title)
            if entry.title is not None:
                self._title_came(entry.title)
        self._link(doc.path)
        for key in {*old_keys, *entry.keys}:
            for source in list(self._referrers.get(key, ())):
                if source != doc.path:
                    self._link(source)
        self._forget_steps(touched, limit)
        self._forget_steps(self._touched(doc.path), limit)
        self.settle_mentions(self.mention_budget_s)

    def remove(self, path: str) -> None:
        """Forget one memory and every edge to or from it."""
        entry = self._entries.get(path)
        if entry is None:
            return
        limit = self.rare_limit()
        touched = self._touched(path)
        self._unregister(entry)
        if entry.title is not None:
            self._title_left(entry.title)
        for key in entry.keys:
            for source in list(self._referrers.get(key, ())):
                self._link(source)
        self._co_use.pop(path, None)
        for partners in self._co_use.values():
            partners.pop(path, None)
        self._forget_steps(touched, limit)
        self.settle_mentions(self.mention_budget_s)

    def _touched(self, path: str) -> set[str]:
        """The memories whose steps may change when `path` changes: its neighbours,
        the holders of its rare keywords, the memories naming it or answering to
        its keys, the holders and mentioners of its title and of the titles it
        mentions. Taken before a change and after it, both ends of every changed
        edge (and of every edge whose weight changed) are among them."""
        entry = self._entries.get(path)
        if entry is None:
            return set()
        out = {path, *(step.path for step in self.neighbours(path))}
        limit = self.rare_limit()
        for keyword in entry.keywords:
            holders = held(self._postings, keyword)
            if len(holders) <= limit + 1:  # rare before or after this memory
                out.update(holders)
        for key in entry.keys:
            out.update(self._referrers.get(key, ()))
            out.update(held(self._by_key_any, key))
        if entry.title is not None:
            out.update(self._title_holders.get(entry.title, ()))
            out.update(self._mentioned_by.get(entry.title, ()))
        for title in entry.mentions:  # how rare a mention is depends on all its mentioners
            out.update(self._title_holders.get(title, ()))
            out.update(self._mentioned_by.get(title, ()))
        return out

    def _forget_steps(self, paths: Iterable[str], limit_before: int) -> None:
        if self.rare_limit() != limit_before:  # rarity itself moved: every weight may
            self._steps.clear()
            return
        for path in paths:
            self._steps.pop(path, None)

    def set_co_use(self, counts: Mapping[tuple[str, str], int]) -> None:
        """Replace the co-use edges: how often each pair of memories was used together."""
        self._steps.clear()
        self._co_use = {}
        for (a, b), count in counts.items():
            if a == b or count <= 0:
                continue
            weight = self.params.co_use * min(1.0, count / self.params.co_use_saturation)
            self._co_use.setdefault(a, {})[b] = weight
            self._co_use.setdefault(b, {})[a] = weight

    def set_co_use_pair(self, a: str, b: str, count: int) -> None:
        """Set how often one pair was used together (a feedback), re-linking only the pair."""
        if a == b:
            return
        if count <= 0:
            self._co_use.get(a, {}).pop(b, None)
            self._co_use.get(b, {}).pop(a, None)
        else:
            weight = self.params.co_use * min(1.0, count / self.params.co_use_saturation)
            self._co_use.setdefault(a, {})[b] = weight
            self._co_use.setdefault(b, {})[a] = weight
        self._steps.pop(a, None)
        self._steps.pop(b, None)

    def co_use_pairs(self) -> int:
        return sum(len(v) for v in self._co_use.values()) // 2

    def _read(self, doc: NetworkDocument) -> _Entry:
        links = (
            *body_links(doc.relative_path, doc.body),
            *front_matter_links(doc.relative_path, doc.related, doc.supersedes),
        )
        keys = (path_key(doc.relative_path), *title_keys(doc.title, doc.relative_path))
        title = mention_form(doc.title).strip()
        # A memory without a name is titled by its type: that names nothing.
        untitled = doc.title in {"user", "feedback", "project", "reference"}
        found = keyword_candidates(doc.title, doc.description, without_destinations(doc.body))
        # A sorted tuple of interned strings: only ever iterated, and a frozenset of twenty
        # is ten times the size; the same keyword in many memories is one string.
        keywords = tuple(sorted(map(sys.intern, found)))
        return _Entry(
            doc=doc,
            links=links,
            keywords=keywords,
            keys=keys,
            mentions=frozenset(),
            title=title if mentionable(title, untitled) else None,
        )

    def _register(self, entry: _Entry) -> None:
        path = entry.doc.path
        self._entries[path] = entry
        self._seen.append(path)
        for key in entry.keys:
            hold(self._by_key, (entry.doc.root, key), path)
            hold(self._by_key_any, key, path)
        for link in entry.links:
            for key in link.keys:
                self._referrers[key].add(path)
        for keyword in entry.keywords:
            hold(self._postings, keyword, path)
        if entry.title is not None:
            self._title_holders[entry.title].add(path)
            self._titles_by_anchor[anchor(entry.title)].add(entry.title)
            key = anchor(entry.title)
            if CJK_CHAR.search(key):
                self._cjk_starts[key[0]] += 1

    def _unregister(self, entry: _Entry) -> None:
        path = entry.doc.path
        del self._entries[path]
        for key in entry.keys:
            release(self._by_key, (entry.doc.root, key), path)
            release(self._by_key_any, key, path)
        for link in entry.links:
            for key in link.keys:
                _discard(self._referrers, key, path)
        for keyword in entry.keywords:
            release(self._postings, keyword, path)
        for title in entry.mentions:
            _discard(self._mentioned_by, title, path)
            if title in self._stopped and len(self._mentioned_by.get(title, ())) < self._enough:
                scan = self._stopped.pop(title)  # from the start: what it passed may be gone
                scan.at, scan.end = 0, len(self._seen)
                self._scans[title] = scan
        if entry.title is not None:
            key = anchor(entry.title)
            if CJK_CHAR.search(key):
                self._cjk_starts[key[0]] -= 1
                if not self._cjk_starts[key[0]]:
                    del self._cjk_starts[key[0]]
            _discard(self._title_holders, entry.title, path)
            if entry.title not in self._title_holders:
                _discard(self._titles_by_anchor, anchor(entry.title), entry.title)
        for target in self._out.pop(path, {}):
            _discard(self._in, target, path)
        for source in list(self._in.pop(path, ())):
            targets = self._out.get(source)
            if targets is not None:
                targets.pop(path, None)

    def _resolve(self, root: int, link: LinkTarget) -> str | None:
        for key in link.keys:
            here = held(self._by_key, (root, key))
            if here:
                return min(here)
            if key.startswith("title:"):
                anywhere = held(self._by_key_any, key)
                if anywhere:
                    return min(anywhere)
        return None

    def _link(self, path: str) -> None:
        """(Re)resolve the explicit links of one memory."""
        entry = self._entries.get(path)
        for target in self._out.pop(path, {}):
            _discard(self._in, target, path)
        if entry is None:
            return
        targets: dict[str, set[str]] = {}
        for link in entry.links:
            resolved = self._resolve(entry.doc.root, link)
            if resolved is not None and resolved != path:
                targets.setdefault(resolved, set()).add(link.kind)
        if targets:
            self._out[path] = targets
            for target in targets:
                self._in[target].add(path)

    def _read_mentions(self, entry: _Entry) -> None:
        """The titles (of other memories) that one body writes, from its mention form,
        read once here and not kept: only its word bits are."""
        form = mention_form(prose(entry.doc.body))
        entry.words = mention_bits(form)
        anchors = self._titles_by_anchor.keys() & units(form, self._cjk_starts.keys())
        if not anchors:
            entry.mentions = frozenset()
            return
        own = entry.title
        entry.mentions = frozenset(
            title
            for anchor in anchors
            for title in self._titles_by_anchor[anchor]
            if title != own and mentions(title, form)
        )
        for title in entry.mentions:
            self._mentioned_by[title].add(entry.doc.path)

    def _title_left(self, title: str) -> None:
        """A memory no longer holds `title`. While another does, every other body's
        mentions of it stand (the one that left was a holder, not a mentioner, and its own
        body's were read again); with none left, nothing mentions it."""
        if title in self._title_holders:
            return
        self._scans.pop(title, None)
        self._stopped.pop(title, None)
        for path in self._mentioned_by.pop(title, ()):
            entry = self._entries.get(path)
            if entry is not None:
                entry.mentions = entry.mentions - {title}

    def _title_came(self, title: str) -> None:
        """A memory holds `title` now. Held before, its mentions were read with every body;
        new, it may be written in any body already there: look (`settle_mentions`), in the
        bodies whose bits hold the title's."""
        holders = self._title_holders[title]
        if len(holders) > 1 or title in self._scans or title in self._stopped:
            return
        self._scans[title] = _TitleScan(MentionPattern(title), title_bits(title), len(self._seen))

    @property
    def mentions_pending(self) -> int:
        """How many titles that appeared are still looked for in earlier bodies."""
        return len(self._scans)

    def settle_mentions(self, budget_s: float | None = None) -> bool:
        """Look for the titles that appeared in the bodies that were there, for at most
        `budget_s` seconds (None: all of it); True when none is left to look for."""
        deadline = math.inf if budget_s is None else time.perf_counter() + budget_s
        while self._scans:
            title, scan = next(iter(self._scans.items()))
            if not self._scan_title(title, scan, deadline):
                return False
            self._scans.pop(title, None)
        if len(self._seen) > 2 * len(self._entries) + 64:
            self._seen = list(self._entries)
        return True

    @property
    def _enough(self) -> int:
        """Mentioners past which a title is never rare (`rare_limit`, whatever the size)."""
        return max(2, self.params.max_keyword_df) + 1

    def _scan_title(self, title: str, scan: _TitleScan, deadline: float) -> bool:
        """Go on with one title's scan until the deadline; True when it is done — every
        body looked at, or enough mentioners found that it gives no edge (then it is kept
        in `_stopped`, to be taken up again)."""
        holders = self._title_holders.get(title, ())
        found: list[str] = []
        bits, paths = scan.bits, self._seen
        clock = time.perf_counter
        while scan.at < scan.end:
            if len(self._mentioned_by.get(title, ())) >= self._enough:
                self._stopped[title] = scan
                break
            if scan.at % 16 == 0 and clock() > deadline:
                break
            path = paths[scan.at]
            scan.at += 1
            entry = self._entries.get(path)
            if entry is None or path in holders or title in entry.mentions:
                continue
            if entry.words & bits != bits:
                continue
            if scan.pattern.found_in(normalize(prose(entry.doc.body))):
                entry.mentions = entry.mentions | {title}
                self._mentioned_by[title].add(path)
                found.append(path)
        if found:  # the mention's edges, and how rare it is for every other mentioner
            for path in {*holders, *self._mentioned_by[title]}:
                self._steps.pop(path, None)
        return scan.at >= scan.end or title in self._stopped

    # -- reading ------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._entries)

    def __contains__(self, path: object) -> bool:
        return path in self._entries

    def document(self, path: str) -> NetworkDocument | None:
        entry = self._entries.get(path)
        return entry.doc if entry else None

    def rare_limit(self) -> int:
        """How many memories may hold a keyword (or mention a title) for it to be rare."""
        p = self.params
        return max(2, min(p.max_keyword_df, round(p.keyword_df_share * len(self._entries))))

    def keywords_of(self, path: str) -> frozenset[str]:
        """The rare keywords (shared, at most `max_keyword_df` holders) of one memory."""
        entry = self._entries.get(path)
        if entry is None:
            return frozenset()
        limit = self.rare_limit()
        return frozenset(k for k in entry.keywords if 2 <= len(held(self._postings, k)) <= limit)

    def edge_count(self) -> int:
        """Explicit edges, mention edges of rare titles, keyword memberships of rare keywords,
        co-use pairs: the edges `neighbours` walks."""
        explicit = sum(len(t) for t in self._out.values())
        limit = self.rare_limit()
        mentions = sum(
            len(holders) * n
            for title, holders in self._title_holders.items()
            if (n := len(self._mentioned_by.get(title, ()))) <= limit
        )
        keyword = sum(n for h in self._postings.values() if 2 <= (n := size(h)) <= limit)
        co_use = sum(len(p) for p in self._co_use.values()) // 2
        return explicit + mentions + keyword + co_use

    def neighbours(self, path: str) -> tuple[Neighbour, ...]:
        """Every step out of one memory, with its weight (before the hop decay)."""
        steps = self._steps.get(path)
        if steps is None:
            steps = self._steps[path] = tuple(self._neighbours(path))
        return steps

    def _neighbours(self, path: str) -> Iterator[Neighbour]:
        entry = self._entries.get(path)
        if entry is None:
            return
        p = self.params
        out = self._out.get(path, {})
        spread = max(1, len(out)) ** p.fan_out_exponent
        for target, kinds in out.items():
            yield _explicit(target, kinds, "forward", p, spread)
        incoming = self._in.get(path, ())
        gather = max(1, len(incoming)) ** p.fan_out_exponent
        for source in incoming:
            yield _explicit(source, self._out[source][path], "backward", p, gather)
        limit = self.rare_limit()
        for title in entry.mentions:
            holders = self._title_holders.get(title, ())
            df = len(self._mentioned_by.get(title, ()))
            if df <= limit:
                rarity = 1 / math.sqrt(max(1, df))
                for holder in holders:
                    if holder != path:
                        yield Neighbour(
                            holder, p.mention_forward * rarity, "mention", "forward", title
                        )
        if entry.title is not None:
            mentioning = self._mentioned_by.get(entry.title, ())
            if len(mentioning) <= limit:
                rarity = 1 / math.sqrt(max(1, len(mentioning)))
                for source in mentioning:
                    if source != path:
                        yield Neighbour(
                            source, p.mention_backward * rarity, "mention", "backward", entry.title
                        )
        for keyword in entry.keywords:
            sharing = held(self._postings, keyword)
            df = len(sharing)
            if 2 <= df <= limit:
                weight = p.keyword / math.sqrt(df - 1)
                for other in sharing:
                    if other != path:
                        yield Neighbour(other, weight, "keyword", "forward", keyword[3:])
        for partner, weight in self._co_use.get(path, {}).items():
            if partner in self._entries:
                yield Neighbour(partner, weight, "coUse", "forward")

    def explicit_edges(self) -> Iterator[tuple[str, str, str]]:
        """(source, target, kind) of every resolved explicit link: what a store persists."""
        for source, targets in self._out.items():
            for target, kinds in targets.items():
                for kind in sorted(kinds):
                    yield source, target, kind


_PRIORITY: tuple[EdgeKind, ...] = ("supersedes", "related", "link", "wikilink")


def _explicit(
    other: str, kinds: set[str], direction: Direction, p: NetworkParams, spread: float
) -> Neighbour:
    """The strongest of the explicit kinds linking a pair, in one direction."""
    best: tuple[float, EdgeKind] | None = None
    for kind in _PRIORITY:
        if kind not in kinds:
            continue
        if kind == "supersedes":
            weight = p.new_to_superseded if direction == "forward" else p.superseded_to_new
        elif kind == "related":
            weight = p.related
        else:
            weight = p.link_forward if direction == "forward" else p.link_backward
        if best is None or weight > best[0]:
            best = (weight, kind)
    assert best is not None
    return Neighbour(other, best[0] / spread, best[1], direction)


def _discard(index: dict[Any, set[Any]], key: object, value: object) -> None:
    values = index.get(key)
    if values is None:
        return
    values.discard(value)
    if not values:
        del index[key]
