"""The terms of a statement: what two statements are compared on (docs/writing.md, "Terms").

A statement is read into typed terms, each with the span it was read from:

- `ident`: something written as code or an address — an env var (`ORDERS_DB_URL`), a
  flag (`--runInBand`), a path, a URL or bucket (`s3://acme-backups`), a host
  (`db.internal:5432`), a code symbol (`new_checkout`, `fmt.Errorf`), a name with digits
  or hyphens (`q7`, `jobs-high`), a chat channel (`#deploys`), a command in backticks.
  Its `role` says what it usually is in a fact: `key` (an env var, a flag, a code
  symbol: it names the thing the fact is about), `value` (an address, a version, a
  channel: what a fact says of a thing), or neither (a path, `jobs-high`: either);
- `number`: digits or a number word, with its unit ("24 h" = "24 hours" = "24 小时")
  and the term right before it (its owner: "PostgreSQL 16", "port 8081");
- `value`: a word that is a value by itself, of a class (`nightly`/`hourly` are
  frequencies, `Tuesday`/`mardi` weekdays; data/values.txt);
- `name`: a proper name — a capitalised word inside a sentence (where capitals mark
  names: not in German), a word with inner capitals (`PostgreSQL`, `GitHub`), an
  acronym (`API`), a Latin word in Chinese, Japanese, Korean or Russian text;
- `word`: any other content word, stemmed by truncation ("DB" and "database", "prod" and
  "production": one word, data/cues.txt `short`); CJK text gives its code-point bigrams
  (function bigrams left out).

Function words are left out (data/function_words.txt); negation and change cue words
(data/cues.txt, compiled in lexicon.py) are not terms either, they mark the statement as
`negated` or as announcing a change. What stands around the fact — a closing citation,
tag or hedge, an opening aside, a time it holds from — is found first (asides.py), and
the rest read.

One job past 500 lines: each term kind's rules need the others' spans (a cue's words are
no terms, a unit belongs to its number), so they read a statement together.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal, NamedTuple

import regex
from memory_recall.server.facts import asides
from memory_recall.server.facts.lexicon import (
    CJK_CHAR,
    CJK_CLASS,
    canonical_units,
    dimension,
    function_words,
    lexicon,
)
from memory_recall.server.facts.lexicon import caseless as _caseless
from memory_recall.server.facts.lexicon import norm as _norm
from memory_recall.server.facts.lexicon import text_runs as _runs
from memory_recall.server.ranking.bm25f.tokens import COMMON_TWO_LETTER_WORDS

TermKind = Literal["word", "name", "ident", "number", "value"]
Role = Literal["key", "value", ""]

# Truncation stemming: a language-independent stand-in for a stemmer, enough for the
# inflections of European languages and Russian (`payment`/`payments`, `déploie`/`déployer`).
STEM_CHARS = 5
# Letters glued to a number that make it a name ("1Password") when they are no unit.
GLUED_NAME_AT_LEAST = 3
# Distinct function words of a noun-capitalising language that mark a text as one.
NOUN_LANGUAGE_EVIDENCE = 2


class Term(NamedTuple):
    """One term of a statement. (A named tuple: a CJK statement makes one per character
    pair, and a tuple is made in a third of a frozen dataclass's time.)"""

    kind: TermKind
    key: str  # what is compared: a stem, a lowercased name or identifier, a number and unit
    start: int  # span in the statement's text
    end: int
    shape: str = ""  # ident: url, host, env, flag, path, …; number: its unit; value: its class
    role: Role = ""
    owner: str = ""  # number: the key of the term right before it

    @property
    def valued(self) -> bool:
        """Whether the term can be the value a fact states (not a plain word)."""
        return self.kind != "word"


@dataclass(frozen=True)
class Terms:
    """A statement read: its terms in order and its cues."""

    text: str
    terms: tuple[Term, ...]
    # The negation cues found, sorted: whether a statement negates is not enough to tell
    # two rules apart ("without review … may" / "without review … must not" both do);
    # how often it does is (docs/writing.md).
    negations: tuple[str, ...]
    # The change cues found, as written lowercase ("now", "migrate"): a new statement
    # announces a change when it says one the old does not ("Migrations now run …" beside
    # "Run the migrations with make migrate").
    changes: tuple[str, ...] = ()
    # Said as not settled: a bracket closing it that says so alone ("(TBD)", "(vorläufig)":
    # `hedge` in data/cues.txt). Never surely written over an older fact or dropped as one.
    hedged: bool = False

    @property
    def change_cue(self) -> bool:
        return bool(self.changes)

    @property
    def announces_what(self) -> bool:
        """Whether it announces a change by more than when it holds or that it corrects
        something: a cue that is not only "now" or "correction" (`now.LANG`,
        `corrects.LANG` in data/cues.txt): "moved to", "switched", "no longer"."""
        lex = lexicon()
        return bool(set(self.changes) - lex.nows - lex.corrects)

    @property
    def negated(self) -> bool:
        return bool(self.negations)

    @property
    def keys(self) -> list[str]:
        return [t.key for t in self.terms]

    @property
    def ends_a_state(self) -> bool:
        """Whether it negates with a cue that also announces a change ("no longer", "nicht
        mehr", "不再"): such a statement is said against an earlier positive one, wherever
        the rest of its memory negates."""
        return any(n in lexicon().ending for n in self.negations)


def _dates(text: str, runs: frozenset[str] | None) -> list[tuple[int, int, str]]:
    """Dates written otherwise than as "2026-03-06", each as that form (the month and day
    alone as "--03-06"): "March 6, 2026", "6. März 2026", "6 de marzo", "2026年3月6日",
    "06.03.2026". The first way that reads a stretch wins; none overlaps another. Only
    the ways the text may hold are tried (`runs`: its words, as `_runs` reads them)."""
    if not _DIGIT.search(text):
        return []
    lex = lexicon()
    by_name, cjk, numeric = lex.dates[:2], lex.dates[2:3], lex.dates[3:]
    patterns = [
        *(by_name if runs is None or not runs.isdisjoint(lex.folded_months) else ()),
        *(cjk if "月" in text or "월" in text else ()),
        *(numeric if "/" in text or "." in text else ()),
    ]
    found: list[tuple[int, int, str]] = []
    for pattern in patterns:
        for match in pattern.finditer(text):
            if any(a < match.end() and match.start() < b for a, b, _ in found):
                continue
            named = match.group("month")
            if named in _CAPITAL_ONLY:
                continue  # "Each user may 10 …": the verb, not May
            month = int(named) if named.isdigit() else lex.months.get(_norm(named))
            if month is None:
                continue
            day, year = int(match.group("day")), match.group("year")
            iso = f"{year}-{month:02d}-{day:02d}" if year else f"--{month:02d}-{day:02d}"
            found.append((match.start(), match.end(), iso))
    return found


_DIGIT = regex.compile(r"\d")
_CAPITAL_ONLY = frozenset(("may",))  # month names that are common words written lower case


# -- Reading -------------------------------------------------------------------------------

_TOKEN = regex.compile(
    r"(?P<url>(?<![\p{L}\p{N}])[a-zA-Z][a-zA-Z0-9+.-]*://[^\s<>()\[\]{}'\"`，。、」]+)"
    r"|(?P<code>`[^`\n]+`)"
    r"|(?P<email>(?<![\p{L}\p{N}])[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
    r"|(?P<path>(?<![\p{L}\p{N}/.~])(?:~|\.{1,2})?/[\p{L}\p{N}_.@%+-]+(?:/[\p{L}\p{N}_.@%+-]*)*)"
    r"|(?P<flag>(?<![\p{L}\p{N}-])--?[A-Za-z][A-Za-z0-9_-]*)"
    # A chat channel ("#deploys", "#eng-oncall"); not an issue number ("#123"), not C#.
    r"|(?P<channel>(?<![\p{L}\p{N}&#])#\p{L}[\p{L}\p{N}_-]*(?<![_-]))"
    rf"|(?P<ident>[[\p{{L}}\p{{N}}]--[{CJK_CLASS}]]+(?:[-_.:/@#+][[\p{{L}}\p{{N}}]--[{CJK_CLASS}]]+)+)"
    rf"|(?P<mixed>[[\p{{L}}]--[{CJK_CLASS}]]+\p{{N}}[[\p{{L}}\p{{N}}]--[{CJK_CLASS}]]*)"
    rf"|(?P<number>\p{{Nd}}+(?:[.,]\p{{Nd}}+)*(?P<glued>[[\p{{L}}]--[{CJK_CLASS}]]+|%)?)"
    rf"|(?P<cjk>[{CJK_CLASS}]+)"
    rf"|(?P<word>[[\p{{L}}\p{{M}}]--[{CJK_CLASS}]]+(?:['’][\p{{L}}]+)?)"
    r"|(?P<percent>%)",
    flags=regex.VERSION1,
)
_VERBATIM = regex.compile(r"`[^`\n]+`|[a-zA-Z][a-zA-Z0-9+.-]*://\S+")
_ENV = regex.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_VERSION = regex.compile(r"^[vV]?\d+(?:\.\d+)+$")
_SHORT_VERSION = regex.compile(r"^[vV]\d+$")
_NUMERIC = regex.compile(r"^\d+(?:[.:,/-]\d+)*$")
_HOST = regex.compile(r"^[\w-]+(?:\.[\w-]+)*\.[A-Za-z][\w-]*(?::\d+)?$|^[\w.-]+:\d+$")
_CAMEL = regex.compile(r"^[a-z]+[A-Z]")
_ACRONYM_PLURAL = regex.compile(r"\p{Lu}{2,}s")
_INNER_CAPITAL = regex.compile(r"^.\p{Ll}*\p{Lu}|^\p{Lu}{2,}$")
_SENTENCE_END = frozenset(".!?:;\n|-•*(\"'“«「")
_FUNCTION_BIGRAM = regex.compile(r"^\p{Hiragana}+$|\p{P}")
_HIRAGANA = regex.compile(r"\p{Hiragana}")
_PUNCTUATION = regex.compile(r"\p{P}")
_KANA = regex.compile(r"[\p{Hiragana}\p{Katakana}]")
HANGUL_CHAR = regex.compile(r"\p{Hangul}")
_HAN = regex.compile(r"\p{Han}")
_DECIMAL_COMMA = regex.compile(r"^\d+,\d{1,2}$")
_LETTERS = regex.compile(r"\p{L}+")
_ISO_DATE = regex.compile(r"^\d{4}-\d\d(?:-\d\d)?$")
_HANGUL = regex.compile(r"^\p{Hangul}+$")
_LATIN = regex.compile(r"\p{Latin}")
_OTHER_SCRIPT = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Cyrillic}\p{Greek}]")


