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
(data/cues.txt) are not terms either, they mark the statement as `negated` or as
announcing a change.

One job past 500 lines: the lexicon (cue, value and unit phrases, matched through their
prefix tree) exists only to be read by `read_terms`, and each term kind's rules need the
others' spans (a cue's words are no terms, a unit belongs to its number).
"""

from __future__ import annotations

import dataclasses
import functools
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, NamedTuple

import regex
from memory_recall.server.ranking.bm25f.tokens import COMMON_TWO_LETTER_WORDS

TermKind = Literal["word", "name", "ident", "number", "value"]
Role = Literal["key", "value", ""]

_DATA = Path(__file__).parent / "data"
# Truncation stemming: a language-independent stand-in for a stemmer, enough for the
# inflections of European languages and Russian (`payment`/`payments`, `déploie`/`déployer`).
STEM_CHARS = 5
# Letters glued to a number that make it a name ("1Password") when they are no unit.
GLUED_NAME_AT_LEAST = 3
# Distinct function words of a noun-capitalising language that mark a text as one.
NOUN_LANGUAGE_EVIDENCE = 2

# With the prolonged sound mark (ー, ｰ), a letter of no script of its own: "ユーザー" is one
# run, not "ユ" and "ザ" apart (server/tokens.py keeps it inside Japanese runs too).
_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc\uff70"
CJK_CHAR = regex.compile(f"[{_CJK}]")


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


# -- Data ----------------------------------------------------------------------------------


def _data_lines(name: str) -> Iterator[str]:
    for line in (_DATA / name).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            yield line


def _norm(text: str) -> str:
    if text.isascii():  # its own normal form: most words of most statements
        return text.lower()
    return unicodedata.normalize("NFKC", text).lower()


@functools.cache
def function_words() -> frozenset[str]:
    words: set[str] = set()
    for line in _data_lines("function_words.txt"):
        _, _, text = line.partition(":")
        words.update(_norm(word) for word in text.split())
    return frozenset(words)


def _name_pattern(names: Iterable[str]) -> regex.Pattern[str]:
    """One case-insensitive pattern for names written in Latin letters, whole, wherever
    they stand: also against a CJK word ("はSlackを", "Slack을"), where `_phrase_pattern`'s
    bounds, which take any letter for a word's own, would not see them."""
    return regex.compile(
        rf"(?<![A-Za-z0-9_/.-])(?:{_trie(list(names))})(?![A-Za-z0-9_/-]|\.[A-Za-z0-9])",
        regex.IGNORECASE,
    )


def _phrase_pattern(phrases: Iterable[str]) -> regex.Pattern[str]:
    """One case-insensitive pattern for a list of phrases, the longest preferred: whole
    words in spaced scripts (an entry ending in ' matches an elided prefix), anywhere in
    CJK."""
    bounded, elided, pieces = [], [], []
    for phrase in set(phrases):
        if CJK_CHAR.match(phrase):
            pieces.append(phrase)
        elif phrase.endswith("'"):
            elided.append(phrase)
        else:
            bounded.append(phrase)
    parts = []
    if bounded:
        # Not inside an identifier either: `nightly` is no frequency in `nightly-invoices`.
        parts.append(
            rf"(?<![\p{{L}}\p{{N}}_/.-])(?:{_trie(bounded)})"
            rf"(?![\p{{L}}\p{{N}}_/-]|\.[\p{{L}}\p{{N}}])"
        )
    if elided:
        parts.append(rf"(?<![\p{{L}}\p{{N}}])(?:{_trie(elided)})")
    if pieces:
        parts.append(_trie(pieces))
    return regex.compile("|".join(parts) or r"(?!)", regex.IGNORECASE)


def _trie(phrases: Iterable[str]) -> str:
    r"""An alternation of `phrases` shaped as their prefix tree (`every(?:\s+(?:day|night))?`):
    the same matches as the flat list longest first, found without trying a hundred
    alternatives at every word (a statement's cues were most of reading a long memory)."""
    root: dict[str, dict] = {}
    for phrase in phrases:
        node = root
        for char in phrase:
            node = node.setdefault(char, {})
        node[""] = {}  # a phrase ends here

    def shape(node: dict[str, dict]) -> str:
        branches = [
            (r"\s+" if char == " " else regex.escape(char)) + shape(node[char])
            for char in sorted(node)
            if char
        ]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else f"(?:{'|'.join(branches)})"
        # Greedy: the longer phrase first, this one when none of them matches.
        return f"(?:{body})?" if "" in node else body

    return shape(root)


CJK_LANGUAGES = ("zh", "ja", "ko")


