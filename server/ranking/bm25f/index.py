"""bm25f's own index: title and description terms, body terms with their impact codes.

The spec index (server.ranking.index) keeps spec terms of the 1,200-character
window; this one keeps bm25f's terms (acronyms too) of the whole body, each
body posting with the impact code of its term (server.ranking.bm25f.terms).
The catalog builds the index its ranker reads, never both.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, NamedTuple

from memory_recall.server.documents import MemoryDocument
from memory_recall.server.ranking.bm25f.folding import kept_exact_form
from memory_recall.server.ranking.bm25f.frequency import count_code
from memory_recall.server.ranking.bm25f.terms import (
    BodyText,
    body_window,
    document_terms,
    whole_body,
)
from memory_recall.server.ranking.index import CJK_PAIR, WORD
from memory_recall.server.ranking.postings import Counters, DocTerms, TermIndex

TITLE, DESCRIPTION, BODY = range(3)


# Count codes kept for this many recent word lists (each a few bits per document).
CACHED_TOKENS = 64
# Compound checks kept for this many recent compound tokens (each up to a few thousand
# documents' answers).
CACHED_COMPOUNDS = 32
# ... each of at most this many slots (four times the most one check reads,
# ranker.COMPOUND_CANDIDATES): past it, the token's are made afresh.
COMPOUND_CHECKS_MAX = 4096


class CompoundCheck(NamedTuple):
    """What a compound token's check in one memory's text found (ranker._find_compound)."""

    title: bool
    description: bool
    body: int  # how often the body holds it
    starts: bool  # at a word's start in some field that holds it


# Per slot, the document checked and what its check found.
CompoundChecks = dict[int, tuple[MemoryDocument, CompoundCheck]]


class Bm25Index(TermIndex):
    """Terms of title, description and whole body → documents (body postings coded)."""

    KIND = "bm25f"
    WEIGHTED = (False, False, True)
    LENGTHS = True
    body: ClassVar[BodyText] = staticmethod(whole_body)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._codes: dict[tuple[str, ...], Counters] = {}
        self._codes_version = -1
        self._compounds: dict[str, CompoundChecks] = {}
        self._compounds_lock = threading.Lock()  # a remember's read-ahead thread ranks too

    def document_terms(self, doc: MemoryDocument) -> DocTerms:
        return document_terms(doc, type(self).body)

    @classmethod
    def of(
        cls,
        documents: Iterable[MemoryDocument],
        tiebreak: Callable[[MemoryDocument], Any] | None = None,
    ) -> Bm25Index:
        index = cls(tiebreak=tiebreak)
        index._add_all(documents)
        return index

    def common_terms(self, count: int) -> list[str]:
        """The words and CJK pairs the most memories' bodies hold, the most held first
        (folded forms and acronyms left out): the longest posting lists, whose first
        lookup by a recall costs most."""
        postings = self._postings[BODY]
        # Among the lists that keep a bitmap (`warm` made those of the longest): at
        # 100,000 memories a pass over every term takes ~70 ms.
        kept = self._dense[BODY]
        longest = heapq.nlargest(4 * count, kept, key=lambda term: len(postings[term]))
        return [t for t in longest if WORD.fullmatch(t) or CJK_PAIR.fullmatch(t)][:count]

    def body_text(self, doc: MemoryDocument) -> tuple[str, str]:
        """(normalized, as written) of the body this index indexes, for a check in the
        text (a compound term's): the normal forms that cost most are kept for the next."""
        return type(self).body(doc, kept_exact_form)

    def count_codes(self, words: list[str]) -> Counters:
        """Per slot, the count code (`count_code`) of the sum of the body counts of
        `words` (the body words that hold a token), for every slot holding one of them.

        A fresh copy each time (the caller adds to it, and reads the slots it wants);
        kept for the word lists asked lately while the index does not change, as recalls
        repeat their words. Kept by the words alone: the same token can stand for other
        words (a folded form beside another exact one), and what one asker wanted (one
        memory explained) must not be what the next one gets.
        """
        if self._codes_version != self.version:
            self._codes.clear()
            self._codes_version = self.version
        key = tuple(words)
        cached = self._codes.get(key)
        if cached is None:
            cached = Counters()
            sums = self.field_sums(BODY, words)
            held = 0
            for bits in sums.slices:
                held |= bits
            by_code: dict[int, int] = {}
            for count, level in sums.levels(held):
                code = count_code(count)
                by_code[code] = by_code.get(code, 0) | level
            for code, level in by_code.items():
                cached.put(level, code)
            if len(self._codes) >= CACHED_TOKENS:
                del self._codes[next(iter(self._codes))]
            self._codes[key] = cached
        copy = Counters()
        copy.slices = list(cached.slices)
        return copy

    def remove_many(self, paths: Iterable[str]) -> int:
        """Drop documents by path (TermIndex), and their compound checks: a kept check
        never holds on to a memory the index let go."""
        paths = list(paths)
        slots = [slot for slot in map(self.slot, paths) if slot is not None]
        removed = super().remove_many(paths)
        with self._compounds_lock:
            for checks in self._compounds.values():
                for slot in slots:
                    checks.pop(slot, None)
        return removed

    def compound_checks(self, token: str) -> CompoundChecks:
        """Where a compound token's check in the text was made, kept for the compounds
        asked lately: the same identifiers come back in a session's questions and in its
        tool calls' (a file's path), and checking a thousand memories' text takes
        milliseconds. An answer holds while its slot holds the document it was read
        from (a changed memory is a new document); the caller fills in the rest. The
        answers of a removed document go with it (`remove_many`)."""
        with self._compounds_lock:
            checks = self._compounds.pop(token, None)
            if checks is None or len(checks) > COMPOUND_CHECKS_MAX:
                checks = {}
            self._compounds[token] = checks  # the most recent last
            while len(self._compounds) > CACHED_COMPOUNDS:
                del self._compounds[next(iter(self._compounds))]
            return checks


class Bm25WindowIndex(Bm25Index):
    """The same, of the body's first 1,200 characters only: the window-only variant."""

    KIND = "bm25f-window"
    body: ClassVar[BodyText] = staticmethod(body_window)
