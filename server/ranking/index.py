r"""Candidate lookup for SPEC §3's scorer: the reference's scores and order,
touching only the documents that share something with the query.

Why it is exact. A query token (server.tokens) is either a run of at least
three non-CJK letters/marks/numbers, or a bigram of two CJK characters. A
substring match of the first kind inside a field lies within one maximal run of
non-CJK ``[\p{L}\p{M}\p{N}]`` characters of that field; a match of the second
kind is two adjacent CJK characters of the field. So, per field (title,
description, body window), the index keeps postings (term → documents) for:

- words: every distinct maximal non-CJK letter/mark/number run of three or more
  characters;
- pairs: every distinct pair of adjacent CJK characters (a CJK token *is* a
  pair, so its lookup is exact);

and a trigram index over the vocabulary of words, which finds the words that
contain a query token (each candidate word is then checked with ``in``).
Tokens of any other shape — another tokenizer's — are scanned for, so any token
list gets the reference's answer.

Why it is fast. Documents are numbered by small reusable slots. A query turns
each (token, field) into a bitmap of slots (a Python int: OR-ing the bitmaps of
all words that contain "the" is a few C loops), adds the bitmaps with their
weights into bit-sliced counters, and then walks the score levels from the top,
so only the documents that can reach the first `limit` places are ever
materialized. Bitmaps of long posting lists are kept, and updated in place on
every change; short lists are turned into bits per query.
"""

from __future__ import annotations

import heapq
import re
from array import array
from bisect import bisect_left, insort
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import Any

import regex
from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.spec import (
    BODY_WEIGHT,
    DESCRIPTION_WEIGHT,
    TITLE_WEIGHT,
    TYPE_KEYWORDS,
    ScoredDocument,
    type_boost,
)
from memory_recall.server.tokens import ACRONYM_MARK, CJK_CLASS, normalize

GRAM = 3  # the shortest non-CJK token, so every one of them has a trigram
FIELD_WEIGHTS = (TITLE_WEIGHT, DESCRIPTION_WEIGHT, BODY_WEIGHT)
FIELDS = range(len(FIELD_WEIGHTS))
# A posting list keeps a ready bitmap (built on first use, then updated in
# place) when it is at least this long, and at least 1/DENSE_SHARE of all
# slots: building a bitmap costs ~0.1 µs per posting, keeping one costs a bit
# per slot, so the share bounds a bitmap to a few times its list's own size.
DENSE_POSTINGS = 32
DENSE_SHARE = 128

# Field side: maximal runs, so a token can only ever be found inside one.
_WORD = regex.compile(rf"[[\p{{L}}\p{{M}}\p{{N}}]--[{CJK_CLASS}]]{{{GRAM},}}", flags=regex.VERSION1)
# The same class for ASCII text, which normalizing has lowercased.
_ASCII_WORD = re.compile(rf"[a-z0-9]{{{GRAM},}}")
_CJK_PAIR = regex.compile(rf"[{CJK_CLASS}]{{2}}")
_CJK_RUN = regex.compile(rf"[{CJK_CLASS}]{{2,}}")
# Query side: the two token shapes the index can look up.
_WORD_TOKEN = _WORD
_PAIR_TOKEN = _CJK_PAIR
# Two-letter words written in capitals (CI, PR, UI, GP) are indexed too, as
# acronym terms: SPEC §3 tokens start at three characters and never look them
# up; the default ranker's tokens do (server.tokens.acronym_tokens).
_ACRONYM = regex.compile(r"(?<![\p{L}\p{M}\p{N}])\p{Lu}{2}(?![\p{L}\p{M}\p{N}])")
_NONZERO_BYTES = re.compile(rb"[^\x00]+")
_SEP = "\x00"  # joins saved strings: no path or memory holds one (NUL files are skipped)

Slot = int
OrderKey = tuple[float, Any]  # (-mtime, tiebreak): the reference's order after the score
Postings = dict[str, "array[int]"]  # term → ascending slots


