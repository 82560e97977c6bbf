"""The query side of bm25f, shared by the ranker and its plain scan: which query
tokens are scored (function words are not), their stems and clitics, their IDF, and
where a text holding a compound token holds its parts.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

import regex
from memory_recall.server.ranking.bm25f.tokens import MIN_PART, UNSPACED_CHAR, unspaced_grams
from memory_recall.server.ranking.bm25f.words import data_lines, data_sections, data_words
from memory_recall.server.ranking.index import WORD
from memory_recall.server.tokens import CJK_CHAR, normalize

# Function words a question is made of (data/stopwords.txt: a dozen and more
# languages, and the function pairs of Chinese, Japanese and Korean questions as
# the CJK pairs they are tokenized into), and Thai ones as the trigrams a Thai
# query is cut into (data/stopwords_thai.txt). They say nothing about which
# memory answers: bm25f neither scores them nor counts them toward the IDF mass
# a document must cover.
QUERY_STOPWORDS = frozenset(data_words("stopwords.txt")) | frozenset(
    gram
    for word in normalize(" ".join(data_words("stopwords_thai.txt"))).split()
    for gram in (word, *unspaced_grams(word))
)

# The languages each function word is one of: a section of data/stopwords.txt is one
# language (or a few close ones, listed together); English is the first.
_LANGUAGES_OF: dict[str, frozenset[int]] = {}
for _at, _words in enumerate(data_sections("stopwords.txt")):
    for _word in _words:
        _LANGUAGES_OF[_word] = _LANGUAGES_OF.get(_word, frozenset()) | {_at}
ENGLISH = 0
assert "what" in data_sections("stopwords.txt")[ENGLISH]
ENGLISH_EVIDENCE = 2  # English function words, besides the word read, that make a question English


@dataclass(frozen=True)
class FunctionWords:
    """The function words of one query: `QUERY_STOPWORDS`, but for the listed words the
    query says as words of its own (`said`)."""

    said: frozenset[str] = frozenset()

    def __contains__(self, token: object) -> bool:
        return token in QUERY_STOPWORDS and token not in self.said


def function_words(tokens: Sequence[str]) -> FunctionWords:
    """The function words of a query. In an English question (its other function words
    are English, two or more, more than of any other language), a word of ASCII letters
    listed only for other languages is a word of its own: "jest" is Polish for "is" and
    a test runner in "do we still use jest", "son" is Spanish for "are" and a son in
    "where does Sinéad's son live". Not the other way round: an English word in another
    language's question is most often quoted from a message ("… failed for …")."""
    listed = [t for t in dict.fromkeys(tokens) if t in QUERY_STOPWORDS and t in _LANGUAGES_OF]
    said: set[str] = set()
    for token in listed:
        if ENGLISH in _LANGUAGES_OF[token] or not token.isascii():
            continue
        votes = Counter(
            language for other in listed if other != token for language in _LANGUAGES_OF[other]
        )
        english = votes.pop(ENGLISH, 0)
        if english >= ENGLISH_EVIDENCE and english > max(votes.values(), default=0):
            said.add(token)
    return FunctionWords(frozenset(said))


def names_a_lack(token: str, tokens: Sequence[str]) -> bool:
    """Whether a token found in no memory says the memories lack what the query asks.

    Not for a CJK pair or a trigram of an unspaced script: most of those that are
    found nowhere straddle two words (nothing marks the boundary). Not for a
    whole identifier whose parts are query tokens too (`retrywithbackoff` beside
    `retry`, `backoff`): the parts already speak for it. A whole word found
    nowhere is one the memories lack.
    """
    if CJK_CHAR.match(token) or UNSPACED_CHAR.search(token) or not WORD.fullmatch(token):
        return False
    return not _made_of(token, {t for t in tokens if t != token})


MAX_IDENTIFIER = 256  # a longer word is not an identifier made of query words


