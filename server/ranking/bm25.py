"""The `default` ranker: BM25F over SPEC §3's three fields, on the warm index.

What it keeps from the reference: the same fields (title, description, body
window, normalized), substring matching of multilingual tokens, title >
description > body, ties by mtime then input order, never by type, nothing
returned without a match. What it adds:

- rarity and saturation: each token weighs its IDF (document frequency read
  from the index's postings, never from a scan), and repeated matches in a
  field saturate (k1) after the field's length is normalized (b);
- partial words count less: a match that starts a word (`deploy` in
  `deployment`) counts fully, one inside a word (`log` in `catalog`, `user` in
  `getusername`) counts INSIDE_WORD_WEIGHT;
- silence: a document is returned only when the query's content tokens it
  matches carry at least MIN_COVERAGE of their IDF mass. A question whose
  specific words are nowhere in memory ("what did I say about the weather?")
  is matched by its common words only, so it covers little and returns nothing.

Why it is fast: the index's bitmaps give every token's documents per field;
a bit-sliced sum of integer IDF x field weights ranks every match at once, and
only the best PRESCORED of those are scored exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import regex

from server.documents import MemoryDocument
from server.ranking.index import (
    _PAIR_TOKEN,
    _WORD_TOKEN,
    DocumentIndex,
    _Counters,
    field_texts,
    slots_of,
)
from server.ranking.reference import ScoredDocument

if TYPE_CHECKING:
    from server.catalog import CatalogSnapshot

# Scores are reported as integers (ScoredDocument.score): thousandths.
SCORE_SCALE = 1000
# Prescore weights are integers for the bit-sliced counters: IDF x weight x 8.
PRESCORE_SCALE = 8
# How many of the prescored documents are scored exactly: far more than the
# 5 a recall shows, so the exact order is decided among the right documents.
PRESCORED = 64

# Function words a question is made of. They are scored like any token (their
# IDF is low where memories use them), but they never count toward the IDF mass
# a document must cover: a memory does not have to say "what" to answer it.
QUERY_STOPWORDS = frozenset(
    """
    about above after again against all also and any are aren't because been before being
    below between both but can cannot could did does doing don't down during each few for
    from further had has have having her here hers herself him himself his how into its
    itself just let me more most much must myself nor not now off once only other our ours
    ourselves out over own same say said she should some such than that the their theirs
    them themselves then there these they this those through too under until upon very
    was were what when where which while who whom why will with would you your yours
    yourself yourselves tell told know remember recall anything something thing things
    again ever one ago last time times please show give get got use used using way
    """.split()  # noqa: SIM905 - a word list reads better as text
)


@dataclass(frozen=True)
class Bm25Params:
    """One ranker's settings; `default` and the plain `bm25` baseline differ only here."""

    field_weights: tuple[float, float, float] = (3.0, 2.0, 1.0)  # title, description, body
    field_b: tuple[float, float, float] = (0.5, 0.5, 0.75)  # length normalisation per field
    k1: float = 1.2
    inside_word_weight: float = 0.5  # see module docstring
    min_coverage: float = 0.3  # 0 disables silence; see module docstring
    compound_bonus: bool = True  # a whole `a/b.c` or `snake_case` token found verbatim
    # Near-ties go to the newer memory: when two memories say nearly as much
    # about the query, the later one is usually the update of the earlier.
    recency_band: float = 0.2


DEFAULT_PARAMS = Bm25Params()
# Plain BM25: one bag of words (equal fields, one b), every match counts fully,
# never silent: the baseline the issue measures against, with the same tokens.
PLAIN_PARAMS = Bm25Params(
    field_weights=(1.0, 1.0, 1.0),
    field_b=(0.75, 0.75, 0.75),
    inside_word_weight=1.0,
    min_coverage=0.0,
    compound_bonus=False,
    recency_band=0.0,
)


@dataclass
class _Term:
    token: str
    idf: float
    bits: tuple[int, int, int]  # per field: the slots whose field contains the token
    content: bool  # counts toward the IDF mass a document must cover
    starts_word: regex.Pattern[str] | None  # None: every occurrence counts fully (CJK pairs)


class _FieldStats:
    """Average field lengths of one index version (a pass over lengths, once per change)."""

    def __init__(self) -> None:
        self._key: tuple[int, int] | None = None
        self._avg: tuple[float, float, float] = (1.0, 1.0, 1.0)

    def averages(self, index: DocumentIndex) -> tuple[float, float, float]:
        key = (id(index), index.version)
        if key != self._key:
            sums = [0, 0, 0]
            docs = index._docs.values()
            for doc in docs:
                for f, text in enumerate(field_texts(doc)):
                    sums[f] += len(text)
            n = max(1, len(docs))
            self._avg = (max(1.0, sums[0] / n), max(1.0, sums[1] / n), max(1.0, sums[2] / n))
            self._key = key
        return self._avg


def idf(df: int, n: int) -> float:
    """BM25's IDF, never negative."""
    return math.log(1.0 + (n - df + 0.5) / (df + 0.5))


