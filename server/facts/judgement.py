"""A new memory against an old one: duplicate, update or independent, and how sure
(docs/writing.md, "The zero-loss rule").

- `update` (the same slot, another value): some statement of the new memory changes one
  statement of the old one (slots.py), and none states another subject. The changed
  statements are kept in `changes`, for the rewrite (rewrite.py) and the log.
- `duplicate`: the new memory says nothing the old one does not: no value, name or
  identifier of its own, the same polarity, most of its words in the old one.
- `independent`: anything else.

`sure` is what the writer acts on: only a sure `update` rewrites a file and only a sure
`duplicate` answers `unchanged`. An unsure verdict creates the new memory; its `kind`
says which way the rules lean, so that a duplicate or an update they could not settle
is linked to the old memory (`related`, `maybeSupersedes`) for consolidation, and may be
put to the semantic channel or a model (tiers.py), whose answers are checked against
these rules before they count.

One job past 500 lines: the reading of a memory (bounded when it cannot be related), the
search for the statement each new one answers, and the verdict all read the same
`Reading`, and the bound must judge exactly as the whole reading does. A note's reason
lines are found apart (rationale.py) and folded in here, after the verdict they follow.
"""

from __future__ import annotations

import bisect
import functools
import itertools
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import regex
from memory_recall.server.facts.asides import hashtags, time_words
from memory_recall.server.facts.changes import Change, said, written_change
from memory_recall.server.facts.headline import derive_description
from memory_recall.server.facts.lexicon import lexicon
from memory_recall.server.facts.rationale import (
    ReasonLine,
    blanked,
    reason_lines,
    said_alike,
)
from memory_recall.server.facts.replaced import read_replaced
from memory_recall.server.facts.restated import (
    QUALIFIER_WORDS,
    inserts_a_word,
    names_which,
    narrows,
    narrows_first,
    qualifies,
    scoped_inside,
)
from memory_recall.server.facts.slots import (
    ONE_MORE,
    OTHER_SUBJECT,
    QUALIFIED,
    UNQUALIFIED,
    Comparison,
    compare,
    compatible,
    dice,
)
from memory_recall.server.facts.statements import (
    Statement,
    iter_statements,
    says_something,
    split_statements,
)
from memory_recall.server.facts.terms import (
    STEM_CHARS,
    Term,
    Terms,
    capitals_mark_names,
    key_witness,
    opening_pronoun,
    read_terms,
    witness_forms,
)
from memory_recall.server.facts.titles import (
    named_by_title,
    same_given_title,
    settles,
    title_stems,
    under_one_title,
)
from memory_recall.server.facts.wording import (
    openings_alike_announced,
    placed_elsewhere,
    readdressed,
    swaps_a_word,
    switched_alike,
)
from memory_recall.server.pacing import paced
from memory_recall.server.tokens import normalize

Kind = Literal["duplicate", "update", "independent"]

# Two memories sharing less than this (Dice of all their terms) are unrelated, unless one
# statement of the old one holds most of the new one's terms: a line that changes one item
# of a long list ("We use pnpm 9 now" / "- Node 18 … - pnpm 8 as the package manager. …").
UNRELATED_BELOW = 0.15
RELATED_CONTAINED = 0.5
# A reworded duplicate: this much in common, or the new one's terms nearly all in the old.
DUPLICATE_AT_LEAST = 0.6
DUPLICATE_CONTAINED_AT_LEAST = 0.8
# Below this a duplicate is not even worth a link.
PARAPHRASE_AT_LEAST = 0.3
# Why a memory that says an old statement again and announces a change is linked to it.
RESTATED_AS_CHANGED = "its words said again, a change announced"
# ... and one that says it again with fewer of its values of a kind, or of a narrower thing.
FEWER_VALUES = "said again without values of a kind it names"
OF_A_HEADING = "a new value of what a heading names"
ADDED = "the same statement, a thing added after it"
SAID_NARROWER = "said again of a narrower thing"
SAID_WITH_A_WORD = "said again with a word of its own among its words"
OPENS_ALIKE = "opens as the old statement does, a change announced"
PLACED_ELSEWHERE = "places the old statement's subject elsewhere"
SWITCHED_ALIKE = "announces a change to a tool of the job the old statement's tool does"
CHANGE_OF_ITS_TOPIC = "announces a change of what the old memory speaks of"
READDRESSED = "announces a change to an address of the host or shape of the old one's"
WORD_SWAPPED = "said again with a word or two swapped, added or left out, or moved"
NAME_REPLACED = "perhaps a name replaced: the old one is not said, a word of its own opens"
NAMED_ANEW = "perhaps a name of its own: a word the old memory does not hold opens the new"
# The new statement changes two old statements alike: which it means is not said.
ALIKE = "a value of statements alike changed, which one is not said"


@dataclass(frozen=True)
class MemoryText:
    """The parts of a memory the judge reads."""

    title: str
    description: str
    body: str
    type: str = "project"


@dataclass(frozen=True)
class Judgement:
    kind: Kind
    sure: bool
    reason: str
    # Dice of the two memories' terms, 0..1; for an old memory read only until it was sure
    # to share too little with the new one (`_most_in_common`), the most it could be.
    similarity: float
    changes: tuple[Change, ...] = ()
    # New statements that restate none of the old memory (kept by the rewrite).
    additions: tuple[Statement, ...] = ()
    # An unsure lean a model confirmed: linked as definite (`supersedes`), never acted on.
    confirmed: bool = False
    # Lines of the new memory the rewrite adds at the old one's end, as written: a reason or
    # a use the old memory does not give (`_with_reasons`: "**Why:** …").
    appended: tuple[str, ...] = ()

    @property
    def replaces_value(self) -> bool:
        """Whether the new memory replaces a value of the old one (not only adds to it)."""
        return any(c.comparison.relation == "changed" for c in self.changes)

    @property
    def left_out(self) -> tuple[str, ...]:
        """Values of the old memory the new one does not say, besides those it changes: the
        new memory alone does not hold what the old one did (`Change.left_out`)."""
        return tuple(key for c in self.changes for key in c.left_out)


@dataclass(frozen=True)
class Reading:
    """A memory as statements with their terms."""

    statements: tuple[Statement, ...]
    terms: tuple[Terms, ...]
    keys: frozenset[str]
    values: frozenset[str]
    negations: tuple[str, ...]  # every statement's negation cues, sorted (Terms.negations)
    # Per statement, the terms of the heading it stands under (the nearest one before it).
    headings: tuple[frozenset[str], ...] = ()

    @property
    def negated(self) -> bool:
        return bool(self.negations)

    def line(self, i: int) -> tuple[Statement, Terms]:
        """Statement `i` and its terms."""
        return self.statements[i], self.terms[i]

    @property
    def polarity(self) -> int:
        """How many negation cues it holds: two memories that negate as often are of one
        polarity ("don't" / "never"); one more ("without review … may" against "without
        review … must not") may be a rule turned round, so never a sure duplicate."""
        return len(self.negations)