def stem(word: str) -> str:
    """A word's term: its first STEM_CHARS letters, or whole in Chinese, Japanese and Korean
    pairs and in a script written without spaces (Thai, Lao, Khmer, Myanmar), whose run is
    a sentence: cut to its first letters, "การย้ายข้อมูลทำก่อนการดีพลอย" and "…ทำหลัง…"
    (before / after) were one term, and the correction was dropped as the same fact."""
    return word if CJK_CHAR.match(word) or UNSPACED_CHAR.match(word) else word[:STEM_CHARS]


# A setting given a value in code: `NAME=value`, `--flag=value` (a name of letters first).
_ASSIGNMENT = regex.compile(r"^-{0,2}[A-Za-z_][\w.-]*=[^\s=`]+$")
UNSPACED_CHAR = regex.compile(r"[\p{Thai}\p{Lao}\p{Khmer}\p{Myanmar}]")


def ident_shape(surface: str) -> tuple[str, Role]:
    """What an identifier looks like, and the role that shape usually plays in a fact."""
    if "://" in surface:
        return "url", "value"
    if "@" in surface and "." in surface.split("@")[-1]:
        return "email", "value"
    if surface.startswith(("/", "~/", "./", "../")):
        return "path", ""
    if surface.startswith("-"):
        return "flag", "key"
    if surface.startswith("#"):
        return "channel", "value"
    if _ENV.match(surface):
        return "env", "key"
    if _VERSION.match(surface):
        return "version", "value"
    if "_" in surface or _CAMEL.match(surface):
        return "symbol", "key"
    if _HOST.match(surface):
        return "host", "value"
    if "/" in surface:
        return "path", ""
    if "-" in surface:
        return "hyphenated", ""
    return "mixed", ""


