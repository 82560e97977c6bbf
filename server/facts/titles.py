"""What one title given by hand settles (docs/writing.md, "The zero-loss rule").

A title written by hand (not the body's opening words, `title_is_derived`) that two
memories share names one subject — or one topic of several ("Ports", "Limits",
"Frontend stack"). The judgement asks these rules of each statement a new memory
answers:

- values replaced, each by one of its kind, in statements of one shape are that title's
  subject's update (`under_one_title`), unless another subject is named where the subject
  stands that the title does not name ("The API uses port 8080" / "The admin UI uses port
  9090" under "Ports");
- such an update is sure (`settles`) unless a doubt the title cannot lift stands: a plain
  word swapped beside a value that does not name its slot ("The frontend uses React" /
  "The frontend tests use Jest"), a subject's words apart before the copula ("Max upload
  size is 10 MB" / "Max download size is 100 MB"), words qualifying a word both say right
  up to the value ("Max upload size 10 MB" / "Max download size 100 MB"), a name swapped
  beside the value ("Rétention Kafka 7 jours" / "Rétention Redis 14 jours"), a subject
  changed with its value, or a reason of `TITLE_DOUBTS`;
- words the new statement puts before a value that are the old memory's title name its
  subject, not a narrower thing (`named_by_title`).

A verb reworded beside the value ("El servicio responde en el puerto 8085" / "… escucha
en el puerto 8082" under "Puerto del servicio") stays the title's update.
"""

from __future__ import annotations

import functools
import itertools
from dataclasses import replace

import regex
from memory_recall.server.facts.lexicon import CJK_CHAR, canonical_units
from memory_recall.server.facts.slots import (
    BROADER,
    NARROWER,
    NEGATED_SWAP,
    SAME_SHAPE,
    SEVERAL,
    SUBJECT_APART,
    USER_REPLACED,
    Comparison,
    Region,
    compatible,
    subject_with_value,
)
from memory_recall.server.facts.statements import Statement
from memory_recall.server.facts.terms import STEM_CHARS, Term, Terms, read_terms
from memory_recall.server.facts.wording import in_subject, plain_words, words_swapped
from memory_recall.server.tokens import normalize

UNDER_ONE_TITLE = "a value changed under one title"
NAMED_BY_TITLE = "a value changed of the thing the title names"
# Changes a shared title does not settle: a plain word swapped (a tool, or a verb
# reworded), a name where the subject stands, a value said of a narrower thing.
TITLE_DOUBTS = (
    "a word changed",
    "a name changed where the subject stands",
    NARROWER,
    BROADER,
    NEGATED_SWAP,
    USER_REPLACED,
)


def same_given_title(old_title: str, old_body: str, new_title: str, new_body: str) -> bool:
    """Whether two memories share a title given by hand (neither their bodies' openings)."""
    if title_is_derived(old_title, old_body) or title_is_derived(new_title, new_body):
        return False
    return (
        _NON_WORD.sub(" ", normalize(old_title)).strip()
        == _NON_WORD.sub(" ", normalize(new_title)).strip()
    )


_NON_WORD = regex.compile(r"[^\p{L}\p{M}\p{N}]+")


def title_stems(title: str) -> frozenset[str]:
    """The title's words, by stem: what its topic names."""
    return frozenset(k[:STEM_CHARS] for k in read_terms(title).keys)


def under_one_title(c: Comparison, title: frozenset[str]) -> Comparison:
    """`c`, read under one title given by hand (`title`, its stems): values replaced, each
    by one of its kind, in a statement of one shape are that title's subject's update —
    unless another subject is named where the subject stands that the title does not name
    (a title may name a topic of several: "Ports", "The API uses port 8080" / "The admin
    UI uses port 9090"; "Puerto local de medios" names "local" in "En local, …")."""
    # The stretches where another subject stands (`slots.SUBJECT_APART` keeps them after
    # the values'): names or words, no number or value.
    apart = [r for r in c.regions if not r.holds_a_value] if c.reason == SUBJECT_APART else []
    valued = [r for r in c.regions if r.valued and r not in apart]
    if (
        c.relation == "different"
        and c.reason in (SAME_SHAPE, SEVERAL, SUBJECT_APART)
        and valued
        and all(compatible(r.old, r.new) for r in valued)
        and all(_named_in(r, title) for r in apart)
    ):
        return replace(
            c, relation="changed", sure=False, reason=UNDER_ONE_TITLE, regions=tuple(valued)
        )
    return c