def holds_more(old: MemoryText, new: MemoryText, judgement: Judgement) -> bool:
    """Whether `old` says something, in a statement `judgement` (of `new` against `old`)
    does not change, that `new` does not say: the new memory alone does not hold all the
    old one did ("The staging cache is now redis-stg-4" beside a note of the staging cache
    and database; "The web app needs Node 22 to build" beside "Building the web app needs
    Node 18. Builds run on Fridays."). Hidden or archived as superseded, the old memory
    would take that out of recall. (Only a statement with a value counted once: a rule or
    a habit said in plain words went with it.)"""
    changed = {c.old.span for c in judgement.changes}
    reading, said = read_memory(old), read_memory(new).keys
    return any(
        statement.span not in changed
        and not statement.heading
        and any(term.key not in said for term in terms.terms)
        for statement, terms in zip(reading.statements, reading.terms, strict=True)
    )


def read_memory(memory: MemoryText, capitals: bool | None = None) -> Reading:
    """The statements of a memory's body (its title and description when it has none).
    `capitals`: whether a capital letter inside a sentence marks a name (by default, as
    the memory's own words say: `capitals_of`)."""
    return _reading(memory, capitals_of(memory) if capitals is None else capitals)


@functools.lru_cache(maxsize=4096)
def capitals_of(memory: MemoryText) -> bool:
    """Whether capitals mark names in a memory: not in a language that capitalises its
    nouns (German), as far as its words tell (`capitals_mark_names`)."""
    return capitals_mark_names(f"{memory.title}\n{memory.description}\n{_said_body(memory)}")


def pair_capitals(new: MemoryText, old: MemoryText) -> bool:
    """How a pair is read: capitals mark names only when neither memory reads as a
    language that capitalises its nouns. One short German sentence has too few function
    words to say so ("Passwörter brauchen jetzt mindestens 14 Zeichen"); read alone, its
    "Zeichen" was a name while the longer memory's was a word, and the two counts of
    characters fell into two slots."""
    return capitals_of(new) and capitals_of(old)


@functools.lru_cache(maxsize=4096)
def _reading(memory: MemoryText, capitals: bool) -> Reading:
    kept = list(_read_statements(memory, capitals))
    statements = tuple(s for s, _ in kept)
    terms = tuple(t for _, t in kept)
    keys = frozenset(k for t in terms for k in t.keys)
    values = frozenset(term.key for t in terms for term in t.terms if term.valued)
    headings: list[frozenset[str]] = []
    above: frozenset[str] = frozenset()
    for statement, t in kept:
        headings.append(above)
        if statement.heading:
            above = frozenset(t.keys)
    negations = tuple(sorted(n for t in terms for n in t.negations))
    return Reading(statements, terms, keys, values, negations, tuple(headings))


def _name_replaced(a: Reading, b: Reading) -> bool:
    """Whether the new memory (`b`) says none of the old one's names and opens a statement
    with a capitalised word the old one does not hold: at a sentence's start a capital
    marks no name, yet there it often is one ("Bob is the new on-call engineer" beside
    "The on-call engineer is Alice"). Not the same fact in other words: perhaps the name
    replaced (`NAME_REPLACED`, a lean that only links)."""
    names = {t.key for terms in a.terms for t in terms.terms if t.kind == "name"}
    if not names or names & b.keys:
        return False
    return _opens_with_a_word_of_its_own(a, b)


def _perhaps_reworded(a: Reading, b: Reading, similarity: float) -> Judgement:
    """Perhaps the same fact in other words (a lean to a duplicate) — or perhaps a name
    replaced where a sentence opens (`_name_replaced`, a lean to an update)."""
    if _name_replaced(a, b):
        return Judgement("update", False, NAME_REPLACED, similarity)
    return Judgement("duplicate", False, "perhaps the same fact in other words", similarity)


def _opens_with_a_word_of_its_own(a: Reading, b: Reading) -> bool:
    """Whether a statement of the new memory (`b`) opens with a capitalised word the old one
    (`a`) does not hold: perhaps a name, which a sentence's first capital does not mark.
    (A word's term keeps its first letters, a name's the whole: "Docker" opening one
    statement is the "Docker" named inside the other.)"""
    held = a.keys | {key[:STEM_CHARS] for key in a.keys}
    return any(
        terms.terms[0].kind == "word"
        and terms.terms[0].start == 0
        and terms.text[:1].isupper()
        and terms.terms[0].key not in held
        for terms in b.terms
        if terms.terms
    )


def _said_body(memory: MemoryText) -> str:
    body = memory.body.strip()
    return body or "\n".join(p for p in (memory.title, memory.description) if p)


@functools.lru_cache(maxsize=64)
def _said_statements(memory: MemoryText) -> tuple[tuple[Statement, str], ...]:
    """The statements of a memory's body (its title and description when it has none),
    each with the text its terms are read from. Kept for the few memories a remember
    reads whole twice (its reading, then the rewrite's)."""
    statements = split_statements(_said_body(memory), lexicon().discourse)
    return tuple((statement, said(statement)) for statement in statements)


def _read_statements(memory: MemoryText, capitals: bool) -> Iterator[tuple[Statement, Terms]]:
    """Each statement that holds a term, in order, with its terms."""
    # Paced: in a worker thread (a remember's read-ahead) a recall in flight goes first
    # between two statements, not after a whole memory of a hundred.
    for statement, text in paced(_said_statements(memory)):
        # Each statement's terms are read once (a long memory is most of a remember's time).
        terms = read_terms(text, capitals)
        if terms.terms:
            yield statement, terms


def read_against(old: MemoryText, new: Reading, capitals: bool) -> Reading | float:
    """What `judge` reads of `old` for `new`: its reading, or — when it is sure to share
    too little with `new` for their Dice to reach UNRELATED_BELOW — the most that Dice
    could be. Reading a long memory is most of a remember's conflict check, and the
    candidates are nearly always unrelated (docs/performance.md). `capitals`: as the pair
    is read (`pair_capitals`)."""
    most = _most_in_common(old, new.keys, capitals)
    return read_memory(old, capitals) if most is None else most