def _made_of(word: str, parts: set[str]) -> bool:
    """Whether `word` is a concatenation of `parts` (linear in the word's length)."""
    if len(word) > MAX_IDENTIFIER:
        return False
    ends = [True] + [False] * len(word)
    for end in range(MIN_PART, len(word) + 1):
        ends[end] = any(
            len(part) <= end and ends[end - len(part)] and word.startswith(part, end - len(part))
            for part in parts
        )
    return ends[-1]


_ENGLISH_SUFFIXES = ("ies", "ing", "ed", "es", "s", "y")
MIN_STEM = 4  # shorter stems match too many unrelated words


def light_stem(token: str) -> str:
    """A query word cut to the part its inflections share; matching is by substring.

    English words lose one common suffix (-ies, -ing, -ed, -es, -s, -y); other
    alphabetic words (German, Greek, Russian, Spanish, …), whose endings are
    mostly one or two letters, lose one letter from five letters on and two
    from seven. CJK pairs, unspaced-script grams and words with digits stay whole.
    """
    if not token.isalpha() or CJK_CHAR.match(token) or UNSPACED_CHAR.search(token):
        return token
    if token.isascii():
        for suffix in _ENGLISH_SUFFIXES:
            if token.endswith(suffix) and len(token) - len(suffix) >= MIN_STEM:
                return token[: -len(suffix)]
        return token
    cut = 2 if len(token) >= 7 else 1 if len(token) >= 5 else 0
    return token[: len(token) - cut] if len(token) - cut >= MIN_STEM else token


# Clitics Hebrew and Arabic write joined to the next word (data/clitics.txt).
_CLITICS = tuple(
    (regex.compile(rf"\p{{Script={script.strip()}}}"), tuple(prefixes.split()))
    for script, _, prefixes in (line.partition(":") for line in data_lines("clitics.txt"))
)


def without_clitic(word: str) -> str | None:
    """A Hebrew or Arabic word without the clitic it starts with (`החדירות` →
    `חדירות`), or None. Matching is by substring, so a memory's `חדירות` does
    not contain a query's `החדירות`; the ranker looks the bare word up when the
    whole one is in no memory."""
    for script, prefixes in _CLITICS:
        if script.match(word):
            for prefix in prefixes:
                if word.startswith(prefix) and len(word) - len(prefix) >= MIN_PART:
                    return word[len(prefix) :]
    return None


def idf(df: int, n: int) -> float:
    """BM25's IDF, never negative: a count of holders above the documents counted (an
    index read back from a snapshot a killed daemon left, holding a slot its documents
    no longer do) is read as every document. A negative weight made a coverage counter
    loop on a negative value and every remember of that daemon fail (IndexError)."""
    df = min(df, n)
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


def is_spaced(token: str) -> bool:
    """A token of a script written with spaces, where a word can start or merely contain it."""
    return not (CJK_CHAR.match(token) or UNSPACED_CHAR.search(token) or token[:1] < " ")


def scored_tokens(tokens: Sequence[str], stem: bool, functions: FunctionWords) -> list[str]:
    """The query tokens bm25f scores, in order: no function words (`function_words` of
    the query), stemmed, distinct."""
    kept = (t for t in tokens if t not in functions)
    return list(dict.fromkeys(light_stem(t) if stem else t for t in kept))


@dataclass(frozen=True)
class CompoundPart:
    """A part of three letters or more of a compound token, and where it stands in it."""

    text: str
    after_separator: bool  # a text's word that holds it here starts with it
    before_separator: bool  # ... and ends with it

    def fits(self, word: str) -> bool:
        """Whether a text's word (a run of letters and digits) can hold this part where
        the compound puts it."""
        return (
            self.text in word
            and (not self.after_separator or word.startswith(self.text))
            and (not self.before_separator or word.endswith(self.text))
        )


def compound_parts(token: str) -> list[CompoundPart]:
    """The parts of a compound token (`billing-api` → billing, api) that a text holding
    it holds as words: its first part as the end of a word, its last as the start of
    one, a part between two separators as a whole word."""
    return [
        CompoundPart(m.group(), m.start() > 0, m.end() < len(token)) for m in WORD.finditer(token)
    ]
