"""A statement read as its words, function words included (docs/writing.md, "The zero-loss
rule").

The terms (`terms.py`) leave function words out and keep no order, so "at least" and "at
most", "vor" and "nach", "is" and "was" read alike, and a subject said in function words
("the user") is no term at all. Where that difference is the fact, these readings look
at the words as written:

- a statement said again with a word or two swapped in one place, an "only" or a word
  of the past added or left out, or two words changing places (`swaps_a_word`): the
  judgement never drops it as the same fact;
- a change announced of a subject said in function words: the new statement opens with
  the old one's first words (`openings_alike_announced`), or places that subject
  elsewhere (`placed_elsewhere`: "The user moved to Lisbon" / "… is based in Berlin");
- a change announced to a tool that does the job another tool named in the old statement
  does (`switched_alike`: "We switched to Microsoft Teams" / "We use Slack for chat"), or
  to an address of the same host or shape (`readdressed`: "Use https://api.example.com/v2
  from now on" / "The API base URL is https://api.example.com/v1");
- where a word stands: before the copula that comes before a statement's value, in its
  subject (`in_subject`); and whether two statements' plain words differ on both sides
  (`words_swapped`), which the slots and the title's rules read there.

Spaced scripts only: a run of Chinese, Japanese, Korean or a script written without
spaces is one token here (there only an "only" said on one side counts).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Iterator, Sequence
from difflib import SequenceMatcher

import regex
from memory_recall.server.facts.lexicon import CJK_CHAR, function_words, lexicon
from memory_recall.server.facts.terms import HANGUL_CHAR, STEM_CHARS, UNSPACED_CHAR, Term, Terms

SWAPPED_AT_MOST = 2  # words on either side of the one place `swaps_a_word` reads
OPENING_WORDS = 3  # the words `openings_alike_announced` reads: a subject and its verb
SUBJECT_WORDS_AT_MOST = 4  # a subject `placed_elsewhere` reads ("the user", "our QA team")

_TOKEN = regex.compile(r"[\p{L}\p{M}\p{N}]+")


def _by_pairs(text: str) -> bool:
    """Whether the text holds a script whose terms are pairs or whole runs, not words."""
    return bool(CJK_CHAR.search(text) or UNSPACED_CHAR.search(text))


def swaps_a_word(old: Terms, new: Terms) -> bool:
    """Whether `new` says `old`'s words, function words included, with one or two of them
    swapped for others in one place (not the same words inflected: their stems differ), or
    added or left out there when they restrict or tell what was, or two of them changing
    places: "at least once a day" / "at most …", "is up" / "is down", "vor dem Deploy" /
    "nach dem Deploy", "с покрытием" / "без покрытия", "The API accepts JSON" / "The API
    only accepts JSON", "Sam is the tech lead" / "Sam was …", "Prefer composition over
    inheritance" / "Prefer inheritance over composition". The terms leave function words
    out and keep no order, so such a pair reads as one statement reworded, yet each may
    turn it round or narrow it. Where the terms read pairs of characters (Chinese,
    Japanese, Korean: a Korean word carries its endings, "합니다" / "진행합니다") or the
    script is written without spaces, a run is a single token: there only an "only" said
    on one side counts ("API 接受 JSON" / "API 只接受 JSON", "JSONを" / "JSONだけを"; not
    the Korean 만, which opens many words)."""
    lex = lexicon()
    if _by_pairs(old.text) or _by_pairs(new.text):
        if _said_on_one_side(lex.how_often, old.text, new.text):
            return True
        if HANGUL_CHAR.search(old.text) or HANGUL_CHAR.search(new.text):
            return False
        return _said_on_one_side(lex.only, old.text, new.text)
    a = [w.casefold() for w in _TOKEN.findall(old.text)]
    b = [w.casefold() for w in _TOKEN.findall(new.text)]
    if a == b:
        return False
    if len(a) == len(b):
        apart = [k for k in range(len(a)) if a[k] != b[k]]
        # Two words changed places: "from MySQL to Postgres" / "from Postgres to MySQL".
        if len(apart) == 2 and (a[apart[0]], a[apart[1]]) == (b[apart[1]], b[apart[0]]):
            return True
    edits = [
        op for op in SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"
    ]
    if len(edits) != 1:
        return False
    tag, i1, i2, j1, j2 = edits[0]
    if i2 - i1 > SWAPPED_AT_MOST or j2 - j1 > SWAPPED_AT_MOST:
        return False
    if tag != "replace":
        # A word added or left out mostly says how ("as usual", "really", "automatically"),
        # unless it restricts ("only", "nur", "только") or tells what was ("was", "war").
        said = " ".join(a[i1:i2] + b[j1:j2])
        return any(p.search(said) for p in (lex.only, lex.past, lex.how_often))
    if {w[:STEM_CHARS] for w in a[i1:i2]} != {w[:STEM_CHARS] for w in b[j1:j2]}:
        return True
    # One stem, one side said without it or negated by an ending: "stateless" / "stateful",
    # "zustandslos" / "zustandsbehaftet", the Turkish "yapılabilir" / "yapılamaz" (can /
    # cannot be done; the stems are the words' first letters only).
    return any(map(_privative, a[i1:i2])) != any(map(_privative, b[j1:j2]))


def _said_on_one_side(words: regex.Pattern[str], old: str, new: str) -> bool:
    return bool(words.search(old)) != bool(words.search(new))


# Endings that say "without" (English, German, Dutch, Swedish, Danish and Norwegian).
_PRIVATIVE = ("less", "los", "loos", "lös", "løs")
# Turkish verbs negated by a suffix after their stem: -maz / -mez, -mıyor, -madı, -mamalı,
# -mayacak, -mamış (and their vowel-harmony forms), past the word's first three letters.
_NEGATED_ENDING = regex.compile(
    r"^\p{L}{3,}?(?:m[ae]z|m[ıiuü]yor|m[ae]d[ıiuü]|m[ae]m[ae]l[ıi]|m[ae]y[ae]c[ae]k|m[ae]m[ıiuü]ş)"
)


def _privative(word: str) -> bool:
    """Whether a word says "without" or "not" by its ending."""
    if _NEGATED_ENDING.match(word):
        return True
    return any(word.endswith(e) and len(word) > len(e) + 2 for e in _PRIVATIVE)


def words_swapped(
    old: Sequence[Term], new: Sequence[Term], kept: frozenset[str] = frozenset()
) -> bool:
    """Whether plain words of `old` and of `new` (terms of two statements, or of a stretch
    of each) differ on both sides: by stem, neither side's word the start of the other's
    ("웹은" / "웹"); `kept` (a title's stems), particles and a sentence's first word before
    a name ("Maria Lopez" / "Tom Becker") left out. Words are not told apart from verbs
    here: a caller says where they stand."""
    sides = (plain_words(old, kept), plain_words(new, kept))
    changed = [
        {w for w in mine if not any(w.startswith(o) or o.startswith(w) for o in other)}
        for mine, other in (sides, sides[::-1])
    ]
    return bool(changed[0] and changed[1])


def plain_words(side: Sequence[Term], kept: frozenset[str]) -> set[str]:
    """The plain words of one side, by stem, and compounds of letters joined by a hyphen
    ("Upload-Größe", which is no value as "db-stg-2" is)."""
    particles = lexicon().particles
    return {
        t.key[:STEM_CHARS]
        for n, t in enumerate(side)
        if (t.kind == "word" or compound_word(t))
        and t.key[:STEM_CHARS] not in kept
        and t.key not in particles
        and not (t.start == 0 and n + 1 < len(side) and side[n + 1].kind == "name")
    }


def compound_word(term: Term) -> bool:
    """Whether a term is letters joined by a hyphen ("Upload-Größe"), a word of a
    compound, not an identifier as "db-stg-2" is."""
    return term.kind == "ident" and term.shape == "hyphenated" and not _NUMERAL.search(term.key)


_NUMERAL = regex.compile(r"\p{N}")


def in_subject(terms: Terms, term: Term) -> bool:
    """Whether an auxiliary or a copula stands after `term` and before the statement's
    first value: a word of `auxiliary` in data/cues.txt, a dash ("Максимальный размер
    загрузки — 10 МБ"), the Chinese 是, the Japanese topic は or the Korean 는 / 은 ending a
    word ("最大アップロードサイズは10MB"); or, in Turkish and Hindi, which put the verb
    last, any word before the value ("API okuma zaman aşımı 30 saniye")."""
    value = next((t for t in terms.terms if t.valued and t.start > term.end), None)
    if value is None:
        return False
    if _VERB_LAST.search(terms.text):
        return True
    between = terms.text[term.end : value.start]
    auxiliaries = lexicon().auxiliaries
    return bool(_COPULA.search(between)) or any(
        w.lower() in auxiliaries for w in _LETTERS.findall(between)
    )


_COPULA = regex.compile(r"\s[\u2014\u2013-]\s|是|は|[는은](?=\s|$)")
# Turkish, told by its letters no other language of the lists writes (ı, ğ, ş, İ) or by
# the copula's suffix after an apostrophe ("10 MB'dir", "30 saniye'dir" is no
# apostrophe: "saniyedir" holds none, and then its letters tell); Hindi, which puts its
# copula last too ("अधिकतम अपलोड आकार 10 MB है"), by its script.
_VERB_LAST = regex.compile(r"[ıİğĞşŞ]|['’][dt][ıiuü]r\b|\p{Devanagari}")
_LETTERS = regex.compile(r"[\p{L}']+")


def openings_alike_announced(old: Iterable[str], new: Sequence[Terms]) -> bool:
    """Whether a statement of `new` announces a change and opens with the words a statement
    of `old` (their texts) opens with, function words included — its first OPENING_WORDS
    words, the cue left out: "The user is now a backend engineer" / "The user is a data
    scientist". The terms leave "the user" out, so the two share nothing and were
    unrelated; the subject is one, said again with "now". Spaced scripts only (see
    `swaps_a_word`)."""
    cue = lexicon().change.get("")
    if cue is None:
        return False
    announced = {
        tuple(_opening(cue.sub(" ", t.text))) for t in new if t.change_cue and not _by_pairs(t.text)
    }
    announced.discard(())
    if not announced:
        return False
    return any(
        tuple(_opening(text)) in announced and not cue.search(text) and not _by_pairs(text)
        for text in old
    )


def _opening(text: str) -> list[str]:
    """A statement's first OPENING_WORDS words when a determiner opens it ("the user is",
    "our team is"); a pronoun's opening ("it is a", "we are the") names no subject."""
    words = [m.group().casefold() for m in itertools.islice(_TOKEN.finditer(text), OPENING_WORDS)]
    determiners = lexicon().determiners
    if len(words) < OPENING_WORDS or not {words[0], f"{words[0]}'"} & determiners:
        return []
    return words


def placed_elsewhere(old: Iterable[str], new: Sequence[Terms]) -> bool:
    """Whether a statement of `new` places its subject somewhere other than a statement of
    `old` (their texts) places the same subject, said in the same words: "The user moved
    to Lisbon" / "The user is based in Berlin" (`where` in data/cues.txt: what says where
    a subject lives, works, is based or went). A subject said in function words is no
    term, so the two shared none and were unrelated, and the old place was recalled as
    true. Read as a lean that only links: a place of work and a home may both hold. Spaced
    scripts, and Chinese (`_placing_unspaced`)."""
    placed = {found for t in new if (found := _placing(t.text)) is not None}
    if not placed:
        return False
    for text in old:
        mine = _placing(text)
        if mine is not None and any(s == mine[0] and p != mine[1] for s, p in placed):
            return True
    return False


def _placing(text: str) -> tuple[tuple[str, ...], str] | None:
    """A statement's subject — its words before a `where` phrase, auxiliaries and words
    announcing a change left out ("the user" of "The user has now moved to") — and its
    place, the first word after the phrase that is no function word; None without one."""
    lex = lexicon()
    found = lex.where.search(text)
    if found is None:
        return None
    if _by_pairs(text):
        return _placing_unspaced(text, found.start(), found.end())
    announced = lex.change.get("")
    subject = tuple(
        word
        for word in (m.group().casefold() for m in _TOKEN.finditer(text[: found.start()]))
        if word not in lex.auxiliaries and not (announced and announced.fullmatch(word))
    )
    closed = function_words()
    after = (m.group().casefold() for m in _TOKEN.finditer(text, found.end()))
    place = next((word for word in after if word not in closed), None)
    if not subject or len(subject) > SUBJECT_WORDS_AT_MOST or place is None:
        return None
    if all(word in lex.speakers for word in subject):
        return None  # "We moved to Postgres" / "We moved to Kubernetes": two moves of ours
    return subject, place


def _placing_unspaced(text: str, start: int, end: int) -> tuple[tuple[str, ...], str] | None:
    """`_placing` in Chinese, which puts the place after its phrase as English does ("用户
    住在柏林"): the subject is all that stands before the phrase in its clause, the place
    what follows up to the next mark. Japanese and Korean put the place before their verb
    and are not read so."""
    if _KANA_OR_HANGUL.search(text):
        return None
    subject = _CLAUSE_MARK.split(text[:start])[-1].strip()
    place = _CLAUSE_MARK.split(text[end:])[0].strip().removeprefix("了").strip()
    if not subject or not place or len(subject) > 4 * SUBJECT_WORDS_AT_MOST:
        return None
    return (subject,), place


_CLAUSE_MARK = regex.compile(r"[\p{P}\s]+")
_KANA_OR_HANGUL = regex.compile(r"[\p{Hiragana}\p{Katakana}\p{Hangul}]")


def switched_alike(old: Iterable[str], new: Sequence[Terms]) -> bool:
    """Whether a statement of `new` announces a change (a change cue) and names a tool that
    does the job of another tool a statement of `old` (their texts) names (`tool.KIND` in
    data/values.txt): "We switched to Microsoft Teams" / "We use Slack for team chat",
    "We migrated to Vitest" / "The project uses Jest for tests". The two share no word,
    so they were unrelated and the old tool was recalled as the one in use. A lean that
    only links: the old one may still do part of the job."""
    announced: dict[str, set[str]] = {}
    for terms in new:
        if terms.change_cue:
            for name, kind in _tools(terms.text):
                announced.setdefault(kind, set()).add(name)
    if not announced:
        return False
    return any(
        kind in announced and announced[kind] - {name}
        for text in old
        for name, kind in _tools(text)
    )


def readdressed(old: Iterable[Terms], new: Sequence[Terms]) -> bool:
    """Whether a statement of `new` announces a change (a change cue) and gives an address
    (an identifier: a URL, a host, a path) of the host, or of the shape, of another
    address a statement of `old` gives: "Use https://api.example.com/v2 from now on" /
    "The API base URL is https://api.example.com/v1", "Connect to db-stg-5.internal now" /
    "The staging DB is db-stg-4.internal". The two share no word, so they were
    unrelated and the old address was recalled as the one in use. A lean that only
    links: one host may serve several things. `old` is read only when `new` announces an
    address."""
    announced = {
        t.key for terms in new if terms.change_cue for t in terms.terms if t.kind == "ident"
    }
    if not announced:
        return False
    places = {_address_place(key) for key in announced} - {None}
    if not places:
        return False
    given = {t.key for terms in old for t in terms.terms if t.kind == "ident"} - announced
    return any(_address_place(key) in places for key in given)


def _address_place(ident: str) -> str | None:
    """What two addresses of one thing share: a URL's scheme and host, else a host's or a
    path's letters with its numbers left out ("db-stg-#.internal:#"); None for an
    identifier that is no address (a ticket, "OPS-4821": one of many)."""
    scheme, found, rest = ident.partition("://")
    if found:
        return f"{scheme}://{rest.split('/', 1)[0]}"
    if "." not in ident and ":" not in ident:
        return None
    return _DIGITS.sub("#", ident)


_DIGITS = regex.compile(r"\d+")


def _tools(text: str) -> Iterator[tuple[str, str]]:
    """The tools a text names, each with the job it does."""
    lex = lexicon()
    for found in lex.tool.finditer(text):
        name = " ".join(found.group().casefold().split())
        kind = lex.tool_kind.get(name)
        if kind is not None:
            yield name, kind
