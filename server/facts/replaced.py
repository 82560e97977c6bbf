"""What a new statement says it replaced, where the alignment of two statements finds two
facts (docs/writing.md, "Slots").

Aligned word by word (`slots.compare`), a correction said with a preposition or a verb of
its own reads as a second fact: "We upgraded the API gateway from Kong 2.8 to Kong 3.4"
beside "The API gateway runs Kong 2.8 on gw-1" (a host against a version), "We now deploy
on Wednesdays" beside a long sentence that says Tuesdays among other things. Two readings
find such a correction anyway:

- an old value named right beside a new one of its kind, the change announced (`from_to`;
  for plain words, `words_from_to`);
- a short announcement that says nothing the old statement does not but one value, of a
  kind the old one holds exactly once (`announced_within`).

Both are leans, linked: which value was replaced is read from neighbours and counts, and a
subject and its object stand side by side too, so no tier has them rewritten
(`tiers._LINK_ONLY`). `said_for` is also how a change tells that a new statement names an
old value again beside its replacement (`changes.Change.restated`).
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_recall.server.facts.lexicon import CJK_CHAR, lexicon
from memory_recall.server.facts.slots import Comparison, Region, compatible, distinct_keys
from memory_recall.server.facts.terms import Term, Terms

FROM_TO = "the new statement names an old value beside a new one of its kind"
WITHIN_LONGER = "a new value announced for one of a longer statement"


def read_replaced(old: Terms, new: Terms, compared: Comparison) -> Comparison:
    """`compared` (the alignment's reading of two statements), or, when it found two facts,
    the correction the new statement says it is."""
    if compared.relation not in ("different", "unrelated") or not old.keys or not new.keys:
        return compared
    if not new.change_cue or old.change_cue:
        return compared  # both readings below are of a change the new statement announces
    if distinct_keys(old, new, set(new.keys), set(old.keys)):
        return compared
    moved = from_to(old, new) or words_from_to(old, new)
    if moved is not None:
        return Comparison("changed", False, FROM_TO, compared.overlap, (moved,))
    moved = announced_within(old, new)
    if moved is not None:
        return Comparison("changed", False, WITHIN_LONGER, compared.overlap, (moved,))
    return compared


def announced_within(old: Terms, new: Terms) -> Region | None:
    """A short statement that announces a new value and says nothing the old one does not
    but that value ("We now deploy on Wednesdays" beside "We deploy on Tuesdays once a week
    and freeze the code the afternoon before", "现在每周三发布" beside "每周二发布一次，发布前一天
    下午冻结代码"): too little in common with the whole sentence by Dice, yet perhaps a
    correction of one of its values — the one of its kind, when there is one."""
    old_keys, new_keys = set(old.keys), set(new.keys)
    brought = [t for t in new.terms if t.key not in old_keys]
    said = [t for t in new.terms if t.key in old_keys]
    if len(brought) != 1 or not brought[0].valued or not any(not t.valued for t in said):
        return None
    kin = [
        t for t in old.terms
        if t.valued and t.key not in new_keys and compatible((t,), (brought[0],))
    ]  # fmt: skip
    return Region((kin[0],), (brought[0],), 0, 0) if len(kin) == 1 else None


def from_to(old: Terms, new: Terms) -> Region | None:
    """The old value a new statement says was replaced, and its replacement: a statement
    that announces a change and names a value of the old one beside a value of its kind
    the old one does not hold ("We upgraded the API gateway from Kong 2.8 to Kong 3.4"
    beside "The API gateway runs Kong 2.8 on gw-1", "Argo CD instead of Spinnaker", "von
    PostgreSQL 14 auf 16"). Whatever else the two say, the new one may correct that slot."""
    olds = {t.key: t for t in old.terms if t.valued}
    terms = new.terms
    for i, term in enumerate(terms):
        if term.key not in olds or not term.valued:
            continue
        for j, other in enumerate(terms):
            if other.valued and other.key not in olds and said_for(terms, i, j):
                # One term each: in a value of several ("GitHub Actions", "Argo CD") the
                # neighbour may be part of it rather than what it replaced.
                if _one_term(terms, i, j) and _one_term(terms, j, i):
                    return Region((olds[term.key],), (other,), 0, 0)
                return None
    return None


def words_from_to(old: Terms, new: Terms) -> Region | None:
    """`from_to` for a tool or a thing a team writes in lower case: a statement that
    announces a change and names a plain word of the old one right beside a plain word the
    old one does not hold, with a word of replacement between (`toward` in data/cues.txt:
    "We switched from black to ruff" beside "We format Python with black", "passé de
    webpack à vite", "ruff instead of black"; "with", "for" or "by" after a verb of
    swapping: "We replaced black with ruff")."""
    olds = {t.key: t for t in old.terms if t.kind == "word"}
    terms = new.terms
    for i, term in enumerate(terms):
        if term.kind != "word" or term.key not in olds or CJK_CHAR.match(term.key):
            continue
        for j in (i - 1, i + 1):
            if not 0 <= j < len(terms):
                continue
            other = terms[j]
            if other.kind != "word" or other.key in olds or CJK_CHAR.match(other.key):
                continue
            first, last = sorted((term, other), key=lambda t: t.start)
            between = " ".join(new.text[first.end : last.start].lower().split())
            if between in lexicon().toward or (  # "… black to ruff", "ruff instead of black"
                between in _SWAPPED_WITH and first is term and _after_a_swap(new.text, term)
            ):
                return Region((olds[term.key],), (other,), 0, 0)
    return None


# Between a thing replaced and its replacement after a verb of swapping ("replaced black
# with ruff"); elsewhere "with" joins two things used together.
_SWAPPED_WITH = frozenset({"with", "for", "by"})


def _after_a_swap(text: str, term: Term) -> bool:
    before = text[: term.start].split()
    return bool(before) and before[-1].lower() in lexicon().swap


def _one_term(terms: Sequence[Term], at: int, partner: int) -> bool:
    """Whether the value at `at` stands alone: no value of its kind and shape beside it but
    the one said for it (`partner`)."""
    return not any(
        0 <= k < len(terms)
        and k != partner
        and terms[k].valued
        and terms[k].shape == terms[at].shape
        and compatible((terms[k],), (terms[at],))
        for k in (at - 1, at + 1)
    )


# CJK pairs that may stand between a value and the one said for it ("14 升级到 16").
CJK_BETWEEN = 2


def said_for(terms: Sequence[Term], i: int, j: int) -> bool:
    """Whether `terms[i]` and `terms[j]` stand as a value and the one said in its place: of
    one kind and shape, side by side ("from Jenkins to GitHub", "Argo CD instead of
    Spinnaker"; the words between are function words or cues, which are no terms), with
    only the word before the first said again ("from Node 18 to Node 20"), or with a CJK
    verb between ("从 14 升级到 16"). Not two parts of one date ("2025年5月")."""
    first, last = sorted((i, j))
    if first == last or terms[i].shape != terms[j].shape:
        return False
    if not compatible((terms[i],), (terms[j],)):
        return False
    between = terms[first + 1 : last]
    if not between:
        return True
    if len(between) == 1 and first > 0 and between[0].key == terms[first - 1].key:
        return True
    return len(between) <= CJK_BETWEEN and all(
        t.kind == "word" and CJK_CHAR.match(t.key) for t in between
    )