@functools.lru_cache(maxsize=4096)
def _most_in_common(memory: MemoryText, keys: frozenset[str], capitals: bool) -> float | None:
    """The most the Dice of `memory`'s terms and `keys` can be, once `memory` is read far
    enough for it to round below UNRELATED_BELOW; None if it never is (then it is read
    whole).

    Read statement by statement, split only as far as read: Dice = 2·shared / (its terms
    + len(keys)). Its terms are at least those seen so far; shared, at most the keys seen
    so far and those whose witness (`key_witness`) a line not yet passed holds — so a
    memory that holds few of the keys is known unrelated after a few statements, however
    long it is, without splitting the rest of it (most of the time it took).
    """
    body = _said_body(memory)
    lines = body.split("\n")
    forms = [witness_forms(line) for line in lines]
    last = _last_witnessed(keys, forms)
    discourse = lexicon().discourse
    seen: set[str] = set()
    for statement in paced(iter_statements(body, discourse)):
        terms = read_terms(said(statement), capitals)
        if not terms.terms:
            continue
        seen.update(terms.keys)
        # A witness on this statement's own line may be in a statement after it: counted.
        shared = sum(1 for key in keys if key in seen or last[key] >= statement.line)
        most = 2 * shared / (len(seen) + len(keys))
        if most <= UNRELATED_BELOW - 0.001:  # a margin for the rounding to 3 places
            # ... unless one statement holds most of the keys (`judge`): read on.
            return None if _one_holds(keys, forms, lines, capitals) else most
    return None


def _one_holds(
    keys: frozenset[str], forms: list[tuple[str, str]], lines: list[str], capitals: bool
) -> bool:
    """Whether one statement may hold RELATED_CONTAINED of `keys`, as `judge` counts them.
    Only a line that may hold them is split and read: one whose `witness_forms` hold
    enough of the keys' witnesses, counting those that have none (a number may be in
    any). In a long memory whose words the new one shares, that is a few lines, not all
    of them. (A line read alone is read as if outside any fence: at worst it says yes,
    and the memory is read whole.)"""
    witnesses = [key_witness(key) for key in keys]
    anywhere = sum(1 for w in witnesses if w is None)
    held = RELATED_CONTAINED * len(keys)
    need = held - anywhere
    found = [w for w in witnesses if w is not None]
    discourse = lexicon().discourse
    for (a, b), line in paced(zip(forms, lines, strict=True)):
        if need > 0 and sum(1 for w in found if w in a or w in b) < need:
            continue
        for statement in iter_statements(line, discourse):
            if len(keys.intersection(read_terms(said(statement), capitals).keys)) >= held:
                return True
    return False


def _last_witnessed(keys: frozenset[str], forms: list[tuple[str, str]]) -> dict[str, int]:
    """For each key, the last of the texts (their `witness_forms`) holding its witness (-1
    if none does; past the last text when it has no witness, since it may come from any)."""
    joined: list[tuple[str, list[int]]] = []  # each witness form of the texts, one string
    columns = list(zip(*forms, strict=True))
    if len(columns) == 2 and columns[0] == columns[1]:  # alike (ASCII texts): search one
        columns.pop()
    for column in columns:
        starts = list(itertools.accumulate((len(f) + 1 for f in column[:-1]), initial=0))
        joined.append(("\n".join(column), starts))
    last: dict[str, int] = {}
    for key in keys:
        witness = key_witness(key)
        if witness is None:
            last[key] = len(forms)
            continue
        last[key] = max(
            (bisect.bisect_right(starts, at) - 1 for text, starts in joined
             if (at := text.rfind(witness)) >= 0),
            default=-1,
        )  # fmt: skip
    return last


_RAW_NUMBER = regex.compile(r"\p{N}+|[〇一二三四五六七八九十百千万]+")
_RAW_LATIN = regex.compile(r"\p{Latin}{2,}")
_RAW_URL = regex.compile(r"https?://[A-Za-z0-9._~:/?#@!$&*+,;=%-]*[A-Za-z0-9/#=&%_~-]")
_OTHER_SCRIPT = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Cyrillic}]")


def _raw_values(memory: MemoryText) -> set[str]:
    """Numbers in a memory's text, its web addresses (a link closing a statement is read as
    not there: "… ([runbook](https://…))"), its days and months (a closing "since Monday"
    is read as "now": asides.py, `closing_since`), its hashtags (read as the note's tags),
    the characters that negate in an unspaced script (`negation-mark` in data/cues.txt),
    and Latin words where the text is in another script."""
    text = normalize(f"{memory.body}\n{memory.description}")
    found = set(_RAW_NUMBER.findall(text)) | set(_RAW_URL.findall(text))
    found |= time_words(text) | hashtags(text)
    if not text.isascii():  # a look for each of a few characters, not a pass over the text
        found.update(mark for mark in lexicon().negation_marks if mark in text)
    latin = _RAW_LATIN.findall(text)
    if len(_OTHER_SCRIPT.findall(text)) > sum(len(w) for w in latin):
        found.update(latin)
    return found


class _SaidTexts:
    """The texts of a memory's statements, split when first iterated (`_said_statements`):
    the checks for a correction in other words read them only when the new memory
    announces a change or places its subject, and a long old memory is most of the time
    its split takes."""

    def __init__(self, memory: MemoryText) -> None:
        self.memory = memory

    def __iter__(self) -> Iterator[str]:
        return (text for _statement, text in _said_statements(self.memory))


def _corrected_in_other_words(
    old_texts: Iterable[str], old_terms: Iterable[Terms], new: Sequence[Terms]
) -> str | None:
    """Why a new memory that shares too little with an old one for their terms to relate
    them may still correct it, read in their words (wording.py), or None. Each is a lean
    that only links:
    - a change announced of a subject said in function words, opening alike ("The user is
      now a backend engineer" beside "The user is a data scientist");
    - that subject placed elsewhere ("The user moved to Lisbon" / "… is based in Berlin");
    - a change announced to a tool of the old one's job ("We switched to Microsoft Teams"
      / "We use Slack for team chat");
    - a change announced to an address of the old one's host or shape ("Use
      https://api.example.com/v2 from now on" / "The API base URL is …/v1").
    `old_terms` is read only for the last, when the new memory announces an address."""
    if openings_alike_announced(old_texts, new):
        return OPENS_ALIKE
    if placed_elsewhere(old_texts, new):
        return PLACED_ELSEWHERE
    if switched_alike(old_texts, new):
        return SWITCHED_ALIKE
    if readdressed(old_terms, new):
        return READDRESSED
    return None


def judge(new: MemoryText, old: MemoryText) -> Judgement:
    """How `new` relates to `old`, an existing memory of the same root."""
    found = _judge_reasoned(new, old)
    if found.sure and found.kind in ("update", "duplicate") and _labelled_anew(new, old):
        # "Infra: The analytics database runs ClickHouse 23" beside "The database runs
        # PostgreSQL 14": a label of words the old memory never says may name the thing
        # the line is about (then another thing's) or what kind of note it is. Read as
        # words before the statement, they hid its opening. A lean.
        return replace(found, sure=False, reason=f"{found.reason}; {LABELLED_ANEW}")
    if found.sure and found.kind in ("update", "duplicate") and _unsettled(new, old):
        # "Deploys need three approvals (TBD)": not settled, it writes over no settled
        # fact and is not dropped beside one the old memory says. Kept both, linked.
        return replace(found, sure=False, reason=f"{found.reason}; {UNSETTLED}")
    return found