@dataclass(frozen=True)
class _Lexicon:
    negation: dict[str, regex.Pattern[str]]  # by script: "" (spaced scripts), zh, ja, ko
    change: dict[str, regex.Pattern[str]]
    number_words: dict[str, str]
    number_word: regex.Pattern[str]
    articles: frozenset[str]  # the number one before a unit ("an hour", "eine Stunde")
    conjunction: regex.Pattern[str]  # a word that adds an item ("and", "et", "と")
    additive: regex.Pattern[str]  # a word that says "one more" ("also", "auch", "也")
    past: regex.Pattern[str]  # a word that tells what was ("was", "war", "当时")
    only: regex.Pattern[str]  # a word that restricts to some of a thing ("only", "nur")
    how_often: regex.Pattern[str]  # a word that says how often a rule holds ("usually")
    scope: regex.Pattern[str]  # a word that narrows where a statement holds ("for", "pour")
    determiners: frozenset[str]  # what may open a statement before a qualifier ("the", "our")
    of: frozenset[str]  # what joins a part to the thing it is of ("of", "du", "des")
    for_: frozenset[str]  # a word of scope that says for which thing ("for", "für")
    with_: regex.Pattern[str]  # a word that joins a thing given along ("with", "via")
    auxiliaries: frozenset[str]  # verbs that help another ("is", "has", "wird")
    kinds_of_thing: frozenset[str]  # words that say what a name is ("service", "team")
    speakers: frozenset[str]  # the pronouns of who writes ("we", "wir", "我们")
    nows: frozenset[str]  # change cues that only say when ("now", "jetzt", "现在")
    corrects: frozenset[str]  # change cues that only say a note corrects ("correction")
    discourse: frozenset[str]  # labels that say how to read a line ("note", "fyi")
    rationale: frozenset[str]  # labels that give a fact's reason or use ("why", "how to apply")
    provenance: regex.Pattern[str]  # who confirmed a statement ("confirmed", "abgestimmt")
    since_when: regex.Pattern[str]  # a closing stretch opened by a word of `since` (`_since_when`)
    agreed: regex.Pattern[str]  # a closing stretch after a comma opened by one of `agreed`
    aside: regex.Pattern[str]  # an opening set off by a comma: a `now`, `since`, `agreed` word
    now_phrases: frozenset[str]  # `now` as written, lowercase (what `aside` opens with)
    since_phrases: frozenset[str]  # `since` as written, lowercase
    periods: frozenset[str]  # words that say which stretch of time ("week", "sprint")
    relative: frozenset[str]  # words that place one relative to today ("last", "cette")
    hedges: frozenset[str]  # what a closing bracket says when a statement is not settled
    stresses: frozenset[str]  # what one says when it only stresses or repeats it
    channels: frozenset[str]  # words for a chat channel ("channel", "canal", "канал")
    until: frozenset[str]  # words that close a stretch of time ("to", "bis")
    users: frozenset[str]  # the words for the user ("user", "Nutzer", "用户")
    short: dict[str, str]  # a word → the short form it is one term with ("database" → "db")
    toward: frozenset[str]  # what stands between a thing replaced and its replacement ("to")
    swap: frozenset[str]  # a verb after which "with" does too ("replaced black with ruff")
    unwitnessed: frozenset[str]  # short forms some of whose words do not hold them ("db")
    capitalised_nouns: frozenset[str]
    units: dict[str, str]  # word → canonical unit
    unit: regex.Pattern[str]
    value_class: dict[str, str]  # phrase → class
    dimensions: dict[str, str]  # canonical unit → what it measures
    value: regex.Pattern[str]
    particles: tuple[str, ...]  # Korean particles, longest first
    ending: frozenset[str]  # negation cues that are change cues too ("no longer")
    pronoun: regex.Pattern[str]  # a pronoun for a person, at the start of a statement
    # What a statement must hold to match a negation or change phrase (by kind and
    # script, as the patterns above) or a value phrase (`("value", "")`): one holding none
    # of a list's openings is not scanned for it.
    openings: dict[tuple[str, str], _Openings]
    when: frozenset[str]  # words that say when: months, "yesterday" ("in March", "im Mai")
    purpose: frozenset[str]  # scope words that say what for before one word ("to build")
    where: regex.Pattern[str]  # what places a subject ("lives in", "moved to")
    tool_kind: dict[str, str]  # a tool's name → the job it does ("jest" → "test-runner")
    tool: regex.Pattern[str]  # any of those names
    months: dict[str, int]  # a month's name or short form → its number ("märz" → 3)
    folded_months: frozenset[str]  # the same, folded as `_runs` folds a text
    dates: tuple[regex.Pattern[str], ...]  # a date written with a month's name (`_dates`)