def _number_key(digits: str) -> str:
    """A number as compared: leading zeros off, a decimal comma as a point, 09:30 = 9:30."""
    if ":" in digits:
        return ":".join(part.lstrip("0") or "0" for part in digits.split(":"))
    if _DECIMAL_COMMA.match(digits):
        digits = digits.replace(",", ".")
    return digits.lstrip("0") or "0"


_OPENING_MARKUP = regex.compile(r"[\s*_`\"'“„«(]*")


def opening_pronoun(text: str) -> str | None:
    """The pronoun for a person a statement opens with ("She is the person to ask"), if any."""
    found = lexicon().pronoun.match(text, _OPENING_MARKUP.match(text).end())
    return found.group() if found else None


def capitals_mark_names(text: str) -> bool:
    """Whether a capital letter inside a sentence marks a name in this text (not German)."""
    words = {w.lower() for w in _LETTERS.findall(text)}
    return len(words & lexicon().capitalised_nouns) < NOUN_LANGUAGE_EVIDENCE


def _capitalised_inside(text: str, surface: str, at: int) -> bool:
    """Whether a word of three letters or more is capitalised (and only that) inside a
    sentence that is not written in title case ("Deploy To Production On Fridays")."""
    return (
        len(surface) >= 3
        and surface[0].isupper()
        and surface[1:].islower()
        and _mid_sentence(text, at)
        and not _title_case(text, at)
    )


def _title_case(text: str, at: int) -> bool:
    """Whether the text capitalises its other function words after its first word, as a
    heading does ("Deploy To Production On Fridays"), rather than only names ("Pasamos de
    Jest a Vitest")."""
    words = [m for m in _TITLE_WORD.finditer(text) if m.start() != at][1:]
    closed = [m.group() for m in words if _norm(m.group()) in function_words()]
    return bool(closed) and 2 * sum(1 for w in closed if w[0].isupper()) > len(closed)


_TITLE_WORD = regex.compile(r"\p{L}{2,}")


