"""The word lists the facts read statements with (data/cues.txt, data/function_words.txt,
data/values.txt), loaded once and compiled: cue phrases as patterns (a prefix tree, so that
a hundred phrases are not tried at every word), value and unit phrases, month names and
the ways dates are written with them, and what a text must hold for a list to be worth
scanning (`Openings`). `terms.read_terms` and `asides` read statements with it; nothing
here reads one.

One job past 500 lines: every list of the data files and the patterns made of them, which
change together whenever a list gains a kind of word.
"""

from __future__ import annotations

import functools
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import regex

_DATA = Path(__file__).parent / "data"

# With the prolonged sound mark (ー, ｰ), a letter of no script of its own: "ユーザー" is one
# run, not "ユ" and "ザ" apart (server/tokens.py keeps it inside Japanese runs too).
CJK_CLASS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\u30fc\uff70"
CJK_CHAR = regex.compile(f"[{CJK_CLASS}]")


def _data_lines(name: str) -> Iterator[str]:
    for line in (_DATA / name).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            yield line


def norm(text: str) -> str:
    """A word or phrase as the lists hold it: NFKC, lowercase."""
    if text.isascii():  # its own normal form: most words of most statements
        return text.lower()
    return unicodedata.normalize("NFKC", text).lower()


@functools.cache
def function_words() -> frozenset[str]:
    words: set[str] = set()
    for line in _data_lines("function_words.txt"):
        _, _, text = line.partition(":")
        words.update(norm(word) for word in text.split())
    return frozenset(words)


def _name_pattern(names: Iterable[str]) -> regex.Pattern[str]:
    """One case-insensitive pattern for names written in Latin letters, whole, wherever
    they stand: also against a CJK word ("はSlackを", "Slack을"), where `phrase_pattern`'s
    bounds, which take any letter for a word's own, would not see them."""
    return regex.compile(
        rf"(?<![A-Za-z0-9_/.-])(?:{_trie(list(names))})(?![A-Za-z0-9_/-]|\.[A-Za-z0-9])",
        regex.IGNORECASE,
    )


def phrase_pattern(phrases: Iterable[str]) -> regex.Pattern[str]:
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
    copulas: frozenset[str]  # "is" where an unspaced script reads it as a term ("是")
    kinds_of_thing: frozenset[str]  # words that say what a name is ("service", "team")
    speakers: frozenset[str]  # the pronouns of who writes ("we", "wir", "我们")
    nows: frozenset[str]  # change cues that only say when ("now", "jetzt", "现在")
    corrects: frozenset[str]  # change cues that only say a note corrects ("correction")
    discourse: frozenset[str]  # labels that say how to read a line ("note", "fyi")
    rationale: frozenset[str]  # labels that give a fact's reason or use ("why", "how to apply")
    provenance: regex.Pattern[str]  # who confirmed a statement ("confirmed", "abgestimmt")
    since_when: regex.Pattern[
        str
    ]  # a closing stretch opened by a word of `since` (`asides._since_stretch`)
    cites_in: regex.Pattern[str]  # … opened by a word of `cites` (`asides.closing_reference`)
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
    negation_marks: frozenset[str]  # single characters that negate in CJK ("不")
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
    openings: dict[tuple[str, str], Openings]
    when: frozenset[str]  # words that say when: months, "yesterday" ("in March", "im Mai")
    purpose: frozenset[str]  # scope words that say what for before one word ("to build")
    where: regex.Pattern[str]  # what places a subject ("lives in", "moved to")
    tool_kind: dict[str, str]  # a tool's name → the job it does ("jest" → "test-runner")
    tool: regex.Pattern[str]  # any of those names
    months: dict[str, int]  # a month's name or short form → its number ("märz" → 3)
    folded_months: frozenset[str]  # the same, folded as `text_runs` folds a text
    dates: tuple[regex.Pattern[str], ...]  # a date written with a month's name (`_dates`)