@functools.cache
def lexicon() -> _Lexicon:
    lists: dict[str, list[str]] = defaultdict(list)
    by_language: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for line in _data_lines("cues.txt"):
        key, _, values = line.partition("=")
        kind, _, language = key.strip().partition(".")
        words = [_norm(v.strip()) for v in values.split(",") if v.strip()]
        lists[kind].extend(words)
        script = language if language in CJK_LANGUAGES else ""
        by_language[kind][script].extend(words)
    numbers = dict(item.split(":") for item in lists["number"])
    short = dict(item.split(":") for item in lists["short"])
    units: dict[str, str] = {}
    classes: dict[str, str] = {}
    dimensions: dict[str, str] = {}
    tools: dict[str, str] = {}
    months: dict[str, int] = {}
    for line in _data_lines("values.txt"):
        key, _, values = line.partition("=")
        kind, _, name = key.strip().partition(".")
        for word in (_norm(v.strip()) for v in values.split(",") if v.strip()):
            if kind == "unit":
                units.setdefault(word, name)
            elif kind == "value":
                classes.setdefault(word, name)
            elif kind == "dimension":
                dimensions.setdefault(word, name)
            elif kind == "tool":
                tools.setdefault(word, name)
            elif kind == "month":
                months.setdefault(word, int(name))
    return _Lexicon(
        negation={k: _phrase_pattern(v) for k, v in by_language["negation"].items()},
        change={k: _phrase_pattern(v) for k, v in by_language["change"].items()},
        number_words=numbers,
        number_word=_phrase_pattern(numbers),
        articles=frozenset(lists["article"]),
        conjunction=_phrase_pattern(lists["conjunction"]),
        additive=_phrase_pattern(lists["additive"]),
        past=_phrase_pattern(lists["past"]),
        only=_phrase_pattern(lists["only"]),
        how_often=_phrase_pattern(lists["how-often"]),
        scope=_phrase_pattern(lists["scope"]),
        determiners=frozenset(lists["determiner"]),
        of=frozenset(lists["of"]),
        for_=frozenset(lists["for"]),
        with_=_phrase_pattern(lists["with"]),
        auxiliaries=frozenset(lists["auxiliary"]),
        kinds_of_thing=frozenset(lists["kind-of-thing"]),
        speakers=frozenset(lists["speaker"]),
        nows=frozenset(lists["now"]),
        corrects=frozenset(lists["corrects"]),
        discourse=frozenset(lists["discourse"]),
        rationale=frozenset(lists["rationale"]),
        provenance=_phrase_pattern(lists["provenance"]),
        since_when=_closing_stretch(lists["since"]),
        agreed=_after_a_comma(lists["agreed"]),
        aside=_opening_aside([*lists["now"], *lists["since"], *lists["agreed"], "per"]),
        now_phrases=frozenset(lists["now"]),
        since_phrases=frozenset(lists["since"]),
        periods=frozenset(lists["period"]),
        relative=frozenset(lists["relative"]),
        hedges=frozenset(lists["hedge"]),
        stresses=frozenset(lists["again"]) | frozenset(lists["discourse"]),
        channels=frozenset(lists["channel"]),
        until=frozenset(lists["until"]),
        users=frozenset(lists["user"]),
        short=short,
        toward=frozenset(lists["toward"]),
        swap=frozenset(lists["swap"]),
        unwitnessed=frozenset(v for k, v in short.items() if v not in _caseless(k)),
        capitalised_nouns=frozenset(lists["capitalised-nouns"]),
        units=units,
        unit=_unit_pattern(units),
        value_class=classes,
        dimensions=dimensions,
        value=_phrase_pattern(classes),
        particles=tuple(sorted(set(lists["particles"]), key=len, reverse=True)),
        ending=frozenset(lists["negation"]) & frozenset(lists["change"]),
        pronoun=_phrase_pattern(lists["pronoun"]),
        openings={
            **{
                (kind, script): _openings(phrases)
                for kind in ("negation", "change")
                for script, phrases in by_language[kind].items()
            },
            ("value", ""): _openings(classes),
        },
        when=frozenset(lists["when"]),
        purpose=frozenset(lists["purpose"]),
        where=_phrase_pattern(lists["where"]),
        tool_kind=tools,
        tool=_name_pattern(tools),
        months=months,
        folded_months=frozenset(_fold(m) for m in months),
        dates=_date_patterns(months),
    )


def _longest_first(phrases: Iterable[str]) -> str:
    """An alternation of `phrases`, escaped, the longest tried first."""
    return "|".join(regex.escape(o) for o in sorted(set(phrases), key=len, reverse=True))


def _closing_stretch(openers: Iterable[str]) -> regex.Pattern[str]:
    """A statement's closing stretch opened by one of `openers`, after a space or a comma,
    up to its last full stop (searched from the end)."""
    words = _longest_first(openers)
    return regex.compile(
        rf"(?:[ \t]*[,，][ \t]*|[ \t]+)(?<![\p{{L}}])(?:{words})[ \t]+"
        r"(?P<when>(?:[^\n,，;；:：!?.。！？]|\.(?=\d))+?)[ \t]*[.!?。！？]?[ \t]*$",
        regex.IGNORECASE | regex.REVERSE,
    )