def _named_values(text: str, closed: frozenset[str]) -> tuple[int, ...]:
    """Where the words of a value that follows a label's colon and is a name stand: one to
    three capitalised words and nothing else up to a bracket, a comma or the end ("Backend
    lead: Omar", "Search: Alice (alice@…)", "Owner: Mary Jane"). After a colon a capital
    opens a sentence too ("Why: We had an outage"), so a capitalised word there is a name
    only when no word of a sentence is beside it."""
    starts: list[int] = []
    for colon in _LABEL_COLON.finditer(text):
        end = _VALUE_END.search(text, colon.end())
        value = text[colon.end() : end.start() if end else len(text)]
        words = list(_LETTERS.finditer(value))
        if not 1 <= len(words) <= NAMED_VALUE_WORDS or any(
            not (w.group()[0].isupper() and len(w.group()) >= 2) or _norm(w.group()) in closed
            for w in words
        ):
            continue
        starts.extend(colon.end() + w.start() for w in words)
    return tuple(starts)


NAMED_VALUE_WORDS = 3
_LABEL_COLON = regex.compile(r"[:：]")
# What closes a value: a bracket, a comma, a semicolon, a colon (the next label's: "Frontend:
# React 18. Backend: Django 4"), a sentence's end or the line's.
_VALUE_END = regex.compile(r"[(\[（,，;；:：\n]|[.!?。！？](?=\s|$)")


def _mid_sentence(text: str, at: int) -> bool:
    i = at - 1
    while i >= 0 and text[i] in " \t*_`":
        i -= 1
    return i >= 0 and text[i] not in _SENTENCE_END


def _with_now(terms: Terms, announces: bool) -> tuple[str, ...]:
    """`terms`' change cues, with "now" when an aside said from when (once)."""
    if not announces or "now" in terms.changes:
        return terms.changes
    return (*terms.changes, "now")


# Stretches around a statement's fact read off it at most (a citation, then a tag, …):
# past them, the rest is read as words.
PEELED_AT_MOST = 8


@functools.lru_cache(maxsize=8192)
def read_terms(text: str, capitals: bool | None = None) -> Terms:
    """The terms of one statement. `capitals`: whether a capital letter inside a sentence
    marks a name (`capitals_mark_names` of the whole memory; by default, of `text`).

    What stands around the fact is read off first (asides.py), one stretch at a time:
    a closing citation, link, ticket, remark or stress ("… (see PR #123)", "… (again)",
    "… in PR #123": where it comes from or how to read it), the note's tags ("… #ops"), a
    hedge ("… (TBD)": then `hedged`), an agreement ("…, as discussed"), an opening aside ("Going
    forward, …", "According to Alice, …": blanked, the statement's spans kept) and a
    closing time it holds from ("… since last week"). Those that say from when add "now"
    to its change cues. A time word, a tag or a number the old memory never says still
    keeps the new one from being dropped as known (judgement.py, `_raw_values`)."""
    if (typed := asides.typed_as(text)) != text:
        return read_terms(typed, capitals)
    hedged = announced = False
    for _ in range(PEELED_AT_MOST):
        if asides.shouted(text) and len(lowered := text.lower()) == len(text):
            # "DEPLOYS NEED TWO APPROVALS": its capitals mark nothing (every word was a
            # name: it said more than the same rule typed plainly and was written over it).
            text = lowered
        cut = asides.closing_citation(text)
        if cut is None:
            cut = asides.closing_tags(text)
        if cut is None:
            cut = asides.closing_reference(text)
        if cut is not None:
            text = text[:cut]
        elif (cut := asides.closing_hedge(text)) is not None:
            text, hedged = text[:cut], True
        elif (cut := asides.closing_agreement(text)) is not None:
            text = text[:cut]
        elif (aside := asides.opening_aside(text)) is not None:
            end, says_when = aside
            text, announced = " " * end + text[end:], announced or says_when
        elif (cut := asides.closing_since(text)) is not None:
            text, announced = text[:cut], True
        else:
            break
    terms = _read(text, capitals)
    if hedged or announced:
        terms = dataclasses.replace(
            terms, hedged=hedged or terms.hedged, changes=_with_now(terms, announced)
        )
    return terms


