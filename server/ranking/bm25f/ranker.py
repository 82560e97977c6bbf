"""The `bm25f` ranker: BM25F over title, description and whole body, exact, on its index.

What it keeps from docs/ranking.md: substring matching of multilingual tokens, title >
description > body, ties by mtime then input order, never by type, nothing
returned without a match. What it adds:

- rarity and saturation: each term weighs its IDF (document frequency read
  from the index's postings), and its frequency in the body (summed over the
  words that hold it) saturates (k1) after the body's length is normalized
  against the corpus's average (b);
- the whole body, not its first 1,200 characters: long session logs and
  incident write-ups keep most of their evidence further in;
- function words of a dozen languages are not scored (bm25f.query);
- a compound identifier (`billing-api`) is a term of its own, found through
  its parts, so it weighs what its own rarity says;
- overlapping grams (CJK pairs, Thai trigrams) weigh by their overlap;
- light stemming of query words (`deployments` finds `deployment`);
- near-ties go to the newer memory (`recency_band`), among the best
  NEAR_TIE_WINDOW: of two memories about the same thing, the later one is
  usually the update;
- silence: nothing is returned unless one of the best ANSWER_WINDOW documents
  matches query content terms carrying at least `min_coverage` of their IDF
  mass, or is about one of the query's rarest words (`rare_share`).

Exact, and fast. A term's impact on a document is an integer, fixed by the
term's IDF and, per document, by whether the title and the description hold it,
its count in the body and the body's length class (lengths within 9 %): a
handful of values per term, each a bitmap of documents. Every impact goes into
bit-sliced counters (one bitmap per bit of the sum), so every matching
document's score is known at once, and the best are read off from the top bits
down without scoring any document one by one. So the ranking does not depend
on how many documents are asked for: the fast phase's top 2 are the first 2 of
the shortlist's 180, which are the first 180 of every match
(`server.ranking.bm25f.scan` scores the same definition document by document;
a property test holds them equal).

One job past 500 lines: the impacts, the bit-sliced counters, the silence rule
and the near-tie order all read the same per-query term table and are one
ranking; its definition without the index lives apart, in `scan`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

import regex
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.pacing import paced
from memory_recall.server.ranking.bm25f.folding import (
    FOLD_MARK,
    CaselessToken,
    cannot_hold,
    caseless_ascii,
    exact_form,
    fold,
    fold_text,
    is_folded,
)
from memory_recall.server.ranking.bm25f.frequency import (
    FREQUENCY_STEPS,
    FREQUENCY_ZERO,
    body_norm,
    count_code,
    norm_code,
)
from memory_recall.server.ranking.bm25f.index import (
    BODY,
    DESCRIPTION,
    TITLE,
    Bm25Index,
    CompoundCheck,
)
from memory_recall.server.ranking.bm25f.query import (
    compound_parts,
    function_words,
    idf,
    is_spaced,
    names_a_lack,
    scored_tokens,
    without_clitic,
)
from memory_recall.server.ranking.bm25f.terms import exact_description, exact_title
from memory_recall.server.ranking.bm25f.tokens import UNSPACED_CHAR, is_acronym
from memory_recall.server.ranking.confidence.evidence import (
    FIELD_DEPTH,
    DocEvidence,
    QueryEvidence,
)
from memory_recall.server.ranking.explanation import Coverage, ScoreExplanation, ScorePart
from memory_recall.server.ranking.index import CJK_PAIR, WORD, field_terms
from memory_recall.server.ranking.passage import Excerpt, PassageTerm, best_passage, densest
from memory_recall.server.ranking.postings import (
    Counters,
    bitmap_of,
    class_length,
    slots_of,
)
from memory_recall.server.ranking.result import Ranking
from memory_recall.server.ranking.spec import ScoredDocument
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.tokens import CJK_CHAR

# Scores are integers (ScoredDocument.score): thousandths of the BM25F score.
SCORE_SCALE = 1000
# Near-ties are resolved, and silence decided, among this many of the best:
# what a recall can deliver, and then some.
NEAR_TIE_WINDOW = 32
ANSWER_WINDOW = 32
# A term whose body postings are this few (or fewer than 1/64 of the documents)
# is scored document by document; one with more, through bitmaps.
SPARSE_POSTINGS = 256
# A compound whose parts match more documents than this is not verified (the
# parts still count): reading that many bodies would cost milliseconds.
COMPOUND_CANDIDATES = 1024


@dataclass(frozen=True)
class Bm25Params:
    """One ranker's settings (the index fixes length normalization: bm25f.terms)."""

    field_weights: tuple[float, float, float] = (3.0, 2.0, 1.0)  # title, description, body
    k1: float = 1.2
    # Silence: the share of the query's content IDF mass that one of the best
    # documents must match, or nothing is returned (0 never silences). On the seven
    # eval corpora it was chosen on, 0.15 is the highest share that costs none of them
    # more than a point of Recall@5; above it, paraphrased and cross-language
    # questions fall silent with the abstentions. `memory-recall dev eval --silence-sweep`
    # prints the trade-off.
    min_coverage: float = 0.15
    # ... unless the document is about one of the query's rarest words: its title
    # or description holds a name or identifier found in at most this share of
    # the memories (and at least one). Such a word answers in any language, even
    # when the rest of the question (inflected, or in another language than the
    # memory) matches nothing as written. 0 turns this off.
    rare_share: float = 0.001
    # A term met only in the body (not the title or description) is weaker
    # evidence that the memory is about it: it covers this share of its IDF.
    body_coverage_weight: float = 0.7
    # Near-ties go to the newer memory: when two memories say nearly as much
    # about the query, the later one is usually the update of the earlier.
    recency_band: float = 0.2
    stem: bool = True  # see bm25f.query.light_stem
    # A term found only inside longer words (`park` in `bürgerpark`, `cat` in
    # `vietnamese`) is weak evidence too. (For the score it counts fully: a
    # prefix such as `deploy` in `deployment` is the common case there.)
    inside_coverage_weight: float = 0.1
    # Overlapping grams say the same characters several times over: every
    # character of a Thai/Lao/Khmer/Myanmar run is in three trigrams, of a CJK
    # run in two pairs. Each gram weighs this share of its IDF, so a phrase in
    # those scripts weighs about what the same words would weigh spaced.
    unspaced_gram_weight: float = 1 / 3
    cjk_pair_weight: float = 1 / 2
    # A memory that holds a query term only in its folded form (accents, case, width,
    # Traditional/Simplified: bm25f.folding) scores this share of the exact form's
    # impact: found as well, ranked after the memory spelled as the query is.
    folded_weight: float = 0.8