LABELLED_ANEW = "the new line's label names what the old memory does not"
UNSETTLED = "the new note says it is not settled"


def _unsettled(new: MemoryText, old: MemoryText) -> bool:
    """Whether a statement of `new` is said as not settled (`Terms.hedged`: "(TBD)",
    "(vorläufig)") and `old` says no statement so."""
    capitals = pair_capitals(new, old)
    hedged = any(t.hedged for t in read_memory(new, capitals).terms)
    return hedged and not any(t.hedged for t in read_memory(old, capitals).terms)


def _labelled_anew(new: MemoryText, old: MemoryText) -> bool:
    """Whether a statement of `new` opens with a label none of whose words `old` holds (not
    one that announces a change: "Korrektur:", "更正一下：")."""
    capitals = pair_capitals(new, old)
    a, b = read_memory(old, capitals), read_memory(new, capitals)
    reasons = lexicon().rationale  # "**Why:**" names nothing (rationale.py)
    labels = [read_terms(s.label) for s in b.statements if s.label and s.label not in reasons]
    return any(not label.changes and not set(label.keys) & a.keys for label in labels)


REASON_OF_ITS_OWN = "the same fact, with a reason or a use of its own"


def _judge_reasoned(new: MemoryText, old: MemoryText) -> Judgement:
    """`_judge` of the new memory's facts, its reason lines given their place after
    (rationale.py): two notes' reasons are never compared as facts of their own, and an
    old memory's reasons count only when its facts relate nothing (a new fact may change
    what its "**How to apply:**" line says)."""
    new_facts, reasons = _facts_of(new)
    if new_facts is None:
        return _judge(new, old)  # no reason given (or nothing but reasons): as written
    old_facts, old_reasons = _facts_of(old)
    found = _judge(new_facts, old if old_facts is None else old_facts)
    if old_facts is not None and found.kind == "independent":
        found = _judge(new_facts, old)
    if found.kind == "independent" or not found.sure:
        return found  # another fact's reasons relate nothing, and a lean stays a lean
    # Asked only here: the old memory read whole, which a bounded judgement never is.
    changed = {c.old.span for c in found.changes}
    stated = [s for s in read_memory(old_facts or old).statements if not s.heading]
    whole = bool(stated) and all(s.span in changed for s in stated)
    return _with_reasons(found, reasons, old_reasons, replaces=whole)


def _facts_of(memory: MemoryText) -> tuple[MemoryText | None, Sequence[ReasonLine]]:
    """`memory` with its reason lines blanked (None when it gives none, or nothing else),
    and those lines."""
    body = memory.body.strip()
    reasons = reason_lines(body) if body else ()
    facts = blanked(body, reasons) if reasons else None
    if facts is None:
        return None, reasons
    # A description derived from the whole note says its reasons too: its facts' own.
    told = any(r.said.text in memory.description for r in reasons)
    description = derive_description(facts) if told else memory.description
    return replace(memory, body=facts, description=description), reasons


def _with_reasons(
    found: Judgement,
    reasons: Sequence[ReasonLine],
    old_reasons: Sequence[ReasonLine],
    replaces: bool,
) -> Judgement:
    """`found` (of the new memory's facts) with its reason lines. One the old memory says
    alike is known. For an update it writes, each other replaces the old line of the same
    label when the update `replaces` every fact of the old memory (the reasons were
    theirs), else it is added at the end — a reason of a fact the update leaves stays
    beside it. The same fact given a reason of its own is never dropped as known (a lean).
    `found` is a sure update or duplicate."""
    before: dict[str, ReasonLine] = {}
    for line in old_reasons:
        before.setdefault(line.label, line)
    written = {c.old.span for c in found.changes}
    changes: list[Change] = []
    appended: list[str] = []
    for reason in reasons:
        if any(said_alike(o.said.text, reason.said.text) for o in old_reasons):
            continue
        old_line = before.get(reason.label)
        # (An old line a new fact rewrites already is no reason's to replace.)
        if old_line is None or not replaces or old_line.said.span in written:
            appended.append(reason.whole)
        else:
            replaced = Comparison("changed", True, REASON_OF_ITS_OWN, 0.0)
            changes.append(Change(old_line.said, reason.said, replaced))
            written.add(old_line.said.span)
    if not changes and not appended:
        return found
    if found.kind == "duplicate":
        return Judgement("duplicate", False, REASON_OF_ITS_OWN, found.similarity)
    return replace(found, changes=found.changes + tuple(changes), appended=tuple(appended))


