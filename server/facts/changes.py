"""A statement of an old memory changed by one of a new memory, and how the change is
written (docs/writing.md, "Partial updates"): the changed value put in its new form in a
title or description that names the old value, or in the old statement itself when the
new one leaves out a value of it ("the test database port changed to 6432" for "the test
database is at db-test-2.internal, port 5433")."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import regex
from memory_recall.server.facts.lexicon import CJK_CHAR, canonical_units, lexicon
from memory_recall.server.facts.replaced import said_for
from memory_recall.server.facts.slots import Comparison, Region, compatible, digits
from memory_recall.server.facts.statements import Statement
from memory_recall.server.facts.terms import Term, Terms


@dataclass(frozen=True)
class Change:
    """One statement of the old memory that a statement of the new one replaces."""

    old: Statement
    new: Statement
    comparison: Comparison
    # The old statement with its changed values in their new form, when the new statement
    # leaves out a value of the old one besides those it changes ("the test database port
    # changed to 6432" for "the test database is at db-test-2.internal, port 5433"):
    # written in its place, the host stays.
    in_place: str | None = None
    # Why writing this change would lose a value of the old statement ("" when it would
    # not): such a change is never written over the old memory, whoever settles it.
    loses: str = ""
    # The values of the old statement the new one does not say, besides those it changes,
    # as written there: the new memory alone does not hold all the old one did (newer
    # wins hides nothing).
    left_out: tuple[str, ...] = ()
    # A value of the old statement the new one names again beside a new value of its kind
    # ("from Node 18 to Node 20", "Argo CD instead of Spinnaker"), as written there ("" when
    # none): which old value the new one replaces is then the writer's to say. Put in place
    # of the value the changed stretch aligned with, it would state what nobody said ("Node
    # 18 and pnpm 20", "Jenkins at GitHub Actions").
    restated: str = ""

    @property
    def written(self) -> str:
        """What the rewrite puts where the old statement was."""
        return self.in_place if self.in_place is not None else self.new.text


def said(statement: Statement) -> str:
    """A statement as its terms were read: with its label (`Why: …`) when it has one."""
    return f"{statement.label}: {statement.text}" if statement.label else statement.text


def surfaces(statement: Statement, terms: tuple[Term, ...]) -> list[str]:
    text = said(statement)
    return [text[t.start : t.end] for t in terms]


def substitute(text: str, changes: Iterable[Change]) -> str | None:
    """`text` with each changed value put in its new form; None when an old value is in
    it that cannot be put cleanly (several old terms for a different number of new ones)."""
    out = text
    for change in changes:
        for region in change.comparison.regions:
            olds, news = region.old, region.new
            if any(t.valued for t in olds):
                # The values, not the plain words the stretch swept along ("12:00 before
                # a release" / "09:00"): "release" in the title "Release process" is none.
                olds = tuple(t for t in olds if t.valued)
                news = tuple(t for t in news if t.valued)
            old = surfaces(change.old, olds)
            new = surfaces(change.new, news)
            present = [s for s in old if s and _whole(s).search(out)]
            if not present:
                continue
            if change.restated or not new:
                return None
            if len(old) == len(new):
                pairs = [
                    (_units_differ(o, n) and _with_units(change, o, n)) or (before, after)
                    for o, n, before, after in zip(olds, news, old, new, strict=True)
                ]
            elif len(present) == 1 and _one_shape(olds + news):
                pairs = [(present[0], " ".join(new))]
            else:
                return None
            for before, after in pairs:
                out = _put(out, before, after)
    return out


def _one_shape(terms: tuple[Term, ...]) -> bool:
    """Whether a stretch's new terms are all of the shape of its old one: a host for a host,
    a name for a name ("db-stg-3" / "db-stg-5"), not a host for a product's name
    ("ci.internal:8080" / "GitHub Actions": put in place, "Jenkins at GitHub Actions"),
    nor a number for a name and a number ("Django 4" / "Django 5", its name read as a
    plain word on one side: "Django Django 5")."""
    return len({(t.kind, t.shape) for t in terms}) == 1


def _put(text: str, before: str, after: str) -> str:
    """`text` with every `before` (in any case) written as `after` where it stands whole."""
    return _whole(before).sub(lambda _m: after, text)


def _whole(value: str) -> regex.Pattern[str]:
    """`value` in any case where it stands whole: never the "8" of "18" or "v1.8", nor the
    "Go" of "Google" (a CJK word has no such edge: 秒 may follow 30 directly)."""
    head = "" if not value else _EDGE_BEFORE.get(_edge_class(value[0]), "")
    tail = "" if not value else _EDGE_AFTER.get(_edge_class(value[-1]), "")
    return regex.compile(head + regex.escape(value) + tail, flags=regex.I)


def _edge_class(char: str) -> str:
    if char.isdigit():
        return "digit"
    return "word" if regex.match(r"[\p{L}\p{M}]", char) and not CJK_CHAR.match(char) else ""


# A word never inside an address, a path or a host either: the "alice" of
# "alice@example.com" is not the name Alice.
_EDGE_BEFORE = {
    "digit": r"(?<!\d)(?<!\d[.,])",
    "word": r"(?<![\p{L}\p{M}\d@/_])(?<![\p{L}\d][.-])",
}
_EDGE_AFTER = {"digit": r"(?![.,]?\d)", "word": r"(?![\p{L}\p{M}\d@/_])(?![.-][\p{L}\d])"}


def _units_differ(old: Term, new: Term) -> bool:
    """Whether two numbers are in two units of data/values.txt ("30 seconds" / "2 minutes")."""
    return old.shape != new.shape and {old.shape, new.shape} <= canonical_units()


def _with_units(change: Change, old: Term, new: Term) -> tuple[str, str] | None:
    """Two numbers in two units (`_units_differ`) as written with their units ("30
    seconds", "2 minutes"): put in place of the number alone, the old unit would stay
    ("2 seconds"). None when a unit is not found after one of them."""
    before, after = _with_unit(said(change.old), old), _with_unit(said(change.new), new)
    return (before, after) if before is not None and after is not None else None


def _with_unit(text: str, term: Term) -> str | None:
    """A number as written with the unit after it ("30 seconds", "30秒"); None when no
    unit of data/values.txt follows it."""
    unit = lexicon().unit.match(text, term.end)
    return text[term.start : unit.end()] if unit else None


def written_change(
    change: Change, old: Terms, new: Terms, memory: frozenset[str] = frozenset()
) -> Change:
    """A change of an old statement (terms `old`) by a new one (terms `new`) as the
    rewrite will write it (`in_place`), or why that would lose a value (`loses`).
    `memory`: the terms of the whole old memory.

    The rewrite puts the new statement in the old one's place. When the new one leaves
    out a value of the old one besides those it changes — a stretch of the old statement
    may hold two values where the new one says one ("at 02:00 and go to s3://backups" /
    "at 03:30") — the old statement is written instead, each changed value in its new
    form. That needs the new statement to say nothing else (it would be lost)."""
    if change.old.stamp and not change.new.stamp:
        # "2026-11-02: Deploys need one approval." / "Deploys need two approvals.": put in
        # its place, the new rule would stand under the old line's date.
        return replace(change, loses="the old line's date would stand for the new statement")
    if _tells_the_past(old) and not _tells_the_past(new):
        # "… because the pool size was 10. We raised it to 50." / "The payments DB pool
        # size is now 80": written in, the incident's history said the pool was 80.
        return replace(change, loses="the old statement tells what was")
    restated = _restated(change, old, new)
    if restated:
        change = replace(change, restated=restated)
    paired = [(r, o, n) for r in change.comparison.regions for o, n in _value_pairs(r)]
    pairs = [(o, n) for _r, o, n in paired]
    stated = set(new.keys) | {digits(t) for t in new.terms if t.kind == "number"}
    # A name of several words ("GitHub Actions", "Google Cloud") is one value: the words
    # of it the new statement does not say go with the one it replaces.
    names = {o: _name_run(old, o, stated) for o, _n in pairs if o.kind == "name"}
    replaced = {o.key for o, _n in pairs} | {t.key for run in names.values() for t in run}
    left_out = [
        t for t in old.terms
        if t.valued and t.key not in replaced and t.key not in stated
        and not (t.kind == "number" and digits(t) in stated)
    ]  # fmt: skip
    # A line labelled by its subject ("Billing service: owned by Priya") answered by a
    # plain statement ("The billing service is now owned by Marco") reads best with its
    # value changed where it stands, if the new statement says nothing else.
    relabelled = bool(change.old.label) and not change.new.label
    # Words of the old statement the new one does not say ("…end to end and posts to
    # #deploys" / "Deploys now take about 20 minutes end to end"): written over, they
    # would be gone; with only the values changed where they stand, nothing is.
    words_left = any(not t.valued and t.key not in stated for t in old.terms)
    # A table row ("| staging | db-stg-2 | 5432 |") is written only with its values changed
    # where they stand: a sentence put in its place broke the table, and put in place of
    # the header row ("| Service | Owner |") it took the column names with it.
    tabled = bool(_TABLE_ROW.match(change.old.text)) and not _TABLE_ROW.match(change.new.text)
    in_place_only = "a table row is written only with its values changed where they stand"
    if not left_out and not relabelled and not words_left and not tabled:
        return change
    said_old = said(change.old)
    change = replace(change, left_out=tuple(said_old[t.start : t.end] for t in left_out))
    # A value left out beside one it changes, of the same kind ("only on Tuesdays and
    # Thursdays" / "now only on Wednesdays", "毎週火曜日と木曜日"): the new one may replace
    # both, or only the first. Written either way it could say what the user did not:
    # never settled. Beside: in the changed stretch, or at most two terms away (a CJK
    # "日" between two weekdays); one further off is another slot ("starts at 01:00 UTC
    # … must finish before 06:00").
    at = {t.start: i for i, t in enumerate(old.terms)}  # a term's place, by where it starts

    def beside(t: Term, region: Region, o: Term) -> bool:
        near = o.start in at and abs(at[t.start] - at[o.start]) <= 2
        return near or t in region.old

    def one_slot(t: Term, o: Term) -> bool:
        if t.kind == o.kind == "number" and t.owner and o.owner and t.owner != o.owner:
            return False  # "Python 3.11, Node 20": each its own thing's version
        # A frequency right before the day it changes says one schedule with it ("every
        # second Tuesday", "毎週火曜日"): "every Wednesday" may have replaced both.
        schedule = t.kind == o.kind == "value" and (t.shape, o.shape) == _SCHEDULE
        return _kin(o, t) or (schedule and at.get(t.start, -2) + 1 == at[o.start])

    alike = [
        t for t in left_out
        if any(beside(t, r, o) and one_slot(t, o) for r, o, _n in paired)
    ]  # fmt: skip
    if alike:
        also = " and ".join(said_old[t.start : t.end] for t in alike)
        return replace(change, loses=f"the new statement may replace {also} too")
    doubt = f"the new statement leaves out {change.left_out[0]}" if left_out else ""
    runs = [names.get(o, [o]) for o, _n in pairs]
    unsaid = [t for t in old.terms if t.key not in stated and not any(t in run for run in runs)]
    own = _said_of(said_old, unsaid, runs)
    if own:
        # "Search: Alice (alice@example.com)" / "The search owner is now Carol": the address
        # is Alice's. Kept where it stands it would be Carol's, and dropped it is gone.
        return replace(change, loses=f"the new statement leaves out {own}, said of the old value")
    known = set(old.keys) | {n.key for _o, n in pairs}
    if relabelled or tabled:  # (a table's column names are in its header row)
        # Answering a labelled line, the new statement may name what the heading above it
        # names ("La caché de staging ahora es redis-stg-4" under "Entorno de staging:"):
        # said elsewhere in the memory, those words are not lost with the value changed
        # where it stands.
        known |= memory
    if not pairs and not doubt:
        # Plain words changed in one clause of an old statement of two, and the new one
        # leaves out words of the other ("The user's name is Sam and they work on the
        # payments team" / "Sam moved to the search team"): written over, "the user's
        # name is Sam" was gone.
        apart = _other_clause(change, old, stated, said_old)
        if apart:
            doubt = f"the new statement leaves out {apart}"
    # "是", "입니": the copula an unspaced script reads as a term says nothing of its own.
    known |= lexicon().copulas
    if not pairs or any(not _known(t.key, known) for t in new.terms):
        if tabled:
            return replace(change, loses=doubt or in_place_only)
        return replace(change, loses=f"{doubt} and says other words") if doubt else change
    if change.restated:
        restated = f"the new statement names {change.restated} again beside a new value"
        return replace(change, loses=restated)
    text = change.old.text
    said_new = said(change.new)
    put_old: set[Term] = set()
    put_new: set[Term] = set()
    for o, n in pairs:
        if o in put_old or n in put_new:
            continue  # a word of a name already put whole ("Anna Schmidt" → "Jonas Weber")
        if _units_differ(o, n):
            # "30 秒" / "2 分钟": the unit is written with the number
            units = _with_units(change, o, n)
            if units is None:
                return replace(change, loses=doubt or "its unit changed, not written in place")
            before, after = units
        else:
            run = names.get(o, [o])
            into = _name_run(new, n, set(old.keys)) if o.kind == n.kind == "name" else [n]
            put_old.update(run)
            put_new.update(into)
            before = said_old[run[0].start : run[-1].end]
            after = said_new[into[0].start : into[-1].end]
        text = _put(text, before, after)
    if text == change.old.text:
        return replace(change, loses=doubt or (in_place_only if tabled else ""))
    return replace(change, in_place=text)


def _known(key: str, known: set[str]) -> bool:
    """Whether a term of the new statement is said in the old memory, a short word's plural
    too: a term is a word's first letters, so "port" and "ports" are two ("The admin port
    is now 9091" under "Ports:" put the whole sentence after "Admin:")."""
    return key in known or f"{key}s" in known or (key.endswith("s") and key[:-1] in known)


def _said_of(text: str, unsaid: list[Term], runs: list[list[Term]]) -> str:
    """A term the new statement does not say that is said of a value the change replaces:
    in brackets right after it ("Alice (alice@example.com)", "Alice (she owns search)"):
    what the brackets hold, as written; "" when none is."""
    for run in runs:
        opening = _BRACKET_AFTER.match(text, run[-1].end)
        if opening is None:
            continue
        closing = text.find(_CLOSING[opening.group().strip()], opening.end())
        inside = len(text) if closing < 0 else closing
        if any(opening.end() <= t.start and t.end <= inside for t in unsaid):
            return text[opening.end() : inside].strip()
    return ""


_TABLE_ROW = regex.compile(r"\s*\|")
_BRACKET_AFTER = regex.compile(r"[ \t]*[(\[（]")
_CLOSING = {"(": ")", "[": "]", "（": "）"}


def _name_run(terms: Terms, name: Term, stated: set[str]) -> list[Term]:
    """`name` and the names next to it (nothing but spaces between) that `stated` does not
    hold, in order: the words of one name ("GitHub Actions")."""
    at = terms.terms.index(name)
    run = [name]
    for step in (-1, 1):
        k = at + step
        while 0 <= k < len(terms.terms):
            t, near = terms.terms[k], run[0] if step < 0 else run[-1]
            gap = terms.text[t.end : near.start] if step < 0 else terms.text[near.end : t.start]
            if t.kind != "name" or t.key in stated or gap.strip():
                break
            run.insert(0, t) if step < 0 else run.append(t)
            k += step
    return run


def _tells_the_past(terms: Terms) -> bool:
    """Whether a statement tells what was (`past` in data/cues.txt)."""
    return bool(lexicon().past.search(terms.text))


def _other_clause(change: Change, old: Terms, stated: set[str], said_old: str) -> str:
    """A word of the old statement the new one does not say, in a clause the change does
    not touch: across a conjunction or a semicolon from every term the change replaces
    ("… is Sam and they work on the payments team"); "" when there is none."""
    changed = [t for r in change.comparison.regions for t in r.old]
    if not changed or CJK_CHAR.search(said_old):
        return ""  # in CJK a conjunction may sit inside a pair ("Spark 和 Airflow")
    cuts = [m.start() for m in lexicon().conjunction.finditer(said_old)]
    cuts += [m.start() for m in _CLAUSE_MARK.finditer(said_old)]
    for cut in cuts:
        before = all(t.end <= cut for t in changed)
        after = all(t.start >= cut for t in changed)
        if not (before or after):
            continue
        for t in old.terms:
            other_side = t.start >= cut if before else t.end <= cut
            if other_side and not t.valued and t.key not in stated:
                return said_old[t.start : t.end]
    return ""


_CLAUSE_MARK = regex.compile(r"[;；]")


def _kin(a: Term, b: Term) -> bool:
    """Two values that can fill one slot, names and identifiers of one shape only: a file
    for a file, a host for a host, not a product's name for a file (TestFlight and
    `release.yml` in "uploaded to TestFlight by the `release.yml` workflow")."""
    return compatible((a,), (b,)) and (a.shape == b.shape or a.kind in ("number", "value"))


# The shapes of a frequency and the day it qualifies ("every second" "Tuesday").
_SCHEDULE = ("frequency", "weekday")


def _restated(change: Change, old: Terms, new: Terms) -> str:
    """The value of the old statement that the new one names again, outside its changed
    stretches, beside a new value said in its place (`replaced.said_for`), as the new
    statement writes it ("18" of "from Node 18 to Node 20"); "" when there is none."""
    brought = {t.start for r in change.comparison.regions for t in r.new if t.valued}
    if not brought:
        return ""
    changed = {t.start for r in change.comparison.regions for t in r.new}
    # The value a changed stretch replaces, named again ("from Kong 2.8 to Kong 3.4" read
    # as 2.8 → 3.4): the new statement says which one it is.
    replaced = {t.key for r in change.comparison.regions for t in r.old}
    # The label of a labelled line is what the value is of, said again as the subject
    # ("SRE: Lena" / "The SRE is now Jonas"), not an old value named beside the new one.
    label = {t.key for t in old.terms if t.end <= len(change.old.label)}
    old_keys = set(old.keys) - replaced - label
    terms = new.terms
    for i, term in enumerate(terms):
        if not term.valued or term.key not in old_keys or term.start in changed:
            continue
        if any(t.start in brought and said_for(terms, i, j) for j, t in enumerate(terms)):
            return said(change.new)[term.start : term.end]
    return ""


def _value_pairs(region: Region) -> list[tuple[Term, Term]]:
    """Each value of the new side with the first value of the old side that can fill its
    slot, in order — one of its own shape first (`ship.yml` replaces `release.yml`, not the
    TestFlight before it)."""
    olds = [t for t in region.old if t.valued]
    pairs = []
    for n in (t for t in region.new if t.valued):
        match = next((o for o in olds if _kin(o, n)), None) or next(
            (o for o in olds if compatible((o,), (n,))), None
        )
        if match is not None:
            olds.remove(match)
            pairs.append((match, n))
    return pairs
