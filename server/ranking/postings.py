r"""Postings of every document's fields, kept incrementally: what both indexes are made of.

A `TermIndex` numbers documents by small reusable slots and keeps, per field,
postings (term → ascending slots). Which terms a field has is the subclass's
business (`document_terms`): the spec index (server.ranking.index) keeps words
and CJK pairs of title, description and body window; bm25f's index
(server.ranking.bm25f.index) keeps its own terms of the whole body, each
posting with an impact code. A field may be *weighted*: then each posting
carries a code (1–255) in its low byte (`slot << 8 | code`), so the postings
stay one flat array, in slot order.

Words (terms of three or more characters, `is_word`) are found by substring:
a trigram index over the vocabulary gives the words that contain a query token,
each then checked with `in`. Other terms (CJK pairs, marked terms) are looked up
as they are.

A query turns postings into bitmaps of slots (a Python int: OR-ing the bitmaps
of every word that contains "deploy" is a few C loops). Bitmaps of long posting
lists are cached and updated in place on every change (`warm` builds those of
the longest lists ahead, so that the first recalls after a start cost what the
rest do); short lists are turned into bits per query.

Why one module of ~1,000 lines: slots, postings, vocabulary, bitmap caches, their
persistence and the bulk builds (`of`, and `partial` / `of_partials` for a cold
start's worker processes) change together on every add and remove, and all keep
the same invariants (ascending slots, free slots, per-slot lengths and classes);
split, each part would have to know the others'.
"""

from __future__ import annotations

import heapq
import math
import re
import threading
from array import array
from bisect import bisect_left, insort
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence, Sized
from functools import partial
from itertools import accumulate, islice, repeat
from operator import or_
from typing import Any, ClassVar, NamedTuple

from memory_recall.server.documents import MemoryDocument

# Held while a document is added to or removed from any index, and while a search stores a
# cache it built (`_dense_bits`): a search may run in a worker thread beside the changes.
_CHANGING = threading.Lock()

GRAM = 3  # the shortest word, so every one of them has a trigram
CODE_BITS = 8  # a weighted posting: slot << CODE_BITS | code
CODE_MASK = (1 << CODE_BITS) - 1
# A posting list keeps a ready bitmap (built on first use, then updated in
# place) when it is at least this long, and at least 1/DENSE_SHARE of all
# slots: building a bitmap costs ~0.1 µs per posting, keeping one costs a bit
# per slot, so the share bounds a bitmap to a few times its list's own size.
DENSE_POSTINGS = 32
DENSE_SHARE = 128
# `warm` builds ahead the bitmaps of lists holding at least 1/WARM_SHARE of the
# slots: the lists a first recall would otherwise spend milliseconds on.
WARM_SHARE = 32
# A saved part is made and pickled in a few long calls into C, during which a snapshot
# written beside the requests (after `ready`) holds the interpreter: parts are kept to
# a quarter of a megabyte of postings (or of a trigram's words), and DENSE_PER_PART
# bitmaps.
PART_VALUES = 1 << 16
PLACES_PER_CALL = 1 << 12
DENSE_PER_PART = 8  # cached bitmaps per saved part: about a megabyte at 100,000 memories
WALK_OVER_SORT = 16  # in_order: a sort key costs this many recency-walk steps

_NONZERO_BYTES = re.compile(rb"[^\x00]+")
SEP = "\x00"  # joins saved strings: no path or memory holds one (NUL files are skipped)

Slot = int


class DocTerms(NamedTuple):
    """What an index keeps of one document: per field, its distinct terms (→ a code,
    in a weighted field); and the length of its weighted field (0 when not kept)."""

    fields: Sequence[Mapping[str, int]]
    length: int = 0


class Partial(NamedTuple):
    """The postings of a run of documents at slots `first_slot`, `first_slot + 1`, …:
    per field (joined terms, list lengths, flat values), and each document's length."""

    first_slot: int
    size: int  # how many documents
    fields: Sequence[tuple[str, array[int], array[int]]]
    lengths: array[int]


OrderKey = tuple[float, Any]  # (-mtime, tiebreak): the order after the score
Postings = dict[str, "array[int]"]  # term → ascending slots (or packed slot << 8 | code)
CodeBits = dict[int, int]  # code → bitmap of the slots posted with that code


LENGTH_STEPS = 4  # length classes per octave: a class's lengths are within 9 % of its own


def length_class(length: int) -> int:
    """The class of a length: 0 for none, else half-octave steps (1 is one character)."""
    return 0 if length <= 0 else 1 + round(LENGTH_STEPS * math.log2(length))