def _read(text: str, capitals: bool | None) -> Terms:
    """The terms of `text` as it is (`read_terms` reads what stands around them off)."""
    lex = lexicon()
    closed = function_words()
    taken = _Taken(len(text))  # spans of cues and value words: no other terms there
    terms: list[Term] = []
    negations: list[str] = []
    changes: list[str] = []
    # Cue and value words inside code or an address are its own ("`make migrate`" is a
    # command, not a change announced).
    verbatim = [m.span() for m in _VERBATIM.finditer(text)] if "`" in text or "://" in text else []
    runs = _runs(text)
    chars = frozenset() if text.isascii() else frozenset(text)
    # CJK cues only in their own language: the Japanese 交代 is in Chinese 提交代码.
    scripts = ["", _cjk_language(text)]
    for script in scripts:
        negation = lex.negation.get(script)
        if negation is not None and lex.openings["negation", script].may_match(runs, chars):
            for match in negation.finditer(text):
                if verbatim and _overlaps(match.span(), verbatim):
                    continue
                negations.append(" ".join(match.group().lower().split()))
                taken.append(match.span())
        changed = lex.change.get(script)
        if changed is not None and lex.openings["change", script].may_match(runs, chars):
            for match in changed.finditer(text):
                if verbatim and _overlaps(match.span(), verbatim):
                    continue
                changes.append(" ".join(match.group().lower().split()))
                taken.append(match.span())
    for start, end, iso in _dates(text, runs):
        if verbatim and _overlaps((start, end), verbatim):
            continue
        terms.append(Term("number", f"{iso} date", start, end, "date", "value"))
        taken.append((start, end))
    may_value = lex.openings["value", ""].may_match(runs, chars)
    values = lex.value.finditer(text) if may_value else ()
    for match in values:
        if taken.overlaps(match.span()) or (verbatim and _overlaps(match.span(), verbatim)):
            continue
        phrase = _norm(match.group())
        phrase = " ".join(phrase.split())
        start, end = match.span()
        terms.append(Term("value", phrase, start, end, lex.value_class.get(phrase, ""), "value"))
        taken.append(match.span())
    # Whether Latin words are foreign here: at least half as many letters of other scripts
    # as Latin ones (a Greek or Russian statement names its tools in Latin letters; at
    # "more than as many", a correction naming one more tool read its Latin words as
    # stemmed words while the old statement read them as names). Never in ASCII text,
    # most statements, whose letters need no counting.
    foreign_text = not text.isascii() and (
        2 * len(_OTHER_SCRIPT.findall(text)) >= len(_LATIN.findall(text))
    )
    if capitals is None:
        capitals = capitals_mark_names(text)
    named = _named_values(text, closed) if capitals and (":" in text or "：" in text) else ()
    for match in _TOKEN.finditer(text):
        start, end = match.span()
        kind = match.lastgroup
        if kind == "cjk":
            run = match.group()
            # A Korean particle glued to a number or a Latin word ("6432로", "DB가") is
            # no word of its own, nor that number's unit.
            glued = start > 0 and text[start - 1].isalnum() and not _HANGUL.match(text[start - 1])
            if glued and run in lex.particles:
                continue
            terms.extend(_cjk_terms(run, start, taken))
            continue
        if taken.overlaps((start, end)):
            continue
        surface = match.group()
        if kind == "url":
            surface = surface.rstrip(".,;:!?)")
            end = start + len(surface)
            terms.append(Term("ident", surface.lower(), start, end, "url", "value"))
        elif kind == "code":
            inner = surface[1:-1].strip()
            if _NUMERIC.match(inner) or _VERSION.match(inner) or _SHORT_VERSION.match(inner):
                # `8080`, `18`: a number, as outside code, its unit after the code ("Node
                # `18` for the web app" / "Node `20` for the API": read as identifiers, no
                # value owned by "Node", and the web app's version was written over).
                unit = _unit_after(text, end, taken)
                digits = inner.lstrip("vV")
                shape = unit or _shape_of_numeric(digits)
                terms.append(_number(digits, start, end, shape, terms, text))
            elif _ASSIGNMENT.match(inner) or _values_only(inner, capitals):
                # `MAX_WORKERS=4`: a setting and its value, read as they are outside code
                # (one identifier, "max_workers=4" and "max_workers=8" were two distinct
                # keys: two facts, unlinked, the old value recalled unmarked). `10 MB`,
                # `30s`: values, not a command.
                at = start + surface.index(inner)
                terms.extend(
                    t._replace(start=t.start + at, end=t.end + at)
                    for t in read_terms(inner, capitals).terms
                )
            elif " " in inner:
                terms.append(Term("ident", " ".join(inner.lower().split()), start, end, "command"))
            else:
                shape, role = ident_shape(inner)
                terms.append(Term("ident", inner.lower(), start, end, shape, role))
        elif kind in ("email", "path", "flag", "channel"):
            shape, role = ident_shape(surface)
            terms.append(Term("ident", surface.lower(), start, end, shape, role))
        elif kind in ("ident", "mixed"):
            if _NUMERIC.match(surface) or _VERSION.match(surface) or _SHORT_VERSION.match(surface):
                unit = _unit_after(text, end, taken)
                digits = surface.lstrip("vV")
                shape = unit or _shape_of_numeric(digits)
                terms.append(_number(digits, start, end, shape, terms, text))
            else:
                shape, role = ident_shape(surface)
                terms.append(Term("ident", surface.lower(), start, end, shape, role))
        elif kind == "number":
            glued = match.group("glued")
            digits = surface[: len(surface) - len(glued)] if glued else surface
            if glued and _names_a_thing(glued, lex.units):
                # "1Password", "7zip", "4chan": a name that opens with digits, not a count.
                terms.append(Term("name", surface.lower(), start, end))
                continue
            if glued:
                unit = lex.units.get(glued.lower(), glued.lower())
            else:
                unit = _unit_after(text, end, taken)
            terms.append(_number(digits, start, end, unit, terms, text))
        elif kind == "percent":
            if terms and terms[-1].kind == "number" and not terms[-1].shape:
                last = terms.pop()
                terms.append(
                    Term("number", f"{last.key} pct", last.start, end, "pct", "value", last.owner)
                )
        elif kind == "word":
            # An elided article or preposition is no part of the word it is glued to
            # ("dell'API", "l'équipe", "qu'elle"): kept, "dell'API" and "dell'admin" were
            # one term, "dell'" (a word's first five letters), and the API's port was
            # written over with the admin's.
            elided = _ELIDED.match(surface)
            if elided:
                start += elided.end()
                surface = surface[elided.end() :]
            # An English possessive is the word's ("the app's backend", "Alice's team"):
            # read as a term of its own, "app's" shared nothing with "app".
            word = _norm(surface)
            if word not in closed:
                word = _POSSESSIVE.sub("", word)
            if word in lex.number_words:
                unit = _unit_after(text, end, taken)
                terms.append(_number(lex.number_words[word], start, end, unit, terms, text))
                continue
            if word in lex.articles and _a_unit_after(text, end):
                # "about an hour" / "about 40 minutes": one of a unit, a value.
                terms.append(_number("1", start, end, _unit_after(text, end, taken), terms, text))
                continue
            if word in lex.short:  # "database", "DB": one plain word
                terms.append(Term("word", lex.short[word], start, end))
                continue
            if word in closed:
                if not (
                    (capitals and _capitalised_inside(text, surface, start))
                    or (foreign_text and surface[0].isupper() and _LATIN.match(surface))
                    # A tool's name, however written ("utilisent jest": the Polish "is"
                    # in lower case was no term, and the test runner was gone).
                    or word in lex.tool_kind
                    # A letter glued to CJK labels a thing in any case ("团队a的站会").
                    or (chars and _letter_beside_cjk(text, surface, start))
                ):
                    continue
                # A word of some language's closed classes, written with a capital inside
                # a sentence (anywhere in a statement in another script), names a tool: "We
                # use Jest for tests", "Jest から Vitest に移行しました" (Polish "jest", "is").
                terms.append(Term("name", word, start, end))
                continue
            if _INNER_CAPITAL.match(surface) and len(surface) >= 2:
                # An acronym's plural names what it does: "ORMs" / "the ORM", "PRs" / "PR".
                plural = _ACRONYM_PLURAL.fullmatch(surface)
                terms.append(Term("name", word[:-1] if plural else word, start, end))
            elif len(surface) == 1:
                # A capital letter alone inside a sentence labels a thing ("Team A", "Plan
                # B", "团队A"): without it "Team B standup is now at 10:00" rewrote team A's.
                if (surface.isupper() and surface != "I" and _mid_sentence(text, start)) or (
                    chars and _letter_beside_cjk(text, surface, start)
                ):
                    terms.append(Term("name", word, start, end))
            elif len(surface) < 3:
                # Two-letter words: `is`, `de`, `на` say nothing; `uv`, `go`, `k9` name tools.
                # One with a letter outside ASCII is a word of its language, not a tool:
                # the Vietnamese "tối đa" (maximum) read "đa" as a name, a value before
                # the copula, so "tải lên" / "tải xuống" (upload / download) stood after
                # it and were no subject's words (`wording.in_subject`).
                if len(surface) == 2 and word not in COMMON_TWO_LETTER_WORDS:
                    terms.append(Term("name" if surface.isascii() else "word", word, start, end))
            elif (
                (foreign_text and _LATIN.match(surface))
                or (capitals and surface[0].isupper() and _mid_sentence(text, start))
                or start in named
            ):
                terms.append(Term("name", word, start, end))
            else:
                terms.append(Term("word", stem(word), start, end))
    terms = [t for t in terms if t.shape != "date" or not _when_it_holds(text, t.start, t.end)]
    terms.sort(key=lambda t: t.start)
    return Terms(
        text, tuple(_with_units(terms, text)), tuple(sorted(negations)), tuple(sorted(set(changes)))
    )