def settles(c: Comparison, old: Terms, new: Terms, title: frozenset[str]) -> bool:
    """Whether one title settles `c`, a value changed from statement `old` to `new`: not
    where the stretch that changed opens the statement and names something besides its
    value ("API는 8080 포트를" / "관리 UI는 9090 포트를": the subject changed with the
    value, as a title of a topic allows), nor where a word swapped or a subject's words
    apart may say another thing of the topic."""
    return (
        bool(c.regions)
        and c.reason not in TITLE_DOUBTS
        and not any(map(subject_with_value, c.regions))
        and not any(_word_swapped_beside(r, title) for r in c.regions)
        and not any(_name_swapped_beside(r, title) for r in c.regions)
        and not _subject_words_apart(old, new, title)
        and not _words_apart_before_value(old, new, title)
        and not _key_swapped(old, new, title, c.regions)
    )


def _word_swapped_beside(region: Region, title: frozenset[str]) -> bool:
    """Whether a plain word changed on both sides beside a value that does not name its
    slot by itself: "The frontend uses React" / "The frontend tests use Jest" under one
    title "Frontend stack" is another fact of the title's topic, and words are not told
    apart from verbs here, so the title does not settle it (a lean that links, the old fact
    kept). Not a word the title names (its topic), nor beside a count of one counted thing
    on both sides, which names its slot whatever verb stands beside it ("Each client may
    send 600 requests" / "The API accepts 100 requests"), nor after a measure of one unit
    ("2024년 11월 1일 예정이다" / "… 12월 2일 로 연기되었다": a verb after the date). A
    word swapped before a measure says whose it is: "Лимит загрузки 10 МБ" / "Лимит
    скачивания 100 МБ" are two limits, whatever the unit."""
    if not words_swapped(region.old, region.new, title):
        return False
    units = _units(region)
    if units and not units & canonical_units():
        return False  # a count of one counted thing
    if units:
        return words_swapped(_before_value(region.old), _before_value(region.new), title)
    return True


def _name_swapped_beside(region: Region, title: frozenset[str]) -> bool:
    """Whether a name changed on both sides beside a number or value that changed too: the
    name is not the value then but whose it is ("Rétention Kafka 7 jours" / "Rétention
    Redis 14 jours", as "Kafka retention" / "Redis retention" where the subject stands).
    A name is no verb, so no unit lifts it; one the title names is its topic."""
    sides = (region.old, region.new)
    if not all(any(t.kind in ("number", "value") for t in side) for side in sides):
        return False
    names = [
        {t.key for t in side if t.kind == "name" and t.key[:STEM_CHARS] not in title}
        for side in sides
    ]
    if names[0] - names[1] and names[1] - names[0]:
        return True
    # A name on one side where plain words stand on the other ("Node 18 for the web app" /
    # "Node 20 for the API"): another thing named in their place.
    words = [plain_words(side, title) for side in sides]
    return bool(names[0] - names[1] and words[1] - words[0] and not words[0] - words[1]) or bool(
        names[1] - names[0] and words[0] - words[1] and not words[1] - words[0]
    )


def _subject_words_apart(old: Terms, new: Terms, title: frozenset[str]) -> bool:
    """Whether the two statements say plain words apart on both sides in their subjects —
    before the copula that comes before their values (`wording.in_subject`): "Max upload
    size is 10 MB" / "Max download size is 100 MB" under "Limits", "Максимальный размер
    загрузки — 10 МБ" / "… скачивания — 100 МБ" are other limits of the topic, whatever
    the values' unit. A verb reworded beside the value is no subject ("responde" /
    "escucha")."""
    mine = [t for t in old.terms if t.key not in new.keys and in_subject(old, t)]
    theirs = [t for t in new.terms if t.key not in old.keys and in_subject(new, t)]
    # Names and identifiers are no verbs: one on each side before the copula is another
    # thing's ("サービス profile はポート 7101" / "サービス payment はポート 7102").
    named = [{t.key for t in side if t.kind in ("name", "ident")} for side in (mine, theirs)]
    return words_swapped(mine, theirs, title) or bool(named[0] and named[1])