def class_length(group: int) -> float:
    """The length a class stands for."""
    return 0.0 if group <= 0 else float(2.0 ** ((group - 1) / LENGTH_STEPS))


def is_word(term: str) -> bool:
    """Terms found by substring through the vocabulary: three characters or more,
    not starting with a mark (marked terms, such as acronyms, are looked up whole)."""
    return len(term) >= GRAM and term[0] >= " "


_BITS = tuple(1 << i for i in range(8))
_APPEND = array.append
_SINK: deque[None] = deque(maxlen=0)
drain = _SINK.extend  # runs an iterator to its end, keeping nothing


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


def code_bitmaps(packed_lists: Iterable[array[int]], capacity: int) -> CodeBits:
    """Per code, the bitmap of the slots posted with it in any of the lists."""
    groups: defaultdict[int, list[Slot]] = defaultdict(list)
    for packed in packed_lists:
        for value in packed:
            groups[value & CODE_MASK].append(value >> CODE_BITS)
    return {code: bitmap_of(slots, capacity) for code, slots in groups.items()}


def grams(word: str) -> set[str]:
    return {word[i : i + GRAM] for i in range(len(word) - GRAM + 1)}


def split_joined(joined: str, count: int) -> list[str]:
    return joined.split(SEP) if count else []


def _weighed_batches(held: Mapping[str, Sized], most: int = PART_VALUES) -> Iterator[list[str]]:
    """The keys of `held` in order, in runs whose values hold about `most` items in all
    (at least one key each), of at most 20,000 keys."""
    batch: list[str] = []
    size = 0
    for key, values in held.items():  # (a change meanwhile stops it: RuntimeError)
        if batch and (size + len(values) > most or len(batch) >= 20_000):
            yield batch
            batch, size = [], 0
        batch.append(key)
        size += len(values)
    if batch:
        yield batch