def _judge(new: MemoryText, old: MemoryText) -> Judgement:
    capitals = pair_capitals(new, old)
    b = read_memory(new, capitals)
    a = read_against(old, b, capitals) if b.statements else read_memory(old, capitals)
    if isinstance(a, float):  # sure to share too little: unrelated
        leaning = _corrected_in_other_words(
            _SaidTexts(old),  # split only if the new memory announces something
            (t for _s, t in _read_statements(old, capitals)),  # read only for an address
            b.terms,
        )
        if leaning is not None:
            return Judgement("update", False, leaning, round(a, 3))
        return Judgement("independent", True, "little in common", round(a, 3))
    similarity = round(dice(a.keys, b.keys), 3)
    if not a.statements or not b.statements:
        return Judgement("independent", True, "nothing to compare", similarity)
    most_held = max((len(b.keys.intersection(t.keys)) for t in a.terms), default=0)
    if similarity < UNRELATED_BELOW and most_held < RELATED_CONTAINED * len(b.keys):
        leaning = _corrected_in_other_words([t.text for t in a.terms], a.terms, b.terms)
        if leaning is not None:
            return Judgement("update", False, leaning, similarity)
        return Judgement("independent", True, "little in common", similarity)
    pairs = answered(a, b)
    one_title = same_given_title(old.title, old.body, new.title, new.body)
    titled = title_stems(old.title) if one_title else frozenset()
    if one_title:
        # One title given by hand: the subject is settled, so a statement of the same shape
        # with one value of one kind changed is that value's update, not another subject.
        pairs = [(i, j, under_one_title(c, titled)) for i, j, c in pairs]
    else:
        pairs = [
            (i, j, named_by_title(c, old.title, old.body, a.line(i), b.line(j)))
            for i, j, c in pairs
        ]
    different = [c for _, _, c in pairs if c.relation == "different"]
    if not (b.values - a.values):
        # "Says more" only with a value the old memory lacks (it may say it elsewhere).
        pairs = [
            (i, j, replace(c, relation="same") if c.relation == "extends" else c)
            for i, j, c in pairs
        ]
    changed: list[tuple[int, int, Comparison]] = []
    headed = False  # a heading answered as if changed: it names a subject, states nothing
    for i, j, c in sorted(pairs, key=lambda p: -p[2].overlap):
        # Two new statements answering one old one: the closer is its change, the other
        # is said besides.
        if c.relation in ("changed", "extends") and a.statements[i].heading:
            headed = True
        elif c.relation in ("changed", "extends") and i not in {k for k, _, _ in changed}:
            changed.append((i, j, c))
    changed.sort(key=lambda p: p[1])
    same = [(i, j, c) for i, j, c in pairs if c.relation == "same"]
    unrelated = [j for j in range(len(b.statements)) if j not in {p[1] for p in changed + same}]
    if headed and not changed:
        # "Marco now owns the staging environment" beside "Staging environment:" over a
        # list that names its owner: the heading is no statement to write over, and the
        # line it would change is not found. Linked, never rewritten.
        return Judgement("update", False, OF_A_HEADING, similarity)
    if any(c.sure for c in different) and not changed:
        reason = next(c.reason for c in different if c.sure)
        return Judgement("independent", True, reason, similarity)
    if changed:
        # The new memory's first statement says what it is about: when it restates nothing
        # of the old memory, a shared side remark ("owner team kafka-0" / "… redis-1") is no
        # update of it.
        leads = 0 not in unrelated
        sure = (
            all(c.sure for _, _, c in changed)
            and not different
            and len(unrelated) <= len(changed)
            and leads
        )
        # The same title, given by hand (not the first sentence): the subject is settled,
        # and a value of one kind replaced in its statement is its update.
        if not sure and not different and len(unrelated) <= len(changed) and leads and one_title:
            # titles.py: what one title settles (never which of two alike statements changed).
            sure = all(
                c.reason != ALIKE and settles(c, a.terms[i], b.terms[j], titled)
                for i, j, c in changed
            )
        changes = tuple(
            _repointing(
                written_change(
                    Change(a.statements[i], b.statements[j], c), a.terms[i], b.terms[j], a.keys
                ),
                a.terms[i],
                b.terms[j],
                a.statements[i + 1] if i + 1 < len(a.statements) else None,
            )
            for i, j, c in changed
        )
        # A new statement that only says an old one again is no addition — unless that old
        # one is written over by another: then its words would be gone ("LaunchDarkly is
        # deprecated; feature flags now live in Unleash": the first said only "LaunchDarkly"
        # again, and was dropped with the old statement it repeated).
        replaced, answering = {i for i, _, _ in changed}, {j for _, j, _ in changed}
        kept = [j for i, j, _ in same if i in replaced and j not in answering]
        additions = tuple(b.statements[j] for j in sorted({*unrelated, *kept}))
        reasons = [c.reason for _, _, c in changed]
        if any(qualifies(a.terms[i], b.terms[j], a.keys) == "narrower" for i, j, _c in changed):
            # "Code reviews need two approvals for changes to the payments service" beside
            # "… need two approvals": a detail added, or the rule narrowed. Never rewritten.
            # (A thing added after "and" leaves the old statement whole in the new one.)
            sure = False
            reasons.append(QUALIFIED)
        losing = [change.loses for change in changes if change.loses]
        if losing:  # the rewrite would lose a value: created and linked instead
            sure = False
            reasons += losing
        reason = "; ".join(dict.fromkeys(reasons))
        return Judgement("update", sure, reason, similarity, changes, additions)
    new_values = b.values - a.values
    contained = len(b.keys & a.keys) / len(b.keys)
    # A new memory that announces a change ("now", "jetzt", "改为") the old one does not
    # is no restatement (a cue of the old's own, "make migrate", announces nothing new).
    announces = bool(
        {c for t in b.terms for c in t.changes} - {c for t in a.terms for c in t.changes}
    )
    # A last guard before a new text is dropped as known: a number or a Latin word of its
    # own that the terms missed (a kanji numeral, a word in a function-word list).
    # (It keeps a sure duplicate from dropping them; an update writes them with the rest.)
    unseen = _raw_values(new) - _raw_values(old)
    if not new_values and a.polarity == b.polarity and not different and not announces:
        if not unrelated and (
            similarity >= DUPLICATE_AT_LEAST or contained >= DUPLICATE_CONTAINED_AT_LEAST
        ):
            # What the new memory writes of its own: a title or description it shares with
            # the old one says the old one's values, not the new one's ("Deploys run on
            # Tuesdays and Thursdays" kept as the title of "Deploys run on Tuesdays").
            heads = ((new.title, old.title), (new.description, old.description))
            own = [mine for mine, theirs in heads if mine.strip() != theirs.strip()]
            written = "\n".join([*own, new.body]).casefold()
            fewer = _values_left_out(a, b, same, written)
            if fewer:
                # "Deploys run on Tuesdays" beside "… on Tuesdays and Thursdays": a partial
                # restatement, or a correction that drops Thursdays. Never dropped as known.
                return Judgement("update", False, f"{FEWER_VALUES}: {', '.join(fewer)}", similarity)
            if any(
                narrows(a.terms[i], b.terms[j]) or narrows_first(a.terms[i], b.terms[j], a.keys)
                for i, j, _c in same
            ):
                # "Squash merge only small pull requests" beside "Always squash merge pull
                # requests": a narrower rule, perhaps the old one corrected, never known —
                # under one title given by hand too ("Notes": dropped as a rewording there,
                # the payments service's rule was lost).
                return Judgement("update", False, SAID_NARROWER, similarity)
            if any(
                narrows(b.terms[j], a.terms[i])
                or narrows_first(b.terms[j], a.terms[i], b.keys)
                or qualifies(b.terms[j], a.terms[i], b.keys, announced=True) == "narrower"
                or _scoped_among(a.terms[i], b.terms[j], b.keys)
                or names_which(b.terms[j], a.terms[i], b.keys)
                for i, j, _c in same
            ):
                # The other way round: "Code review needs two approvals" beside "… for
                # changes to the payments service", "Backups are encrypted" beside
                # "Production backups are encrypted". The narrower rule does not say the
                # rule for every case: dropped as known, the new broader one was lost —
                # also when the narrower one said "now" ("… for the payments service now"),
                # or put its scope among what both say ("API 타임아웃은 읽기 요청에 대해
                # 30초입니다": for read requests).
                return Judgement("update", False, UNQUALIFIED, similarity)
            if any(inserts_a_word(a.terms[i], b.terms[j], a.keys) for i, j, _c in same):
                # "We deploy rarely on Fridays" beside "We deploy on Fridays", or a negation
                # the cues do not know ("… niet meer …"): a word that may turn the rule
                # round or say how often. Never dropped as known.
                return Judgement("update", False, SAID_WITH_A_WORD, similarity)
            said_more = [(i, j, c, qualifies(a.terms[i], b.terms[j], a.keys)) for i, j, c in same]
            if any(kind == "narrower" for *_ij, kind in said_more):
                return Judgement("update", False, QUALIFIED, similarity)
            grown = [(i, j, c) for i, j, c, kind in said_more if kind == "added"]
            if grown:
                # "Alice owns the billing service and the invoicing service": the old
                # statement whole, and a thing added after "and". The old memory grows.
                changes = tuple(
                    written_change(
                        Change(
                            a.statements[i],
                            b.statements[j],
                            Comparison("extends", True, ADDED, c.overlap),
                        ),
                        a.terms[i],
                        b.terms[j],
                    )
                    for i, j, c in grown
                )
                sure = not any(change.loses for change in changes) and not (
                    # Written in place, what the terms missed would not be written.
                    unseen and any(change.in_place is not None for change in changes)
                )
                return Judgement("update", sure, ADDED, similarity, changes)
            if any(swaps_a_word(a.terms[i], b.terms[j]) for i, j, _c in same):
                # "Backups run at most once a day" beside "… at least once a day", "The API
                # only accepts JSON" beside "The API accepts JSON": a word or two swapped,
                # added or left out, or two words changing places, where the terms see
                # none (function words, no order). Dropped as known, the new fact was
                # gone. A lean that only links.
                return Judgement("update", False, WORD_SWAPPED, similarity)
            if _opens_with_a_word_of_its_own(a, b):
                # "Carol replaces Bob in the on-call rotation next week" beside "Our on-call
                # rotation: Alice this week, Bob next week": most words said again, but a
                # capital opening the new one may be a name the old memory never held.
                # Dropped as known, the new fact was gone. A lean that only links.
                return Judgement("update", False, NAMED_ANEW, similarity)
            if not unseen:
                sure = all(c.sure for _, _, c in same) or similarity >= DUPLICATE_AT_LEAST
                return Judgement("duplicate", sure, "the same fact, reworded", similarity)
        if similarity >= PARAPHRASE_AT_LEAST and not unseen:
            return _perhaps_reworded(a, b, similarity)
    # A statement said again with a word swapped ("Alice left the platform team" / "Alice is
    # on the platform team") restates nothing: grown by the new memory, the old one kept
    # saying Alice is on the team, and her leaving was gone.
    # Nor is one said of a narrower or a broader thing, with a qualifier or a thing added
    # after "and", or with a word put in ("Code review needs two approvals for changes to
    # the payments service" and a second, unrelated statement, beside "Code review needs
    # two approvals": the old memory grew by the second and the payments rule was gone).
    restated = {
        i
        for i, j, c in same
        if c.sure
        and not swaps_a_word(a.terms[i], b.terms[j])
        and not _said_otherwise(a.terms[i], b.terms[j], a.keys, b.keys)
    }
    # ... unless a statement said again announces a change ("`requests` is deprecated
    # here; use `httpx`" beside "Use `requests` for HTTP calls": "with more said", the
    # memory told both to use requests and to use httpx).
    if (
        same
        and unrelated
        and len(restated) == len(a.statements)
        and not different
        and not any(b.terms[j].change_cue for _, j, _c in same)
    ):
        # Every old statement restated, and something added: the old memory grows.
        additions = tuple(b.statements[j] for j in unrelated)
        return Judgement("update", True, "the same fact, with more said", similarity, (), additions)
    if (
        not new_values
        and a.polarity == b.polarity
        and not announces
        and similarity >= PARAPHRASE_AT_LEAST
        and not any(c.reason in (OTHER_SUBJECT, ONE_MORE) for c in different)
    ):
        return _perhaps_reworded(a, b, similarity)
    if different:
        if placed_elsewhere([t.text for t in a.terms], b.terms):
            # "L'utente si è trasferito a Lisbona" beside "L'utente vive a Berlino": read as
            # a value of another subject, yet the subject's words are the same.
            return Judgement("update", False, PLACED_ELSEWHERE, similarity)
        return Judgement("independent", False, different[0].reason, similarity)
    if announces and same:
        # "I prefer spaces now for Python" beside "I prefer tabs over spaces for Python":
        # an old statement's words said again as a change, what changed left unsaid.
        return Judgement("update", False, RESTATED_AS_CHANGED, similarity)
    if announces:
        # "Marco took over on-call" beside "Priya is the on-call lead": a change announced
        # of what the old memory speaks of, no statement of it said again nor answered.
        return Judgement("update", False, CHANGE_OF_ITS_TOPIC, similarity)
    if same and unrelated:
        beside = _said_again_beside(new, old, b, unrelated)
        if beside is not None:
            return beside
    return Judgement("independent", True, "a different fact", similarity)


