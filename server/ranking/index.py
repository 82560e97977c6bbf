r"""Candidate lookup for SPEC §3's scorer: the reference's scores and order,
touching only the documents that share something with the query.

Why it is exact. A query token (server.tokens) is either a run of at least
three non-CJK letters/marks/numbers, or a bigram of two CJK characters. A
substring match of the first kind inside a field lies within one maximal run of
non-CJK ``[\p{L}\p{M}\p{N}]`` characters of that field; a match of the second
kind is two adjacent CJK characters of the field. So, per field (title,
description, body window), the index keeps:

- words: every distinct maximal non-CJK letter/mark/number run of three or more
  characters → the documents whose field has it;
- pairs: every distinct pair of adjacent CJK characters → the documents whose
  field has it (a CJK token *is* a pair, so its lookup is exact);

and a trigram index over the vocabulary of words, which finds the words that
contain a query token (each candidate word is then checked with ``in``).
Tokens of any other shape — another tokenizer's — are scanned for, so any token
list gets the reference's answer.

A document gets a slot number that is never reused, so posting lists stay in
ascending order and removing a document is a bisect per posting.
"""

from __future__ import annotations

from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import regex

from server.documents import MemoryDocument
from server.ranking.reference import (
    BODY_WEIGHT,
    DESCRIPTION_WEIGHT,
    TITLE_WEIGHT,
    TYPE_KEYWORDS,
    ScoredDocument,
    rank_scan,
    type_boost,
)
from server.tokens import CJK_CLASS

if TYPE_CHECKING:
    from server.catalog import CatalogSnapshot

GRAM = 3  # the shortest non-CJK token, so every one of them has a trigram
FIELD_WEIGHTS = (TITLE_WEIGHT, DESCRIPTION_WEIGHT, BODY_WEIGHT)

# Field side: maximal runs, so a token can only ever be found inside one.
_WORD = regex.compile(rf"[[\p{{L}}\p{{M}}\p{{N}}]--[{CJK_CLASS}]]{{{GRAM},}}", flags=regex.VERSION1)
_CJK_RUN = regex.compile(rf"[{CJK_CLASS}]{{2,}}")
# Query side: the two token shapes the index can look up.
_WORD_TOKEN = _WORD
_PAIR_TOKEN = regex.compile(rf"[{CJK_CLASS}]{{2}}")

Slot = int
OrderKey = tuple[float, Any]  # (-mtime, tiebreak): the reference's order after the score
Postings = dict[str, list[Slot]]


def field_texts(doc: MemoryDocument) -> tuple[str, str, str]:
    """The three normalized fields SPEC §3 scores, in FIELD_WEIGHTS order."""
    return (doc.norm_title, doc.norm_description, doc.norm_body_window)


def field_terms(text: str) -> tuple[set[str], set[str]]:
    """The distinct words and CJK pairs of one normalized field."""
    words = set(_WORD.findall(text))
    pairs = {run[i : i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)}
    return words, pairs


def _grams(word: str) -> set[str]:
    return {word[i : i + GRAM] for i in range(len(word) - GRAM + 1)}