def field_texts(doc: MemoryDocument) -> tuple[str, str, str]:
    """The three normalized fields SPEC §3 scores, in FIELD_WEIGHTS order."""
    return (doc.norm_title, doc.norm_description, doc.norm_body_window)


def field_terms(text: str) -> set[str]:
    """The distinct words (3+ characters) and CJK pairs (2) of one normalized field."""
    if text.isascii():  # most memories: no CJK, no marks, and a faster regex
        return set(_ASCII_WORD.findall(text))
    terms = set(_WORD.findall(text))
    # The pairs of each CJK run, sliced: a third cheaper than an overlapped findall.
    terms.update([run[i : i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)])
    return terms


def average_lengths(sums: Sequence[int], count: int) -> tuple[float, float, float]:
    """Mean length of each field (title, description, body window), at least 1."""
    title, description, body = (max(1.0, chars / max(1, count)) for chars in sums)
    return title, description, body


def raw_fields(doc: MemoryDocument) -> tuple[str, str, str]:
    """The three fields as written (not normalized), in FIELD_WEIGHTS order."""
    return (doc.title, doc.description, doc.body_window)


def acronyms(raw: str) -> list[str]:
    """The acronym terms of one field as written, repeats included: `CI` → `\x01ci`."""
    return [ACRONYM_MARK + normalize(word) for word in _ACRONYM.findall(raw)]


def is_acronym(term: str) -> bool:
    return term[:1] == ACRONYM_MARK


def _document_terms(doc: MemoryDocument) -> Iterator[tuple[int, str, set[str]]]:
    """(field, normalized text, distinct terms) of each field: words, pairs, acronyms."""
    for field, (text, raw) in enumerate(zip(field_texts(doc), raw_fields(doc), strict=True)):
        terms = field_terms(text)
        terms.update(acronyms(raw))
        yield field, text, terms


def _grams(word: str) -> set[str]:
    return {word[i : i + GRAM] for i in range(len(word) - GRAM + 1)}


def _split(joined: str, count: int) -> list[str]:
    return joined.split(_SEP) if count else []


def _batches(items: list[str], size: int = 20_000) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _is_word(term: str) -> bool:
    # A pair has two characters, a word at least three, an acronym the mark and two.
    return len(term) >= GRAM and not is_acronym(term)


_BITS = tuple(1 << i for i in range(8))


def bitmap_of(slots: Iterable[Slot], capacity: int = 0) -> int:
    """The set of slots as an int with those bits set (`capacity`: a slot bound, if known)."""
    buffer = bytearray((capacity + 7) >> 3)
    size = len(buffer)
    for slot in slots:
        byte = slot >> 3
        if byte >= size:
            buffer.extend(bytes(byte + 1 - size))
            size = len(buffer)
        buffer[byte] |= _BITS[slot & 7]
    return int.from_bytes(buffer, "little")