def _said_again_beside(
    new: MemoryText, old: MemoryText, b: Reading, unrelated: list[int]
) -> Judgement | None:
    """How the new memory relates to the old one read without its statements of its own
    (`unrelated`), None when so read it is independent too. A statement said again
    narrower, with a word swapped, with a thing added or a value left out ("Squash merge
    only small pull requests" and "The team standup is at 9:30" beside "Always squash merge
    pull requests") was read as a different fact beside the one of its own, and the two
    memories went unlinked. A sure update keeps the new memory's own statements
    (additions), only when the new memory opens with what it says again; else it is a
    lean."""
    body = _said_body(new)
    chars = list(body)
    for j in unrelated:
        statement = b.statements[j]
        chars[statement.start : statement.end] = " " * (statement.end - statement.start)
    answering = "".join(chars)
    if not says_something(answering):
        return None
    found = _judge(replace(new, body=answering), old)
    if found.kind == "independent":
        return None
    if found.kind == "update" and found.sure and 0 not in unrelated:
        additions = found.additions + tuple(b.statements[j] for j in unrelated)
        return replace(found, additions=additions)
    return Judgement("update", False, f"{found.reason}; {BESIDE_ITS_OWN}", found.similarity)


BESIDE_ITS_OWN = "said beside a fact of its own"


def _scoped_among(older: Terms, newer: Terms, newer_known: frozenset[str]) -> bool:
    """Whether the older statement says all of the newer one and puts among it a stretch of
    words of its own opened or closed by a word of scope (`scoped_inside`): two words at
    least, so a word swapped among function words ("at least" / "at most") is not one."""
    own = set(older.keys) - set(newer.keys)
    return (
        set(newer.keys) < set(older.keys)
        and len(own) >= QUALIFIER_WORDS
        and scoped_inside(newer, older, newer_known)
    )


def _said_otherwise(
    old: Terms, new: Terms, old_known: frozenset[str], new_known: frozenset[str]
) -> bool:
    """Whether a statement said again is said of a narrower or a broader thing, with a
    qualifier or a thing added at its end, or a word put in — read from either side."""
    return any(
        narrows(x, y)
        or narrows_first(x, y, known)
        or qualifies(x, y, known) is not None
        or inserts_a_word(x, y, known)
        for x, y, known in ((old, new, old_known), (new, old, new_known))
    )