def _after_a_comma(openers: Iterable[str]) -> regex.Pattern[str]:
    """A statement's closing stretch after a comma, opened by one of `openers`, up to its last
    full stop (searched from the end)."""
    words = _longest_first(openers)
    return regex.compile(
        rf"[ \t]*[,，][ \t]*(?:{words})(?![\p{{L}}])(?P<rest>[^,，;；\n]*?)"
        r"[ \t]*[.!?。！？]?[ \t]*$",
        regex.IGNORECASE | regex.REVERSE,
    )


def _opening_aside(openers: Iterable[str]) -> regex.Pattern[str]:
    """An opening of a statement set off by a comma, opened by one of `openers` and a few
    words at most ("Going forward, …", "Since last week, …", "According to Alice, …")."""
    words = _longest_first(openers)
    return regex.compile(
        rf"[ \t]*(?:\*\*|__)?(?P<opener>{words})(?![\p{{L}}])"
        r"(?P<rest>[^,，:：;；\n]{0,48}?)(?:\*\*|__)?[ \t]*[,，](?:\*\*|__)?[ \t]+",
        regex.IGNORECASE,
    )


def _date_patterns(months: Mapping[str, int]) -> tuple[regex.Pattern[str], ...]:
    """The ways a date is written with a month's name (`_dates` reads their groups)."""
    names = "|".join(regex.escape(m) for m in sorted(months, key=len, reverse=True))
    month = rf"(?<![\p{{L}}])(?P<month>{names})(?![\p{{L}}])\.?"
    day = r"(?<![\d.:,/-])(?P<day>[12]\d|3[01]|0?[1-9])"
    year = r"(?P<year>(?:19|20)\d\d)(?![\d:])"
    return (
        # "March 6, 2026", "Mar 6", "March 6th"
        regex.compile(rf"{month}\s+{day}(?:st|nd|rd|th)?(?!\d)(?:,?\s+{year})?", regex.I),
        # "6 March 2026", "6. März 2026", "6 de marzo de 2026", "1er mars", "6 марта"
        regex.compile(
            rf"{day}(?:\.|st|nd|rd|th|er|º|ª)?\s+(?:de\s+|of\s+)?{month}"
            rf"(?:,?\s+(?:de\s+)?{year})?",
            regex.I,
        ),
        # "2026年3月6日", "3月6日", "2026년 3월 6일"
        regex.compile(
            r"(?:(?P<year>(?:19|20)\d\d)\s*[年년]\s*)?(?P<month>1[0-2]|0?[1-9])\s*[月월]\s*"
            r"(?P<day>[12]\d|3[01]|0?[1-9])\s*[日일号號]"
        ),
        # "2026/03/06", "2026.03.06"; "06.03.2026" (day first, as German writes it)
        regex.compile(
            r"(?<![\d.:/-])(?P<year>(?:19|20)\d\d)[/.](?P<month>1[0-2]|0?[1-9])[/.]"
            r"(?P<day>[12]\d|3[01]|0?[1-9])(?![\d.:/-]\d)"
        ),
        regex.compile(
            r"(?<![\d.:/-])(?P<day>[12]\d|3[01]|0?[1-9])\.(?P<month>1[0-2]|0?[1-9])\."
            r"(?P<year>(?:19|20)\d\d)(?![\d.:/-]\d)"
        ),
    )


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


class _Openings(NamedTuple):
    """What a text must hold for a phrase list's pattern (`_phrase_pattern`) to match in
    it: as runs of letters and digits of its own (`_runs`), every run of some phrase of a
    spaced script — such a phrase matches whole words, so each of its runs is one of the
    text's — or the first character of some phrase of an unspaced one (matched anywhere;
    those characters have no case). `always`: some phrase opens with neither; every text
    is scanned."""

    runs: dict[str, tuple[frozenset[str], ...]]  # by a phrase's first run, its runs
    firsts: frozenset[str]
    always: bool

    def may_match(self, runs: frozenset[str] | None, chars: frozenset[str]) -> bool:
        """`runs`: the text's (`_runs`); `chars`: its characters outside ASCII."""
        if self.always or runs is None or not chars.isdisjoint(self.firsts):
            return True
        return any(phrase <= runs for run in runs if run in self.runs for phrase in self.runs[run])


def _openings(phrases: Iterable[str]) -> _Openings:
    runs: dict[str, set[frozenset[str]]] = defaultdict(set)
    firsts: set[str] = set()
    always = False
    for phrase in phrases:
        folded = _fold(phrase)
        if CJK_CHAR.match(phrase):
            firsts.add(phrase[0])
        elif first := _RUN.match(folded):
            runs[first.group()].add(frozenset(_RUN.findall(folded)))
        else:
            always = True
    return _Openings({run: tuple(of) for run, of in runs.items()}, frozenset(firsts), always)