class Bm25Ranker:
    """A `Ranker` (server.ranking.shortlist) scoring BM25F through the warm index."""

    def __init__(self, params: Bm25Params = DEFAULT_PARAMS) -> None:
        self.params = params
        self._stats = _FieldStats()

    def __call__(
        self,
        snapshot: CatalogSnapshot,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool],
        limit: int | None = None,
    ) -> list[ScoredDocument]:
        index = snapshot.index()
        if index is None:  # the catalog moved on after this snapshot: index it alone
            index = DocumentIndex.of(snapshot.documents)
        return self.rank(index, tokens, keep, limit)

    def rank(
        self,
        index: DocumentIndex,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool] = lambda _doc: True,
        limit: int | None = None,
    ) -> list[ScoredDocument]:
        n = len(index)
        if not tokens or not n or limit == 0:
            return []
        terms, compounds = self._terms(index, tokens, n)
        matched = 0
        for term in terms:
            for bits in term.bits:
                matched |= bits
        if not matched:
            return []
        content_mass = sum(t.idf for t in terms if t.content)
        averages = self._stats.averages(index)
        want = max(PRESCORED, limit or 0)
        scored: list[tuple[float, tuple[float, object], MemoryDocument]] = []
        for slot in self._prescored(index, terms, matched, keep, want):
            doc = index._docs[slot]
            score, covered = self._score(doc, slot, terms, compounds, averages)
            if score <= 0:
                continue
            if covered < self.params.min_coverage * content_mass:
                continue
            scored.append((score, index._order_key[slot], doc))
        scored.sort(key=lambda item: (-round(item[0] * SCORE_SCALE), item[1]))
        if self.params.recency_band:
            _newer_first_in_near_ties(scored, self.params.recency_band)
        out = [ScoredDocument(doc, round(score * SCORE_SCALE)) for score, _, doc in scored]
        return out if limit is None else out[:limit]

    def _terms(
        self, index: DocumentIndex, tokens: Sequence[str], n: int
    ) -> tuple[list[_Term], list[tuple[str, float]]]:
        """Lookup-able tokens with their IDF; compounds (`a/b.c`) with their parts' best IDF."""
        terms: list[_Term] = []
        compounds: list[str] = []  # not a shape the index can look up
        for token in dict.fromkeys(tokens):
            if _PAIR_TOKEN.fullmatch(token):
                starts = None
            elif _WORD_TOKEN.fullmatch(token):
                starts = regex.compile(r"(?<![\p{L}\p{M}\p{N}])" + regex.escape(token))
            else:
                compounds.append(token)
                continue
            bits = tuple(index._token_bits(token))
            df = (bits[0] | bits[1] | bits[2]).bit_count()
            # A CJK pair found nowhere most often straddles two words (nothing
            # marks the boundary); a whole word found nowhere is one memory lacks.
            content = token not in QUERY_STOPWORDS and not (starts is None and df == 0)
            terms.append(_Term(token, idf(df, n), bits, content, starts))  # type: ignore[arg-type]
        by_token = {t.token: t.idf for t in terms}
        weighted = []
        if self.params.compound_bonus:
            for compound in compounds:
                parts = [by_token.get(p, 0.0) for p in regex.split(r"[^\p{L}\p{N}]+", compound)]
                weighted.append((compound, max(parts, default=0.0)))
        return terms, weighted

    def _prescored(
        self,
        index: DocumentIndex,
        terms: Sequence[_Term],
        matched: int,
        keep: Callable[[MemoryDocument], bool],
        want: int,
    ) -> list[int]:
        """The first `want` kept slots by a sum of IDF x field weight (no tf, no length)."""
        counters = _Counters()
        weights = self.params.field_weights
        for term in terms:
            for f, bits in enumerate(term.bits):
                weight = round(term.idf * weights[f] * PRESCORE_SCALE)
                if bits and weight > 0:
                    counters.add(bits, weight)
        out: list[int] = []
        for _score, bitmap in counters.levels(matched):
            for slot in slots_of(bitmap):
                if keep(index._docs[slot]):
                    out.append(slot)
            if len(out) >= want:  # a level is taken whole: no arbitrary cut inside a tie
                break
        return out

    def _score(
        self,
        doc: MemoryDocument,
        slot: int,
        terms: Sequence[_Term],
        compounds: Sequence[tuple[str, float]],
        averages: tuple[float, float, float],
    ) -> tuple[float, float]:
        """(BM25F score, IDF mass of the content tokens matched) of one document."""
        p = self.params
        texts = field_texts(doc)
        norms = [1.0 - p.field_b[f] + p.field_b[f] * len(texts[f]) / averages[f] for f in range(3)]
        bit = 1 << slot
        score = covered = 0.0
        for term in terms:
            tf = 0.0
            for f in range(3):
                if not term.bits[f] & bit:
                    continue
                text = texts[f]
                total = text.count(term.token)
                if term.starts_word is None or p.inside_word_weight == 1.0:
                    weighted = float(total)
                else:
                    at_start = len(term.starts_word.findall(text))
                    weighted = at_start + p.inside_word_weight * (total - at_start)
                tf += p.field_weights[f] * weighted / norms[f]
            if tf > 0:
                score += term.idf * tf / (p.k1 + tf)
                if term.content:
                    covered += term.idf
        if score > 0:
            for compound, weight in compounds:
                for f in range(3):
                    if compound in texts[f]:
                        score += weight * p.field_weights[f] / (p.k1 + p.field_weights[f])
                        break
        return score, covered


def _newer_first_in_near_ties(
    scored: list[tuple[float, tuple[float, object], MemoryDocument]], band: float
) -> None:
    """Move a newer document above an older one scoring at most `band` more (in place).

    An insertion pass: each document climbs over the older ones just above it
    while it stays within the band of them; equal mtimes never move.
    """
    for i in range(1, len(scored)):
        j = i
        while j > 0:
            above, here = scored[j - 1], scored[j]
            if here[1][0] < above[1][0] and here[0] >= (1.0 - band) * above[0]:
                scored[j - 1], scored[j] = here, above
                j -= 1
            else:
                break