def _values_left_out(
    a: Reading, b: Reading, same: list[tuple[int, int, Comparison]], new_text: str
) -> list[str]:
    """Values an old statement holds that the new statement restating it leaves out, of a
    kind the new statement names ("Tuesdays and Thursdays" / "Tuesdays") or right before
    a value it says again ("every second Tuesday" / "every Tuesday"), as written —
    and written nowhere in the new memory (`new_text`, casefolded): a name read as a
    plain word where it opens a sentence, or said in the description, is not left out."""
    left_out: list[str] = []
    for i, j, _c in same:
        new_terms = b.terms[j].terms
        stated = {t.key for t in new_terms}
        valued = tuple(t for t in new_terms if t.valued)
        old_terms = a.terms[i]
        listed = _listed_with(old_terms)
        for at, t in enumerate(old_terms.terms):
            as_written = old_terms.text[t.start : t.end]
            if t.key in stated or as_written.casefold() in new_text:
                continue
            if (
                t.valued
                and valued
                and (compatible((t,), valued) or _qualifies_kept(old_terms, at, stated))
            ) or any(old_terms.terms[k].key in stated for k in listed.get(at, ())):
                # ... or a plain word of a list whose other items the new statement keeps
                # ("marek, sofia and priya" / "marek and sofia": names typed in lower case).
                left_out.append(as_written)
    return list(dict.fromkeys(left_out))


def _listed_with(terms: Terms) -> dict[int, list[int]]:
    """For each plain word that is an item of a list (terms joined by commas or a word that
    adds an item, "and", "et", "和"), the other items of its list."""
    conjunction = lexicon().conjunction
    groups: list[list[int]] = []
    for k, term in enumerate(terms.terms):
        if k and groups and groups[-1][-1] == k - 1:
            gap = terms.text[terms.terms[k - 1].end : term.start].strip()
            if gap in _LIST_MARKS or conjunction.fullmatch(gap.lstrip(",、，").strip()):
                groups[-1].append(k)
                continue
        groups.append([k])
    return {
        k: [m for m in group if m != k]
        for group in groups
        if len(group) >= 2
        for k in group
        if terms.terms[k].kind == "word"
    }


_LIST_MARKS = frozenset((",", "、", "，"))


def _qualifies_kept(terms: Terms, at: int, stated: set[str]) -> bool:
    """Whether value `at` stands right before a value the new statement says again (only
    spaces between): it qualifies it ("every second Tuesday" / "every Tuesday")."""
    term = terms.terms[at]
    after = next((t for t in terms.terms[at + 1 :] if t.start >= term.end), None)
    return (
        after is not None
        and after.valued
        and after.key in stated
        and not terms.text[term.end : after.start].strip()
    )


def _repointing(change: Change, old: Terms, new: Terms, following: Statement | None) -> Change:
    """`change`, unless the old statement after it opens with a pronoun for a person and
    the new statement no longer holds a name of the old one, or its opening word ("Alice
    leads the platform team. She is the person to ask about Terraform." / "Bob now leads
    the platform team."): rewritten, the pronoun would stand for the new person. Such an
    update loses what the old memory said of Alice: a lean, never settled."""
    pronoun = opening_pronoun(following.text) if following is not None else None
    if change.loses or pronoun is None:
        return change
    # A person is a name, or the word a sentence opens with (a capital there marks none).
    kept = set(new.keys)
    named = [
        t for i, t in enumerate(old.terms)
        if (t.kind == "name" or (i == 0 and t.kind == "word")) and t.key not in kept
    ]  # fmt: skip
    if not named:
        return change
    name = old.text[named[0].start : named[0].end]
    return replace(change, loses=f'"{pronoun}" after it may stand for {name}')


_RANK = {"changed": 4, "extends": 4, "same": 3, "different": 2, "unrelated": 0}


def answered(a: Reading, b: Reading) -> list[tuple[int, int, Comparison]]:
    """For each statement j of `b`, the statement i of `a` it answers best (`_rank`, the
    first of equals) and how: (i, j, comparison).

    Every eligible pair is compared in principle (a labelled line — Why:, How to apply: —
    answers only a line of its own label or none; a plain statement, a line of no label or
    one it says what it is about: `_LabelledLine.answered_by`). A pair that shares no term
    has overlap 0: it is `different` when both hold a key identifier (`_distinct_keys`),
    else `unrelated`, and loses to any pair that shares one. So only the pairs that share
    a term are compared in full, found through an index of `a`'s terms: the same answer as
    comparing all |a| × |b| pairs (a memory of 40 statements against another was 1,600
    comparisons, tens of milliseconds of a recall's newer-wins check), checked against that
    loop in tests/unit/test_facts.py.
    """
    negation_differs = a.negated != b.negated
    old_keys = [frozenset(t.keys) for t in a.terms]
    old_has_key = [any(term.role == "key" for term in t.terms) for t in a.terms]
    every_old_keyed = all(old_keys)
    holding: dict[str, list[int]] = {}
    for i, keys in enumerate(old_keys):
        for key in keys:
            holding.setdefault(key, []).append(i)
    by_label: dict[str, tuple[list[int], frozenset[int]]] = {}
    labelled = _labelled_lines(a)
    pairs: list[tuple[int, int, Comparison]] = []
    for j, new_terms in enumerate(b.terms):
        label = b.statements[j].label
        new_keys = frozenset(new_terms.keys)
        if label not in by_label:
            chosen = [i for i, s in enumerate(a.statements) if not s.label or s.label == label]
            by_label[label] = (chosen, frozenset(chosen))
        eligible, eligible_set = by_label[label]
        if not label and labelled:
            named = {line.at for line in labelled if line.answered_by(new_terms)}
            if named:
                eligible_set = eligible_set | named
                eligible = sorted(eligible_set)
        if not eligible:
            continue
        sharing: list[int] = []
        if not new_keys or not every_old_keyed:
            candidates = eligible  # a statement without terms: every pair, as the rule reads
        else:
            shared = {i for k in new_keys for i in holding.get(k, ())}
            sharing = sorted(shared & eligible_set)
            if sharing:
                candidates = sharing
            else:  # all at overlap 0: the first `different` pair, else the first pair
                new_has_key = any(term.role == "key" for term in new_terms.terms)
                keyed = (i for i in eligible if new_has_key and old_has_key[i])
                candidates = [next(keyed, eligible[0])]
        # "pnpm is no longer used" against "we use pnpm 9": a flip, even when another
        # statement of the old memory negates ("never commit package-lock.json").
        flips = negation_differs or new_terms.ends_a_state
        best = _best(a, candidates, new_terms, flips)
        if sharing and best[1].overlap <= 0:  # too small to tell from none: every pair
            best = _best(a, eligible, new_terms, flips)
        pairs.append((best[0], j, best[1]))
    return pairs