# A few words and a date opening a statement, set off by a comma: since when what follows
# holds ("As of 2026-12-07, production deploys …", "On 2026-12-07, …"), a stamp of the
# sentence, no value of its fact — read as one, it stood before a qualifier and the rule
# for all deploys was written over. (A date the fact is of is said inside it: "The freeze
# begins on 2026-12-07".)
_WHEN_OPENING = regex.compile(r"(?:\p{L}+[ \t]+){0,3}")
_COMMA_AFTER = regex.compile(r"[ \t]*[,，]")


def _when_it_holds(text: str, start: int, end: int) -> bool:
    opening = _WHEN_OPENING.fullmatch(text, 0, start)
    return opening is not None and _COMMA_AFTER.match(text, end) is not None


def _values_only(inner: str, capitals: bool) -> bool:
    """Whether the text of a code span reads as numbers alone ("10 MB", "30s")."""
    if not _NUMERAL.search(inner):
        return False
    found = read_terms(inner, capitals).terms
    return bool(found) and all(t.kind == "number" for t in found)


def _letter_beside_cjk(text: str, surface: str, start: int) -> bool:
    """Whether a word is one Latin letter glued to a CJK character ("团队a的", "チームbの"):
    a label typed in lower case, no article of a language written in spaces."""
    end = start + len(surface)
    return len(surface) == 1 and any(
        0 <= at < len(text) and CJK_CHAR.match(text[at]) for at in (start - 1, end)
    )


