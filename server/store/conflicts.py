"""Conflict detection between a new memory and an existing one (docs/writing.md).

A pure service: two texts in, a verdict out, decided by deterministic rules.

- `duplicate`: the old memory already says it (reworded, reordered, politer);
  the write becomes `unchanged` and the old file's `updated` date is refreshed.
- `update`: the same subject, but the fact changed (a version, number, date,
  name, endpoint or tool was replaced, or a rule flipped its polarity); the old
  file is rewritten, newer wins, `supersedes` is recorded.
- `independent`: at most the same topic area, a different fact; a new file.

Contract with the writer: candidates come from the warm index of the same
root: the new memory's best lexical matches (its title + description + body as
the query) plus every memory whose normalized title equals the new one's
(`same_title`). The writer calls `decide(new, candidates)`, which judges each
pair and returns the winning candidate, duplicate before update before
independent. A verdict with `decided=False` sits within a margin of a
threshold: with a model configured, the writer may ask it (`reconcile` task);
without one the verdict stands.

How the rules read a memory: content words are the the reference tokens (docs/ranking.md) of title,
description and body (CJK bigrams) minus function words (data file), stemmed
by truncation so that `tests`/`test` or `déploie`/`déployer` meet. Slots are
what an update replaces: numbers (with dates in ISO form), names (URLs, code
spans, identifiers, mid-sentence capitalised words, Latin words in non-Latin
text) and the polarity of the rule (negation cue words). The *core* is the
content without the slots: an update keeps its core and replaces a slot; a
duplicate keeps both; two different facts share neither.

One job past 400 lines: reading a memory into slots and judging a pair are one
rule set, tuned together on one corpus; split, each half would be untestable.
"""

from __future__ import annotations

import functools
import unicodedata
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import regex
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.bm25f.tokens import ACRONYM_MARK, acronym_tokens, date_tokens
from memory_recall.server.tokens import normalize, raw_tokens

VerdictKind = Literal["duplicate", "update", "independent"]
# Which candidate wins in `decide`: knowing the fact already beats replacing one.
PRECEDENCE: dict[VerdictKind, int] = {"duplicate": 0, "update": 1, "independent": 2}

_DATA = Path(__file__).parent / "data"

# Truncation stemming: a language-independent stand-in for a stemmer, enough for
# the inflections of European languages and Russian (`payment`/`payments`).
STEM_CHARS = 5


@dataclass(frozen=True)
class MemoryText:
    """The parts of a memory the judge reads."""

    title: str
    description: str
    body: str
    type: str

    @classmethod
    def of(cls, document: MemoryDocument) -> MemoryText:
        return cls(document.title, document.description, document.body, document.type)


@dataclass(frozen=True)
class Verdict:
    """How a new memory relates to an old one, and why (`reason` is for logs and the journal)."""

    kind: VerdictKind
    reason: str
    similarity: float  # Dice coefficient of the two memories' content words, 0..1
    decided: bool = True  # False: near a threshold; a model may be asked


# -- Data ----------------------------------------------------------------------


def _data_lines(name: str) -> Iterable[str]:
    for line in (_DATA / name).read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            yield line


@functools.cache
def _stopwords() -> frozenset[str]:
    words: set[str] = set()
    for line in _data_lines("conflict_stopwords.txt"):
        _, _, text = line.partition(":")
        words.update(normalize(word) for word in text.split())
    return frozenset(words)


@dataclass(frozen=True)
class _Cues:
    negation: regex.Pattern[str]
    change: regex.Pattern[str]
    numbers: dict[str, str]
    number_words: regex.Pattern[str]
    capitalised_nouns: frozenset[str]


_CJK_START = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]")


def _cue_pattern(cues: Iterable[str]) -> regex.Pattern[str]:
    """One pattern for a cue list, longest cue first within each kind of cue.

    The word-boundary checks stand outside each kind's alternation rather than
    around every cue: the same matches, ten times faster on a long memory.
    """
    bounded, elided, pieces = [], [], []
    for cue in sorted(set(cues), key=len, reverse=True):
        escaped = regex.escape(cue).replace(r"\ ", r"\s+")
        if _CJK_START.match(cue):
            pieces.append(escaped)  # unspaced scripts: a cue is a piece of a word
        elif cue.endswith("'"):
            elided.append(escaped)  # elision: n'est
        else:
            bounded.append(escaped)
    parts = []
    if bounded:
        parts.append(rf"(?<![\p{{L}}\p{{N}}])(?:{'|'.join(bounded)})(?![\p{{L}}\p{{N}}])")
    if elided:
        parts.append(rf"(?<![\p{{L}}\p{{N}}])(?:{'|'.join(elided)})")
    parts.extend(pieces)
    return regex.compile("|".join(parts))