@dataclass(frozen=True)
class _LabelledLine:
    """A labelled statement of an old memory, as a plain new statement may answer it
    (`answered_by`). A labelled line answers a statement of its own label; one of no label
    only when it says what the line is about."""

    at: int
    label: frozenset[str]  # the label's terms
    values: tuple[Term, ...]
    owned: frozenset[str]  # things the line gives a number of ("Node" of "Node 20")
    keys: frozenset[str]

    def answered_by(self, new: Terms) -> bool:
        keys = frozenset(new.keys)
        new_values = tuple(t for t in new.terms if t.valued)
        return bool(
            # Its whole label ("Staging database: db-stg-7.internal, port 5433" / "the
            # staging database port is now 6432"; a `Why:` line is about no "why").
            (self.label and self.label <= keys)
            # A thing it gives a number of ("Versions: Python 3.11, Node 20, Postgres 15"
            # / "Node is now on 22"; "Ports: API 8080, admin 9090" / the admin port).
            or self.owned & keys
            # A word of a label of several and a value of the line's kind ("Deploy time:
            # 10:00 UTC" / "Deploys now happen at 14:00 UTC": "time" is the value's kind).
            or (
                len(self.label) >= PARTLY_NAMED_LABEL
                and self.label & keys
                and self.values
                and new_values
                and compatible(self.values, new_values)
            )
            # A change announced, most of its words the line's ("We now use testcontainers
            # instead of the docker test DB" / "**How to apply:** use the docker test DB
            # for integration tests").
            or (new.change_cue and len(keys & self.keys) >= RELATED_CONTAINED * len(keys))
            # Nearly all of its words the line's, said again with something changed ("Ask
            # in #releases for a reviewer before merging, not #deploys" / "**How to
            # apply:** ask in #deploys for a reviewer before merging").
            or len(keys & self.keys) >= LINE_SAID_AGAIN * len(keys)
        )


PARTLY_NAMED_LABEL = 2  # words of a label one of which a statement may leave unsaid
LINE_SAID_AGAIN = 0.8  # share of a plain statement's terms a labelled line holds: said again


def _labelled_lines(a: Reading) -> list[_LabelledLine]:
    out = []
    for i, statement in enumerate(a.statements):
        if statement.label:
            terms = a.terms[i].terms
            owners = {t.owner for t in terms if t.kind == "number" and t.owner}
            owned = frozenset(t.key for t in terms if t.kind in ("name", "word")) & owners
            values = tuple(t for t in terms if t.valued)
            label = frozenset(read_terms(statement.label).keys)
            out.append(_LabelledLine(i, label, values, owned, frozenset(a.terms[i].keys)))
    # A memory whose labelled lines all have labels of no words and give no numbers (a lone
    # `**Why:**` line) is answered by none of them, as before these rules were one.
    return out if any(line.label or line.owned for line in out) else []


NAMED_APART = "said of a thing named as its heading names another"


def _named_apart(around: frozenset[str], a: Reading, found: Comparison, new: Terms) -> bool:
    """Whether the new statement names part of the heading the old one stands under, leaves
    the rest of it out and puts a word the old memory never says in its place: "The search
    service owner is now Bob" beside "The owner is Alice." under "# Billing service" is the
    search service's owner, not the billing service's (written over, it was). Like a title
    given by hand (`titles.named_by_title`), a heading names what the lines under it are
    about."""
    said = set(new.keys)
    if not (around & said) or not (around - said):
        return False
    values = {t.key for r in found.regions for t in r.new}
    own = {t.key for t in new.terms if t.kind in ("word", "name") and not t.valued}
    return bool(own - a.keys - values)


def _best(
    a: Reading, candidates: list[int], new_terms: Terms, negation_differs: bool
) -> tuple[int, Comparison]:
    best: tuple[int, Comparison] | None = None
    moved: tuple[int, Comparison] | None = None  # the best statement whose value it changes
    ranks: dict[int, tuple[float, int, int]] = {}
    changing: dict[int, Comparison] = {}  # the statements it changes
    for i in candidates:
        # Under a heading, its words are said of the line too, and a line whose heading
        # the new statement names comes first of equals ("The production DB moved to
        # pg-prod-3" answers "- DB: pg-prod-1" under "## Production", not the staging one).
        around = a.headings[i]
        found = read_replaced(
            a.terms[i], new_terms, compare(a.terms[i], new_terms, negation_differs, around)
        )
        if found.relation == "changed" and found.sure and _named_apart(around, a, found, new_terms):
            found = replace(found, sure=False, reason=f"{found.reason}; {NAMED_APART}")
        ranks[i] = (*_rank(found), len(around.intersection(new_terms.keys)))
        if best is None or ranks[i] > ranks[best[0]]:
            best = (i, found)
        if found.relation == "changed":
            changing[i] = found
        if _changes_a_value(found) and (moved is None or ranks[i] > ranks[moved[0]]):
            moved = (i, found)
    assert best is not None
    # A new value answers the statement holding the value it replaces, before one it only
    # says more than or one of another kind: "Integration tests now take 9 minutes" is no
    # extension of "Run the integration tests" when "they take about 6 minutes" follows.
    if moved is not None and (
        best[1].relation in ("extends", "different") or a.statements[best[0]].heading
    ):
        # ... and before a heading, which names what the lines below it are about and
        # holds no value ("The staging cache is now redis-stg-4" answers "- Cache:
        # redis-stg-2" under "Staging environment:", not the heading).
        best = moved
    i, found = best
    if found.relation == "changed" and any(
        _alike(a, i, found, k, other, new_terms) and ranks[k][2] == ranks[i][2]
        for k, other in changing.items()
        if k != i
    ):
        return i, replace(found, sure=False, reason=ALIKE)
    return best


def _alike(a: Reading, i: int, found: Comparison, k: int, other: Comparison, new: Terms) -> bool:
    """Whether old statement `k`, which the new statement changes too (a value, when it
    changes one of `i`), is as likely the one it means as statement `i`: the new statement
    says no more of `i` than of `k`, and what `i` says besides the values replaced and the
    new statement leaves unsaid is not less than `k`'s ("Postgres 16 runs it now" beside
    "Postgres 14 runs staging" and "Postgres 15 runs production"; "Owner: Bob" beside two
    "Owner:" lines). "Timeout: 60 s" means "Timeout: 30 s", not "Retry timeout: 10 s";
    "The backend lead is now Priya", the backend line of a list of leads."""
    if _changes_a_value(found) and not _changes_a_value(other):
        return False
    said = frozenset(new.keys)

    def of(at: int, c: Comparison) -> tuple[frozenset[str], frozenset[str]]:
        keys = frozenset(a.terms[at].keys)
        replaced = {t.key for r in c.regions for t in r.old}
        return keys & said, keys - said - replaced

    shared_i, unsaid_i = of(i, found)
    shared_k, unsaid_k = of(k, other)
    return not (shared_k < shared_i or unsaid_i < unsaid_k)


def _changes_a_value(c: Comparison) -> bool:
    return c.relation == "changed" and bool(c.regions) and all(r.valued for r in c.regions)


def _rank(c: Comparison) -> tuple[float, int]:
    """The old statement a new one answers: the most alike, a change before a restatement."""
    return (c.overlap, _RANK[c.relation])