_RUN = regex.compile(r"[\p{L}\p{N}]+")
# The patterns match case-insensitively by simple case folding, which also takes the
# Turkish dotted and dotless i for i and I; Python's full folding does not. With those
# two read as i first, two letters the patterns take for each other fold alike (checked
# over every letter: tests/unit/test_fact_openings.py).
# A combining mark that folds to a letter (the Greek ypogegrammeni folds to iota): it
# would join the runs beside it, so a text holding one is always scanned.
_FOLDS_TO_A_LETTER = "\u0345"


def _fold(text: str) -> str:
    if "\u0130" in text or "\u0131" in text:
        text = text.replace("\u0130", "i").replace("\u0131", "i")
    return text.casefold()


def _runs(text: str) -> frozenset[str] | None:
    """A text's runs of letters and digits, folded as the phrase patterns match (None:
    it cannot be told from them, scan it)."""
    if text.isascii():
        return frozenset(_RUN.findall(text.lower()))
    if _FOLDS_TO_A_LETTER in text:
        return None
    return frozenset(_RUN.findall(_fold(text)))


@functools.cache
def canonical_units() -> frozenset[str]:
    """The units of data/values.txt, by their canonical names (h, min, d, mb, …)."""
    return frozenset(lexicon().units.values()) | {"time", "date", "pct"}


def dimension(unit: str) -> str:
    """What a canonical unit measures (s, min, h: a duration); a unit of no dimension of
    data/values.txt is its own."""
    return lexicon().dimensions.get(unit, unit)


def _unit_pattern(units: dict[str, str]) -> regex.Pattern[str]:
    """A unit right at a position (after a number and optional spaces)."""
    spaced = sorted((u for u in units if not CJK_CHAR.match(u)), key=len, reverse=True)
    cjk = sorted((u for u in units if CJK_CHAR.match(u)), key=len, reverse=True)
    alternatives = []
    if spaced:
        alternatives.append(rf"(?:{'|'.join(regex.escape(u) for u in spaced)})(?![\p{{L}}\p{{N}}])")
    if cjk:
        alternatives.append(f"(?:{'|'.join(regex.escape(u) for u in cjk)})")
    return regex.compile(r"[ \t]*(?:" + "|".join(alternatives) + ")", regex.IGNORECASE)


# -- Reading -------------------------------------------------------------------------------