@functools.cache
def lexicon() -> _Lexicon:
    lists: dict[str, list[str]] = defaultdict(list)
    by_language: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    for line in _data_lines("cues.txt"):
        key, _, values = line.partition("=")
        kind, _, language = key.strip().partition(".")
        words = [norm(v.strip()) for v in values.split(",") if v.strip()]
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
        for word in (norm(v.strip()) for v in values.split(",") if v.strip()):
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
        negation={k: phrase_pattern(v) for k, v in by_language["negation"].items()},
        change={k: phrase_pattern(v) for k, v in by_language["change"].items()},
        number_words=numbers,
        number_word=phrase_pattern(numbers),
        articles=frozenset(lists["article"]),
        conjunction=phrase_pattern(lists["conjunction"]),
        additive=phrase_pattern(lists["additive"]),
        past=phrase_pattern(lists["past"]),
        only=phrase_pattern(lists["only"]),
        how_often=phrase_pattern(lists["how-often"]),
        scope=phrase_pattern(lists["scope"]),
        determiners=frozenset(lists["determiner"]),
        of=frozenset(lists["of"]),
        for_=frozenset(lists["for"]),
        with_=phrase_pattern(lists["with"]),
        auxiliaries=frozenset(lists["auxiliary"]),
        copulas=frozenset(lists["copula"]),
        kinds_of_thing=frozenset(lists["kind-of-thing"]),
        speakers=frozenset(lists["speaker"]),
        nows=frozenset(lists["now"]),
        corrects=frozenset(lists["corrects"]),
        discourse=frozenset(lists["discourse"]),
        rationale=frozenset(lists["rationale"]),
        provenance=phrase_pattern(lists["provenance"]),
        since_when=_closing_stretch(lists["since"]),
        cites_in=_closing_stretch(lists["cites"]),
        agreed=_after_a_comma(lists["agreed"]),
        aside=_aside_pattern([*lists["now"], *lists["since"], *lists["agreed"], "per"]),
        now_phrases=frozenset(lists["now"]),
        since_phrases=frozenset(lists["since"]),
        periods=frozenset(lists["period"]),
        relative=frozenset(lists["relative"]),
        hedges=frozenset(lists["hedge"]),
        stresses=frozenset(lists["again"]) | frozenset(lists["discourse"]),
        channels=frozenset(lists["channel"]),
        until=frozenset(lists["until"]),
        users=frozenset(lists["user"]),
        negation_marks=frozenset(lists["negation-mark"]),
        short=short,
        toward=frozenset(lists["toward"]),
        swap=frozenset(lists["swap"]),
        unwitnessed=frozenset(v for k, v in short.items() if v not in caseless(k)),
        capitalised_nouns=frozenset(lists["capitalised-nouns"]),
        units=units,
        unit=_unit_pattern(units),
        value_class=classes,
        dimensions=dimensions,
        value=phrase_pattern(classes),
        particles=tuple(sorted(set(lists["particles"]), key=len, reverse=True)),
        ending=frozenset(lists["negation"]) & frozenset(lists["change"]),
        pronoun=phrase_pattern(lists["pronoun"]),
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
        where=phrase_pattern(lists["where"]),
        tool_kind=tools,
        tool=_name_pattern(tools),
        months=months,
        folded_months=frozenset(fold(m) for m in months),
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


def _aside_pattern(openers: Iterable[str]) -> regex.Pattern[str]:
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


class Openings(NamedTuple):
    """What a text must hold for a phrase list's pattern (`phrase_pattern`) to match in
    it: as runs of letters and digits of its own (`text_runs`), every run of some phrase of a
    spaced script — such a phrase matches whole words, so each of its runs is one of the
    text's — or the first character of some phrase of an unspaced one (matched anywhere;
    those characters have no case). `always`: some phrase opens with neither; every text
    is scanned."""

    runs: dict[str, tuple[frozenset[str], ...]]  # by a phrase's first run, its runs
    firsts: frozenset[str]
    always: bool

    def may_match(self, runs: frozenset[str] | None, chars: frozenset[str]) -> bool:
        """`runs`: the text's (`text_runs`); `chars`: its characters outside ASCII."""
        if self.always or runs is None or not chars.isdisjoint(self.firsts):
            return True
        return any(phrase <= runs for run in runs if run in self.runs for phrase in self.runs[run])


def _openings(phrases: Iterable[str]) -> Openings:
    runs: dict[str, set[frozenset[str]]] = defaultdict(set)
    firsts: set[str] = set()
    always = False
    for phrase in phrases:
        folded = fold(phrase)
        if CJK_CHAR.match(phrase):
            firsts.add(phrase[0])
        elif first := _RUN.match(folded):
            runs[first.group()].add(frozenset(_RUN.findall(folded)))
        else:
            always = True
    return Openings({run: tuple(of) for run, of in runs.items()}, frozenset(firsts), always)


_RUN = regex.compile(r"[\p{L}\p{N}]+")
# The patterns match case-insensitively by simple case folding, which also takes the
# Turkish dotted and dotless i for i and I; Python's full folding does not. With those
# two read as i first, two letters the patterns take for each other fold alike (checked
# over every letter: tests/unit/test_fact_openings.py).
# A combining mark that folds to a letter (the Greek ypogegrammeni folds to iota): it
# would join the runs beside it, so a text holding one is always scanned.
FOLDS_TO_A_LETTER = "\u0345"


def fold(text: str) -> str:
    """Case-folded as the patterns match (the Turkish dotted and dotless i read as i)."""
    if "\u0130" in text or "\u0131" in text:
        text = text.replace("\u0130", "i").replace("\u0131", "i")
    return text.casefold()


def text_runs(text: str) -> frozenset[str] | None:
    """A text's runs of letters and digits, folded as the phrase patterns match (None:
    it cannot be told from them, scan it)."""
    if text.isascii():
        return frozenset(_RUN.findall(text.lower()))
    if FOLDS_TO_A_LETTER in text:
        return None
    return frozenset(_RUN.findall(fold(text)))


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


_MARKS = regex.compile(r"\p{M}+")


def caseless(text: str) -> str:
    """Folded, its accents and other marks left out (\"Ölçer\" → \"olcer\")."""
    folded = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", text).casefold())
    return _MARKS.sub("", folded)