_NUMERAL = regex.compile(r"\p{N}")
_POSSESSIVE = regex.compile(r"(?<=\p{Latin}{2})['’]s$")
# Up to six letters and an apostrophe before a word of three letters at least: l', d',
# dell', nell', qu', jusqu' (not "don't", "we're": what follows is no word of its own).
_ELIDED = regex.compile(r"\p{L}{1,6}['’](?=\p{L}{3})")


def key_witness(key: str) -> str | None:
    """Text that every statement whose terms hold `key` contains in one of its
    `witness_forms`: words, names, identifiers, value phrases and CJK pairs are cut from
    the statement's own text (a phrase with its spacing collapsed, so its first word).
    None for a number: number words, units, leading zeros and decimal commas are
    rewritten, so its key may be in no text at all; nor is a short form in every word it
    stands for ("db" for "database")."""
    if _NUMERAL.search(key) or key in lexicon().unwitnessed:
        return None
    words = key.split()
    return _caseless(words[0]) if words else None


def witness_forms(text: str) -> tuple[str, str]:
    """The forms of a statement a `key_witness` is looked for in: as it is and in its
    normal form, both without case and decomposed. A term is cut from the text, then
    lowercased and normalised, and neither is always a piece of the whole's: a half-width
    sound mark composes with the letter before it only in the whole, and a Greek sigma is
    final only at the end of what is lowercased. Case folding and decomposition see one
    character at a time; the marks, which decomposition may reorder across the cut, are
    left out. (An ASCII text is its own normal and decomposed form, and casefolds as it
    lowercases: both forms are its lowercase.) Read as typed for, as `read_terms` reads it:
    a curly apostrophe is the straight one its terms hold."""
    if text.isascii():
        lower = text.lower()
        return lower, lower
    text = asides.typed_as(text)
    return _caseless(text), _caseless(_norm(text))


def _cjk_language(text: str) -> str:
    """Which CJK language a text is in, by its scripts: kana → ja, hangul → ko, han → zh."""
    if text.isascii():
        return "none"
    if _KANA.search(text):
        return "ja"
    if HANGUL_CHAR.search(text):
        return "ko"
    if _HAN.search(text):
        return "zh"
    return "none"


def _names_a_thing(glued: str, units: Mapping[str, str]) -> bool:
    """Whether the letters glued to a number make it a name rather than a count with its
    unit: no unit, and a word of three letters or more, or capitals ("1Password", "room
    4B", "gate 12A"; not "10ms", "5GB", "24H", "3rd", "30min")."""
    word = glued.lower()
    if word in units or word in canonical_units():
        return False
    return len(word) >= GLUED_NAME_AT_LEAST or glued.isupper()


def _shape_of_numeric(surface: str) -> str:
    if ":" in surface:
        return "time"
    if _ISO_DATE.match(surface):
        return "date"
    return ""


def _number(digits: str, start: int, end: int, unit: str, before: list[Term], text: str) -> Term:
    owner = ""
    if before and before[-1].kind in ("name", "word", "ident"):
        # Right after it, a space or the markup of an emphasis between ("Kafka **7**").
        gap = text[before[-1].end : start]
        if len(gap) <= 2 or (len(gap) <= _EMPHASIS_GAP and not gap.strip(" \t*_\"'“”«»")):
            owner = before[-1].key
    # The unit is part of the value: "2" in "v2" is not the "2" of "2 avril".
    key = _number_key(digits)
    return Term("number", f"{key} {unit}" if unit else key, start, end, unit, "value", owner)


def _a_unit_after(text: str, end: int) -> bool:
    """Whether a unit that measures something (a duration, a size) follows `end`."""
    match = lexicon().unit.match(text, end)
    if match is None:
        return False
    unit = lexicon().units.get(_norm(match.group().strip()))
    return unit is not None and dimension(unit) != unit