_TOKEN = regex.compile(
    r"(?P<url>(?<![\p{L}\p{N}])[a-zA-Z][a-zA-Z0-9+.-]*://[^\s<>()\[\]{}'\"`，。、」]+)"
    r"|(?P<code>`[^`\n]+`)"
    r"|(?P<email>(?<![\p{L}\p{N}])[\w.+-]+@[\w-]+(?:\.[\w-]+)+)"
    r"|(?P<path>(?<![\p{L}\p{N}/.~])(?:~|\.{1,2})?/[\p{L}\p{N}_.@%+-]+(?:/[\p{L}\p{N}_.@%+-]*)*)"
    r"|(?P<flag>(?<![\p{L}\p{N}-])--?[A-Za-z][A-Za-z0-9_-]*)"
    # A chat channel ("#deploys", "#eng-oncall"); not an issue number ("#123"), not C#.
    r"|(?P<channel>(?<![\p{L}\p{N}&#])#\p{L}[\p{L}\p{N}_-]*(?<![_-]))"
    rf"|(?P<ident>[[\p{{L}}\p{{N}}]--[{_CJK}]]+(?:[-_.:/@#+][[\p{{L}}\p{{N}}]--[{_CJK}]]+)+)"
    rf"|(?P<mixed>[[\p{{L}}]--[{_CJK}]]+\p{{N}}[[\p{{L}}\p{{N}}]--[{_CJK}]]*)"
    rf"|(?P<number>\p{{Nd}}+(?:[.,]\p{{Nd}}+)*(?P<glued>[[\p{{L}}]--[{_CJK}]]+|%)?)"
    rf"|(?P<cjk>[{_CJK}]+)"
    rf"|(?P<word>[[\p{{L}}\p{{M}}]--[{_CJK}]]+(?:['’][\p{{L}}]+)?)"
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


# Characters read as the one they are typed for, one for one (a statement's spans kept):
# the no-break and narrow spaces a web page or a Mac keyboard leaves between words, curly
# apostrophes, and full-width digits and Latin letters ("ポート８０８２"). Full-width
# punctuation stays: the CJK cues and stops are written with it.
_WIDE = "".join(map(chr, [*range(0xFF10, 0xFF1A), *range(0xFF21, 0xFF3B), *range(0xFF41, 0xFF5B)]))
_TYPED_AS = str.maketrans(
    "\u00a0\u2007\u202f\u2009\u200a\u2002\u2003\u2019\u2018\u02bc" + _WIDE,
    " " * 7 + "'" * 3 + "".join(chr(ord(c) - 0xFEE0) for c in _WIDE),
)


@functools.lru_cache(maxsize=8192)
def read_terms(text: str, capitals: bool | None = None) -> Terms:
    """The terms of one statement. `capitals`: whether a capital letter inside a sentence
    marks a name (`capitals_mark_names` of the whole memory; by default, of `text`)."""
    if not text.isascii() and (typed := text.translate(_TYPED_AS)) != text:
        return read_terms(typed, capitals)
    if text.isupper() and len(lowered := text.lower()) == len(text) and _shouted(text):
        # "DEPLOYS NEED TWO APPROVALS": its capitals mark nothing (every word a name, it
        # said more than the same rule typed plainly and was written over it).
        return read_terms(lowered, capitals)
    if ("(" in text or "（" in text) and (
        cited := _CITED.search(text)
        or _LINKED.search(text)
        or _TICKET.search(text)
        or _remarked(text)
    ):
        # "… port 8082 (see PR #123).", "… ([runbook](https://…)).", "… (JIRA-1234).", "…
        # (confirmed with the team).", "… (again)": where the statement comes from or how
        # to read it, not what it says; read without it (its terms and cues, and what
        # stands after the last term).
        return read_terms(text[: cited.start()], capitals)
    if "#" in text and (tags := _tagged(text)) is not None:
        # "… two approvals #ops #deploy": tags of the note, not what it says. (A new tag
        # keeps a note from being dropped as known beside one without it: `_raw_values`.)
        return read_terms(text[:tags], capitals)
    if ("(" in text or "（" in text) and (hedge := _hedged(text)) is not None:
        # "… three approvals (TBD).": read without it, and said as not settled.
        return dataclasses.replace(read_terms(text[:hedge], capitals), hedged=True)
    if ("," in text or "，" in text) and (agreed := _agreed(text)) is not None:
        # "…, as discussed", "…, per the team", "…, wie besprochen": as a remark in brackets.
        return read_terms(text[:agreed], capitals)
    if ("," in text or "，" in text) and (aside := _aside(text)) is not None:
        # "Going forward, …", "Since last week, …", "According to Alice, …": blanked (the
        # statement's spans kept), with "now" when it says from when.
        end, announces = aside
        inner = read_terms(" " * end + text[end:], capitals)
        return dataclasses.replace(inner, changes=_with_now(inner, announces))
    if (since := _since_when(text)) is not None:
        # "… port 8082 since last week", "… seit Montag": from when it holds, as "now"
        # says it, not what it is; read without it, with "now". (A time word it held the
        # old memory never says keeps the new one from being dropped as known: judgement.py,
        # `_raw_values`.)
        before = read_terms(text[:since], capitals)
        if before.terms:
            return dataclasses.replace(before, changes=_with_now(before, True))
    lex = lexicon()
    closed = function_words()
    taken: list[tuple[int, int]] = []  # spans of cues and value words: no other terms there
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
        if _overlaps(match.span(), taken) or (verbatim and _overlaps(match.span(), verbatim)):
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
        if taken and _overlaps((start, end), taken):
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


# A bracket closing a statement that says where it comes from: "(see PR #123)", "(per
# Alice)", "(cf. the runbook)", "(siehe …)", "(voir …)", "(参见 …)".
_CITED = regex.compile(
    r"[ \t]*[(（](?:see|cf\.?|per|ref\.?|source|via|siehe|vgl\.|voir|ver|vedi|zie|см\.?"
    r"|参见|参照|참고)(?![\p{L}])[^()（）]*[)）][ \t]*[.!?。！？]?[ \t]*$",
    regex.IGNORECASE,
)


# A bracket closing a statement that holds a link alone: "([runbook](https://…))", "(https://…)".
_LINKED = regex.compile(
    r"[ \t]*[(（][ \t]*(?:\[[^\]\n]*\]\([^()\s]*\)|<?https?://[^\s()<>]+>?)[ \t]*[)）]"
    r"[ \t]*[.!?。！？]?[ \t]*$"
)
# A bracket closing a statement that holds a reference alone: a ticket ("(JIRA-1234)",
# "(PROJ-12)"), an issue or pull request ("(#123)", "(PR 45)", "(!67)"), a commit hash.
_TICKET = regex.compile(
    r"[ \t]*[(（][ \t]*(?:[A-Z][A-Z0-9]+-\d+|[#!]\d+|(?i:pr|mr|issue|ticket|bug)[ \t]*#?\d+"
    r"|(?=[0-9a-f]*[a-f])(?=[0-9a-f]*\d)[0-9a-f]{7,40})[ \t]*[)）][ \t]*[.!?。！？]?[ \t]*$"
)
# A bracket closing a statement, its words (`_remarked`).
_CLOSING_BRACKET = regex.compile(r"[ \t]*[(（]([^()（）]*)[)）][ \t]*[.!?。！？]?[ \t]*$")
REMARK_WORDS = 8  # words a remark holds at most


# A date alone in a closing bracket, a few words before it at most: "(2026-12-07)", "(as of
# 2026-12-07)", "(updated 07.12.2026)".
_DATED = regex.compile(
    r"[ \t]*(?:\p{L}+[ \t]+){0,2}(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[./]\d{1,2}[./]\d{4})"
    r"(?:[ T]\d{1,2}:\d{2}(?::\d{2})?)?[ \t]*"
)


def _remarked(text: str) -> regex.Match[str] | None:
    """A bracket closing `text` that says when it was written ("(2026-12-07)", "(as of
    2026-12-07)": a stamp, as one opening a line is, `statements.Statement.stamp`) or who
    confirmed or decided it ("(confirmed with the team)", "(mit dem Team abgestimmt)":
    `provenance` in data/cues.txt), short, and neither restricting nor negating what it
    closes ("(confirmed for staging only)" is kept)."""
    closing = _CLOSING_BRACKET.search(text)
    if closing is None:
        return None
    inner = closing.group(1)
    if _DATED.fullmatch(inner):
        return closing
    lex = lexicon()
    if _bare(inner) in lex.stresses:  # "(again)", "(important!)", "(wieder)"
        return closing
    if len(inner.split()) > REMARK_WORDS or not lex.provenance.search(inner):
        return None
    if lex.only.search(inner) or any(p.search(inner) for p in lex.negation.values()):
        return None
    return closing


SINCE_WORDS = 4  # words a closing stretch of `_since_when` holds at most after its opener
_DIGIT_DATE = regex.compile(r"\d{4}|\d{1,2}[./-]\d{1,2}")
_STRETCH_WORD = regex.compile(r"[\p{L}\p{N}][\p{L}\p{N}'’-]*")


def _since_when(text: str) -> int | None:
    """Where a closing stretch that says from when a statement holds starts ("since last
    week", "starting today", "effective immediately", "seit Montag", "depuis le 1er
    décembre": a word of `since` in data/cues.txt, then words that name a time and nothing
    else, `_only_when`), or None. A stretch that
    closes with a word of `until` ("from Monday to Friday") says when the fact holds:
    part of it, not a stamp; one that restricts or negates is kept too, and so is one said
    right after an auxiliary ("… is effective from Monday": the time is what it says)."""
    if len(text) < 12:
        return None
    last = text.rstrip(" \t.!?。！？").rpartition(" ")[2]
    if not last or (_norm(last) not in _time_ends() and not _DIGIT_DATE.search(last)):
        return None  # most statements: not closed by a time
    lex = lexicon()
    found = lex.since_when.search(text)
    if found is None:
        return None
    before = _STRETCH_WORD.findall(_norm(text[: found.start()]))
    if not before or before[-1] in lex.auxiliaries:  # "The freeze is effective from Monday"
        return None
    # It names a time and nothing else ("с этой недели Игорь" names the on-call after it).
    words = _STRETCH_WORD.findall(_norm(found.group("when")))
    if not _only_when(words) or lex.until.intersection(words):
        return None
    return found.start()


def _agreed(text: str) -> int | None:
    """Where a closing stretch after a comma that says the statement was agreed, or whose
    word it is, starts ("…, as discussed", "…, according to Alice", "…, comme convenu":
    `agreed` in data/cues.txt, at most `REMARK_WORDS` words), unless it restricts or
    negates ("…, as agreed for staging only"); or None."""
    comma = max(text.rfind(","), text.rfind("，"))
    if len(text[comma:].split()) > REMARK_WORDS:
        return None
    lex = lexicon()
    found = lex.agreed.search(text)
    if found is None:
        return None
    rest = found.group("rest")
    if lex.only.search(rest) or any(p.search(rest) for p in lex.negation.values()):
        return None
    return found.start()


def _only_when(words: Sequence[str]) -> bool:
    """Whether `words` (normal forms) say a time and nothing else: they end with a word that
    names one (a period, a day, a month, a date), and every other is one too, a function
    word, an article or a word that places a time ("last", "cette", "прошлой"); "the
    upgrade last week" names an event as well."""
    if not words or len(words) > SINCE_WORDS:
        return False
    lex = lexicon()
    ends, closed = _time_ends(), function_words()
    if words[-1] not in ends and _DIGIT_DATE.search(words[-1]) is None:
        return False
    return all(
        w in ends
        or w in closed
        or w in lex.articles
        or w in lex.relative
        or any(c.isdigit() for c in w)
        for w in words[:-1]
    )


def _with_now(terms: Terms, announces: bool) -> tuple[str, ...]:
    """`terms`' change cues, with "now" when an aside said from when (once)."""
    if not announces or "now" in terms.changes:
        return terms.changes
    return (*terms.changes, "now")


def _aside(text: str) -> tuple[int, bool] | None:
    """Where an opening set off by a comma that says from when a statement holds, or whose
    word it is, ends, and whether it says from when: a word of `now` alone ("Going
    forward, …", "Ab sofort, …"), one of `since` and a time ("Since last week, …", "Seit
    Montag, …": as `_since_when` reads one closing a statement), one of `agreed`, or "per"
    and a name, and a few words ("According to Alice, …", "Per Alice, …", "Wie besprochen,
    …"); or None."""
    found = lexicon().aside.match(text)
    if found is None:
        return None
    lex = lexicon()
    opener, rest = _norm(found.group("opener")), found.group("rest")
    words = _STRETCH_WORD.findall(_norm(rest))
    if lex.only.search(rest) or any(p.search(rest) for p in lex.negation.values()):
        return None
    if opener in lex.now_phrases:
        return (found.end(), True) if not words else None
    if opener in lex.since_phrases:
        if _only_when(words) and not lex.until.intersection(words):
            return found.end(), True
        return None
    if len(words) > SINCE_WORDS or (opener == "per" and not rest.strip()[:1].isupper()):
        return None
    return found.end(), False


def time_words(text: str) -> set[str]:
    """The words of `text` that name a day, a month or a day relative to today (`when`,
    weekdays, months in data/cues.txt and data/values.txt)."""
    return set(_STRETCH_WORD.findall(_norm(text))) & _days_and_months()


@functools.cache
def _days_and_months() -> frozenset[str]:
    lex = lexicon()
    weekdays = (w for w, kind in lex.value_class.items() if kind == "weekday")
    return frozenset({*lex.when, *lex.months, *weekdays})


@functools.cache
def _time_ends() -> frozenset[str]:
    """The words a closing stretch of `_since_when` may end with (and the last word of
    each phrase of `period`)."""
    periods = lexicon().periods
    return _days_and_months() | periods | {p.rsplit(" ", 1)[-1] for p in periods}


_TAGS = regex.compile(
    r"(?:[ \t]+#[\p{L}_][\p{L}\p{N}_/-]*)+[ \t]*[.!?。！？]?[ \t]*$", regex.REVERSE
)


def _tagged(text: str) -> int | None:
    """Where hashtags closing a statement start ("… two approvals #ops #deploy"), unless
    the statement names a channel with them: after a word of scope, an auxiliary, a
    function word, a negation or a word for a channel ("Alerts go to #ops", "The channel
    is #ops", "…, not #deploys"); or None."""
    found = _TAGS.search(text)
    if found is None:
        return None
    before = _STRETCH_WORD.findall(_norm(text[: found.start()]))
    if not before:
        return None
    lex = lexicon()
    last = before[-1]
    if (
        last in lex.auxiliaries
        or last in lex.channels
        or last in function_words()
        or lex.scope.fullmatch(last)
        or any(p.fullmatch(last) for p in lex.negation.values())
    ):
        return None  # "… go to #ops", "… is #ops", "…, not #deploys"
    return found.start()


def _shouted(text: str) -> bool:
    """Whether a statement in capitals is written so as a whole, not an acronym or two
    ("API", "CI/CD"): three words of two letters or more, and every word of letters in
    capitals (an uncased one, CJK, says a few acronyms stand in a sentence)."""
    worded = [w for w in _STRETCH_WORD.findall(text) if not w.isdigit()]
    return sum(len(w) >= 2 for w in worded) >= 3 and all(w.isupper() for w in worded)


def _bare(inner: str) -> str:
    """A bracket's words in their normal form, without the marks around them."""
    return _norm(inner).strip(" \t!?.…*_") or _norm(inner).strip()


def _hedged(text: str) -> int | None:
    """Where a bracket closing `text` that says, alone, that it is not settled starts
    ("(TBD)", "(temporary)", "(vorläufig)", "（暂定）": `hedge` in data/cues.txt), or None."""
    closing = _CLOSING_BRACKET.search(text)
    if closing is None or _bare(closing.group(1)) not in lexicon().hedges:
        return None
    return closing.start()


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
    lowercases: both forms are its lowercase.)"""
    if text.isascii():
        lower = text.lower()
        return lower, lower
    return _caseless(text), _caseless(_norm(text))


_MARKS = regex.compile(r"\p{M}+")


def _caseless(text: str) -> str:
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold())
    return _MARKS.sub("", folded)


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


def _unit_after(text: str, end: int, taken: list[tuple[int, int]]) -> str:
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


def _cjk_terms(run: str, offset: int, taken: list[tuple[int, int]]) -> Iterator[Term]:
    """Bigrams of a CJK run, skipping cue and value spans, hiragana (Japanese particles
    and endings), Korean particles, and function bigrams."""
    # (Per run, not per character: a statement's reading is mostly this for CJK text.)
    free = [True] * len(run)
    for hiragana in _HIRAGANA.finditer(run):
        free[hiragana.start()] = False
    for a, b in taken:
        for i in range(max(a, offset), min(b, offset + len(run))):
            free[i - offset] = False
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