def _batches(items: list[str], size: int = 20_000) -> Iterator[list[str]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class TermIndex:
    """Terms of every document's fields → documents, kept incrementally.

    `tiebreak` orders documents of equal score and mtime, as input order does
    for a scan: the catalog passes its input-order key; without one, documents
    keep the order they were added in (their slots), which is the snapshot's
    order for an index built by `of`. Subclasses say what the fields are.
    """

    KIND: ClassVar[str] = "terms"  # names the index in snapshots
    WEIGHTED: ClassVar[tuple[bool, ...]] = ()  # per field: postings carry a code
    # Keep each document's length (`DocTerms.length`), by class (see `length_class`).
    LENGTHS: ClassVar[bool] = False

    def __init__(
        self,
        dense_postings: int = DENSE_POSTINGS,
        tiebreak: Callable[[MemoryDocument], Any] | None = None,
    ) -> None:
        fields = range(len(self.WEIGHTED))
        self.dense_postings = dense_postings
        self.tiebreak = tiebreak
        self._docs: dict[Slot, MemoryDocument] = {}
        self._slot_of: dict[str, Slot] = {}
        self._free: list[Slot] = []  # a heap: the lowest free slot is reused first
        self._next_slot = 0
        self._type_bits: dict[str, int] = {}
        self._postings: tuple[Postings, ...] = tuple({} for _ in fields)
        # Bitmaps of long postings: term → bitmap, or term → its counts as bit-sliced
        # counters (weighted).
        self._dense: tuple[dict[str, Any], ...] = tuple({} for _ in fields)
        self._word_fields: dict[str, int] = {}  # in how many fields' postings a word is
        self._grams: dict[str, list[str]] = {}  # trigram → words that contain it
        # Slots by (-mtime, tiebreak): the order ties are broken in. Keys are
        # computed when compared, not kept: 100,000 of them would cost 20 MB.
        self._recency_slots: list[Slot] = []
        # Their documents, in the same order: a snapshot copies this list (a tuple of a
        # list is a memory copy) where it looked 100,000 slots up after every change.
        self._recency_docs: list[MemoryDocument] = []
        self._lengths = array("I")  # per slot (LENGTHS): its document's length
        self._classes = bytearray()  # … and its length class
        self._length_bits: dict[int, int] = {}  # length class → slots
        self._total_length = 0
        self.version = 0  # bumped by every change

    # -- what a subclass says ---------------------------------------------------

    def document_terms(self, doc: MemoryDocument) -> DocTerms:
        """What the index keeps of a document (its terms per field, its length)."""
        raise NotImplementedError

    @classmethod
    def of(
        cls,
        documents: Iterable[MemoryDocument],
        tiebreak: Callable[[MemoryDocument], Any] | None = None,
    ) -> TermIndex:
        """The index of a fixed sequence, built in one pass (what `add` one by one builds).

        Ties are broken by `tiebreak`, else by position in the sequence.
        """
        index = cls(tiebreak=tiebreak)
        index._add_all(documents)
        return index

    def __len__(self) -> int:
        return len(self._docs)

    @property
    def capacity(self) -> int:
        """One more than the highest slot ever used: every bitmap fits below it."""
        return self._next_slot

    # -- persistence -----------------------------------------------------------
    # Saved as a sequence of modest parts, each a few flat columns: pickling a
    # million small objects would make the pickler's memo bigger than the
    # index, and one part at a time bounds what a save holds in memory.
    # Documents are saved by their owner (see `relink`). Dense bitmaps are a
    # cache, but saved too: rebuilding those of a large index costs seconds, and
    # loading them is a copy of their bytes.

    def parts(self) -> Iterator[tuple[str, Any]]:
        """The index as (kind, columns) parts; `from_parts` rebuilds it."""
        yield (
            "head",
            {
                "kind": self.KIND,
                "version": self.version,
                "dense_postings": self.dense_postings,
                "next_slot": self._next_slot,
                "free": array("I", self._free),
                "paths": SEP.join(self._slot_of),
                "slots": array("I", self._slot_of.values()),
                "recency": array("I", self._recency_slots),
                "lengths": self._lengths,
                # What `_lengths_of_slots` makes of the lengths, kept: a loop over
                # every slot that a restart would otherwise repeat.
                "classes": bytes(self._classes),
                "length_bits": self._length_bits,
                "total_length": self._total_length,
            },
        )
        for field, postings in enumerate(self._postings):
            for terms in _weighed_batches(postings):
                lists = list(map(postings.__getitem__, terms))
                flat = array("I")
                flat.frombytes(b"".join(lists))  # one copy in C, not an extend per term
                lengths = array("I", map(len, lists))
                yield "postings", (field, SEP.join(terms), lengths, flat)
        # A gram's words by their place among the terms as the postings parts above
        # list them (first field first): loading looks each up by place, without
        # making and hashing a string per member (there are millions).
        places: dict[str, int] = {}
        for postings in self._postings:
            for term in postings:
                places.setdefault(term, len(places))
        for batch in _weighed_batches(self._grams):
            members = [self._grams[gram] for gram in batch]
            lengths = array("I", map(len, members))
            words = array("I")
            for held in members:  # a few thousand places per call into C, not a million
                for start in range(0, len(held), PLACES_PER_CALL):
                    words.extend(map(places.__getitem__, held[start : start + PLACES_PER_CALL]))
            yield "grams", (SEP.join(batch), lengths, words)
        # In how many fields each word is, by place as the grams' words: counting them again
        # from the terms was a tenth of a warm start at 100,000 memories.
        counted = list(self._word_fields)
        for start in range(0, len(counted), PART_VALUES):
            batch = counted[start : start + PART_VALUES]
            counts = bytes(map(self._word_fields.__getitem__, batch))
            yield "words", (array("I", map(places.__getitem__, batch)), counts)
        for field, dense in enumerate(self._dense):
            weighted = self.WEIGHTED[field]
            for terms in _batches(list(dense), DENSE_PER_PART):
                cached = [dense[term].slices if weighted else dense[term] for term in terms]
                yield "dense", (field, SEP.join(terms), cached)

    @classmethod
    def from_parts(
        cls,
        parts: Iterable[tuple[str, Any]],
        tiebreak: Callable[[MemoryDocument], Any] | None = None,
    ) -> TermIndex:
        """The index `parts` described (saved with this tiebreak), without documents yet:
        `relink` attaches them."""
        index: TermIndex | None = None
        canonical: dict[str, str] = {}  # one string object per term, whichever field has it
        terms_by_place: list[str] = []  # canonical's terms, in order (once postings are read)
        for kind, columns in parts:
            if kind == "head":
                if columns.get("kind") != cls.KIND:
                    raise ValueError(f"a {columns.get('kind')!r} index, expected {cls.KIND!r}")
                index = cls(columns["dense_postings"], tiebreak)
                index.version = columns["version"]
                index._next_slot = columns["next_slot"]
                index._free = columns["free"].tolist()
                slots = columns["slots"]
                paths = split_joined(columns["paths"], len(slots))
                index._slot_of = dict(zip(paths, slots.tolist(), strict=True))
                index._recency_slots = columns["recency"].tolist()
                index._lengths = columns["lengths"]
                index._classes = bytearray(columns["classes"])
                index._length_bits = columns["length_bits"]
                index._total_length = columns["total_length"]
                continue
            if index is None:
                raise ValueError("index parts without their head")
            if kind == "postings":
                field, joined, lengths, flat = columns
                terms = split_joined(joined, len(lengths))
                terms = list(map(canonical.setdefault, terms, terms))
                ends = list(accumulate(lengths))
                lists = map(flat.__getitem__, map(slice, [0, *ends], ends))
                index._postings[field].update(zip(terms, lists, strict=True))
            elif kind == "dense":
                field, joined, cached = columns
                dense = index._dense[field]
                for term, value in zip(split_joined(joined, len(cached)), cached, strict=True):
                    if index.WEIGHTED[field]:
                        counts = Counters()
                        counts.slices = value
                        value = counts
                    dense[canonical.get(term, term)] = value
            elif kind == "words":
                places, counts = columns
                if len(places) != len(counts):
                    raise ValueError("index words and their counts disagree")
                terms = terms_by_place or (terms_by_place := list(canonical))
                index._word_fields.update(zip(map(terms.__getitem__, places), counts, strict=True))
            elif kind == "grams":
                joined, lengths, words = columns
                if len(words) != sum(lengths):
                    raise ValueError("index grams and their lengths disagree")
                terms = terms_by_place or (terms_by_place := list(canonical))
                members = map(terms.__getitem__, words)
                for gram, length in zip(split_joined(joined, len(lengths)), lengths, strict=True):
                    index._grams[gram] = list(islice(members, length))
            else:
                raise ValueError(f"unknown index part {kind!r}")
        if index is None:
            raise ValueError("no index parts")
        index._drop_stale_caches()
        return index

    def _drop_stale_caches(self) -> None:
        """Drop every cached bitmap that holds a slot no document holds (a snapshot written
        by a version that could keep one: `_dense_bits`); it is built again from its list
        when next asked."""
        live = bitmap_of(self._slot_of.values(), self._next_slot)
        for field, dense in enumerate(self._dense):
            for term, cached in list(dense.items()):
                bits = 0
                for bitmap in cached.slices if self.WEIGHTED[field] else (cached,):
                    bits |= bitmap
                if bits & ~live:
                    del dense[term]

    def relink(self, documents: Mapping[str, MemoryDocument]) -> None:
        """After `from_parts`: attach the documents, by path.

        KeyError or ValueError when the documents do not fit the index.
        """
        self._docs = {slot: documents[path] for path, slot in self._slot_of.items()}
        self._slot_of = {doc.path: slot for slot, doc in self._docs.items()}  # share the strings
        if len(self._docs) != len(documents) or len(self._recency_slots) != len(self._docs):
            raise ValueError("the index and its documents disagree")
        self._recency_docs = list(map(self._docs.__getitem__, self._recency_slots))
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
            "trigrams": len(self._grams),
            "postings": sum(len(v) for field in self._postings for v in field.values()),
            "denseBitmaps": sum(len(field) for field in self._dense),
        }

    def paths(self) -> list[str]:
        return list(self._slot_of)

    def document(self, slot: Slot) -> MemoryDocument:
        return self._docs[slot]

    def slot(self, path: str) -> Slot | None:
        return self._slot_of.get(path)

    def by_recency(self) -> tuple[MemoryDocument, ...]:
        """Every document, mtime descending, then by tiebreak."""
        return tuple(self._recency_docs)

    # -- changing ------------------------------------------------------------

    def _add_all(self, documents: Iterable[MemoryDocument]) -> None:
        """Index every document of an empty index, slots in sequence order.

        What `add` does per document, in bulk: posting lists grow by appends
        alone (slots only increase), each bitmap and the trigrams are built
        once at the end, and the recency order is sorted once.
        """
        if self._docs or self._free:
            raise ValueError("a bulk load needs an empty index")
        growing = self._growing()
        for slot, doc in enumerate(documents):
            self._docs[slot] = doc
            self._slot_of[doc.path] = slot
            kept = self.document_terms(doc)
            if self.LENGTHS:
                self._lengths.append(kept.length)
            self._post(growing, kept, slot)
        self._finish(tuple(dict(lists) for lists in growing))

    def _growing(self) -> tuple[defaultdict[str, array[int]], ...]:
        return tuple(defaultdict(partial(array, "I")) for _ in self.WEIGHTED)

    def _post(
        self, growing: tuple[defaultdict[str, array[int]], ...], kept: DocTerms, slot: Slot
    ) -> None:
        """Append one document's postings (its slot above every slot posted so far)."""
        for field, terms in enumerate(kept.fields):
            # lists[term].append(value) for every term, looped in C: this is
            # the bulk of a cold start (millions of postings).
            arrays = map(growing[field].__getitem__, terms)
            values: Iterable[int]
            if self.WEIGHTED[field]:
                values = map(or_, repeat(slot << CODE_BITS), terms.values())
            else:
                values = repeat(slot)
            drain(map(_APPEND, arrays, values))

    def _finish(self, postings: tuple[Postings, ...]) -> None:
        """After a bulk load of `_docs` (and `_lengths`): the postings given, and every
        bitmap, the trigrams and the recency order built once."""
        self._next_slot = max(self._docs, default=-1) + 1
        self._postings = postings
        by_type: defaultdict[str, list[Slot]] = defaultdict(list)
        for slot, doc in self._docs.items():
            by_type[doc.type].append(slot)
        self._type_bits = {t: bitmap_of(slots, self._next_slot) for t, slots in by_type.items()}
        if self.LENGTHS:
            self._lengths_of_slots(self._docs)
        for field in self._postings:
            for term in field:
                if is_word(term):
                    self._word_added(term)
        self._recency_slots = sorted(self._docs, key=self.order_key)
        self._recency_docs = list(map(self._docs.__getitem__, self._recency_slots))
        self.version += 1

    # -- built in parts (a cold start's worker processes) -------------------------

    @classmethod
    def partial(cls, documents: Sequence[MemoryDocument], first_slot: Slot) -> Partial:
        """What `of` would post for `documents` at slots `first_slot`, `first_slot + 1`, …,
        as flat columns (cheap to send between processes); `of_partials` merges them."""
        index = cls()
        growing = index._growing()
        lengths = array("I")
        for offset, doc in enumerate(documents):
            kept = index.document_terms(doc)
            lengths.append(kept.length)
            index._post(growing, kept, first_slot + offset)
        fields = []
        for lists in growing:
            flat = array("I")
            drain(map(flat.extend, lists.values()))
            fields.append((SEP.join(lists), array("I", map(len, lists.values())), flat))
        return Partial(first_slot, len(documents), fields, lengths)

    @classmethod
    def of_partials(
        cls,
        runs: Iterable[tuple[Sequence[MemoryDocument], Partial]],
        tiebreak: Callable[[MemoryDocument], Any] | None = None,
    ) -> TermIndex:
        """The index of runs of documents, each posted by `partial` at its own slots.

        The runs' slots must not overlap; slots between them are left free (a
        worker that could not parse every file of its run posts fewer documents
        than it was given room for). Ties are broken by `tiebreak`, else by slot.
        """
        index = cls(tiebreak=tiebreak)
        postings: tuple[Postings, ...] = tuple({} for _ in cls.WEIGHTED)
        end = 0
        for docs, part in sorted(runs, key=lambda run: run[1].first_slot):
            if part.first_slot < end or part.size != len(docs):
                raise ValueError("index runs overlap or do not match their documents")
            index._free.extend(range(end, part.first_slot))
            if cls.LENGTHS:
                index._lengths.extend(repeat(0, part.first_slot - end))
                index._lengths.extend(part.lengths)
            for slot, doc in enumerate(docs, part.first_slot):
                index._docs[slot] = doc
                index._slot_of[doc.path] = slot
            for field, (joined, lengths, flat) in enumerate(part.fields):
                held = postings[field]
                ends = list(accumulate(lengths))
                lists = map(flat.__getitem__, map(slice, [0, *ends], ends))
                for term, values in zip(split_joined(joined, len(lengths)), lists, strict=True):
                    have = held.get(term)
                    if have is None:
                        held[term] = values
                    else:
                        have.extend(values)
            end = part.first_slot + part.size
        index._finish(postings)
        index._free = [slot for slot in index._free if slot < index._next_slot]  # ascending: a heap
        return index

    def add(self, doc: MemoryDocument) -> None:
        """Index one document. The caller removes an older version of the same path first."""
        with _CHANGING:
            self._add(doc)

    def _add(self, doc: MemoryDocument) -> None:
        slot = heapq.heappop(self._free) if self._free else self._next_slot
        self._next_slot = max(self._next_slot, slot + 1)
        bit = 1 << slot
        self._docs[slot] = doc
        self._slot_of[doc.path] = slot
        self._type_bits[doc.type] = self._type_bits.get(doc.type, 0) | bit
        kept = self.document_terms(doc)
        if self.LENGTHS:
            while len(self._lengths) <= slot:
                self._lengths.append(0)
            self._lengths[slot] = kept.length
            self._length_added(slot, kept.length)
        for field, terms in enumerate(kept.fields):
            postings, dense = self._postings[field], self._dense[field]
            weighted = self.WEIGHTED[field]
            for term, code in terms.items():
                value = slot << CODE_BITS | code if weighted else slot
                held = postings.get(term)
                if held is None:
                    postings[term] = array("I", (value,))
                    if is_word(term):
                        self._word_added(term)
                    continue
                if value > held[-1]:
                    held.append(value)
                else:
                    insort(held, value)
                if dense and term in dense:
                    if weighted:
                        dense[term].put(bit, code)  # a new slot: its count was 0
                    else:
                        dense[term] |= bit
        at = bisect_left(self._recency_slots, self.order_key(slot), key=self.order_key)
        self._recency_slots.insert(at, slot)
        self._recency_docs.insert(at, doc)
        self.version += 1

    def remove(self, path: str) -> bool:
        return self.remove_many([path]) == 1

    def remove_many(self, paths: Iterable[str]) -> int:
        """Drop documents by path; returns how many were indexed."""
        with _CHANGING:
            return self._remove_many(paths)

    def _remove_many(self, paths: Iterable[str]) -> int:
        slots = [self._slot_of.pop(path) for path in paths if path in self._slot_of]
        if not slots:
            return 0
        for slot in slots:  # while the documents are there to give their keys
            at = bisect_left(self._recency_slots, self.order_key(slot), key=self.order_key)
            if self._recency_slots[at] != slot:
                raise RuntimeError("the recency order lost a document")
            del self._recency_slots[at]
            del self._recency_docs[at]
        gone = {slot: self._docs.pop(slot) for slot in slots}
        # Group the postings to edit by term, so that a term shared by many of
        # the removed documents has its list rewritten once.
        edits: list[defaultdict[str, list[int]]] = [defaultdict(list) for _ in self.WEIGHTED]
        for slot, doc in gone.items():
            self._type_bits[doc.type] &= ~(1 << slot)
            kept = self.document_terms(doc)
            if self.LENGTHS:
                self._length_removed(slot, self._lengths[slot])
                self._lengths[slot] = 0
            for field, terms in enumerate(kept.fields):
                weighted = self.WEIGHTED[field]
                for term, code in terms.items():
                    edits[field][term].append(slot << CODE_BITS | code if weighted else slot)
            heapq.heappush(self._free, slot)
        for field, weighted in enumerate(self.WEIGHTED):
            postings, dense = self._postings[field], self._dense[field]
            for term, values in edits[field].items():
                held = postings[term]
                if len(values) <= 8:
                    for value in values:
                        del held[bisect_left(held, value)]
                else:
                    dropped = set(values)
                    held = postings[term] = array("I", (v for v in held if v not in dropped))
                if not held:
                    del postings[term]
                    dense.pop(term, None)
                    if is_word(term):
                        self._word_removed(term)
                    continue
                cached = dense.get(term)
                if cached is None:
                    continue
                if len(held) < self._dense_threshold() // 2:
                    del dense[term]
                elif weighted:
                    cached.clear(bitmap_of(value >> CODE_BITS for value in values))
                else:
                    dense[term] = cached & ~bitmap_of(values)
        self.version += 1
        return len(gone)

    def order_key(self, slot: Slot) -> OrderKey:
        """(-mtime, tiebreak): the order documents of equal score come in."""
        doc = self._docs[slot]
        return (-doc.mtime_ms, slot if self.tiebreak is None else self.tiebreak(doc))

    def _lengths_of_slots(self, slots: Iterable[Slot]) -> None:
        """`_length_added` for many slots whose lengths are in `_lengths` already: each
        class's bitmap built once (one bit at a time costs a copy of the bitmap per slot)."""
        by_class: defaultdict[int, list[Slot]] = defaultdict(list)
        classes = self._classes
        for slot in slots:
            length = self._lengths[slot]
            group = length_class(length)
            if len(classes) <= slot:
                classes.extend(bytes(slot + 1 - len(classes)))
            classes[slot] = group
            by_class[group].append(slot)
            self._total_length += length
        for group, members in by_class.items():
            self._length_bits[group] = self._length_bits.get(group, 0) | bitmap_of(
                members, self._next_slot
            )

    def _length_added(self, slot: Slot, length: int) -> None:
        group = length_class(length)
        if len(self._classes) <= slot:
            self._classes.extend(bytes(slot + 1 - len(self._classes)))
        self._classes[slot] = group
        self._length_bits[group] = self._length_bits.get(group, 0) | 1 << slot
        self._total_length += length

    def _length_removed(self, slot: Slot, length: int) -> None:
        group = length_class(length)
        left = self._length_bits[group] & ~(1 << slot)
        if left:
            self._length_bits[group] = left
        else:
            del self._length_bits[group]
        self._total_length -= length

    def length_classes(self) -> dict[int, int]:
        """Length class → the slots whose document's length is in it."""
        return self._length_bits

    def length_of(self, slot: Slot) -> int:
        return self._lengths[slot]

    def length_class_of(self, slot: Slot) -> int:
        return self._classes[slot]

    def average_length(self) -> float:
        """The mean length of the documents' weighted field (at least 1)."""
        return max(1.0, self._total_length / max(1, len(self._docs)))

    def _word_added(self, word: str) -> None:
        fields = self._word_fields.get(word, 0)
        if not fields:
            for gram in grams(word):
                self._grams.setdefault(gram, []).append(word)
        self._word_fields[word] = fields + 1

    def _word_removed(self, word: str) -> None:
        fields = self._word_fields[word] - 1
        if fields:
            self._word_fields[word] = fields
            return
        del self._word_fields[word]
        for gram in grams(word):
            holders = self._grams[gram]
            holders.remove(word)
            if not holders:
                del self._grams[gram]

    def warm(self, share: int = WARM_SHARE) -> int:
        """Build the bitmaps of every posting list holding 1/`share` of the slots or more;
        returns how many were built."""
        least = max(self._dense_threshold(), self._next_slot // share)
        built = 0
        for field in range(len(self.WEIGHTED)):
            postings, dense = self._postings[field], self._dense[field]
            for term, held in postings.items():
                if len(held) >= least and term not in dense:
                    self._dense_bits(field, term, held)
                    built += 1
        return built

    # -- reading -------------------------------------------------------------

    def words_containing(self, token: str) -> list[str]:
        """The vocabulary's words that contain `token` (of three characters or more)."""
        holders = []
        for gram in grams(token):
            words = self._grams.get(gram)
            if not words:
                return []
            holders.append(words)
        if not holders:
            return []
        rarest = min(holders, key=len)
        if len(token) == GRAM:
            return rarest
        return [word for word in rarest if token in word]

    def document_frequency(self, field: int, term: str) -> int:
        held = self._postings[field].get(term)
        return 0 if held is None else len(held)

    def field_bits(self, field: int, terms: Iterable[str]) -> int:
        """The slots whose (unweighted) field holds any of the terms."""
        cached, sparse = self._cached_and_sparse(field, terms)
        bits = 0
        for bitmap in cached:
            bits |= bitmap
        if sparse:
            bits |= bitmap_of((slot for held in sparse for slot in held), self._next_slot)
        return bits

    def field_postings(self, field: int, terms: Iterable[str]) -> int:
        """How many postings the terms have in a field, together."""
        postings = self._postings[field]
        return sum(len(postings.get(term, ())) for term in terms)

    def field_any(self, field: int, terms: Iterable[str]) -> int:
        """The slots whose (weighted) field holds any of the terms."""
        cached, sparse = self._cached_and_sparse(field, terms)
        bits = 0
        for counts in cached:
            for bitmap in counts.slices:
                bits |= bitmap
        if sparse:
            slots = (value >> CODE_BITS for held in sparse for value in held)
            bits |= bitmap_of(slots, self._next_slot)
        return bits

    def _cached_and_sparse(
        self, field: int, terms: Iterable[str]
    ) -> tuple[list[Any], list[array[int]]]:
        """The terms' cached forms (`_dense_bits`, made here for a long list that has
        none yet) and the posting lists of the short ones."""
        postings, dense = self._postings[field], self._dense[field]
        threshold = self._dense_threshold()
        cached: list[Any] = []
        sparse: list[array[int]] = []
        for term in terms:
            found = dense.get(term)
            if found is None:
                held = postings.get(term)
                if held is None:
                    continue
                if len(held) < threshold:
                    sparse.append(held)
                    continue
                found = self._dense_bits(field, term, held)
            cached.append(found)
        return cached, sparse

    def field_counts(self, field: int, terms: Iterable[str]) -> dict[Slot, int]:
        """Slot → the sum of the terms' codes (counts) in a weighted field: for terms
        with few postings (see `field_sums` for many)."""
        counts: dict[Slot, int] = {}
        get = counts.get
        for term in terms:
            for value in self._postings[field].get(term, ()):
                slot = value >> CODE_BITS
                counts[slot] = get(slot, 0) + (value & CODE_MASK)
        return counts

    def field_sums(self, field: int, terms: Iterable[str]) -> Counters:
        """Per slot, the sum of the terms' codes (counts) in a weighted field, as counters."""
        sums = Counters()
        for term in terms:
            held = self._postings[field].get(term)
            if held is None:
                continue
            counts = self._dense[field].get(term)
            if counts is None and len(held) >= self._dense_threshold():
                counts = self._dense_bits(field, term, held)
            if counts is not None:
                sums.add_counters(counts)
                continue
            first = not sums.slices
            for code, bitmap in code_bitmaps([held], self._next_slot).items():
                if first:  # one term's codes partition its slots: no carries
                    sums.put(bitmap, code)
                else:
                    sums.add(bitmap, code)
        return sums

    def _dense_bits(self, field: int, term: str, held: array[int]) -> Any:
        """The cached form of a long posting list: a bitmap, or (weighted) the counts as
        bit-sliced counters (one bitmap per bit of the count: a few, not one per count).

        A search in a worker thread (a remember's candidates) may build it while the event
        loop changes the index: it is kept only if no change began since its list was
        read. Kept regardless, a removed document's slot stayed in it for good — written
        into the snapshot, read back by every later daemon: a term held by more slots than
        there are documents had a negative IDF, and every remember failed."""
        before = self.version
        held = self._postings[field].get(term, held)
        cached: Any
        if self.WEIGHTED[field]:
            cached = Counters()
            for code, bitmap in code_bitmaps([held], self._next_slot).items():
                cached.put(bitmap, code)
        else:
            cached = bitmap_of(held, self._next_slot)
        with _CHANGING:
            if self.version == before:
                self._dense[field][term] = cached
        return cached

    def _dense_threshold(self) -> int:
        return max(self.dense_postings, self._next_slot // DENSE_SHARE)

    def in_order(self, bitmap: int, need: int) -> Iterator[Slot]:
        """The slots of a bitmap in recency order (by (-mtime, tiebreak))."""
        size = bitmap.bit_count()
        # Sorting costs a key per slot (~1 µs), walking the recency order a bit
        # test per step (~0.05 µs) and about need * n / size steps.
        if need * len(self._docs) >= WALK_OVER_SORT * size * size:
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


class Counters:
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

    def put(self, bitmap: int, value: int) -> None:
        """Set the sum of every slot in the bitmap to `value`: only for slots whose
        sum is still 0 (a partition written one part at a time), without carries."""
        slices = self.slices
        while len(slices) < value.bit_length():
            slices.append(0)
        while value:
            low = value & -value
            slices[low.bit_length() - 1] |= bitmap
            value ^= low

    def clear(self, bitmap: int) -> None:
        """Set the sum of every slot in the bitmap back to 0."""
        keep = ~bitmap
        self.slices = [held & keep for held in self.slices]

    def add_counters(self, other: Counters) -> None:
        """Add another counter's sums, slot by slot (a ripple-carry adder over slices)."""
        mine, theirs = self.slices, other.slices
        carry = 0
        for at, held in enumerate(theirs):
            if at == len(mine):
                mine.append(0)
            here = mine[at]
            total = here ^ held
            mine[at] = total ^ carry
            carry = (here & held) | (carry & total)
        at = len(theirs)
        while carry:
            if at == len(mine):
                mine.append(carry)
                break
            here = mine[at]
            mine[at] = here ^ carry
            carry &= here
            at += 1

    def at_least(self, value: int, among: int) -> int:
        """The slots of `among` whose sum is at least `value`."""
        if value <= 0:
            return among
        if value.bit_length() > len(self.slices):
            return 0
        greater, equal = 0, among
        for bit in range(len(self.slices) - 1, -1, -1):
            held = equal & self.slices[bit]
            if value >> bit & 1:
                equal = held
            else:
                greater |= held
                equal ^= held
            if not equal:
                break
        return greater | equal

    def kth(self, among: int, k: int) -> int:
        """The k-th highest sum among the slots of `among` (0 when fewer than k)."""
        if among.bit_count() < k or k <= 0:
            return 0
        value, above, candidates = 0, 0, among
        for bit in range(len(self.slices) - 1, -1, -1):
            high = candidates & self.slices[bit]
            count = high.bit_count()
            if above + count >= k:
                candidates = high
                value |= 1 << bit
            else:
                above += count
                candidates ^= high
        return value

    def value(self, slot: Slot) -> int:
        total = 0
        for bit, held in enumerate(self.slices):
            if held >> slot & 1:
                total |= 1 << bit
        return total

    def values(self, bitmap: int) -> dict[Slot, int]:
        """The sums of the slots of a bitmap (meant for a few slots)."""
        slots = slots_of(bitmap)
        out = dict.fromkeys(slots, 0)
        for bit, held in enumerate(self.slices):
            part = held & bitmap
            if not part:
                continue
            weight = 1 << bit
            data = part.to_bytes((part.bit_length() + 7) // 8, "little")
            end = len(data)
            for slot in slots:
                at = slot >> 3
                if at < end and data[at] >> (slot & 7) & 1:
                    out[slot] += weight
        return out

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