DEFAULT_PARAMS = Bm25Params()


def term_weight(token: str, df: int, n: int, params: Bm25Params) -> float:
    """A term's IDF, for overlapping grams the share of it each gram carries."""
    weight = idf(df, n)
    if CJK_CHAR.match(token):
        weight *= params.cjk_pair_weight
    elif UNSPACED_CHAR.search(token):
        weight *= params.unspaced_gram_weight
    return weight


def impact(
    weight: float, title: bool, description: bool, frequency: int | None, p: Bm25Params
) -> int:
    """What one term adds to a document's score (0 when the document lacks it).

    `title`, `description`: 1 when the field holds the term, else 0; `frequency`: the
    term's body frequency code, `count_code(count) - norm_code(norm)` (count over every
    word holding it; norm of the body's length class), or None when the body lacks it.
    """
    wt, wd, wb = p.field_weights
    tf = wt * title + wd * description
    if frequency is not None:
        tf += wb * 2.0 ** (frequency / FREQUENCY_STEPS)
    if tf <= 0:
        return 0
    return max(1, round(SCORE_SCALE * weight * tf / (p.k1 + tf)))


def coverage(weight: float, in_summary: bool, starts: bool, p: Bm25Params) -> int:
    """How much of the query's content mass one content term covers in a document."""
    share = 1.0 if in_summary else p.body_coverage_weight
    share *= 1.0 if starts else p.inside_coverage_weight
    return round(SCORE_SCALE * weight * share)


def coverage_needed(mass: float, p: Bm25Params) -> int:
    return math.ceil(round(SCORE_SCALE * p.min_coverage * mass, 6))