class DocumentIndex:
    """Words and CJK pairs of every document's fields → documents, kept incrementally.

    `tiebreak` (given with each document) orders documents of equal score and
    mtime, as input order does for the reference scan: the catalog passes its
    input-order key, an index built from a snapshot passes the position.
    """

    def __init__(self) -> None:
        self._docs: dict[Slot, MemoryDocument] = {}
        self._order_key: dict[Slot, OrderKey] = {}
        self._slot_of: dict[str, Slot] = {}
        self._next_slot = 0
        self._by_type: defaultdict[str, set[Slot]] = defaultdict(set)
        self._words: tuple[Postings, Postings, Postings] = ({}, {}, {})
        self._pairs: tuple[Postings, Postings, Postings] = ({}, {}, {})
        self._word_fields: dict[str, int] = {}  # in how many fields' postings a word is
        self._grams: dict[str, list[str]] = {}  # trigram → words that contain it
        # Slots by (-mtime, tiebreak): the order ties are broken in.
        self._recency_keys: list[OrderKey] = []
        self._recency_slots: list[Slot] = []
        self._order_stale = False
        self.version = 0  # bumped by every change

    @classmethod
    def of(cls, documents: Iterable[MemoryDocument]) -> DocumentIndex:
        """The index of a fixed sequence, ties broken by position in it."""
        index = cls()
        for position, doc in enumerate(documents):
            index.add(doc, position, ordered=False)
        index.restore_order()
        return index

    def __len__(self) -> int:
        return len(self._docs)

    def stats(self) -> dict[str, int]:
        """Sizes worth printing next to timings."""
        return {
            "documents": len(self._docs),
            "words": len(self._word_fields),
            "pairs": len({p for field in self._pairs for p in field}),
            "trigrams": len(self._grams),
            "postings": sum(len(v) for f in (*self._words, *self._pairs) for v in f.values()),
        }

    def by_recency(self) -> tuple[MemoryDocument, ...]:
        """Every document, mtime descending, then by tiebreak."""
        self.restore_order()
        return tuple(map(self._docs.__getitem__, self._recency_slots))

    # -- changing ------------------------------------------------------------

    def add(self, doc: MemoryDocument, tiebreak: Any, *, ordered: bool = True) -> None:
        """Index one document. The caller removes an older version of the same path first.

        `ordered=False` defers the recency order to one sort in `restore_order`
        (for bulk loads).
        """
        slot = self._next_slot
        self._next_slot += 1
        self._docs[slot] = doc
        key: OrderKey = (-doc.mtime_ms, tiebreak)
        self._order_key[slot] = key
        self._slot_of[doc.path] = slot
        self._by_type[doc.type].add(slot)
        for field, text in enumerate(field_texts(doc)):
            words, pairs = field_terms(text)
            postings = self._words[field]
            for word in words:
                slots = postings.get(word)
                if slots is None:
                    postings[word] = [slot]
                    self._word_added(word)
                else:
                    slots.append(slot)
            pair_postings = self._pairs[field]
            for pair in pairs:
                slots = pair_postings.get(pair)
                if slots is None:
                    pair_postings[pair] = [slot]
                else:
                    slots.append(slot)
        if ordered and not self._order_stale:
            at = bisect_left(self._recency_keys, key)
            self._recency_keys.insert(at, key)
            self._recency_slots.insert(at, slot)
        else:
            self._order_stale = True
        self.version += 1

    def remove(self, path: str) -> bool:
        return self.remove_many([path]) == 1

    def remove_many(self, paths: Iterable[str]) -> int:
        """Drop documents by path; returns how many were indexed."""
        gone: dict[Slot, MemoryDocument] = {}
        for path in paths:
            slot = self._slot_of.pop(path, None)
            if slot is not None:
                gone[slot] = self._docs.pop(slot)
        if not gone:
            return 0
        # Group the postings to edit by term, so that a term shared by many of
        # the removed documents has its list rewritten once.
        words: list[defaultdict[str, list[Slot]]] = [defaultdict(list) for _ in range(3)]
        pairs: list[defaultdict[str, list[Slot]]] = [defaultdict(list) for _ in range(3)]
        for slot, doc in gone.items():
            self._by_type[doc.type].discard(slot)
            key = self._order_key.pop(slot)
            if not self._order_stale:
                at = bisect_left(self._recency_keys, key)
                del self._recency_keys[at]
                del self._recency_slots[at]
            for field, text in enumerate(field_texts(doc)):
                field_words, field_pairs = field_terms(text)
                for word in field_words:
                    words[field][word].append(slot)
                for pair in field_pairs:
                    pairs[field][pair].append(slot)
        for field in range(3):
            for word, slots in words[field].items():
                if _unpost(self._words[field], word, slots):
                    self._word_removed(word)
            for pair, slots in pairs[field].items():
                _unpost(self._pairs[field], pair, slots)
        self.version += 1
        return len(gone)

    def restore_order(self) -> None:
        """Sort the recency order once after bulk `add(ordered=False)` calls."""
        if not self._order_stale:
            return
        ordered = sorted(self._order_key.items(), key=lambda item: item[1])
        self._recency_keys = [key for _, key in ordered]
        self._recency_slots = [slot for slot, _ in ordered]
        self._order_stale = False

    def _word_added(self, word: str) -> None:
        fields = self._word_fields.get(word, 0)
        if not fields:
            for gram in _grams(word):
                self._grams.setdefault(gram, []).append(word)
        self._word_fields[word] = fields + 1

    def _word_removed(self, word: str) -> None:
        fields = self._word_fields[word] - 1
        if fields:
            self._word_fields[word] = fields
            return
        del self._word_fields[word]
        for gram in _grams(word):
            holders = self._grams[gram]
            holders.remove(word)
            if not holders:
                del self._grams[gram]

    # -- ranking -------------------------------------------------------------

    def rank(
        self,
        tokens: Sequence[str],
        keep: Callable[[MemoryDocument], bool] = lambda _doc: True,
        limit: int | None = None,
    ) -> list[ScoredDocument]:
        """Exactly `rank_scan(documents, tokens, keep)[:limit]`, from the postings."""
        if not tokens or not self._docs or limit == 0:
            return []
        scores: Counter[Slot] = Counter()
        for token, times in Counter(
            tokens
        ).items():  # a repeated token counts again, as in the scan
            for slots, weight in zip(self._token_slots(token), FIELD_WEIGHTS, strict=True):
                if slots:
                    for _ in range(weight * times):
                        scores.update(slots)
        if not scores:
            return []
        for doc_type in TYPE_KEYWORDS:
            boost = type_boost(doc_type, tokens)
            if boost:
                boosted = scores.keys() & self._by_type[doc_type]
                for _ in range(boost):
                    scores.update(boosted)
        return self._best(scores, keep, len(scores) if limit is None else limit)

    def _token_slots(self, token: str) -> list[Collection[Slot]]:
        """Per field, the distinct slots whose field contains `token`."""
        if _WORD_TOKEN.fullmatch(token):
            words = self._words_containing(token)
            out: list[Collection[Slot]] = []
            for postings in self._words:
                lists = [postings[w] for w in words if w in postings]
                out.append(lists[0] if len(lists) == 1 else set().union(*lists))
            return out
        if _PAIR_TOKEN.fullmatch(token):
            return [postings.get(token, ()) for postings in self._pairs]
        docs = self._docs.items()
        return [
            [slot for slot, doc in docs if token in field_texts(doc)[field]] for field in range(3)
        ]

    def _words_containing(self, token: str) -> list[str]:
        holders = []
        for gram in _grams(token):
            words = self._grams.get(gram)
            if not words:
                return []
            holders.append(words)
        rarest = min(holders, key=len)
        if len(token) == GRAM:
            return rarest
        return [word for word in rarest if token in word]

    def _best(
        self, scores: Counter[Slot], keep: Callable[[MemoryDocument], bool], limit: int
    ) -> list[ScoredDocument]:
        """The first `limit` kept slots by score descending, then recency order.

        Only the score levels needed to fill `limit` are gathered; the lowest of
        them (often huge: every document with "the" in its body) is walked in
        recency order rather than sorted when that is cheaper.
        """
        levels = sorted(Counter(scores.values()).items(), reverse=True)
        docs, order_key = self._docs, self._order_key
        out: list[ScoredDocument] = []
        start = 0
        while start < len(levels) and len(out) < limit:
            need = limit - len(out)
            end, covered = start, 0
            while end < len(levels) and covered < need:
                covered += levels[end][1]
                end += 1
            top, bottom = levels[start][0], levels[end - 1][0]
            if top > bottom:  # fewer than `need` documents, all of them taken in order
                above = [slot for slot, score in scores.items() if bottom < score <= top]
                above.sort(key=lambda slot: (-scores[slot], order_key[slot]))
                out.extend(ScoredDocument(docs[s], scores[s]) for s in above if keep(docs[s]))
            for slot in self._level_in_order(scores, bottom, levels[end - 1][1], need):
                doc = docs[slot]
                if keep(doc):
                    out.append(ScoredDocument(doc, bottom))
                    if len(out) == limit:
                        break
            start = end
        return out

    def _level_in_order(
        self, scores: Counter[Slot], level: int, size: int, need: int
    ) -> Iterator[Slot]:
        """The slots scoring exactly `level` (there are `size`), in recency order."""
        self.restore_order()
        # Walking the recency order meets `need` of them after about
        # need * n / size steps; gathering them costs a pass over every score
        # and a sort.
        if need * len(self._docs) < size * (len(scores) + 4 * size):
            for slot in self._recency_slots:
                if scores.get(slot) == level:
                    yield slot
            return
        slots = [slot for slot, score in scores.items() if score == level]
        slots.sort(key=self._order_key.__getitem__)
        yield from slots


def _unpost(postings: Postings, term: str, slots: list[Slot]) -> bool:
    """Remove slots from a term's ascending list; True when the term is gone."""
    held = postings[term]
    if len(slots) <= 8:
        for slot in slots:
            at = bisect_left(held, slot)
            del held[at]
    else:
        dropped = set(slots)
        held[:] = [slot for slot in held if slot not in dropped]
    if held:
        return False
    del postings[term]
    return True


def index_ranker(
    snapshot: CatalogSnapshot,
    tokens: Sequence[str],
    keep: Callable[[MemoryDocument], bool],
    limit: int | None = None,
) -> list[ScoredDocument]:
    """SPEC §3's ranking through the snapshot's index: the reference's answer, faster."""
    index = snapshot.index()
    if index is None:  # the catalog changed after this snapshot was taken
        ranked = rank_scan(snapshot.documents, tokens, keep)
        return ranked if limit is None else ranked[:limit]
    return index.rank(tokens, keep, limit)