_EMPHASIS_CLOSED = regex.compile(r"(?:\*\*|__|\*|_|[\"'“”»])(?=[ \t])")
_EMPHASIS_GAP = 4  # a space and "**" (or quotes) either side


def _unit_after(text: str, end: int, taken: _Taken) -> str:
    """The canonical unit right after a number ending at `end` ("" if none); its span
    joins `taken`, so it becomes no term of its own."""
    match = lexicon().unit.match(text, end)
    if match is None and (closing := _EMPHASIS_CLOSED.match(text, end)):
        match = lexicon().unit.match(text, closing.end())  # "**10** MB", "_30_ s"
    if match is None:
        return ""
    taken.append(match.span())
    word = _norm(match.group().strip())
    return lexicon().units.get(word, word)


def _with_units(terms: list[Term], text: str) -> list[Term]:
    """A number without a known unit takes the next word as one ("100 requests" and "300
    requests" are two values of one count; "3 pods" and "3 nodes" are not) — the word
    right after it, not one past a comma ("PostgreSQL 15, hosted on …"), nor a piece of
    an unspaced script ("pnpm 9 了", "pnpm 8 管理依赖": a particle, the pair a run starts
    with; its counters are units of data/values.txt)."""
    out = list(terms)
    for i, term in enumerate(out):
        if term.kind == "number" and not term.shape and i + 1 < len(out):
            following = out[i + 1]
            if (
                following.kind in ("word", "name")
                # (a number in bold or italics: "Kafka **7** jours")
                and following.start <= term.end + 4
                and not text[term.end : following.start].strip(" \t*_\"'“”«»")
                and not CJK_CHAR.match(following.key)
            ):
                key = f"{term.key} {following.key}"
                out[i] = Term(
                    "number", key, term.start, term.end, following.key, "value", term.owner
                )
    return out


def _overlaps(span: tuple[int, int], taken: list[tuple[int, int]]) -> bool:
    return any(span[0] < b and a < span[1] for a, b in taken)


class _Taken:
    """The spans of a statement no other term may stand in. Every word asks: past a few
    spans they are kept as a mask of the statement's characters too (a scan of the list
    made reading a long statement of many cue words quadratic: 84 kB, 4 s)."""

    LISTED_AT_MOST = 16

    def __init__(self, length: int) -> None:
        self._spans: list[tuple[int, int]] = []
        self._length = length
        self._mask: bytearray | None = None

    def append(self, span: tuple[int, int]) -> None:
        if self._mask is None:
            self._spans.append(span)
            if len(self._spans) <= self.LISTED_AT_MOST:
                return
            self._mask = bytearray(self._length + 1)
            for a, b in self._spans:
                self._mask[a:b] = b"\x01" * (b - a)
            return
        a, b = span
        self._mask[a:b] = b"\x01" * (b - a)

    def overlaps(self, span: tuple[int, int]) -> bool:
        if self._mask is None:
            return _overlaps(span, self._spans)
        return span[0] < span[1] and self._mask.find(1, span[0], span[1]) >= 0

    def free(self, start: int, end: int) -> list[bool]:
        """Per character of `start`..`end`, whether no span holds it."""
        if self._mask is not None:
            return [not taken for taken in self._mask[start:end]]
        free = [True] * (end - start)
        for a, b in self._spans:
            for i in range(max(a, start), min(b, end)):
                free[i - start] = False
        return free


def _cjk_terms(run: str, offset: int, taken: _Taken) -> Iterator[Term]:
    """Bigrams of a CJK run, skipping cue and value spans, hiragana (Japanese particles
    and endings), Korean particles, and function bigrams."""
    # (Per run, not per character: a statement's reading is mostly this for CJK text.)
    free = taken.free(offset, offset + len(run))
    for hiragana in _HIRAGANA.finditer(run):
        free[hiragana.start()] = False
    particles = lexicon().particles
    if _HANGUL.match(run) and run.endswith(particles):
        for particle in particles:
            if run.endswith(particle) and len(run) - len(particle) >= 2:
                for i in range(len(run) - len(particle), len(run)):
                    free[i] = False
                break
    functional = function_words()
    piece_start = None
    for i in range(len(run) + 1):
        if i < len(run) and free[i]:
            if piece_start is None:
                piece_start = i
            continue
        if piece_start is not None:
            piece = run[piece_start:i]
            if len(piece) == 1:
                if piece not in functional:
                    yield Term("word", piece, offset + piece_start, offset + i)
            else:
                # A piece holds no hiragana (not free), so a bigram of it is a function
                # bigram only by its punctuation.
                punctuated = _PUNCTUATION.search(piece) is not None
                for k in range(len(piece) - 1):
                    gram = piece[k : k + 2]
                    if (punctuated and _FUNCTION_BIGRAM.search(gram)) or gram in functional:
                        continue
                    at = offset + piece_start + k
                    yield Term("word", gram, at, at + 2)
            piece_start = None