@functools.cache
def _cues() -> _Cues:
    lists: dict[str, list[str]] = defaultdict(list)
    for line in _data_lines("conflict_cues.txt"):
        key, _, values = line.partition("=")
        kind = key.strip().split(".")[0]
        lists[kind].extend(normalize(v.strip()) for v in values.split(",") if v.strip())
    numbers = dict(item.split(":") for item in lists["number"])
    return _Cues(
        negation=_cue_pattern(lists["negation"]),
        change=_cue_pattern(lists["change"]),
        numbers=numbers,
        number_words=_cue_pattern(numbers),
        capitalised_nouns=frozenset(lists["capitalised-nouns"]),
    )


@functools.cache
def _thresholds() -> dict[str, float]:
    values = {}
    for line in _data_lines("conflict_thresholds.txt"):
        key, _, value = line.partition("=")
        values[key.strip()] = float(value)
    return values


# -- Reading one memory ----------------------------------------------------------

_URL = regex.compile(r"https?://[^\s<>()\[\]{}'\"`，。、」]+")
_CODE = regex.compile(r"`([^`\n]+)`")
# An identifier: word characters joined by code separators (fmt.Errorf, feature/API-123,
# k8s-staging), or letters and digits mixed in one word (v2, k8s, 512Mi). Not in
# unspaced scripts: there a whole clause is one run of letters, and a number in it
# ("调用在10秒后超时") does not make the clause a name.
_IDENTIFIER = regex.compile(
    r"(?<![\p{L}\p{N}])(?:[#@]?[\p{L}\p{N}]+(?:[-_./:@#][\p{L}\p{N}]+)+|[\p{L}]+\p{N}[\p{L}\p{N}]*)"
    r"(?![\p{L}\p{N}])"
)
# A hyphenated word is an identifier only with a digit or a code separator in it:
# `k8s-prod` is, `force-push` and `Code-Kommentare` are words.
_CODE_MARK = regex.compile(r"[_./:@#]|\p{N}")
# A number, with its decimal/date separators (3.0, 18.19, 2024-06-01, 15.05.2025).
# In unspaced scripts a number sits right after a letter ("在10秒后"): still a number.
_NUMBER = regex.compile(
    r"(?<![[\p{L}\p{N}.]--[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]])\p{Nd}+(?:[.,:/-]\p{Nd}+)*",
    flags=regex.V1,
)
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+(?:['’][\p{L}]+)?")
_LATIN_WORD = regex.compile(r"(?<![\p{L}\p{N}])\p{Latin}[\p{Latin}\p{M}\p{N}+#]*")
_OTHER_LETTER = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\p{Cyrillic}\p{Greek}]")
_SENTENCE_END = frozenset(".!?:;\n|-•*")
# Distinct function words of a noun-capitalising language that mark a text as one.
NOUN_LANGUAGE_EVIDENCE = 2
# CJK bigrams that carry no content: hiragana only (particles, endings), or with
# punctuation (。 and 、 are Katakana by script extension, so inside CJK runs).
_FUNCTION_BIGRAM = regex.compile(r"^\p{Hiragana}+$|\p{P}")


@dataclass(frozen=True)
class _Reading:
    text: str  # normalized title, description and body
    content: frozenset[str]  # stemmed content words of the whole memory
    core: frozenset[str]  # the same, with the slots blanked out
    title_core: frozenset[str]
    numbers: frozenset[str]
    names: frozenset[str]
    negated: bool
    change_cue: bool


def _stem(token: str) -> str:
    return token if _CJK_START.match(token) else token[:STEM_CHARS]


@functools.lru_cache(maxsize=65536)
def _content_word(token: str) -> str | None:
    """A token's stem when it carries content, else None (tokens repeat: memoized)."""
    if token in _stopwords() or _FUNCTION_BIGRAM.search(token):
        return None
    return _stem(token)


def _content_words(normalized: str) -> frozenset[str]:
    words = {_content_word(token) for token in raw_tokens(normalized)}
    words.discard(None)
    return frozenset(words)  # type: ignore[arg-type]


def _names(nfkc: str) -> set[str]:
    """Names in an NFKC (not lowercased) text: what an update swaps for another."""
    names = {m.group().rstrip(".,;:!?)").lower() for m in _URL.finditer(nfkc)}
    names.update(m.group(1).strip().lower() for m in _CODE.finditer(nfkc))
    names.update(
        m.group().lower()
        for m in _IDENTIFIER.finditer(nfkc)
        if _CODE_MARK.search(m.group()) and not _CJK_START.search(m.group())
    )
    if len(_OTHER_LETTER.findall(nfkc)) > len(regex.findall(r"\p{Latin}", nfkc)):
        # Latin words in Chinese, Japanese, Korean or Russian text are names.
        names.update(m.group().lower() for m in _LATIN_WORD.finditer(nfkc))
    names.update(_capitalised_names(nfkc))
    # Two-letter names (uv, CI, Go) are too short to be tokens; the index's acronym
    # rule tells them from common two-letter words.
    names.update(token.removeprefix(ACRONYM_MARK) for token in acronym_tokens(nfkc))
    return names


def _capitalised_names(nfkc: str) -> set[str]:
    mid_sentence = []
    for match in _WORD.finditer(nfkc):
        at = match.start() - 1
        while at >= 0 and nfkc[at] in " \t":
            at -= 1
        if at >= 0 and nfkc[at] not in _SENTENCE_END:
            mid_sentence.append(match.group())
    words = {normalize(w) for w in mid_sentence}
    if len(words & _cues().capitalised_nouns) >= NOUN_LANGUAGE_EVIDENCE:
        return set()  # German capitalises every noun: a capital marks no name there
    return {w.lower() for w in mid_sentence if w[0].isupper() and normalize(w) not in _stopwords()}


def _numbers(normalized: str) -> set[str]:
    cues = _cues()
    numbers = {m.group().lstrip("0") or "0" for m in _NUMBER.finditer(normalized)}
    numbers.update(cues.numbers[m.group()] for m in cues.number_words.finditer(normalized))
    numbers.update(date_tokens(normalized))
    return numbers


def _blank(text: str, pattern: regex.Pattern[str]) -> str:
    return pattern.sub(" ", text)


def _word_char(char: str) -> bool:
    return char.isalpha() or char.isnumeric()  # \p{L} or \p{N}


def _blank_names(text: str, names: Iterable[str]) -> str:
    r"""Each name, as a whole word, replaced by a space: what the alternation
    `(?<![\p{L}\p{N}])(?:longest|…|shortest)(?![\p{L}\p{N}])` does, leftmost first and
    the longest name at a position, without compiling a pattern per memory."""
    found: list[tuple[int, int]] = []
    for name in names:
        if not name:
            continue
        start = text.find(name)
        while start >= 0:
            end = start + len(name)
            if (start == 0 or not _word_char(text[start - 1])) and (
                end == len(text) or not _word_char(text[end])
            ):
                found.append((start, -end))
            start = text.find(name, start + 1)
    if not found:
        return text
    found.sort()
    out, position = [], 0
    for start, negative_end in found:
        if start < position:
            continue
        out.append(text[position:start])
        out.append(" ")
        position = -negative_end
    out.append(text[position:])
    return "".join(out)


@functools.lru_cache(maxsize=4096)
def _content(memory: MemoryText) -> tuple[str, frozenset[str]]:
    """The NFKC text of a memory and its content words (rule cue words left out)."""
    nfkc = unicodedata.normalize("NFKC", f"{memory.title}\n{memory.description}\n{memory.body}")
    cues = _cues()
    return nfkc, _content_words(_blank(_blank(nfkc.lower(), cues.negation), cues.change))


@functools.lru_cache(maxsize=4096)
def _read(memory: MemoryText) -> _Reading:
    nfkc, content = _content(memory)
    normalized = nfkc.lower()
    names = _names(nfkc)
    cues = _cues()
    without_slots = normalized
    title = normalize(memory.title)
    if names:
        # Whole words only: the name `arch` (from a URL) must not cut `architektur`.
        without_slots = _blank_names(without_slots, names)
        title = _blank_names(title, names)
    for pattern in (_NUMBER, cues.number_words, cues.negation, cues.change):
        without_slots = _blank(without_slots, pattern)
        title = _blank(title, pattern)
    return _Reading(
        text=normalized,
        content=content,
        core=_content_words(without_slots),
        title_core=_content_words(title),
        numbers=frozenset(_numbers(normalized)),
        names=frozenset(names),
        negated=cues.negation.search(normalized) is not None,
        change_cue=cues.change.search(normalized) is not None,
    )


# -- Judging a pair --------------------------------------------------------------


def _dice(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return 2 * len(a & b) / (len(a) + len(b))


def _containment(a: frozenset[str], b: frozenset[str]) -> float:
    """Share of the smaller set found in the larger one."""
    smaller = min(len(a), len(b))
    return len(a & b) / smaller if smaller else 1.0


def _novelty(new: frozenset[str], old: frozenset[str]) -> float:
    """Share of the new memory's words the old one does not have."""
    return len(new - old) / len(new) if new else 0.0


_PLAIN_WORD = regex.compile(r"^[\p{L}\p{M}]+$")


def _missing_names(one: _Reading, other: _Reading) -> set[str]:
    """Names of `one` that `other` does not mention, not even inflected or in another case
    (a capital letter marks a name only mid-sentence, so name sets differ on position)."""
    missing = set()
    for name in one.names - other.names:
        if name in other.text:
            continue
        words = _content_words(name)
        if _PLAIN_WORD.match(name) and words and words <= other.content:
            continue  # the same word inflected, or capitalised elsewhere in the other text
        missing.add(name)
    return missing


def judge(new: MemoryText, old: MemoryText) -> Verdict:
    """How `new` relates to `old`, an existing memory of the same root."""
    limits = _thresholds()
    # The content words alone settle most pairs (little in common): read the rest only
    # for the pairs that need it.
    similarity = round(_dice(_content(old)[1], _content(new)[1]), 3)
    titles_equal = same_title(new.title, old.title)
    if similarity < limits["unrelated_below"] and not titles_equal:
        return Verdict("independent", "little in common", similarity)
    a, b = _read(old), _read(new)

    core = _dice(a.core, b.core)
    novelty = _novelty(b.core, a.core)
    old_numbers, new_numbers = a.numbers - b.numbers, b.numbers - a.numbers
    old_names, new_names = _missing_names(a, b), _missing_names(b, a)
    new_slot = bool(new_numbers) or bool(new_names)
    changes = [
        reason
        for reason, present in (
            ("a number or date was replaced", old_numbers and new_numbers),
            ("a name, endpoint or identifier was replaced", old_names and new_names),
            ("the rule's polarity flipped", a.negated != b.negated),
            (
                "the new text announces a change",
                b.change_cue and not a.change_cue and (new_slot or novelty > 0),
            ),
        )
        if present
    ]
    # Each title names something the other memory never mentions: two subjects
    # ("dashboard for payments" / "dashboard for search"), whatever else they share.
    titles_differ = bool(a.title_core - b.content) and bool(b.title_core - a.content)

    if changes:
        if titles_differ and not titles_equal:
            return Verdict("independent", f"different subjects ({'; '.join(changes)})", similarity)
        needed = limits["update_core_same_title" if titles_equal else "update_core_at_least"]
        if core >= needed and novelty <= limits["novelty_at_most"]:
            decided = core - needed >= limits["undecided_margin"]
            return Verdict("update", "same subject; " + "; ".join(changes), similarity, decided)
        decided = needed - core >= limits["undecided_margin"]
        return Verdict(
            "independent",
            f"different facts ({'; '.join(changes)}; core similarity {core:.2f})",
            similarity,
            decided,
        )

    threshold = limits["duplicate_at_least"]
    # A shorter restatement is still the same fact: it may share a smaller part
    # of the longer text's words, as long as almost all of its own are there.
    contained = _containment(a.content, b.content) >= limits["duplicate_contained_at_least"]
    if titles_differ or new_slot or _novelty(b.content, a.content) > limits["novelty_at_most"]:
        decided = similarity < threshold - limits["undecided_margin"]
        return Verdict("independent", "same area, a different fact", similarity, decided)
    if similarity >= threshold or (contained and similarity >= limits["duplicate_contained_dice"]):
        decided = similarity - threshold >= limits["undecided_margin"] or contained
        return Verdict("duplicate", "same fact, nothing changed", similarity, decided)
    decided = threshold - similarity >= limits["undecided_margin"]
    return Verdict("independent", "same area, different wording or fact", similarity, decided)


def decide(
    new: MemoryText, candidates: Sequence[tuple[str, MemoryText]]
) -> tuple[str | None, Verdict]:
    """Judge `new` against each candidate; the winner's id and its verdict.

    Precedence duplicate > update > independent, then the higher similarity.
    When every candidate is independent the id is None (the new memory is
    created) and the verdict is the closest candidate's, for the log. To put
    undecided pairs (`decided=False`) to a model, call `judge` per candidate.
    """
    winner: str | None = None
    best = Verdict("independent", "no candidate", 0.0)
    for candidate_id, old in candidates:
        verdict = judge(new, old)
        rank = (PRECEDENCE[verdict.kind], -verdict.similarity)
        if rank < (PRECEDENCE[best.kind], -best.similarity):
            best = verdict
            winner = None if verdict.kind == "independent" else candidate_id
    return winner, best


# -- Titles ------------------------------------------------------------------------

_NON_WORD = regex.compile(r"[^\p{L}\p{M}\p{N}]+")


def title_key(title: str) -> str:
    """A title as compared for equality: normalized, punctuation and spacing folded."""
    return _NON_WORD.sub(" ", normalize(title)).strip()


def same_title(a: str, b: str) -> bool:
    """Whether two titles are the same once normalized (case, width, punctuation)."""
    return title_key(a) == title_key(b)


def subject_key(text: str) -> str:
    """The content words of a title (or any short text), stemmed and sorted.

    Word order and function words do not count: `Node version` and `Version of
    Node` share a key. Useful to gather same-subject candidates cheaply.
    """
    return " ".join(sorted(_content_words(normalize(text))))