def _key_swapped(
    old: Terms, new: Terms, title: frozenset[str], regions: tuple[Region, ...]
) -> bool:
    """Whether each statement says a word, name or identifier of its own right before a
    plain word both say, nothing but a space between: what names the thing the statement
    is of ("Service auth listens on port 8081" / "Service billing listens on port 8082",
    "Queue jobs-high drains into …" / "Queue jobs-low …", "The primary database runs on
    …" / "The replica database …"): a template said of another thing, not its update. A
    verb reworded stands before a function word ("The API listens on port 8080" / "… serves
    on port 8081"): not read here; nor the one value that changed, a name alone ("Maria
    Lopez leads the backend team" / "Tom Becker leads …": who leads is the value)."""
    alone = {t.key for t in regions[0].old + regions[0].new} if len(regions) == 1 else set()
    sides = [_keys_before_shared(old, new, title), _keys_before_shared(new, old, title)]
    sides = [side - alone for side in sides]
    return bool(sides[0]) and bool(sides[1]) and sides[0] != sides[1]


# Between a thing's name and its verb: a space, and at most a reflexive pronoun ("La cola
# pedidos-mx se vacía", "Le job purge-sessions s'exécute", "Il job si avvia").
_CLITIC_AT_MOST = regex.compile(r"\s*(?:(?:se|si)\s+|s['’])?", regex.I)


def _keys_before_shared(mine: Terms, other: Terms, title: frozenset[str]) -> set[str]:
    """The words (by stem), names and identifiers of `mine` that `other` does not say,
    each right before a plain word both say (`_key_swapped`)."""
    out = set()
    for term, after in itertools.pairwise(mine.terms):
        if (
            term.kind in ("word", "name", "ident")
            and term.key not in other.keys
            and term.key[:STEM_CHARS] not in title
            and not CJK_CHAR.match(term.key)
            and after.kind == "word"
            and after.key in other.keys
            and _CLITIC_AT_MOST.fullmatch(mine.text[term.end : after.start])
        ):
            out.add(term.key[:STEM_CHARS] if term.kind == "word" else term.key)
    return out


def _words_apart_before_value(old: Terms, new: Terms, title: frozenset[str]) -> bool:
    """Whether words differ on both sides where they qualify a word both say before the
    value, nothing but words between them and it: "Max upload size 10 MB" / "Max download
    size 100 MB", "API read timeout 30 s" / "API write timeout 60 s", "Postgres port
    5432" / "Redis port 6379" under one topic are other limits, timeouts and ports, said
    without a copula (`_subject_words_apart` reads those with one). A verb stands apart
    from the value by a function word ("El servicio responde en el puerto 8085" / "…
    escucha en el puerto 8082"), a word right before the value is `_word_swapped_beside`'s
    and a name that owns its number ("Node 18" / "Bun 1.1") is the value's: not read here."""
    mine, theirs = _qualifying(old, new), _qualifying(new, old)
    names = [{t.key for t in side if t.kind == "name"} for side in (mine, theirs)]
    return words_swapped(mine, theirs, title) or bool(names[0] and names[1])


def _qualifying(mine: Terms, other: Terms) -> list[Term]:
    """The words and names of a spaced script of `mine` that `other` does not say, each
    followed by a term both say, in the run of terms that ends at the first number or
    value word of `mine`: no function word and no punctuation but a hyphen between."""
    value = next((t for t in mine.terms if t.kind in ("number", "value")), None)
    if value is None:
        return []
    before = [t for t in mine.terms if t.end <= value.start]
    spans = [(t.start, t.end) for t in mine.terms]
    out = []
    for n, term in enumerate(before):
        between = mine.text[term.end : value.start]
        if (
            term.kind in ("word", "name")
            and not CJK_CHAR.match(term.key)
            and term.key not in other.keys
            and any(u.key in other.keys for u in before[n + 1 :])
            and _ONLY_WORDS.fullmatch(between)
            and _covered(mine.text, term.end, value.start, spans)
        ):
            out.append(term)
    return out


