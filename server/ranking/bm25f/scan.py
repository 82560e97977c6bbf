"""bm25f's ranking computed document by document: its definition, without an index.

No postings, bitmaps, counters or vocabulary: every document's terms are read
from its text and every score is summed in plain Python. It is what the indexed
ranker (server.ranking.bm25f.ranker) must equal, and what a daemon-less
implementation would do on every recall (the bench's scan-every-recall).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.bm25f.folding import FOLD_MARK, fold, is_folded
from memory_recall.server.ranking.bm25f.frequency import body_norm, count_code, norm_code
from memory_recall.server.ranking.bm25f.query import (
    compound_parts,
    function_words,
    is_spaced,
    names_a_lack,
    scored_tokens,
    without_clitic,
)
from memory_recall.server.ranking.bm25f.ranker import (
    ANSWER_WINDOW,
    COMPOUND_CANDIDATES,
    DEFAULT_PARAMS,
    NEAR_TIE_WINDOW,
    Bm25Params,
    coverage,
    coverage_needed,
    impact,
    newer_first_in_near_ties,
    rare_limit,
    term_weight,
    word_start,
)
from memory_recall.server.ranking.bm25f.terms import (
    BodyText,
    document_terms,
    exact_description,
    exact_title,
    whole_body,
)
from memory_recall.server.ranking.bm25f.tokens import is_acronym
from memory_recall.server.ranking.index import CJK_PAIR, WORD
from memory_recall.server.ranking.postings import class_length, is_word, length_class
from memory_recall.server.ranking.spec import ScoredDocument

# (in the title, in the description, count in the body, at a word's start)
Where = tuple[bool, bool, int, bool]


@dataclass
class _Doc:
    doc: MemoryDocument
    title: set[str]
    description: set[str]
    body: dict[str, int]  # term → count
    texts: tuple[str, str, str]  # normalized title, description, body
    length: int

    def words(self) -> list[str]:
        return [*self.title, *self.description, *self.body]


def _read(doc: MemoryDocument, body: BodyText) -> _Doc:
    (title, description, counts), length = document_terms(doc, body)
    text = body(doc)[0]
    texts = (exact_title(doc), exact_description(doc), text)
    return _Doc(doc, set(title), set(description), dict(counts), texts, length)


def _where(d: _Doc, token: str) -> Where | None:
    """Where a word, pair or acronym token is in one document (None: nowhere)."""
    if is_acronym(token) or CJK_PAIR.fullmatch(token):
        code = d.body.get(token, 0)
        here = (token in d.title, token in d.description, code, True)
        return here if any(here[:3]) else None
    # Not acronyms, not pairs, not folded forms.
    words = {w for w in d.words() if token in w and is_word(w) and not is_folded(w)}
    return _where_words(d, token, words)


def _where_words(d: _Doc, token: str, words: set[str]) -> Where | None:
    if not words:
        return None
    in_title = any(w in d.title for w in words)
    in_description = any(w in d.description for w in words)
    count = sum(d.body[w] for w in words if w in d.body)
    starts = not is_spaced(token) or any(
        w.startswith(token) or w.startswith(FOLD_MARK + token) for w in words
    )
    return (in_title, in_description, count, starts)


def _where_folded(d: _Doc, token: str) -> Where | None:
    """Where a word or pair token is in one document's folded terms only (the caller
    keeps it for documents that lack the exact form)."""
    if is_acronym(token):
        return None
    folded = fold(token)
    if CJK_PAIR.fullmatch(token):
        words = {w for w in (folded, FOLD_MARK + folded) if w != token} & set(d.words())
        if not words:
            return None
        count = sum(d.body.get(w, 0) for w in words)
        here = (bool(words & d.title), bool(words & d.description), count, True)
        return here if any(here[:3]) else None
    if not (WORD.fullmatch(token) and WORD.fullmatch(folded)):
        return None
    words = {
        w for w in d.words() if folded in w and is_word(w) and (is_folded(w) or token not in w)
    }
    return _where_words(d, folded, words)


def _where_compound(docs: Sequence[_Doc], token: str) -> list[Where | None] | None:
    parts = compound_parts(token)
    if not parts:
        return None
    candidates = [
        all(
            any(is_word(w) and not is_folded(w) and part.fits(w) for w in d.words())
            for part in parts
        )
        for d in docs
    ]
    if sum(candidates) > COMPOUND_CANDIDATES:
        return None
    pattern = word_start(token)
    out: list[Where | None] = []
    for d, candidate in zip(docs, candidates, strict=True):
        held = [candidate and token in text for text in d.texts]
        if not any(held):
            out.append(None)
            continue
        count = d.texts[2].count(token) if held[2] else 0
        starts = any(h and pattern.search(t) for h, t in zip(held, d.texts, strict=True))
        out.append((held[0], held[1], count, starts))
    return out


def _lookup(docs: Sequence[_Doc], token: str) -> list[Where | None] | None:
    if is_acronym(token) or CJK_PAIR.fullmatch(token) or WORD.fullmatch(token):
        return [_where(d, token) for d in docs]
    return _where_compound(docs, token)


def rank_scan(
    documents: Sequence[MemoryDocument],
    tokens: Sequence[str],
    keep: Callable[[MemoryDocument], bool] = lambda _doc: True,
    *,
    params: Bm25Params = DEFAULT_PARAMS,
    body: BodyText = whole_body,
    limit: int | None = None,
) -> list[ScoredDocument]:
    """bm25f's ranking of `documents` (in input order), scored one by one."""
    p = params
    docs = [_read(doc, body) for doc in documents]
    n = len(docs)
    if not tokens or not n or limit == 0:
        return []
    # (weight, share of it scored, where, content, counted in the mass, df)
    terms: list[tuple[float, float, list[Where | None], bool, bool, int]] = []
    seen: set[str] = set()
    functions = function_words(tokens)
    for token in scored_tokens(tokens, p.stem, functions):
        places = _lookup(docs, token)
        if places is None:
            continue
        bare = without_clitic(token) if p.stem and not any(places) else None
        if bare is not None:
            bare_places = _lookup(docs, bare)
            if bare_places is not None and any(bare_places):
                token, places = bare, bare_places
        if token in seen:
            continue
        seen.add(token)
        folded = [
            None if place else _where_folded(d, token)
            for d, place in zip(docs, places, strict=True)
        ]
        df = sum(1 for place, other in zip(places, folded, strict=True) if place or other)
        content = token not in functions and (df > 0 or names_a_lack(token, tokens))
        weight = term_weight(token, df, n, p)
        terms.append((weight, 1.0, places, content, True, df))
        if any(folded):
            terms.append((weight, p.folded_weight, folded, content, False, df))
    rare = rare_limit(n, p)
    average = max(1.0, sum(d.length for d in docs) / n)
    frequency_of = {}  # length class → the norm code it subtracts
    scored = []
    for i, d in enumerate(docs):
        score = covered = 0
        anchor = False
        group = length_class(d.length)
        if group not in frequency_of:
            frequency_of[group] = norm_code(body_norm(class_length(group), average))
        for weight, share, places, content, _counted, df in terms:
            place = places[i]
            if place is None:
                continue
            in_title, in_description, count, starts = place
            frequency = count_code(count) - frequency_of[group] if count else None
            score += impact(weight * share, in_title, in_description, frequency, p)
            if content:
                covered += coverage(weight, in_title or in_description, starts, p)
                anchor = anchor or ((in_title or in_description) and 0 < df <= rare)
        if score > 0 and keep(d.doc):
            scored.append((score, (-d.doc.mtime_ms, i), d.doc, covered, anchor))
    scored.sort(key=lambda item: (-item[0], item[1]))
    mass = sum(weight for weight, _, _, content, counted, _ in terms if content and counted)
    needed = coverage_needed(mass, p)
    if not any(covered >= needed or anchor for *_, covered, anchor in scored[:ANSWER_WINDOW]):
        return []
    head = [(score, key, doc) for score, key, doc, *_ in scored[:NEAR_TIE_WINDOW]]
    if p.recency_band:
        newer_first_in_near_ties(head, p.recency_band)
    ordered = [ScoredDocument(doc, score) for score, _, doc in head]
    ordered += [ScoredDocument(doc, score) for score, _, doc, *_ in scored[NEAR_TIE_WINDOW:]]
    return ordered if limit is None else ordered[:limit]
