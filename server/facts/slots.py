"""Two statements compared: the same fact, one slot with a changed value, or two facts
(docs/writing.md, "Slots").

A slot is what a statement is about (its subject) and which of its properties it states
(its attribute); the value is what it says of that property. Two statements state the
same slot when what they share is the subject and the attribute and what differs is one
value: the terms of both are aligned (difflib, in reading order) and the stretches that
differ are read:

- one stretch, short, of compatible values on both sides (two numbers of one unit or of
  one dimension, two names, two frequencies, two addresses), with shared terms around it:
  the value changed. Sure when the stretch stands where values stand (after the subject)
  or the new statement announces the change ("now", "jetzt", "改为");
- one stretch where the subject stands (at the start): perhaps the value changed
  ("Priya leads payments" → "Marco leads payments"), perhaps another subject with the
  same property: unsure — announced or not, for plain words ("Production now deploys
  …" / "Staging deploys …");
- two stretches in a statement of the same shape ("queue q1 drains into b5" / "queue q2
  drains into b9"), a key identifier on each side (`ORDERS_DB_URL` / `PAYMENTS_DB_URL`,
  two flags, two code symbols), or values of different kinds (a frequency against a
  size): two facts, never one slot;
- several stretches, each a value of one kind for another, none where the subject stands
  ("jeden Dienstag um 10 Uhr" / "am Donnerstag um 14 Uhr"): perhaps the slot said again
  with new values, unsure;
- words or names that differ before anything both statements share, beside the value or
  the word that changed ("Staging runs on db-stg-7" / "Our CI runs on GitHub Actions"),
  no change announced: another subject, not linked;
- the rest (reworded, a value and other words changed): unsure.

A rule whose polarity flips ("squash" / "do not squash") is a change of its slot.

One job past 500 lines: every reading above is made on the one alignment of two
statements (their stretches, what each drops, adds or moves), and each case is told
apart by what the cases before it ruled out; split, the order would be lost.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from difflib import SequenceMatcher
from typing import Literal

import regex
from memory_recall.server.facts.lexicon import CJK_CHAR, canonical_units, dimension, lexicon
from memory_recall.server.facts.restated import (
    SCOPE_SHAPES,
    cut_apart,
    inserts_aligned,
    named_first,
    narrowed_aligned,
    narrows_first,
    of_inserted,
    opens_scoped,
    put_before,
    said_by_a_pronoun,
    said_then_more,
    scoped_after,
    scoped_between,
    scoped_first,
)
from memory_recall.server.facts.terms import Term, Terms
from memory_recall.server.facts.wording import compound_word, in_subject, words_swapped

Relation = Literal["same", "changed", "extends", "different", "unrelated"]

# Reasons a judgement reads: two stretches of one shape differ (a template: another
# subject, unless the memories share a title given by hand), or several things differ.
SAME_SHAPE = "the same shape about another subject"
SUBJECT_APART = "the same shape, another subject named where the subject stands"
ANNOUNCED_SHAPE = "one shape, its change announced"
SEVERAL = "several things differ"
WORD_GROWN = "a word grown into a value holding it"
USER_REPLACED = "the word for the user on one side, another subject on the other"
OTHER_SUBJECT = "the value of another subject"
ONE_MORE = "said as one more besides it"
OLDER_ONE_MORE = "the older was said as one more besides another"
AROUND_A_WORD = "different things around a common word"
WORD_AT_SUBJECT = "a word changed where the subject stands"
NARROWER = "a value changed, perhaps of a narrower thing"
QUALIFIED = "said again with a qualifier at its end"
WORD_BESIDE = "a value changed, and a word beside it"
FLIPPED_NARROWER = "the rule turned round for a narrower case"
FLIPPED_BROADER = "the rule turned round, the older perhaps of a narrower case"
# "For hotfixes, deploys need one approval" / "Deploys need three approvals": the new value
# is said of all of them, the older of a narrower case, which may still hold.
BROADER = "a value changed, the older perhaps of a narrower thing"
REORDERED = "a value changed in a reordered sentence"
# "Use feature flags for risky changes" / "Use feature flags for all changes".
UNQUALIFIED = "said again without a word that narrowed the older"
# "Deploys need two approvals" / "Deploys need an approval": the count of a thing still
# said is left out (an article may say one).
COUNT_LEFT_OUT = "a count left out of a thing still said"
# "Deploys now go through GitHub Actions, workflow deploy.yml" / "Deploys go through GitLab
# CI, job deploy-prod": after what both say first, a value and the words around it changed,
# and the writer says so.
ANNOUNCED_REWORDING = "a value and its wording changed, the change announced"
NEGATED_SWAP = "a value changed where one statement negates"
# Below this share of common terms (Dice), two statements are not about one thing.
UNRELATED_BELOW = 0.2
# A value is short: a stretch longer than this on either side is a different property.
VALUE_TERMS = 3
# Terms two statements must share for a value changed between them to be sure: a subject
# and an attribute.
SLOT_TERMS = 3
# A rule's polarity flips only between two statements this alike (Dice).
FLIP_AT_LEAST = 0.4
# Plain words the new statement may say around its new value.
SAID_AROUND = 4
# A count's noun inflected for its number: a stem of at least COUNT_STEM letters, an ending of
# at most COUNT_ENDING (`_count_agrees`).
COUNT_STEM = 3
COUNT_ENDING = 2
# Terms of the old statement the new one may leave out and still restate its slot.
DROPPED_AT_MOST = 1
# Share of the old statement's terms a sure change must keep (its subject and attribute).
KEPT_AT_LEAST = 0.5
# Terms a statement must share with another before it can be said to be contained in it.
SHARED_AT_LEAST = 2
# A reworded restatement shares at least this much (Dice) to be the same fact for sure.
SAME_AT_LEAST = 0.6
# ... or its terms are almost all in the other statement.
CONTAINED_AT_LEAST = 0.8


@dataclass(frozen=True)
class Region:
    """A stretch where two aligned statements differ."""

    old: tuple[Term, ...]
    new: tuple[Term, ...]
    left: int  # shared terms before it
    right: int  # shared terms after it

    @property
    def valued(self) -> bool:
        return any(t.valued for t in self.old) and any(t.valued for t in self.new)

    @property
    def holds_a_value(self) -> bool:
        """Whether a number or a value word stands on either side (a name alone is none)."""
        return any(t.kind in ("number", "value") for t in self.old + self.new)


@dataclass(frozen=True)
class Comparison:
    """How a new statement relates to an old one."""

    relation: Relation
    sure: bool
    reason: str
    overlap: float  # Dice of the two statements' terms
    regions: tuple[Region, ...] = ()  # where the value changed (relation `changed`)


def dice(a: set[str] | frozenset[str], b: set[str] | frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return 2 * len(a & b) / (len(a) + len(b))


def _value_class(term: Term) -> str:
    """What kind of value a term is, for compatibility: two values of one class can replace
    each other in a slot."""
    if term.kind == "number":
        return f"number:{term.shape}"
    if term.kind == "value":
        return f"value:{term.shape}"
    if term.kind == "ident" and term.role == "key":
        return f"key:{term.shape}"
    return "named"  # names, addresses, paths, hyphenated names: things a fact names


def compatible(old: tuple[Term, ...], new: tuple[Term, ...]) -> bool:
    """Whether the values of two stretches can fill one slot."""
    old_classes = {_value_class(t) for t in old if t.valued}
    new_classes = {_value_class(t) for t in new if t.valued}
    if not old_classes or not new_classes:
        return False
    if {_measured(c) for c in old_classes} & {_measured(c) for c in new_classes}:
        return True
    # Numbers whose units differ only in how they are said: none on one side ("port 8081"
    # / "8082"), or a word that is no unit of data/values.txt ("6 fois" / "5 nouvelles
    # tentatives"), or two units of one dimension ("30 s" / "2 min"). Two canonical units
    # of two dimensions (24 h / 200 GB) are two properties.
    numbers = {c for c in old_classes | new_classes if c.startswith("number:")}
    if numbers != old_classes | new_classes:
        return False
    canonical = {c for c in numbers if c.removeprefix("number:") in canonical_units()}
    return len({_measured(c) for c in canonical}) <= 1


def _measured(value_class: str) -> str:
    """A number's class by what its unit measures ("number:s", "number:min": one
    duration); a unit of no dimension, or one that is no unit of data/values.txt, as it is."""
    unit = value_class.removeprefix("number:")
    if unit == value_class or unit not in canonical_units():
        return value_class
    return f"number:{dimension(unit)}"


def _one_value_moved(
    regions: list[Region], dropped: list[Term], added: list[Term]
) -> Region | None:
    """The one value the old statement lost and the one the new statement gained, when
    they can fill one slot: a value changed in a sentence said otherwise. Other values the
    old statement lost, of other kinds, are left out by the new one ("DB는 db-stg-2.internal
    5433 포트에서" / "DB 포트가 6432로": the port changed, the host is not said)."""
    lost = [t for r in regions for t in r.old if t.valued] + [t for t in dropped if t.valued]
    gained = [t for r in regions for t in r.new if t.valued] + [t for t in added if t.valued]
    if len(gained) != 1:
        return None
    fitting = [t for t in lost if compatible((t,), (gained[0],))]
    if len(fitting) == 1:
        return Region((fitting[0],), (gained[0],), 0, 0)
    return None


def _narrower(
    old: Terms, new: Terms, opcodes: Sequence[tuple[str, int, int, int, int]], old_keys: set[str]
) -> bool:
    """Whether `new`, aligned with `old` by `opcodes`, says its value of a narrower thing."""
    return (
        narrowed_aligned(old, new, opcodes, old_keys)
        or put_before(new, opcodes, old_keys)
        or scoped_first(new, opcodes, old_keys)
        or scoped_between(old, new, opcodes, old_keys)
        or (said_by_a_pronoun(old) and named_first(new, opcodes, old_keys))
        # "Los backups de producción …", "Il database di staging …": which of them, said
        # after a word for "of" among what both say.
        or of_inserted(old, new, opcodes, old_keys)
        # "In Staging läuft der Cache …" beside "Der Cache läuft …": the verb second after
        # the scope, the words moved round it, as the older side reads it too.
        or opens_scoped(new, old_keys)
    )


def _broader(
    old: Terms,
    new: Terms,
    opcodes: Sequence[tuple[str, int, int, int, int]],
    old_keys: set[str],
    new_keys: set[str],
) -> bool:
    """Whether the older statement said its value of a narrower thing than the new one
    (`_narrower` read from its side): "For hotfixes, deploys need one approval", "The API
    rate limit for the search endpoint is 20 …", "Production deploys need two approvals"
    beside a new value said of all. Only where each value the older says alone has one in
    its place: an older statement that says more values ("… is at db-test-2.internal,
    port 5433" / "… port changed to 6432") holds more, it is not of a narrower thing; nor
    is a name the older puts a word before ("Используем PostgreSQL 13"). A name said after
    "for" or "of" ("Deploys for the API need two approvals") is the narrower thing, not a
    value, and needs none in its place."""
    old_values = [
        t for n, t in enumerate(old.terms)
        if t.key not in new_keys and t.valued and t.shape not in SCOPE_SHAPES
        and not _named_for(old, n)
    ]  # fmt: skip
    new_values = [t for t in new.terms if t.key not in old_keys and t.valued]
    if len(old_values) != len(new_values):
        return False
    mirrored = _mirrored(opcodes)
    return _older_narrower(old, new, mirrored, new_keys) or scoped_between(
        new, old, mirrored, new_keys
    )


def _named_for(terms: Terms, n: int) -> bool:
    """Whether the term at `n` is a name said right after "for" or "of" and determiners
    (`for`, `of` in data/cues.txt): what the statement holds for."""
    term = terms.terms[n]
    if term.kind not in ("name", "ident"):
        return False
    start = terms.terms[n - 1].end if n else 0
    words = _WORD.findall(terms.text[start : term.start].lower())
    lex = lexicon()
    return (
        bool(words)
        and words[0] in lex.for_ | lex.of
        and all(w in lex.determiners for w in words[1:])
    )


def _older_narrower(
    old: Terms, new: Terms, mirrored: Sequence[tuple[str, int, int, int, int]], new_keys: set[str]
) -> bool:
    """Whether the older statement names a narrower thing than the new one, before or
    inside what both say ("Production deploys …", "For hotfixes, deploys …" / "Deploys
    …"), read on the alignment from its side (`_mirrored`)."""
    return (
        narrowed_aligned(new, old, mirrored, new_keys)
        or put_before(old, mirrored, new_keys, of_names=False)
        or of_inserted(new, old, mirrored, new_keys)
        or scoped_first(old, mirrored, new_keys)
        or opens_scoped(old, new_keys)
        # "Each admin may upload 100 files" before "Each user may upload 10 files".
        or (said_by_a_pronoun(new) and named_first(old, mirrored, new_keys))
    )


def _compound_of(region: Region) -> bool:
    """Whether a stretch replaces a word or name with a compound holding it ("PRs" /
    "Doku-PRs", "API" / "search-API"): a narrower thing of that name."""
    parts = {
        part for t in region.new if t.kind == "ident" for part in regex.split(r"[-_./]", t.key)
    }
    return any(
        t.kind in ("word", "name") and (t.key in parts or f"{t.key}s" in parts) for t in region.old
    )


def _restricts(terms: Terms) -> bool:
    """Whether a statement says "only" (`only` in data/cues.txt): what it says holds for
    some of a thing, not all of it."""
    return bool(lexicon().only.search(terms.text))


def _mirrored(
    opcodes: Sequence[tuple[str, int, int, int, int]],
) -> list[tuple[str, int, int, int, int]]:
    """The same alignment read from the other statement's side."""
    swap = {"insert": "delete", "delete": "insert"}
    return [(swap.get(tag, tag), j1, j2, i1, i2) for tag, i1, i2, j1, j2 in opcodes]


def digits(term: Term) -> str:
    return term.key.split(" ")[0]


def _worded(term: Term) -> bool:
    """A number whose unit is a plain word, not one of data/values.txt's units."""
    return bool(term.shape) and term.shape not in canonical_units()


def distinct_keys(old: Terms, new: Terms, new_keys: set[str], old_keys: set[str]) -> str:
    """A key identifier on each side that the other side lacks: two different things."""
    old_only = sorted({t.key for t in old.terms if t.role == "key"} - new_keys)
    new_only = sorted({t.key for t in new.terms if t.role == "key"} - old_keys)
    if old_only and new_only:
        return f"distinct identifiers ({old_only[0]} / {new_only[0]})"
    return ""


def _name_for_opening_word(region: Region, old: Terms, new: Terms) -> bool:
    """Whether a one-term stretch is a name on one side and, on the other, the capitalised
    word that opens its statement (where capitals mark no name)."""
    if len(region.old) != 1 or len(region.new) != 1:
        return False
    pairs = ((region.old[0], old, region.new[0]), (region.new[0], new, region.old[0]))
    return any(
        word.kind == "word"
        and name.kind == "name"
        and terms.terms[:1] == (word,)
        and terms.text[word.start : word.start + 1].isupper()
        for word, terms, name in pairs
    )


NAMED_ANEW_ADDED = 2  # the capitalised opening and its verb


def _row_named_anew(old: Terms, new: Terms, dropped: list[Term], added: list[Term]) -> bool:
    """Whether the old statement is a table row whose first cell's term the new one says
    again and whose other cells' terms (at most VALUE_TERMS) it drops, opening with a
    capitalised word of its own and saying at most one word more (`_named_anew`)."""
    if not _TABLE_ROW.match(old.text) or len(old.terms) < 2 or not new.terms:
        return False
    opening, rest = new.terms[0], old.terms[1:]
    return (
        old.terms[0].key in new.keys
        and len(rest) <= VALUE_TERMS
        and all(t in dropped for t in rest)
        and opening.kind == "word"
        and opening in added
        and len(added) <= NAMED_ANEW_ADDED
        and new.text[opening.start : opening.start + 1].isupper()
    )


_TABLE_ROW = regex.compile(r"\s*\|.*\|\s*$")


def _named_anew(old: Terms, new: Terms, old_values: tuple[Term, ...], added: list[Term]) -> bool:
    """Whether the old statement is a labelled line whose values are names the new one
    drops, every word of its label is said again, and the new one opens with a capitalised
    word of its own and says at most one word more (its verb): where a sentence names who
    does a thing now ("Carol now owns search" beside "Search: Alice"; "Carol now owns the
    billing dashboard" says more). The one word more may be no verb: "Redis is now used
    for caching the database" beside "Database: Postgres" is linked too (a link loses
    nothing; unlinked, the owner replaced was recalled unmarked)."""
    opening = new.terms[0] if new.terms else None
    colon = regex.search(r"[:：]", old.text)
    return (
        colon is not None  # a labelled line: its words, a colon, its names
        and all(t.end <= colon.start() for t in old.terms if not t.valued)
        and all(t.start > colon.start() for t in old_values)
        and bool(old_values)
        and len(old_values) <= VALUE_TERMS
        and all(t.kind == "name" for t in old_values)
        and opening is not None
        and opening.kind == "word"
        and opening in added
        and len(added) <= NAMED_ANEW_ADDED
        and new.text[opening.start : opening.start + 1].isupper()
        and all(t.key in new.keys for t in old.terms if not t.valued)
    )


OWN_WORDS_AROUND = 2  # plain words of the old statement's own around its value


def _opens_with_its_own_words(old: Terms, new: Terms, added: list[Term]) -> bool:
    """Whether the new statement opens with plain words of its own (of a spaced script:
    "訂正：" is a label), said nowhere in the old one, before the first term both say,
    while the old one opens with that term."""
    old_keys = set(old.keys)
    first = next((i for i, t in enumerate(new.terms) if t.key in old_keys), None)
    if not first or not old.terms or old.terms[0].key != new.terms[first].key:
        return False
    return all(not t.valued and t in added and _spaced_word(t) for t in new.terms[:first])


def _word_grown_into_a_value(region: Region) -> bool:
    """Whether a plain word of one side of `region` is inside a value of the other side
    ("test" / "test-all", "prod" / "prod-eu-1"): one slot's value, written longer."""
    for plain_side, valued_side in ((region.old, region.new), (region.new, region.old)):
        words = [t.key for t in plain_side if not t.valued and len(t.key) >= 3]
        values = [t.key for t in valued_side if t.valued]
        if any(word in value for word in words for value in values):
            return True
    return False


def _thing_and_value(region: Region, old: Terms, new: Terms) -> bool:
    """Whether a stretch that differs is, on both sides alike, plain words then a value
    with words between them ("payments | is at …/payments", "billing | is Sarah"): the
    thing the value is of, and its value, both changed. Words of a spaced script: CJK pairs
    around a value are its verb's endings ("16 にした" / "12 に戻した")."""
    sides = (_stretches(old, region.old), _stretches(new, region.new))
    if len(sides[0]) != len(sides[1]) or len(sides[0]) < 2:
        return False
    pairs = list(zip(*sides, strict=True))
    return any(
        all(t.kind == "word" and not CJK_CHAR.match(t.key) for t in a + b) for a, b in pairs
    ) and any(any(t.valued for t in a) and any(t.valued for t in b) for a, b in pairs)


def _compound_renamed(region: Region) -> bool:
    """Whether a stretch holds, on each side, a value and a compound word (`compound_word`)
    the other side lacks, the two sharing a part but not the whole ("upload-limit" /
    "download-limit", "Upload-Größe" / "Download-Größe")."""
    sides = (region.old, region.new)
    if not all(any(t.kind in ("number", "value") for t in side) for side in sides):
        return False
    old, new = ({t.key for t in side if compound_word(t)} for side in sides)
    return any(set(a.split("-")) & set(b.split("-")) for a in old - new for b in new - old)


def _stretches(terms: Terms, put: tuple[Term, ...]) -> list[tuple[Term, ...]]:
    """`put`, cut where words stand between two of its terms."""
    return [put[a:b] for a, b in cut_apart(terms, put, _LETTER)]


_LETTER = regex.compile(r"\p{L}")


def _same_month(old_valued: list[Term], new_valued: list[Term]) -> bool:
    """Whether a date of each side names one month of one year ("--03-03" / "--03-10",
    "2026-03-05" / "2026-03-06"), the day changed."""
    months = [
        {t.key[: t.key.rindex("-")] for t in side if t.shape == "date" and t.key.count("-") >= 2}
        for side in (old_valued, new_valued)
    ]
    return bool(months[0] & months[1])


def _count_agrees(
    old_valued: list[Term], old_plain: list[Term], new_valued: list[Term], new_plain: list[Term]
) -> bool:
    """Whether the one plain word each side adds to a changed number is that number's noun,
    inflected for it: the numbers' units, one word whose forms differ only in an ending of
    at most two letters after a stem of three (terms keep a word's first five letters, so
    longer words already agree: "approval" / "approvals")."""
    if len(old_plain) != 1 or len(new_plain) != 1:
        return False
    a, b = old_plain[0].key, new_plain[0].key
    if a == b or not any(t.kind == "number" and t.shape == a for t in old_valued):
        return False
    if not any(t.kind == "number" and t.shape == b for t in new_valued):
        return False
    shorter = min(len(a), len(b))
    stem = next((i for i in range(shorter) if a[i] != b[i]), shorter)
    return stem >= COUNT_STEM and len(a) - stem <= COUNT_ENDING and len(b) - stem <= COUNT_ENDING


def _at_subject(region: Region) -> bool:
    """Whether a stretch of names or identifiers stands where a subject does (first)."""
    named = all(_value_class(t) == "named" for t in region.old + region.new if t.valued)
    return named and region.left <= 1


def subject_with_value(region: Region) -> bool:
    """Whether a stretch that changed opens the statement and holds, on each side, a number
    or value and a name or identifier, not the same: the subject changed with the value
    ("API는 8080" / "관리 UI는 9090"; not a verb reworded beside it, "send 600 requests" /
    "accepts 100 requests"). (Names alone are the value: "Maria Lopez" / "Tom Becker leads
    the backend team".)"""
    if region.left:
        return False
    sides = (region.old, region.new)
    if not all(any(t.kind in ("number", "value") for t in side) for side in sides):
        return False
    named = [{t.key for t in side if t.kind in ("name", "ident")} for side in sides]
    return bool(named[0]) and bool(named[1]) and named[0] != named[1]


def _user_word_replaced(region: Region, old: Terms, new: Terms) -> bool:
    """Whether a stretch read by pairs of characters holds, on one side only, the word for
    the user (`user` in data/cues.txt, a function word): "每个用户每天可以上传10个文件" /
    "每个管理员每天可以上传100个文件" — the pair "个用" against "管理", "理员" is the user
    against the admin, not a word reworded (as "each user" / "each admin" in a spaced
    script, `restated.said_by_a_pronoun`)."""
    for mine, theirs, other in ((region.old, old, new), (region.new, new, old)):
        if not mine:
            continue
        start, end = mine[0].start, mine[-1].end
        for word in lexicon().users:
            if not CJK_CHAR.match(word) or word in other.text:
                continue
            at = theirs.text.find(word)
            if at >= 0 and at < end and at + len(word) > start:
                return True
    return False


def _swapped_in_subject(region: Region, old: Terms, new: Terms) -> bool:
    """Whether a stretch swaps plain words of the subject, before the copula that comes
    before the value, on both sides ("최대 업로드 크기는 10MB" / "최대 다운로드 크기는 100MB":
    another limit, not the same one reworded)."""
    return words_swapped(
        [t for t in region.old if in_subject(old, t)], [t for t in region.new if in_subject(new, t)]
    )


_WORD = regex.compile(r"[\p{L}']+")


def _named_before_its_value(region: Region, old: Terms, new: Terms) -> bool:
    """Whether each side of a stretch opens with a name, the two names differ, and a word
    stands between it and the side's value ("Kafka ha 3" / "Redis ha 5") or the value
    counts or measures something ("Redis 5 воркеров"): the name says whose the value is.
    A bare number right after its name is the name's own ("Postgres 16" / "MySQL 8": the
    value itself)."""
    if region.left == 0 or not region.old or not region.new:
        return False
    if region.old[0].key == region.new[0].key:
        return False
    for side, terms in ((region.old, old), (region.new, new)):
        value = next((t for t in side[1:] if t.valued), None)
        if side[0].kind != "name" or value is None:
            return False
        counted = value.kind == "number" and bool(value.shape)
        if not counted and not _WORD.search(terms.text[side[0].end : value.start]):
            return False
    return True


def _other_subject(region: Region) -> bool:
    """Whether a stretch that differs on both sides stands before anything the statements
    share, holding words or names but no value: where a subject stands. Not when a word
    of one side begins as one of the other does ("Prod DB" / "the production database":
    perhaps one subject, abbreviated)."""
    heads = {t.key[:3] for t in region.old}
    return (
        region.left == 0
        and bool(region.old)
        and bool(region.new)
        and not region.holds_a_value
        and not any(t.key[:3] in heads for t in region.new)
    )


# Pairs a name of up to three characters makes with the characters on each side of it.
CJK_NAME_PAIRS = 4


def _cjk_name_sized(region: Region) -> bool:
    """Whether both sides of a stretch are CJK pairs, as few as a short name makes."""
    return all(
        0 < len(side) <= CJK_NAME_PAIRS
        and all(t.kind == "word" and CJK_CHAR.match(t.key) for t in side)
        for side in (region.old, region.new)
    )


def _capitalised(side: Sequence[Term], terms: Terms) -> bool:
    """Whether every term of one side of a stretch is written with a capital."""
    return all(terms.text[t.start : t.start + 1].isupper() for t in side)


def _said_words(terms: Iterable[Term]) -> int:
    """How many plain words of a spaced script `terms` hold, words that say when aside
    ("seit Juni Fatma" says one person)."""
    when = lexicon().when
    return sum(1 for t in terms if _spaced_word(t) and t.key not in when)


def _spaced_word(term: Term) -> bool:
    """A plain word of a script that spaces its words (not a CJK pair or particle)."""
    return term.kind == "word" and not CJK_CHAR.match(term.key)


def compare(
    old: Terms, new: Terms, polarity_changed: bool = True, around: frozenset[str] = frozenset()
) -> Comparison:
    """How the statement `new` relates to the statement `old`, by the alignment of their
    terms. `polarity_changed`: whether the memories as a whole differ in polarity (a
    statement split otherwise than its restatement may read as negated on one side only).
    `around`: the terms of the heading the old statement stands under — said of it too,
    so a new statement that names them ("The staging cache is now redis-stg-4" / "- Cache:
    redis-stg-2" under "Staging environment:") names no narrower thing by them.
    What a new statement says it replaced is read apart (`replaced.py`).

    A statement said as one more besides another ("Sarah also owns the invoicing service"
    / "Sarah owns the billing service": `additive` in data/cues.txt) changes nothing of
    it unless it announces a change other than when ("We also moved logging to Loki";
    "Sarah also owns the invoicing service now" is still one more) or turns it round
    ("Los cambios de documentación también necesitan revisión" / "No hace falta
    revisión para cambios de documentación"); one the older statement said as one more
    is replaced only by a change announced (`OLDER_ONE_MORE`)."""
    found = _compare(old, new, polarity_changed, around)
    if (
        # (An unsure "different" too: "Carol also reviews PRs" / "Alice and Bob review PRs"
        # is one more reviewer, never the same fact reworded.)
        (
            found.relation in ("changed", "extends")
            or (found.relation, found.sure) == ("different", False)
        )
        and not new.announces_what
        and old.negated == new.negated
        and _adds(new)
        and not _adds(old)
    ):
        return Comparison("different", False, ONE_MORE, found.overlap)
    if (
        found.relation == "changed"
        and found.sure
        and not new.announces_what
        and old.negated == new.negated
        and _adds(old)
        and not _adds(new)
    ):
        # Read from the older side: "API は us-east-1 でも動いています" (also) beside "API
        # は eu-west-1 で動いています" may name the region it was one more besides.
        # Written over, us-east-1 was gone. A lean, unless a change is announced.
        return replace(found, sure=False, reason=OLDER_ONE_MORE)
    return found


def _adds(terms: Terms) -> bool:
    """Whether a statement says it is one more: an `additive` word that is not part of a
    conjunction ("as well" in "as well as" joins two things of one statement)."""
    lex = lexicon()
    if _ALSO_AFTER_A_VALUE.search(terms.text):
        return True
    joined = [m.span() for m in lex.conjunction.finditer(terms.text)]
    return any(
        not any(a <= m.start() and m.end() <= b for a, b in joined)
        for m in lex.additive.finditer(terms.text)
    )


# The Japanese も and the Korean 도 say "also" right after a value written in Latin letters
# or digits, or after the case particle that follows it ("us-east-1でも動いています",
# "Rust로도 작성"); elsewhere they are particles of many uses (not in data/cues.txt).
_ALSO_AFTER_A_VALUE = regex.compile(
    r"[A-Za-z0-9_.\-]"
    r"(?:(?:で|に|と|から|まで|へ)?も(?!う)|(?:에서|에|로|으로|와|과|하고|랑|이랑)?도(?![\p{Hangul}]))"
)


def _compare(old: Terms, new: Terms, polarity_changed: bool, around: frozenset[str]) -> Comparison:
    old_keys, new_keys = set(old.keys), set(new.keys)
    overlap = round(dice(old_keys, new_keys), 3)
    if not old_keys or not new_keys:
        return Comparison("unrelated", True, "nothing to compare", overlap)
    distinct = distinct_keys(old, new, new_keys, old_keys)
    if distinct:
        return Comparison("different", True, distinct, overlap)
    if overlap < UNRELATED_BELOW:
        return Comparison("unrelated", True, "little in common", overlap)
    matcher = SequenceMatcher(None, old.keys, new.keys, autojunk=False)
    regions: list[Region] = []
    dropped: list[Term] = []
    added: list[Term] = []
    shared_before = 0
    total_shared = sum(size for _, _, size in matcher.get_matching_blocks())
    opcodes = matcher.get_opcodes()
    for tag, i1, i2, j1, j2 in opcodes:
        if tag == "equal":
            shared_before += i2 - i1
        elif tag == "replace":
            regions.append(
                Region(
                    old.terms[i1:i2],
                    new.terms[j1:j2],
                    shared_before,
                    total_shared - shared_before,
                )
            )
        elif tag == "delete":
            dropped.extend(old.terms[i1:i2])
        else:
            added.extend(new.terms[j1:j2])
    # A term moved elsewhere in the sentence is not a difference; nor is a number said
    # with another word for its unit ("at most 5 times" / "at most 5 retries").
    old_numbers = {digits(t) for t in old.terms if t.kind == "number"}
    new_numbers = {digits(t) for t in new.terms if t.kind == "number"}
    new_keys |= {
        t.key for t in new.terms if t.kind == "number" and digits(t) in old_numbers and _worded(t)
    }
    new_keys |= {
        t.key for t in old.terms if t.kind == "number" and digits(t) in new_numbers and _worded(t)
    }
    old_keys |= {
        t.key for t in old.terms if t.kind == "number" and digits(t) in new_numbers and _worded(t)
    }
    old_keys |= {
        t.key for t in new.terms if t.kind == "number" and digits(t) in old_numbers and _worded(t)
    }
    # ... but a plain word put in another's place is no move where the alignment already
    # holds each time the other statement says it: "Our main branch is now called main" /
    # "… is called master" says "main" again in place of "master", it does not move the
    # first. (A name said again names a new value: "from Kong 2.8 to Kong 3.4".)
    aligned = Counter(
        t.key for tag, i1, i2, _, _ in opcodes if tag == "equal" for t in old.terms[i1:i2]
    )
    in_old, in_new = Counter(old.keys), Counter(new.keys)

    def said_elsewhere(term: Term, keys: set[str], said: Counter[str]) -> bool:
        if term.key not in keys:
            return False
        return term.kind != "word" or term.key not in said or said[term.key] > aligned[term.key]

    regions = [
        r
        for r in (
            Region(
                tuple(t for t in r.old if not said_elsewhere(t, new_keys, in_new)),
                tuple(t for t in r.new if not said_elsewhere(t, old_keys, in_old)),
                r.left,
                r.right,
            )
            for r in regions
        )
        if r.old or r.new
    ]
    for r in list(regions):
        if not r.old or not r.new:  # one-sided once moved terms are out
            regions.remove(r)
            (added if r.new else dropped).extend(r.new or r.old)
    dropped = [t for t in dropped if t.key not in new_keys]
    added = [t for t in added if t.key not in old_keys]
    flipped = old.negated != new.negated and polarity_changed
    announced = new.change_cue or flipped
    # Both negate, but not as often: perhaps the rule turned round, perhaps a rewording.
    renegated = old.negated and new.negated and len(old.negations) != len(new.negations)
    kept = len(old_keys & new_keys) / len(old_keys)
    keeps_slot = kept >= KEPT_AT_LEAST and len(dropped) <= DROPPED_AT_MOST

    if not regions:
        if flipped and overlap >= FLIP_AT_LEAST:
            if (
                said_then_more(old, new, added)
                or inserts_aligned(old, new, opcodes, old_keys)
                or scoped_after(old, new)
                or named_first(new, opcodes, old_keys)
                or scoped_first(new, opcodes, old_keys)
            ):
                # "We no longer squash merge pull requests in the docs repo" beside "We
                # squash merge pull requests", "It's fine to commit docs fixes directly to
                # main" beside "Do not commit directly to main": an exception, perhaps, not
                # the rule turned round. Written over, the rule for the rest was gone.
                return Comparison("changed", False, FLIPPED_NARROWER, overlap)
            if _restricts(new) and not _restricts(old) and not new.announces_what:
                # "PR нужно ревьюить" / "PR только с документацией ревьюить не нужно": turned
                # round for only some of it, not for all. (Announced, "only" names what
                # replaces it: "… больше не пишем на английском, только на русском"; not
                # announced by "теперь" alone.)
                return Comparison("changed", False, FLIPPED_NARROWER, overlap)
            if any(t.valued or old.text[t.start : t.start + 1].isupper() for t in dropped):
                # "Bob no longer reviews PRs" / "Alice and Bob review PRs": turned round for
                # one of the values (or names: a capital opening the sentence) it held.
                # Written over, Alice's part was gone.
                return Comparison("changed", False, FLIPPED_NARROWER, overlap)
            mirrored = _mirrored(opcodes)
            # (A cue that only says when, "now", announces no turn of the broader rule.)
            announced_turn = new.announces_what or new.ends_a_state
            if not announced_turn and (
                said_then_more(new, old, dropped)
                or inserts_aligned(new, old, mirrored, new_keys)
                or scoped_after(new, old)
                or named_first(old, mirrored, new_keys)
                or scoped_first(old, mirrored, new_keys)
                or (_restricts(old) and not _restricts(new))
            ):
                # The other way round: "Never push directly to main" beside "The release
                # bot can push directly to main": the rule for every case beside an
                # exception, not the exception turned round (written over, the exception
                # was gone) — unless the change is announced ("no longer", "now").
                return Comparison("changed", False, FLIPPED_BROADER, overlap)
            return Comparison(
                "changed", overlap >= SAME_AT_LEAST, "the rule's polarity flipped", overlap
            )
        if renegated and overlap >= FLIP_AT_LEAST:
            return Comparison("changed", False, "the rule negates otherwise", overlap)
        added_values = [t for t in added if t.valued]
        if (
            new.change_cue
            and not old.change_cue
            and added
            and not dropped
            and not said_then_more(old, new, added)
            and not scoped_after(old, new)
            and not _narrower(old, new, opcodes, old_keys)
            # "이제 운영 백업은 암호화됩니다" (now, production backups): words of its own
            # first, all of the old said after them, nothing changed.
            and not narrows_first(old, new, frozenset(old_keys))
        ):
            # "from Yamamoto to Nakamura", "Renovate instead of Dependabot": the new
            # statement holds the old one whole, and what replaces its value — not words
            # that narrow it, whatever it announces ("Code review needs two approvals for
            # changes to the payments service now" wrote the payments rule over all).
            return Comparison(
                "changed", True, "the new statement names the old value and a new one", overlap,
                (Region((), tuple(added), 0, 0),),
            )  # fmt: skip
        if added_values and not any(t.valued for t in dropped):
            if _older_narrower(old, new, _mirrored(opcodes), new_keys):
                # "Für Hotfixes brauchen die Deploys eine Freigabe" / "Die Deploys brauchen
                # drei Freigaben": said of all, not more of the hotfixes' rule.
                return Comparison("changed", False, BROADER, overlap)
            # A one-term statement ("how we deploy") is contained in almost anything.
            sure = len(dropped) <= DROPPED_AT_MOST and len(old_keys & new_keys) >= SHARED_AT_LEAST
            return Comparison("extends", sure, "the new statement says more", overlap)
        contained = len(new_keys & old_keys) / len(new_keys)
        sure = overlap >= SAME_AT_LEAST or contained >= CONTAINED_AT_LEAST
        old_values = tuple(t for t in dropped if t.valued)
        new_values = tuple(t for t in added if t.valued)
        if not new_values and any(
            t.kind == "number" and _worded(t) and t.shape in new_keys for t in old_values
        ):
            # "Les déploiements nécessitent deux validations" / "… une validation": a new
            # count, perhaps (the article says one); called the same fact, the correction
            # was dropped as known. For a narrower case, perhaps ("Pour les correctifs
            # urgents, …").
            narrower = _narrower(old, new, opcodes, old_keys | around)
            return Comparison("changed", False, NARROWER if narrower else COUNT_LEFT_OUT, overlap)
        # A value of one kind for another, announced, in a sentence said the other way
        # round ("我们每周二和周四发布" / "发布现在只在周三进行"): perhaps the same slot.
        reordered = announced and old_values and new_values and compatible(old_values, new_values)
        if announced and _named_anew(old, new, old_values, added):
            # "Search: Alice" / "Carol now owns search": the labelled line's subject said
            # again, a change announced, and a capital opening the sentence where its name
            # was — perhaps a name (a sentence's first word is not read as one). A lean,
            # linked: unmarked, the old owner was recalled as the owner.
            region = Region(old_values, (new.terms[0],), 0, 0)
            return Comparison("changed", False, ANNOUNCED_REWORDING, overlap, (region,))
        if announced and _row_named_anew(old, new, dropped, added):
            # "| Billing | Alice |" / "Carol now owns billing": the same, for a table row
            # whose first cell is said again (a cell opens as a sentence does: its
            # capital marks no name).
            region = Region(tuple(old.terms[1:]), (new.terms[0],), 0, 0)
            return Comparison("changed", False, ANNOUNCED_REWORDING, overlap, (region,))
        if not sure and dropped and added and not reordered:
            # Each says things the other does not, around a word or two in common.
            return Comparison("unrelated", False, AROUND_A_WORD, overlap)
        if old_values and new_values:
            if compatible(old_values, new_values) and len(old_values) <= VALUE_TERMS:
                # The sentence reordered around a value of one kind ("after 90 days logs
                # are deleted" / "logs are kept 14 days"): perhaps the same slot.
                region = Region(old_values, new_values, 0, 0)
                return Comparison("changed", False, REORDERED, overlap, (region,))
            return Comparison("different", False, "other values, other places", overlap)
        if narrowed_aligned(new, old, _mirrored(opcodes), new_keys):
            # "Use feature flags for risky changes" / "… for all changes": the new rule
            # leaves out what narrowed the old one. Dropped as known, it was lost.
            return Comparison("changed", False, UNQUALIFIED, overlap)
        return Comparison("same", sure, "the same statement, reworded", overlap)

    # A plain word of its own before a word both say names a narrower thing (`narrows`),
    # and so does one put alone before the first of them, a stretch of scope opening the
    # statement or put among them, where a value changed; said by the older statement
    # only, the older was of a narrower thing. Either is a lean, never written.
    qualified = (
        NARROWER
        if _narrower(old, new, opcodes, old_keys | around) or any(map(_compound_of, regions))
        else BROADER
        if _broader(old, new, opcodes, old_keys, new_keys)
        else ""
    )
    shaped_alike = len(old.terms) == len(new.terms) and all(
        len(r.old) == len(r.new) for r in regions
    )
    if len(regions) >= 2 and shaped_alike and any(r.valued for r in regions):
        alike = tuple(r for r in regions if r.valued)
        if announced:
            # "We format Python with ruff now, line length 100" / "Use black with line
            # length 88": one shape, but the writer says it changed. A lean, linked.
            return Comparison("changed", False, ANNOUNCED_SHAPE, overlap, alike)
        subjects = tuple(filter(_other_subject, regions))
        if subjects:
            # "The API uses port 8080" / "The admin UI uses port 9090", "Staging deploys
            # run at 10:00" / "Production deploys …": the subject named apart where it
            # stands, another subject even under one title given by hand, unless the title
            # names it (a topic, "Ports", "Deploys", does not: `titles.under_one_title`).
            # Its stretches are kept after the values' for that.
            return Comparison("different", True, SUBJECT_APART, overlap, alike + subjects)
        return Comparison("different", True, SAME_SHAPE, overlap, alike)
    if (
        len(regions) >= 2
        and shaped_alike
        and any(_other_subject(r) for r in regions)
        and not announced
    ):
        # "Priya owns the payments service" / "Marco owns the search service": one shape,
        # what stands first and another word differ — two subjects, not a rewording.
        return Comparison("different", False, OTHER_SUBJECT, overlap)
    if len(regions) == 1:
        region = regions[0]
        # Words said around the new value ("PostgreSQL 14 after the spring upgrade") are
        # added, not replaced, when the old side was a value alone.
        new_valued = [t for t in region.new if t.valued]
        old_plain = [t for t in region.old if not t.valued]
        new_plain = [t for t in region.new if not t.valued]
        old_valued = [t for t in region.old if t.valued]
        if _count_agrees(old_valued, old_plain, new_valued, new_plain):
            # The noun after a count agrees with it ("3 узла" / "5 узлов", "1 node" / "3
            # nodes", "3 uzly" / "5 uzlů"): the same word, not a word said along with it,
            # and kept as the slot's words are.
            old_plain, new_plain = [], []
            kept += 1 / len(old_keys)
            keeps_slot = kept >= KEPT_AT_LEAST and len(dropped) <= DROPPED_AT_MOST
        elif _same_month(old_valued, new_valued):
            # "March 3" / "March 10": one term each, a date, but the month said again is
            # kept as a word both say would be (read apart, "March" was one).
            kept += 1 / len(old_keys)
            keeps_slot = kept >= KEPT_AT_LEAST and len(dropped) <= DROPPED_AT_MOST

        def said_around(values: list[Term], plain: list[Term], bare: bool) -> bool:
            return bare and len(values) <= VALUE_TERMS and len(plain) <= SAID_AROUND

        small = (len(region.old) <= VALUE_TERMS and len(region.new) <= VALUE_TERMS) or (
            said_around(new_valued, new_plain, not old_plain and len(region.old) <= VALUE_TERMS)
            or said_around(old_valued, old_plain, not new_plain and len(region.new) <= VALUE_TERMS)
        )
        valued = region.valued
        plain = not any(t.valued for t in region.old + region.new)
        if valued and not compatible(region.old, region.new):
            return Comparison("different", small, "values of different kinds", overlap)
        if valued and not announced and _thing_and_value(region, old, new):
            # "The Grafana dashboard for payments is at …/payments" / "… for checkout is at
            # …/checkout": the thing the value is of changed with it, another thing's.
            return Comparison("different", False, OTHER_SUBJECT, overlap)
        if valued and not (new.announces_what or flipped) and _compound_renamed(region):
            # "Upload-Limit 10 MB" / "Download-Limit 100 MB": the compound that owns the
            # value names another thing of one kind (the part they share), as "upload
            # limit" / "download limit" do in two words — "ab sofort" too ("now" alone
            # announces no renaming).
            return Comparison("different", False, OTHER_SUBJECT, overlap)
        if (
            valued
            and not announced
            and len(old_plain) >= OWN_WORDS_AROUND
            and _opens_with_its_own_words(old, new, added)
        ):
            # "Pagos usa Adyen como pasarela" / "El líder técnico de pagos es Iker": words of
            # its own before what both say, and words of the old one's own around its value,
            # name two attributes of the subject.
            return Comparison("different", False, OTHER_SUBJECT, overlap)
        if _name_for_opening_word(region, old, new):
            # "Marie est la responsable…" / "Désormais, c'est Paul qui est responsable…":
            # a sentence's first word is not read as a name, but a capital there may be one.
            return Comparison(
                "changed", False, "a name changed where the subject stands", overlap, (region,)
            )
        if not valued and not plain:
            moved = _one_value_moved(regions, dropped, added)
            if moved is not None:
                return Comparison(
                    "changed", False, "a value changed, and other words", overlap, (moved,)
                )
            if announced and region.left >= 1:
                return Comparison("changed", False, ANNOUNCED_REWORDING, overlap, (region,))
            if _word_grown_into_a_value(region):
                # "Run the tests with make test" / "… with make test-all": the old word is
                # inside the new value, the same slot said otherwise. A lean that links.
                return Comparison("changed", False, WORD_GROWN, overlap, (region,))
            return Comparison("different", False, "a value on one side only", overlap)
        if not small:
            if valued and announced and region.left >= 1:
                # A lean, linked: which of the words around the values went with them is
                # not known, so it is never written in place.
                return Comparison("changed", False, ANNOUNCED_REWORDING, overlap, (region,))
            if valued:  # perhaps a correction in other words; too loose to link as one
                return Comparison("different", False, "a value and its wording changed", overlap)
            if announced and _cjk_name_sized(region):
                # "支付服务由王磊负责" / "支付服务现在由李娜负责": a two-character name is
                # four pairs with the characters around it. Announced: a lean, linked.
                return Comparison("changed", False, "a word changed", overlap, (region,))
            return Comparison("different", False, "another property", overlap)
        if not valued:
            pure = not dropped and not added
            if region.left == 0:
                # A word where the subject stands: "Production now deploys after merge"
                # announces a change of production, not that staging became production,
                # while "We use spaces for indentation now" (its verb a function word)
                # replaces the tabs. Announced and one word for one, a lean; else one word
                # in common ("Priya owns the payments service" / "Python services target
                # Python 3.12") is another subject.
                # So is one word for one in a statement of two ("The user is a backend
                # engineer" / "… a frontend engineer": the subject a function word): a lean.
                one_for_one = len(region.old) == len(region.new) == 1
                two_terms = len(old.terms) == len(new.terms) == 2
                if pure and (announced or (two_terms and one_for_one)):
                    return Comparison("changed", False, WORD_AT_SUBJECT, overlap, (region,))
                if len(old_keys & new_keys) < SHARED_AT_LEAST:
                    return Comparison("unrelated", False, AROUND_A_WORD, overlap)
            more = len(region.new) > len(region.old) or (_restricts(new) and not _restricts(old))
            if flipped and not new.change_cue and more:
                # "Les PR nécessitent une revue" / "Les PR de documentation n'ont pas besoin
                # de revue": the verb reworded as the rule turned round, and a word more or
                # an "only" — perhaps for whom it turned round, not for all.
                return Comparison("changed", False, FLIPPED_NARROWER, overlap, (region,))
            # Two plain words: a tool swapped ("black" → "ruff") reads like a verb reworded
            # ("ausführen" → "laufen"); only an announced change settles it.
            # More words for one ("Der Owner ist Alice" / "Der Owner des Suchdienstes ist
            # jetzt Bob": whose owner, and who) is no swap of one word: a lean. (Words of a
            # spaced script: CJK pairs differ by where the pair cuts.)
            wider = _said_words(region.new) > max(1, _said_words(region.old))
            # A rule turned round with a word swapped ("Don't mock the database in
            # integration tests" / "Mock the database in unit tests") may be the rule for
            # another case: only a change announced settles the word (a cue, or a negation
            # that ends a state: "можно" / "больше нельзя").
            # ("… in unit tests now": a cue that only says when settles no word swapped
            # as the rule turned round.)
            announces = (new.announces_what if flipped else new.change_cue) or (
                flipped and new.ends_a_state
            )
            # Two words or more swapped on each side ("is written in astro" / "is now hosted
            # on netlify": a verb and its object) may say another property: never settled —
            # unless all are capitalised, a name read as words where capitals mark nouns too
            # ("ist jetzt Anna Schmidt" / "ist Markus Weber").
            one_word = min(_said_words(region.old), _said_words(region.new)) <= 1 or (
                _capitalised(region.old, old) and _capitalised(region.new, new)
            )
            sure = announces and pure and keeps_slot and not qualified and not wider and one_word
            reason = qualified or "a word changed"
            return Comparison("changed", sure, reason, overlap, (region,))
        if _at_subject(region) and region.right >= 2 and not announced:
            return Comparison(
                "changed", False, "a name changed where the subject stands", overlap, (region,)
            )
        if _named_before_its_value(region, old, new):
            # "La coda Redis ha 5 worker" / "La coda Kafka ha 3 worker", "O cluster UE tem
            # 5 nós": a name after a word both say, then a word of the sentence (its verb, a
            # function word), then the value — whose value it is, not the value: the Kafka
            # queue's workers were written over with the Redis queue's.
            return Comparison("different", False, OTHER_SUBJECT, overlap)
        # Words replaced or said along with the value ("happens in Figma" / "is run by
        # Keiko", "は Notion にある" / "は Omar がレビューする"): perhaps another property,
        # unless the change is announced — and an announcement settles words said along
        # with a value, not words replaced: "is now hosted on Netlify" announces a change
        # of where the site is hosted, not of what "is written in Astro" says.
        # A number that keeps its owner ("Node 18" / "Node 22 to build") is anchored to
        # its slot whatever is said around it.
        anchored = any(
            o.kind == "number" and n.kind == "number" and o.owner and o.owner == n.owner
            for o in old_valued
            for n in new_valued
        )
        # Words of a spaced script only: around a value, an unspaced script's pairs and
        # particles differ by where the pair cuts ("由" / "新由") or by the value's last
        # sound (Korean 이 / 가), not by what is said.
        reworded = any(_spaced_word(t) for t in old_plain) and any(
            _spaced_word(t) for t in new_plain
        )
        pure = (
            (not old_plain and not new_plain)
            or (announced and not reworded)
            or (anchored and len(old_plain) <= 1 and not reworded)
        )
        # A number needs a subject and an attribute around it to be a slot's value: "Deploy
        # step 0" / "Deploy step 1" are two numbered things, not one changed (unless a name
        # owns the number, "Node 18" / "Node 22", or the change is announced).
        named_owner = anchored and any(
            t.kind == "name" and t.key in {v.owner for v in old_valued} for t in old.terms
        )
        numbered = all(t.kind == "number" for t in old_valued + new_valued)
        stands = not numbered or len(old_keys & new_keys) >= SLOT_TERMS or announced or named_owner
        # A plain word replaced beside a version its name owns ("version 14 in production" /
        # "version 16 in staging"): perhaps the version of another thing. No tier settles it.
        beside = anchored and reworded and len(old_plain) <= 1
        # One statement negates and the other does not ("Bob no longer reviews PRs" /
        # "Reviewers: Alice, Bob"): what is negated may be a value kept, not the one
        # replaced. A lean; when the new one ends a state ("no longer"), one no tier or
        # shared title settles (put in place, "Reviewers: PRs, Bob"). A plain "not" names
        # the value it corrects ("… from the captured amount, not the order total").
        reason = qualified or (
            NEGATED_SWAP
            if flipped and new.ends_a_state
            else WORD_BESIDE
            if beside
            else "a value changed in the same slot"
        )
        sure = keeps_slot and pure and stands and not qualified and not flipped
        return Comparison("changed", sure, reason, overlap, (region,))
    valued_regions = [r for r in regions if r.valued]
    moved = _one_value_moved(regions, dropped, added)
    if len(valued_regions) != 1 and moved is not None:
        # One value for another, the sentence said another way around it.
        return Comparison("changed", False, "a value changed, and other words", overlap, (moved,))
    if len(valued_regions) == 1 and compatible(valued_regions[0].old, valued_regions[0].new):
        if not announced and any(_other_subject(r) for r in regions if r is not valued_regions[0]):
            # "Staging runs on db-stg-7.internal" / "Our CI runs on GitHub Actions": the
            # words before what both say differ, so the value is another subject's —
            # unless the new statement announces a change: then those first words may
            # say when ("Seit dem Upgrade im Mai läuft die Suche auf Elasticsearch 8").
            return Comparison("different", False, OTHER_SUBJECT, overlap)
        # The other stretches reworded between shared terms ("is" → "runs", "upgraded
        # again" → "runs"), not where a subject stands: the same slot, its value changed.
        inside = all(
            r.left >= 1
            and r.right >= 1
            and not any(t.valued for t in r.old + r.new)
            and not _swapped_in_subject(r, old, new)
            for r in regions
            if r is not valued_regions[0]
        )
        value = valued_regions[0]
        if any(_user_word_replaced(r, old, new) for r in regions if r is not value):
            # The user's value and another subject's: a lean, which no title settles.
            return Comparison("changed", False, USER_REPLACED, overlap, tuple(valued_regions))
        sure = (
            inside
            and keeps_slot
            and len(value.old) <= VALUE_TERMS
            and not _at_subject(value)
            and not qualified
        )
        reason = qualified or "a value changed, and other words"
        return Comparison("changed", sure, reason, overlap, tuple(valued_regions))
    if (
        len(valued_regions) == len(regions)
        and all(compatible(r.old, r.new) and not _at_subject(r) for r in regions)
        and kept >= KEPT_AT_LEAST
    ):
        # Every stretch a value of one kind for another, none where the subject stands
        # ("jeden Dienstag um 10 Uhr" / "am Donnerstag um 14 Uhr", "毎週火曜日の10時" /
        # "木曜日の14時"): perhaps the same slot said with a new value in several parts.
        return Comparison(
            "changed", False, "values changed in the same slot", overlap, tuple(valued_regions)
        )
    subjects = tuple(filter(_other_subject, regions))
    if subjects:
        return Comparison("different", False, SUBJECT_APART, overlap, (*valued_regions, *subjects))
    return Comparison("different", False, SEVERAL, overlap, tuple(valued_regions))