def slots_of(bitmap: int) -> list[Slot]:
    """The slots whose bits are set, ascending."""
    data = bitmap.to_bytes((bitmap.bit_length() + 7) // 8, "little")
    out = []
    for run in _NONZERO_BYTES.finditer(data):
        at = run.start()
        for byte in run.group():
            while byte:
                low = byte & -byte
                out.append(at * 8 + low.bit_length() - 1)
                byte ^= low
            at += 1
    return out


class _Counters:
    """Per-slot sums kept as bit-sliced counters: slice i holds bit i of every sum."""

    def __init__(self) -> None:
        self.slices: list[int] = []

    def add(self, bitmap: int, weight: int) -> None:
        """Add `weight` to the sum of every slot in the bitmap."""
        for shift in range(weight.bit_length()):
            if not weight >> shift & 1:
                continue
            while len(self.slices) < shift:  # the slices below stay as they are
                self.slices.append(0)
            carry, at = bitmap, shift
            while carry:
                if at == len(self.slices):
                    self.slices.append(carry)
                    break
                held = self.slices[at]
                self.slices[at] = held ^ carry
                carry &= held
                at += 1

    def levels(self, among: int) -> Iterator[tuple[int, int]]:
        """(sum, bitmap of the slots with it) for the slots of `among`, highest sum first."""
        stack = [(among, len(self.slices) - 1, 0)]
        while stack:
            bitmap, bit, value = stack.pop()
            if bit < 0:
                yield value, bitmap
                continue
            high = bitmap & self.slices[bit]
            low = bitmap ^ high
            if low:
                stack.append((low, bit - 1, value))
            if high:  # pushed last, popped first
                stack.append((high, bit - 1, value | 1 << bit))


class DocumentIndex:
    """Words and CJK pairs of every document's fields → documents, kept incrementally.

    `tiebreak` orders documents of equal score and mtime, as input order does
    for the reference scan: the catalog passes its input-order key; without
    one, documents keep the order they were added in (their slots), which is
    the snapshot's order for an index built by `of`.
    """

    def __init__(
        self,
        dense_postings: int = DENSE_POSTINGS,
        tiebreak: Callable[[MemoryDocument], Any] | None = None,
    ) -> None:
        self.dense_postings = dense_postings
        self.tiebreak = tiebreak
        self._docs: dict[Slot, MemoryDocument] = {}
        self._slot_of: dict[str, Slot] = {}
        self._free: list[Slot] = []  # a heap: the lowest free slot is reused first
        self._next_slot = 0
        self._type_bits: dict[str, int] = {}
        self._postings: tuple[Postings, Postings, Postings] = ({}, {}, {})
        self._dense: tuple[dict[str, int], ...] = ({}, {}, {})  # bitmaps of long postings
        self._word_fields: dict[str, int] = {}  # in how many fields' postings a word is
        self._grams: dict[str, list[str]] = {}  # trigram → words that contain it
        # Slots by (-mtime, tiebreak): the order ties are broken in. Keys are
        # computed when compared, not kept: 100,000 of them would cost 20 MB.
        self._recency_slots: list[Slot] = []
        self._field_chars = [0, 0, 0]  # total length of each field over all documents
        self.version = 0  # bumped by every change

    @classmethod
    def of(
        cls,
        documents: Iterable[MemoryDocument],
        tiebreak: Callable[[MemoryDocument], Any] | None = None,
    ) -> DocumentIndex:
        """The index of a fixed sequence, built in one pass (what `add` one by one builds).

        Ties are broken by `tiebreak`, else by position in the sequence.
        """
        index = cls(tiebreak=tiebreak)
        index._add_all(documents)
        return index

    def __len__(self) -> int:
        return len(self._docs)

    # -- persistence -----------------------------------------------------------
    # Saved as a sequence of modest parts, each a few flat columns: pickling a
    # million small objects would make the pickler's memo bigger than the
    # index, and one part at a time bounds what a save holds in memory.
    # Documents are saved by their owner (see `relink`); dense bitmaps are a
    # cache, rebuilt on demand.

    def parts(self) -> Iterator[tuple[str, Any]]:
        """The index as (kind, columns) parts; `from_parts` rebuilds it."""
        yield (
            "head",
            {
                "version": self.version,
                "dense_postings": self.dense_postings,
                "next_slot": self._next_slot,
                "free": array("I", self._free),
                "paths": _SEP.join(self._slot_of),
                "slots": array("I", self._slot_of.values()),
                "recency": array("I", self._recency_slots),
            },
        )
        for field, postings in enumerate(self._postings):
            for terms in _batches(list(postings)):
                flat = array("I")
                for term in terms:
                    flat.extend(postings[term])
                lengths = array("I", (len(postings[term]) for term in terms))
                yield "postings", (field, _SEP.join(terms), lengths, flat)
        for grams in _batches(list(self._grams)):
            members = [self._grams[gram] for gram in grams]
            lengths = array("I", map(len, members))
            words = _SEP.join(word for held in members for word in held)
            yield "grams", (_SEP.join(grams), lengths, words)

    @classmethod
    def from_parts(
        cls,
        parts: Iterable[tuple[str, Any]],
        tiebreak: Callable[[MemoryDocument], Any] | None = None,
    ) -> DocumentIndex:
        """The index `parts` described (saved with this tiebreak), without documents yet:
        `relink` attaches them."""
        index: DocumentIndex | None = None
        canonical: dict[str, str] = {}  # one string object per term, whichever field has it
        for kind, columns in parts:
            if kind == "head":
                index = cls(columns["dense_postings"], tiebreak)
                index.version = columns["version"]
                index._next_slot = columns["next_slot"]
                index._free = columns["free"].tolist()
                slots = columns["slots"]
                paths = _split(columns["paths"], len(slots))
                index._slot_of = dict(zip(paths, slots.tolist(), strict=True))
                index._recency_slots = columns["recency"].tolist()
                continue
            if index is None:
                raise ValueError("index parts without their head")
            if kind == "postings":
                field, joined, lengths, flat = columns
                postings, at = index._postings[field], 0
                for term, length in zip(_split(joined, len(lengths)), lengths, strict=True):
                    term = canonical.setdefault(term, term)
                    postings[term] = flat[at : at + length]
                    at += length
                    if _is_word(term):
                        index._word_fields[term] = index._word_fields.get(term, 0) + 1
            elif kind == "grams":
                joined, lengths, words = columns
                members = iter(_split(words, sum(lengths)))
                for gram, length in zip(_split(joined, len(lengths)), lengths, strict=True):
                    index._grams[gram] = [canonical[next(members)] for _ in range(length)]
            else:
                raise ValueError(f"unknown index part {kind!r}")
        if index is None:
            raise ValueError("no index parts")
        return index

    def relink(self, documents: Mapping[str, MemoryDocument]) -> None:
        """After `from_parts`: attach the documents, by path.

        KeyError or ValueError when the documents do not fit the index.
        """
        self._docs = {slot: documents[path] for path, slot in self._slot_of.items()}
        self._field_chars = [0, 0, 0]
        for doc in self._docs.values():
            for field, text in enumerate(field_texts(doc)):
                self._field_chars[field] += len(text)
        self._slot_of = {doc.path: slot for slot, doc in self._docs.items()}  # share the strings
        if len(self._docs) != len(documents) or len(self._recency_slots) != len(self._docs):
            raise ValueError("the index and its documents disagree")
        by_type: defaultdict[str, list[Slot]] = defaultdict(list)
        for slot, doc in self._docs.items():
            by_type[doc.type].append(slot)
        self._type_bits = {t: bitmap_of(slots, self._next_slot) for t, slots in by_type.items()}

    def stats(self) -> dict[str, int]:
        """Sizes worth printing next to timings."""
        return {
            "documents": len(self._docs),
            "words": len(self._word_fields),
            "pairs": len({t for field in self._postings for t in field if len(t) == 2}),
            "acronyms": len({t for field in self._postings for t in field if is_acronym(t)}),
            "trigrams": len(self._grams),
            "postings": sum(len(v) for field in self._postings for v in field.values()),
            "denseBitmaps": sum(len(field) for field in self._dense),
        }

    def paths(self) -> list[str]:
        return list(self._slot_of)

    def average_field_chars(self) -> tuple[float, float, float]:
        return average_lengths(self._field_chars, len(self._docs))

    def document(self, slot: Slot) -> MemoryDocument:
        return self._docs[slot]

    def by_recency(self) -> tuple[MemoryDocument, ...]:
        """Every document, mtime descending, then by tiebreak."""
        return tuple(map(self._docs.__getitem__, self._recency_slots))

    # -- changing ------------------------------------------------------------

    def _add_all(self, documents: Iterable[MemoryDocument]) -> None:
        """Index every document of an empty index, slots in sequence order.

        What `add` does per document, in bulk: posting lists grow by appends
        alone (slots only increase), each bitmap and the trigrams are built
        once at the end, and the recency order is sorted once.
        """
        if self._docs or self._free:
            raise ValueError("a bulk load needs an empty index")
        growing: tuple[defaultdict[str, array[int]], ...] = tuple(
            defaultdict(partial(array, "I")) for _ in FIELDS
        )
        by_type: defaultdict[str, list[Slot]] = defaultdict(list)
        for slot, doc in enumerate(documents):
            self._docs[slot] = doc
            self._slot_of[doc.path] = slot
            by_type[doc.type].append(slot)
            for field, text, terms in _document_terms(doc):
                self._field_chars[field] += len(text)
                lists = growing[field]
                for term in terms:
                    lists[term].append(slot)
        self._next_slot = len(self._docs)
        self._postings = (dict(growing[0]), dict(growing[1]), dict(growing[2]))
        self._type_bits = {t: bitmap_of(slots, self._next_slot) for t, slots in by_type.items()}
        for postings in self._postings:
            for term in postings:
                if _is_word(term):
                    self._word_added(term)
        self._recency_slots = sorted(self._docs, key=self.order_key)
        self.version += 1

    def add(self, doc: MemoryDocument) -> None:
        """Index one document. The caller removes an older version of the same path first."""
        slot = heapq.heappop(self._free) if self._free else self._next_slot
        self._next_slot = max(self._next_slot, slot + 1)
        bit = 1 << slot
        self._docs[slot] = doc
        self._slot_of[doc.path] = slot
        self._type_bits[doc.type] = self._type_bits.get(doc.type, 0) | bit
        for field, text, terms in _document_terms(doc):
            self._field_chars[field] += len(text)
            postings, dense = self._postings[field], self._dense[field]
            for term in terms:
                held = postings.get(term)
                if held is None:
                    postings[term] = array("I", (slot,))
                    if _is_word(term):
                        self._word_added(term)
                    continue
                if slot > held[-1]:
                    held.append(slot)
                else:
                    insort(held, slot)
                if dense and term in dense:
                    dense[term] |= bit
        at = bisect_left(self._recency_slots, self.order_key(slot), key=self.order_key)
        self._recency_slots.insert(at, slot)
        self.version += 1

    def remove(self, path: str) -> bool:
        return self.remove_many([path]) == 1

    def remove_many(self, paths: Iterable[str]) -> int:
        """Drop documents by path; returns how many were indexed."""
        slots = [self._slot_of.pop(path) for path in paths if path in self._slot_of]
        if not slots:
            return 0
        for slot in slots:  # while the documents are there to give their keys
            at = bisect_left(self._recency_slots, self.order_key(slot), key=self.order_key)
            if self._recency_slots[at] != slot:
                raise RuntimeError("the recency order lost a document")
            del self._recency_slots[at]
        gone = {slot: self._docs.pop(slot) for slot in slots}
        # Group the postings to edit by term, so that a term shared by many of
        # the removed documents has its list rewritten once.
        edits: list[defaultdict[str, list[Slot]]] = [defaultdict(list) for _ in FIELDS]
        for slot, doc in gone.items():
            bit = 1 << slot
            self._type_bits[doc.type] &= ~bit
            for field, text, terms in _document_terms(doc):
                self._field_chars[field] -= len(text)
                for term in terms:
                    edits[field][term].append(slot)
            heapq.heappush(self._free, slot)
        for field in FIELDS:
            postings, dense = self._postings[field], self._dense[field]
            for term, slots in edits[field].items():
                held = postings[term]
                if len(slots) <= 8:
                    for slot in slots:
                        del held[bisect_left(held, slot)]
                else:
                    dropped = set(slots)
                    held = postings[term] = array("I", (s for s in held if s not in dropped))
                if not held:
                    del postings[term]
                    dense.pop(term, None)
                    if _is_word(term):
                        self._word_removed(term)
                    continue
                bitmap = dense.get(term)
                if bitmap is not None:
                    if len(held) < self._dense_threshold() // 2:
                        del dense[term]
                    else:
                        dense[term] = bitmap & ~bitmap_of(slots)
        self.version += 1
        return len(gone)

    def order_key(self, slot: Slot) -> OrderKey:
        """(-mtime, tiebreak): the order documents of equal score come in."""
        doc = self._docs[slot]
        return (-doc.mtime_ms, slot if self.tiebreak is None else self.tiebreak(doc))

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
        counters = _Counters()
        matched = 0
        for token, times in Counter(tokens).items():  # a repeated token counts again
            for field, bitmap in enumerate(self.token_bits(token)):
                if bitmap:
                    counters.add(bitmap, FIELD_WEIGHTS[field] * times)
                    matched |= bitmap
        if not matched:
            return []
        for doc_type in TYPE_KEYWORDS:
            boost = type_boost(doc_type, tokens)
            if boost:
                counters.add(matched & self._type_bits.get(doc_type, 0), boost)
        return self._best(counters, matched, keep, len(self._docs) if limit is None else limit)

    def token_bits(self, token: str) -> list[int]:
        """Per field, the bitmap of the slots whose field contains `token`."""
        if _WORD_TOKEN.fullmatch(token):
            terms = self._words_containing(token)
        elif _PAIR_TOKEN.fullmatch(token) or is_acronym(token):
            terms = [token]
        else:
            return [
                bitmap_of(slot for slot, doc in self._docs.items() if token in field_texts(doc)[f])
                for f in FIELDS
            ]
        out = []
        threshold = self._dense_threshold()
        for field in FIELDS:
            postings, dense = self._postings[field], self._dense[field]
            bits = 0
            sparse = []
            for term in terms:
                bitmap = dense.get(term)
                if bitmap is None:
                    held = postings.get(term)
                    if held is None:
                        continue
                    if len(held) < threshold:
                        sparse.append(held)
                        continue
                    bitmap = dense[term] = bitmap_of(held, self._next_slot)
                bits |= bitmap
            if sparse:
                bits |= bitmap_of((slot for held in sparse for slot in held), self._next_slot)
            out.append(bits)
        return out

    def _dense_threshold(self) -> int:
        return max(self.dense_postings, self._next_slot // DENSE_SHARE)

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
        self,
        counters: _Counters,
        matched: int,
        keep: Callable[[MemoryDocument], bool],
        limit: int,
    ) -> list[ScoredDocument]:
        """The first `limit` kept slots by score descending, then recency order."""
        docs = self._docs
        out: list[ScoredDocument] = []
        for score, bitmap in counters.levels(matched):
            for slot in self.in_order(bitmap, limit - len(out)):
                doc = docs[slot]
                if keep(doc):
                    out.append(ScoredDocument(doc, score))
                    if len(out) == limit:
                        return out
        return out

    def in_order(self, bitmap: int, need: int) -> Iterator[Slot]:
        """The slots of a bitmap in recency order (by (-mtime, tiebreak))."""
        size = bitmap.bit_count()
        if need * len(self._docs) >= size * size:
            slots = slots_of(bitmap)
            slots.sort(key=self.order_key)
            yield from slots
            return
        # A big level of which only a few are needed (all the documents that
        # merely have "the" in their body): walking the recency order meets
        # them after about need * n / size steps, cheaper than sorting them.
        data = bitmap.to_bytes((bitmap.bit_length() + 7) // 8, "little")
        end = len(data)
        for slot in self._recency_slots:
            at = slot >> 3
            if at < end and data[at] >> (slot & 7) & 1:
                yield slot