_ONLY_WORDS = regex.compile(r"[\p{L}\p{M}\p{N}\s-]*")
_WORD_RUN = regex.compile(r"[\p{L}\p{M}]+")


def _covered(text: str, start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    """Whether every word of `text[start:end]` lies inside a term's span (no function word)."""
    return all(
        any(a <= m.start() and m.end() <= b for a, b in spans)
        for m in _WORD_RUN.finditer(text, start, end)
    )


def _units(region: Region) -> frozenset[str]:
    """The units of a stretch's values when one and the same on both sides, every value
    with one (else empty)."""
    units = [{_unit(t) for t in side if t.valued} for side in (region.old, region.new)]
    return frozenset(units[0]) if units[0] == units[1] and "" not in units[0] else frozenset()


def _before_value(side: tuple[Term, ...]) -> tuple[Term, ...]:
    """The terms of one side of a stretch before its first value."""
    first = next((n for n, t in enumerate(side) if t.valued), len(side))
    return side[:first]


def _unit(term: Term) -> str:
    """A count's unit as its key holds it ("600 reque": requests), "" for anything else."""
    return term.key.partition(" ")[2] if term.kind == "number" else ""


def _named_in(region: Region, title: frozenset[str]) -> bool:
    """Whether the title names what a stretch of either side says (a word of it, by stem)."""
    return any(t.key[:STEM_CHARS] in title for t in region.old + region.new)


def named_by_title(
    c: Comparison,
    title: str,
    body: str,
    old: tuple[Statement, Terms],
    new: tuple[Statement, Terms],
) -> Comparison:
    """`c`, a value changed "perhaps of a narrower thing", as a value changed in the same
    slot when the words the new statement puts before it are the old memory's title
    (`title`, `body`: the old memory's), given by hand: "The search service owner is now
    Bob" beside "The owner is Carol." in the memory titled "Search service" names that
    memory's subject, not a narrower one. Only when the title is said whole (but for words
    of the old statement) and nothing else: beside "Billing service" the same statement
    stays a lean."""
    (old_said, old_terms), (new_said, new_terms) = old, new
    if c.reason != NARROWER or old_said.label or new_said.label or title_is_derived(title, body):
        # A labelled line's text is its value alone: the sentence put in its place would
        # read "Owner: The search service owner is now Bob".
        return c
    stated, said = set(old_terms.keys), set(new_terms.keys)
    values = {t.key for r in c.regions for t in r.new}
    qualifier = said - stated - values
    named = set(read_terms(title).keys)
    if qualifier and qualifier <= named and named <= qualifier | stated:
        return replace(c, sure=True, reason=NAMED_BY_TITLE)
    return c


@functools.lru_cache(maxsize=4096)
def title_is_derived(title: str, body: str) -> bool:
    """Whether a title is the body's opening words (a `remember` without a title). Kept:
    newer-wins asks it of every pair a recall delivers, and folding a long body is most of
    a CJK query's recall (docs/performance.md)."""
    # A long first sentence is cut with "…", which folding would turn into "...".
    key = _fold(title.rstrip().removesuffix("…"))
    return bool(key) and _folded_opening(body, len(key)).startswith(key)


def _fold(text: str) -> str:
    return " ".join(normalize(text).replace("*", "").replace("`", "").split())


_ASCII_SPACE = regex.compile(r"[ \t\n\r]")


def _folded_opening(body: str, length: int) -> str:
    """`_fold(body)`, or a prefix of it at least `length` long: the body folded up to an
    ASCII space, tab or line break. Nothing composes, reorders or changes case across one
    (NFKC and lowercasing see it as a boundary, and it splits words), so the opening's
    fold is the whole's up to there; a long body is not folded whole to read its start."""
    cut = length + 16
    while cut < len(body):
        space = _ASCII_SPACE.search(body, cut)
        if space is None:
            break
        opening = _fold(body[: space.start()])
        if len(opening) >= length:
            return opening
        cut = 2 * space.start() + 1
    return _fold(body)