def rare_limit(n: int, p: Bm25Params) -> int:
    """A term found in at most this many documents is one of the rarest (0: none is)."""
    return max(1, int(p.rare_share * n)) if p.rare_share else 0


def word_start(token: str) -> regex.Pattern[str]:
    return regex.compile(r"(?<![\p{L}\p{M}\p{N}])" + regex.escape(token))


def _check_compound(
    index: Bm25Index,
    doc: MemoryDocument,
    token: str,
    pattern: regex.Pattern[str],
    caseless: CaselessToken | None,
) -> CompoundCheck:
    """Where a compound token is in one memory's fields, in the exact forms the index
    read them in (Turkish casing where a title holds ı or İ: `Billing-API İ` is
    `bıllıng-apı`), as the scan reads them."""
    if caseless is not None and cannot_hold(doc.body, caseless):
        text = ""  # not in the whole body, so in no window of it
    else:
        text = index.body_text(doc)[0]
    fields = (exact_title(doc), exact_description(doc), text)
    held = [token in f for f in fields]
    starts = any(h and pattern.search(f) for h, f in zip(held, fields, strict=True))
    return CompoundCheck(held[0], held[1], text.count(token) if held[2] else 0, starts)


def newer_first_in_near_ties(scored: list[tuple[int, Any, Any]], band: float) -> None:
    """Move a newer document above an older one scoring at most `band` more (in place).

    `scored` holds (score, (-mtime, tiebreak), item), best first. An insertion
    pass: each document climbs over the older ones just above it while it stays
    within the band of them; equal mtimes never move.
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


@dataclass
class _Found:
    """Where one query term is: per field, with its count in the body, and where it
    starts a word."""

    title: int
    description: int
    body: int  # the slots whose body holds it
    starts: int
    # Its count in each body: slot → count for a term of few postings; else the
    # words holding it, whose counts the index sums with bitmaps.
    counts: dict[int, int] | list[str]

    @property
    def anywhere(self) -> int:
        return self.title | self.description | self.body


@dataclass
class _Term:
    token: str
    weight: float  # IDF (times the gram share)
    found: _Found
    anywhere: int
    content: bool  # counts toward the IDF mass a document must cover
    kind: str = field(default="text")  # how a passage finds it: "text", "acronym", "folded"
    # The folded part of a query term (the memories that hold it only folded): scored
    # at `share` of the weight, and not counted again in the query's mass.
    share: float = 1.0
    echo: bool = False
    key: str = ""  # the query term it stands for (its own token for an exact term)
    df: int = 0  # memories holding the query term, exactly or folded

    def __post_init__(self) -> None:
        if not self.key:
            self.key = self.token


def _mass(terms: Sequence[_Term]) -> float:
    """The query's content weight: each content term once (its folded part is not
    counted again)."""
    return sum(t.weight for t in terms if t.content and not t.echo)


def _evidence(
    index: Bm25Index,
    terms: Sequence[_Term],
    covered: Counters,
    anchors: int,
    matched: int,
    ranking: Ranking,
    docs: Sequence[ScoredDocument],
    excerpt: Callable[[MemoryDocument], Excerpt],
    p: Bm25Params = DEFAULT_PARAMS,
) -> QueryEvidence:
    """What the ranking says about `docs` (its best, usually) for the confidence model.

    The densest stretch is looked for in the passage the memory would be delivered
    with (the most of the query's weight in 1,200 characters), not the whole body."""
    content = [t for t in terms if t.content]
    mass = _mass(terms) or 1.0
    weight = {t.key: t.weight for t in content}
    lack = sum(t.weight for t in content if not t.df and not t.echo) / mass
    words = word_shares(terms, p)
    word_mass = sum(words.values()) or 1.0
    unfound = sum(share for key, share in words.items() if not _df(terms, key)) / word_mass
    out = []
    for scored in docs:
        slot = index.slot(scored.document.path)
        if slot is None:
            out.append(DocEvidence(scored.score, 0.0, 0.0, 0))
            continue
        bit = 1 << slot
        # A query term's exact and folded parts hold disjoint memories: at most one is here.
        here = [t for t in content if t.anywhere & bit]
        held = {t.key for t in here}
        in_summary = {t.key for t in here if (t.found.title | t.found.description) & bit}
        starts = {t.key for t in here if t.found.starts & bit}
        rest_mass = sum(w for k, w in weight.items() if k not in in_summary)
        rest_held = sum(
            w * (1.0 if k in starts else p.inside_coverage_weight)
            for k, w in weight.items()
            if k in held and k not in in_summary
        )
        everywhere = {t.key for t in terms if t.anywhere & bit}
        passage = excerpt(scored.document)
        text = scored.document.body[passage.start : passage.end]
        vocabulary = field_terms(
            exact_form(f"{scored.document.title}\n{scored.document.description}\n{text}")
        )
        near = densest(
            text,
            [PassageTerm(t.token, t.weight, t.kind) for t in here],
            [i for i, t in enumerate(here) if t.key in in_summary],
            folding=fold_text,
        )
        out.append(
            DocEvidence(
                scored.score,
                covered.value(slot) / (SCORE_SCALE * mass),
                sum(weight[k] for k in in_summary) / mass,
                len(held),
                bool(anchors & bit),
                proximity=near / mass,
                focus=len(held) / max(1, len(vocabulary)),
                rest=rest_held / rest_mass if rest_mass else 1.0,
                unheld=sum(s for k, s in words.items() if k not in everywhere) / word_mass,
            )
        )
    scores = tuple(s.score for s in ranking.top(FIELD_DEPTH))
    return QueryEvidence(
        len(weight), lack, matched.bit_count(), len(index), scores, tuple(out), unfound
    )


def word_shares(terms: Sequence[_Term], p: Bm25Params) -> dict[str, float]:
    """Each scored query term's share of a word, IDF-free: a CJK pair or an unspaced
    script's trigram is the part of a word its overlap says, any other term a word."""
    out = {}
    for t in terms:
        if not t.echo:
            if CJK_CHAR.match(t.token):
                out[t.key] = p.cjk_pair_weight
            elif UNSPACED_CHAR.search(t.token):
                out[t.key] = p.unspaced_gram_weight
            else:
                out[t.key] = 1.0
    return out


def _df(terms: Sequence[_Term], key: str) -> int:
    return max((t.df for t in terms if t.key == key), default=0)


class Bm25Ranker:
    """A `Ranker` (server.ranking.shortlist) scoring BM25F through the warm index."""

    def __init__(
        self,
        params: Bm25Params = DEFAULT_PARAMS,
        index_kind: type[Bm25Index] = Bm25Index,
        *,
        sparse_postings: int = SPARSE_POSTINGS,
    ) -> None:
        self.params = params
        self.index_kind = index_kind
        self.sparse_postings = sparse_postings  # tests lower it to reach the bitmap path

    def __call__(
        self,
        snapshot: CorpusView,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool],
        limit: int | None = None,
    ) -> list[ScoredDocument]:
        return self.ranking(snapshot, tokens, keep, limit).ranked

    def ranking(
        self,
        snapshot: CorpusView,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool],
        limit: int | None = None,
    ) -> Ranking:
        return self.rank_index(self._index(snapshot), tokens, keep, limit)

    def _index(self, snapshot: CorpusView) -> Bm25Index:
        index = snapshot.index(self.index_kind)
        if not isinstance(index, Bm25Index):  # the catalog moved on after this snapshot
            index = self.index_kind.of(snapshot.documents)
        return index

    def prepare(self, index: Bm25Index, tokens: Sequence[str]) -> None:
        """Look `tokens` up as a recall would, and make their count codes: what the first
        recall of them would otherwise pay (both kept until the index changes)."""
        for term in self._terms(index, tokens):
            if term.anywhere and not isinstance(term.found.counts, dict):
                index.count_codes(term.found.counts)

    def candidates(
        self,
        snapshot: CorpusView,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool],
        limit: int | None = None,
    ) -> list[ScoredDocument]:
        """The ranking without the silence rule: what a new memory may conflict with. A
        correction names a value no memory holds ("The SRE is now Jonas"), so most of its
        weight is a word found nowhere and the rule, which silences a question about what
        the memories never mention, silenced the memory it corrects."""
        return self.rank_index(self._index(snapshot), tokens, keep, limit, silence=False).ranked

    def rank(
        self,
        index: Bm25Index,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool] = lambda _doc: True,
        limit: int | None = None,
    ) -> list[ScoredDocument]:
        """Kept documents best first: score, then mtime, then the index's input order."""
        return self.rank_index(index, tokens, keep, limit).ranked

    def rank_index(
        self,
        index: Bm25Index,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool],
        limit: int | None,
        *,
        silence: bool = True,
    ) -> Ranking:
        n = len(index)
        if not tokens or not n or limit == 0:
            return Ranking.empty()
        p = self.params
        terms = self._terms(index, tokens)
        matched = 0
        for term in terms:
            matched |= term.anywhere
        if not matched:
            return Ranking.empty()
        scores, covered = Counters(), Counters()
        # Per length class, FREQUENCY_ZERO - norm_code: what a body frequency code adds
        # to a count code, for every document at once (classes are disjoint).
        average = index.average_length()
        norms = {
            group: norm_code(body_norm(class_length(group), average))
            for group in index.length_classes()
        }
        shifts = Counters()
        for group, bits in index.length_classes().items():
            shifts.put(bits, FREQUENCY_ZERO - norms[group])
        for term in paced(terms):  # in a worker thread, recalls go first between terms
            if term.anywhere:
                scores.add_counters(self._impacts(index, term, norms, shifts))
                if term.content:
                    covered.add_counters(self._coverage(term))
        # The best first, read as far as near-ties and silence look; the rest of the
        # same order is read on only when asked for (Ranking.top, Ranking.ranked).
        order = self._in_score_order(index, scores, matched, keep, limit)
        first = list(islice(order, max(NEAR_TIE_WINDOW, ANSWER_WINDOW)))
        window = bitmap_of(slot for slot, _ in first[:ANSWER_WINDOW])
        mass = _mass(terms)
        rare = rare_limit(n, p)
        anchors = 0
        for term in terms:
            if term.content and 0 < term.df <= rare:
                anchors |= term.found.title | term.found.description
        if silence and not (covered.at_least(coverage_needed(mass, p), window) or anchors & window):
            return Ranking.empty()
        head = [(score, index.order_key(slot), slot) for slot, score in first[:NEAR_TIE_WINDOW]]
        if p.recency_band:
            newer_first_in_near_ties(head, p.recency_band)
        ranked = [ScoredDocument(index.document(slot), score) for score, _, slot in head]
        ranked += [
            ScoredDocument(index.document(slot), score) for slot, score in first[NEAR_TIE_WINDOW:]
        ]
        rest = (ScoredDocument(index.document(slot), score) for slot, score in order)
        passage_terms = [
            PassageTerm(t.token, t.weight, t.kind) for t in terms if t.anywhere and t.content
        ]

        def score_of(doc: MemoryDocument) -> int:
            slot = index.slot(doc.path)
            if slot is None or index.document(slot) is not doc:
                return 0
            return scores.value(slot)

        excerpts: dict[str, Excerpt] = {}  # the confidence's evidence reads them too

        def excerpt(doc: MemoryDocument) -> Excerpt:
            found = excerpts.get(doc.path)
            if found is None:
                found = excerpts[doc.path] = best_passage(
                    doc.body, passage_terms, folding=fold_text
                )
            return found

        ranking = Ranking(ranked, score_of, excerpt, rest, limit)

        def evidence(docs: Sequence[ScoredDocument]) -> QueryEvidence:
            return _evidence(index, terms, covered, anchors, matched, ranking, docs, excerpt, p)

        ranking.evidence = evidence
        return ranking

    def explain(
        self, snapshot: CorpusView, tokens: Sequence[str], doc: MemoryDocument
    ) -> ScoreExplanation:
        """One document's score as the ranker computes it: per term its impact (IDF,
        saturated weighted frequency), split over the fields by their share of the
        term's weighted frequency; the silence rule's coverage of the query."""
        index = self._index(snapshot)
        p = self.params
        slot = index.slot(doc.path)
        if not tokens or slot is None or index.document(slot) is not doc:
            return ScoreExplanation(0, tuple(tokens), notes=("not in the ranker's index",))
        terms = self._terms(index, tokens)
        bit = 1 << slot
        average = index.average_length()
        norm = norm_code(body_norm(class_length(index.length_class_of(slot)), average))
        parts: list[ScorePart] = []
        score = 0
        covered = 0
        mass = _mass(terms)
        wt, wd, wb = p.field_weights
        for term in terms:
            found = term.found
            if not term.anywhere & bit:
                continue
            in_title, in_description = bool(found.title & bit), bool(found.description & bit)
            frequency: int | None = None
            if found.body & bit:
                if isinstance(found.counts, dict):
                    code = count_code(found.counts[slot])
                else:
                    code = index.count_codes(found.counts).value(slot)
                frequency = code - norm
            value = impact(term.weight * term.share, in_title, in_description, frequency, p)
            score += value
            shares = [
                ("title", wt * in_title),
                ("description", wd * in_description),
                (
                    "body",
                    wb * 2.0 ** (frequency / FREQUENCY_STEPS) if frequency is not None else 0.0,
                ),
            ]
            tf = sum(share for _name, share in shares)
            given = 0
            held = [(name, share) for name, share in shares if share > 0]
            for i, (name, share) in enumerate(held):
                part = value - given if i == len(held) - 1 else int(value * share / tf)
                given += part
                detail = f"idf {term.weight:.3f}, weighted frequency {share:.2f} of {tf:.2f}"
                if not term.content:
                    detail += " (a function word: not counted for silence)"
                if term.echo:
                    detail += f" (found folded: {term.share:.0%} of the exact form's weight)"
                parts.append(ScorePart(name, term.key, part, detail))
            if term.content:
                starts = bool(found.starts & bit)
                covered += coverage(term.weight, in_title or in_description, starts, p)
        share = covered / (SCORE_SCALE * mass) if mass else 0.0
        rare = rare_limit(len(index), p)
        anchor = [
            t.token
            for t in terms
            if t.content and 0 < t.df <= rare and (t.found.title | t.found.description) & bit
        ]
        silenced = bool(score) and not self.rank_index(index, tokens, lambda _d: True, 1).top(1)
        why = (
            f"about the rare word {anchor[0]!r}, which answers whatever the coverage"
            if anchor
            else None
        )
        notes = () if score else ("no query term is in its title, description or body",)
        return ScoreExplanation(
            score,
            tuple(t.token for t in terms if not t.echo),
            tuple(parts),
            Coverage(round(share, 4), p.min_coverage, silenced, why),
            notes,
        )

    def _in_score_order(
        self,
        index: Bm25Index,
        scores: Counters,
        among: int,
        keep: Callable[[MemoryDocument], bool],
        limit: int | None,
    ) -> Iterator[tuple[int, int]]:
        """Kept (slot, score) pairs in score order (score descending, then recency order),
        found a few at a time from the top of the counters."""
        among = scores.at_least(1, among)
        chunk = NEAR_TIE_WINDOW if limit is None else min(max(limit, 1), NEAR_TIE_WINDOW)
        while among:
            threshold = max(1, scores.kth(among, chunk))
            region = scores.at_least(threshold, among)
            for score, level in scores.levels(region):  # best first, the threshold last
                if level & (level - 1):  # ties: in recency order
                    slots: Iterable[int] = index.in_order(level, chunk)
                else:
                    slots = (level.bit_length() - 1,)
                for slot in slots:
                    if keep(index.document(slot)):
                        yield slot, score
            among &= ~region
            chunk *= 4

    def _impacts(
        self, index: Bm25Index, term: _Term, norms: dict[int, int], shifts: Counters
    ) -> Counters:
        """The term's impact on every document that holds it, as counters.

        The impact depends on the title, the description and the body frequency
        code: a few values per term, each written once for all its documents.
        """
        p, found = self.params, term.found
        out = Counters()
        title, description, body = found.title, found.description, found.body
        values: dict[tuple[bool, bool, int | None], int] = {}

        def value(in_title: bool, in_description: bool, frequency: int | None) -> int:
            key = (in_title, in_description, frequency)
            known = values.get(key)
            if known is None:
                known = values[key] = impact(
                    term.weight * term.share, in_title, in_description, frequency, p
                )
            return known

        summary = title | description
        if isinstance(found.counts, dict):
            # Few postings: document by document, slots grouped by their impact.
            in_title = set(slots_of(title & body)) if title else set()
            in_description = set(slots_of(description & body)) if description else set()
            groups: dict[int, list[int]] = {}
            for slot, count in found.counts.items():
                frequency = count_code(count) - norms[index.length_class_of(slot)]
                worth = value(slot in in_title, slot in in_description, frequency)
                groups.setdefault(worth, []).append(slot)
            for worth, slots in groups.items():
                out.put(bitmap_of(slots, index.capacity), worth)
        else:
            # Many: count codes, then + (FREQUENCY_ZERO - norm code) for every body at once.
            codes = index.count_codes(found.counts)
            codes.add_counters(shifts)
            for shifted, level in codes.levels(body):
                frequency = shifted - FREQUENCY_ZERO
                plain = level & ~summary if summary else level
                if plain:
                    out.put(plain, value(False, False, frequency))
                if summary & level:
                    for (in_t, in_d), part in (
                        ((True, True), level & title & description),
                        ((True, False), level & title & ~description),
                        ((False, True), level & description & ~title),
                    ):
                        if part:
                            out.put(part, value(in_t, in_d, frequency))
        for (in_t, in_d), only in (
            ((True, True), title & description),
            ((True, False), title & ~description),
            ((False, True), description & ~title),
        ):
            only &= ~body
            if only:
                out.put(only, value(in_t, in_d, None))
        return out

    def _coverage(self, term: _Term) -> Counters:
        p, found = self.params, term.found
        out = Counters()
        summary = found.title | found.description
        body_only = term.anywhere & ~summary
        for in_summary, slots in ((True, summary), (False, body_only)):
            for starts, part in ((True, slots & found.starts), (False, slots & ~found.starts)):
                if part:
                    value = coverage(term.weight, in_summary, starts, p)
                    if value:
                        out.put(part, value)
        return out

    def _terms(self, index: Bm25Index, tokens: Sequence[str]) -> list[_Term]:
        """The query's terms, with their IDF and where they are, function words left out.

        Words, CJK pairs and acronyms are looked up in the index; compound
        identifiers (`billing-api`) through their parts, then checked in the
        text. A compound the index cannot narrow down is left out (its parts are
        tokens too).
        """
        p = self.params
        n = len(index)
        terms: list[_Term] = []
        seen: set[str] = set()
        functions = function_words(tokens)
        for token in paced(scored_tokens(tokens, p.stem, functions)):
            found = self._find(index, token)
            if found is None:
                continue
            anywhere = found.anywhere
            bare = without_clitic(token) if p.stem and not anywhere else None
            if bare is not None:
                bare_found = self._find(index, bare)
                if bare_found is not None and bare_found.anywhere:
                    token, found, anywhere = bare, bare_found, bare_found.anywhere
            if token in seen:
                continue
            seen.add(token)
            folded = self._find_folded(index, token, anywhere)
            df = (anywhere | (folded.anywhere if folded else 0)).bit_count()
            content = token not in functions and (df > 0 or names_a_lack(token, tokens))
            weight = term_weight(token, df, n, p)
            kind = "acronym" if is_acronym(token) else "text"
            terms.append(_Term(token, weight, found, anywhere, content, kind, df=df))
            if folded is not None:
                terms.append(
                    _Term(
                        FOLD_MARK + fold(token),
                        weight,
                        folded,
                        folded.anywhere,
                        content,
                        "folded",
                        share=p.folded_weight,
                        echo=True,
                        key=token,
                        df=df,
                    )
                )
        return terms

    def _find(self, index: Bm25Index, token: str) -> _Found | None:
        """Where a token is in the index, or None for one it cannot look up."""
        if is_acronym(token) or CJK_PAIR.fullmatch(token):
            words = [token]
        elif WORD.fullmatch(token):
            words = [w for w in index.words_containing(token) if not is_folded(w)]
        else:
            return self._find_compound(index, token)
        return self._found(index, token, words)

    def _find_folded(self, index: Bm25Index, token: str, exact: int) -> _Found | None:
        """Where a token is in its folded form only (bm25f.folding): the memories not in
        `exact` whose terms, folded, hold the token folded; None when there are none."""
        if is_acronym(token):
            return None
        folded = fold(token)
        if CJK_PAIR.fullmatch(token):
            words = [w for w in (folded, FOLD_MARK + folded) if w != token]
        elif WORD.fullmatch(token) and WORD.fullmatch(folded):
            words = [w for w in index.words_containing(folded) if is_folded(w) or token not in w]
        else:
            return None
        if not words:
            return None
        found = self._found(index, FOLD_MARK + folded, words)
        only = found.anywhere & ~exact
        if not only:
            return None
        found.title &= only
        found.description &= only
        found.body &= only
        found.starts &= only
        if isinstance(found.counts, dict):
            found.counts = {slot: c for slot, c in found.counts.items() if only >> slot & 1}
        return found

    def _found(self, index: Bm25Index, token: str, words: list[str]) -> _Found:
        """Where any of `words` (the index's terms that hold `token`) is."""
        title = index.field_bits(TITLE, words)
        description = index.field_bits(DESCRIPTION, words)
        counts: dict[int, int] | list[str]
        if index.field_postings(BODY, words) <= max(self.sparse_postings, index.capacity // 64):
            counts = index.field_counts(BODY, words)
            body = bitmap_of(counts, index.capacity)
        else:
            counts = words  # summed through bitmaps when its count codes are not cached
            body = index.field_any(BODY, words)
        found = _Found(title, description, body, 0, counts)
        bare = token[1:] if is_folded(token) else token
        starting = (
            [w for w in words if w.startswith(bare) or w.startswith(token)]
            if is_spaced(bare)
            else words
        )
        if len(starting) == len(words):
            found.starts = found.anywhere
        elif starting:
            starts = index.field_bits(TITLE, starting) | index.field_bits(DESCRIPTION, starting)
            found.starts = starts | index.field_any(BODY, starting)
        return found

    def _find_compound(self, index: Bm25Index, token: str) -> _Found | None:
        """A compound identifier (`billing-api`, `services/billing/refund.ts`, `2025-04`):
        the documents holding every part of three letters or more where the compound can
        hold it, checked in the text.

        A text that holds the compound holds each part inside one of its words (the
        index's words are the runs of letters and digits): as the end of a word for the
        compound's first part, the start of one for its last, the whole word for a part
        between two separators. Asking that of each part, not only that the part is in
        some word, leaves far fewer texts to check when the parts are common words
        (`client_job`, `user-service`): each check normalizes a whole body. The checks
        are kept for the next recall of the same compound (`Bm25Index.compound_checks`)."""
        parts = compound_parts(token)
        if not parts:
            return None
        candidates = -1
        for part in parts:
            words = [
                w for w in index.words_containing(part.text) if not is_folded(w) and part.fits(w)
            ]
            candidates &= (
                index.field_bits(TITLE, words)
                | index.field_bits(DESCRIPTION, words)
                | index.field_any(BODY, words)
            )
            if not candidates:
                return _Found(0, 0, 0, 0, {})
        if candidates.bit_count() > COMPOUND_CANDIDATES:
            return None
        pattern = word_start(token)
        caseless = caseless_ascii(token)
        checks = index.compound_checks(token)
        title = description = starts = 0
        counts: dict[int, int] = {}
        for slot in slots_of(candidates):
            doc = index.document(slot)
            kept = checks.get(slot)
            # (Of this very document: a remember's thread may have checked one that a
            # change removed from the slot meanwhile.)
            if kept is not None and kept[0] is doc:
                check = kept[1]
            else:
                check = _check_compound(index, doc, token, pattern, caseless)
                checks[slot] = (doc, check)
            if check.title:
                title |= 1 << slot
            if check.description:
                description |= 1 << slot
            if check.body:
                counts[slot] = check.body
            if check.starts:
                starts |= 1 << slot
        return _Found(title, description, bitmap_of(counts), starts, counts)
