"""From one query to the three lists a recall needs (docs/ranking.md).

- fast: the top 2, pushed before any model is asked;
- fallback: the top 5, used when there is no model or it fails;
- candidates: the manifest the model chooses from — the lexical top 180
  interleaved with the most recent other memories, at most 200 in all, so the
  model can still find a memory that shares no word with the query.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Protocol

from memory_recall.protocol.limits import (
    FAST_LIMIT,
    LEXICAL_CANDIDATES,
    MAX_CANDIDATES,
    REFINED_LIMIT,
)
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.confidence.calibration import choose
from memory_recall.server.ranking.confidence.evidence import QueryEvidence
from memory_recall.server.ranking.confidence.values import asked, with_values
from memory_recall.server.ranking.explanation import ScoreExplanation, ScorePart
from memory_recall.server.ranking.index import DocumentIndex
from memory_recall.server.ranking.noise import NoiseFilter
from memory_recall.server.ranking.passage import Excerpt
from memory_recall.server.ranking.result import Ranking, window_excerpt
from memory_recall.server.ranking.spec import (
    BODY_WEIGHT,
    DESCRIPTION_WEIGHT,
    TITLE_WEIGHT,
    TYPE_KEYWORDS,
    ScoredDocument,
    lexical_score,
    rank_scan,
    score_document,
    type_boost,
)
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.sentences import split_sentences
from memory_recall.server.tokens import query_tokens

Keep = Callable[[MemoryDocument], bool]


class Ranker(Protocol):
    """Kept documents that match, best first; only the first `limit` when given.

    A ranker may also offer `ranking(snapshot, tokens, keep, limit) -> Ranking`,
    with every document's score and excerpt (`Ranking`); one that does not
    delivers the body window. And one with a silence rule offers `candidates(snapshot,
    tokens, keep, limit)`, its ranking without that rule (a writer's conflict search).
    """

    def __call__(
        self,
        snapshot: CorpusView,
        tokens: Sequence[str],
        keep: Keep,
        limit: int | None = None,
    ) -> list[ScoredDocument]: ...


class SpecRanker:
    """The reference scorer's ranking: through the snapshot's index (`indexed`),
    or as a plain scan."""

    def __init__(self, *, indexed: bool) -> None:
        self.indexed = indexed
        self.index_kind = DocumentIndex

    def __call__(
        self,
        snapshot: CorpusView,
        tokens: Sequence[str],
        keep: Keep,
        limit: int | None = None,
    ) -> list[ScoredDocument]:
        index = snapshot.index(DocumentIndex) if self.indexed else None
        if isinstance(index, DocumentIndex):
            return index.rank(tokens, keep, limit)
        # The plain scan, or a snapshot the catalog changed after: the same answers.
        ranked = rank_scan(snapshot.documents, tokens, keep)
        return ranked if limit is None else ranked[:limit]

    def ranking(
        self,
        snapshot: CorpusView,
        tokens: Sequence[str],
        keep: Keep,
        limit: int | None = None,
    ) -> Ranking:
        def score(doc: MemoryDocument) -> int:
            return score_document(doc, tokens) if tokens else 0

        return Ranking(self(snapshot, tokens, keep, limit), score, window_excerpt)

    def explain(
        self, snapshot: CorpusView, tokens: Sequence[str], doc: MemoryDocument
    ) -> ScoreExplanation:
        """The reference scorer's addends for one document: +4/+3/+1 per token
        found in the title,
        the description, the body window, then the type boost (only with a match)."""
        parts: list[ScorePart] = []
        for token in tokens:
            for name, text, weight in (
                ("title", doc.norm_title, TITLE_WEIGHT),
                ("description", doc.norm_description, DESCRIPTION_WEIGHT),
                ("body", doc.norm_body_window, BODY_WEIGHT),
            ):
                if token in text:
                    detail = "in the first 1,200 characters" if name == "body" else None
                    parts.append(ScorePart(name, token, weight, detail))
        notes: list[str] = []
        if lexical_score(doc, tokens):
            boost = type_boost(doc.type, tokens)
            if boost:
                words = [t for t in tokens if t in TYPE_KEYWORDS.get(doc.type, ())]
                parts.append(
                    ScorePart(
                        "type", None, boost, f"type {doc.type}: {', '.join(words)} (at most 2)"
                    )
                )
        else:
            notes.append("no query token is in its title, description or first 1,200 characters")
        return ScoreExplanation(
            score_document(doc, tokens), tuple(tokens), tuple(parts), None, tuple(notes)
        )


reference_ranker = SpecRanker(indexed=False)  # the reference scorer's scan over every document
index_ranker = SpecRanker(indexed=True)  # the same answers through the index, faster


def ranking_of(
    ranker: Ranker, snapshot: CorpusView, tokens: Sequence[str], keep: Keep, limit: int | None
) -> Ranking:
    """A ranker's `Ranking`; for a plain ranking function, scores by ranking one document."""
    method = getattr(ranker, "ranking", None)
    if method is not None:
        ranking: Ranking = method(snapshot, tokens, keep, limit)
        return ranking

    def score(doc: MemoryDocument) -> int:
        found = ranker(snapshot, tokens, lambda d: d.path == doc.path, 1)
        return found[0].score if found else 0

    return Ranking(ranker(snapshot, tokens, keep, limit), score, window_excerpt)


@dataclass(frozen=True)
class Shortlist:
    tokens: list[str]
    # The best matches, noise and excluded paths removed: the lexical top
    # LEXICAL_CANDIDATES, all that any list below needs.
    ranked: list[ScoredDocument]
    candidates: list[MemoryDocument]
    # Every candidate's score, taken when the shortlist was made: a model's pick
    # is scored on the scale of `ranked` even if the catalog has changed since.
    scores: dict[str, int]
    ranking: Ranking

    @property
    def fast(self) -> list[ScoredDocument]:
        return self.ranked[:FAST_LIMIT]

    @property
    def fallback(self) -> list[ScoredDocument]:
        return self.ranked[:REFINED_LIMIT]

    def score_of(self, doc: MemoryDocument) -> int:
        """A document's score, also for one outside `ranked`, on the scale of `ranked`."""
        score = self.scores.get(doc.path)
        return self.ranking.score(doc) if score is None else score

    def excerpt(self, doc: MemoryDocument) -> Excerpt:
        """The part of the document's body to deliver."""
        return self.ranking.excerpt(doc)


def interleave_candidates(
    lexical: Sequence[MemoryDocument], recent: Sequence[MemoryDocument]
) -> list[MemoryDocument]:
    """L[0], R[0], L[1], R[1], … then whatever is left of either."""
    out: list[MemoryDocument] = []
    for i in range(max(len(lexical), len(recent))):
        if i < len(lexical):
            out.append(lexical[i])
        if i < len(recent):
            out.append(recent[i])
    return out


# A prompt's sentences asked alone (`RecallQuery.fast`): the first and last two of a
# longer prompt. Each is one more ranking; all of them cost about what the whole
# prompt's ranking does (docs/ranking.md, "A prompt's sentences").
SENTENCES_ASKED = 4
# How sure the gate must be of a sentence's first memory: the precision the fast phase
# aims for (docs/ranking.md), well above the whole prompt's threshold.
SENTENCE_CONFIDENCE = 0.7


@dataclass(frozen=True)
class RecallQuery:
    """One query against one snapshot: tokens and the keep-predicate built once.

    The ranking is computed once, for the lexical top 180: the fast phase's top 2
    are its first two (they are what the host waits for, so a recall asks for
    them first), the fallback its first five, the model's manifest all of it and
    the most recent others.
    """

    snapshot: CorpusView
    tokens: list[str]
    keep: Keep
    ranker: Ranker
    text: str = ""  # the query as written: its sentences are asked alone (`fast`)
    tokenizer: Callable[[str], list[str]] = query_tokens

    @classmethod
    def build(
        cls,
        snapshot: CorpusView,
        query: str,
        *,
        recent_tools: Sequence[str] = (),
        exclude_paths: Collection[str] = (),
        ranker: Ranker = index_ranker,
        tokenizer: Callable[[str], list[str]] = query_tokens,
    ) -> RecallQuery:
        noise = NoiseFilter.from_recent_tools(recent_tools)
        excluded = frozenset(exclude_paths)

        def keep(doc: MemoryDocument) -> bool:
            return doc.path not in excluded and not noise.is_noise(doc)

        return cls(snapshot, tokenizer(query), keep, ranker, query, tokenizer)

    @cached_property
    def ranking(self) -> Ranking:
        if not self.tokens or not self.snapshot.documents:
            return Ranking.empty()
        return ranking_of(self.ranker, self.snapshot, self.tokens, self.keep, LEXICAL_CANDIDATES)

    def top(self, limit: int) -> list[ScoredDocument]:
        """The first `limit` (at most LEXICAL_CANDIDATES) of the one ranking, read only
        that far (the shortlist reads on)."""
        return self.ranking.top(limit)

    def fast(self) -> tuple[list[ScoredDocument], dict[str, float]]:
        """The fast phase's memories: 0, 1 or 2 of the ranking's top 2, by how sure the
        ranking is of each (server.ranking.confidence), and their confidence by path.
        A ranking without evidence (the spec ranker) gives its top 2 as they are.

        A prompt of several sentences is also asked sentence by sentence
        (`_sentence_queries`): what the whole prompt chose is sent only when one of its
        sentences alone ranks it among its best two (`_supported`), and when the gate is
        silent on the whole, the sentence whose first memory it is surest of may speak
        (`_sentence_chosen`)."""
        chosen, confidences = self._chosen()
        if self.ranking.evidence is not None:
            if chosen:
                chosen, confidences = self._supported(chosen, confidences)
            if not chosen:
                chosen, confidences = self._sentence_chosen()
        return chosen, {
            s.document.path: c for s, c in zip(chosen, confidences, strict=True) if c is not None
        }

    @cached_property
    def evidence(self) -> Callable[[Sequence[ScoredDocument]], QueryEvidence] | None:
        """What the ranking says about its best memories, with whether each holds the
        kind of value the question asks for (`confidence.values`: a number, a time, a
        contact) in what it would deliver; None for a ranker that says nothing."""
        told = self.ranking.evidence
        if told is None or not asked(self.text):
            return told
        excerpt = self.ranking.excerpt

        def delivered(doc: MemoryDocument) -> str:
            cut = excerpt(doc)
            return f"{doc.title}\n{doc.description}\n{doc.body[cut.start : cut.end]}"

        def evidence(docs: Sequence[ScoredDocument]) -> QueryEvidence:
            texts = [delivered(s.document) for s in docs]
            return with_values(told(docs), texts, self.text)

        return evidence

    def _chosen(self) -> tuple[list[ScoredDocument], list[float | None]]:
        return choose(self.top(FAST_LIMIT), self.evidence)

    def _supported(
        self, chosen: list[ScoredDocument], confidences: list[float | None]
    ) -> tuple[list[ScoredDocument], list[float | None]]:
        """Of the whole prompt's choice, what one of its sentences alone also ranks
        among its best two.

        The words of two sentences can add up to a match neither makes: in "Who owns the
        zebra service? Show me the diff." a note on who owns the zebra diff checks holds
        words of both and ranks second, while each sentence alone ranks other memories
        first (the owners of the service; notes about diffs). A memory the fast phase
        sends unasked must match some sentence of the prompt well on its own (its rank,
        not the gate: a question in two halves may be answered only by both). Only when
        every sentence was asked (at most SENTENCES_ASKED): a memory that answers a
        sentence left unasked is not doubted."""
        asked, complete = self._sentence_queries
        if not asked or not complete:
            return chosen, confidences
        supported = {s.document.path for query in asked for s in query.top(FAST_LIMIT)}
        kept = [(s, c) for s, c in zip(chosen, confidences, strict=True)
                if s.document.path in supported]  # fmt: skip
        return [s for s, _ in kept], [c for _, c in kept]

    def _sentence_chosen(self) -> tuple[list[ScoredDocument], list[float | None]]:
        """What the sentence the gate is surest of delivers, held to more than the gate
        asks of a whole prompt: each sentence asked is one more chance to be wrong.

        Its first memory must reach SENTENCE_CONFIDENCE, and what it delivers must be
        among the whole prompt's top REFINED_LIMIT: the rest of the prompt may not
        argue against it (a fragment like "camila's home" alone finds a house purchase
        plan the whole question never ranked)."""
        agreed = {s.document.path for s in self.top(REFINED_LIMIT)}
        best: tuple[list[ScoredDocument], list[float | None]] = ([], [])
        for sentence in self._sentence_queries[0]:
            found, sure = sentence._chosen()
            if not found or (sure[0] or 0.0) < SENTENCE_CONFIDENCE:
                continue
            if found[0].document.path not in agreed:
                continue
            if best[0] and (sure[0] or 0.0) <= (best[1][0] or 0.0):
                continue
            kept = [(s, c) for s, c in zip(found, sure, strict=True) if s.document.path in agreed]
            best = ([s for s, _ in kept], [c for _, c in kept])
        return best

    @cached_property
    def _sentence_queries(self) -> tuple[list[RecallQuery], bool]:
        """The prompt's sentences as queries of their own, when it has more than one,
        and whether they are all of it (each asked, none the whole prompt's words).

        A prompt to an agent is often a question with instructions around it ("How do we
        deploy the zebra service? Look at the files first, then answer."): the
        instructions' words are in no memory, they dilute the question, and one of them
        may even match a memory by chance, until the gate is silent on a question it
        would answer alone. Asked alone, each sentence is a query like those the gate
        was calibrated on. At most SENTENCES_ASKED are asked (the first and the last
        ones: where a question stands beside pasted text), each on the same memories
        with the same exclusions."""
        sentences = split_sentences(self.text)
        if len(sentences) < 2:
            return [], False
        complete = len(sentences) <= SENTENCES_ASKED
        if not complete:
            half = SENTENCES_ASKED // 2
            sentences = sentences[:half] + sentences[-half:]
        out = []
        for sentence in sentences:
            tokens = self.tokenizer(sentence)
            if tokens == self.tokens:
                complete = False  # the rest adds no word: the whole prompt is this one
            elif tokens:
                out.append(RecallQuery(
                    self.snapshot, tokens, self.keep, self.ranker, sentence, self.tokenizer
                ))  # fmt: skip
        return out, complete

    def shortlist(self) -> Shortlist:
        ranking = self.ranking
        ranked = ranking.ranked
        if not ranked and (not self.tokens or not self.snapshot.documents):
            return Shortlist(self.tokens, [], [], {}, ranking)
        lexical = [s.document for s in ranked]
        in_lexical = {doc.path for doc in lexical}
        room = MAX_CANDIDATES - len(lexical)
        recent: list[MemoryDocument] = []
        if room > 0:
            for doc in self.snapshot.by_recency:
                if doc.path not in in_lexical and self.keep(doc):
                    recent.append(doc)
                    if len(recent) == room:
                        break
        scores = {s.document.path: s.score for s in ranked}
        scores.update((doc.path, ranking.score(doc)) for doc in recent)
        return Shortlist(
            self.tokens, ranked, interleave_candidates(lexical, recent), scores, ranking
        )


def build_shortlist(
    snapshot: CorpusView,
    query: str,
    *,
    recent_tools: Sequence[str] = (),
    exclude_paths: Collection[str] = (),
    ranker: Ranker = index_ranker,
    tokenizer: Callable[[str], list[str]] = query_tokens,
) -> Shortlist:
    return RecallQuery.build(
        snapshot,
        query,
        recent_tools=recent_tools,
        exclude_paths=exclude_paths,
        ranker=ranker,
        tokenizer=tokenizer,
    ).shortlist()
