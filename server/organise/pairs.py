"""Which pairs of memories are worth judging (the gather step of consolidation).

Judging every pair of a root is quadratic; the conflict rules cost milliseconds a
pair. Near-duplicates and changed facts share what makes a memory itself: its
rarest words. So each memory is reduced to its distinct words (word runs of
three or more letters outside CJK, code-point pairs inside, as the reference tokens cut
them, docs/ranking.md), numbered through one vocabulary and kept as a sorted array — a few
hundred bytes a memory, not a set of strings. Its *signature* is its rarest
words that another memory also has; two memories that share at least
SHARED_SIGNATURE of them and enough of all their words are a pair to judge, and
so are two memories with the same title. Nothing is ever compared with
everything: each memory meets only those in its signature's buckets.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections import Counter, defaultdict
from collections.abc import Sequence

import regex
from memory_recall.server.tokens import normalize

SIGNATURE_TOKENS = 12  # the rarest shared words that speak for a memory
SHARED_SIGNATURE = 2  # signature words two memories share before they are compared
MAX_BUCKET = 64  # a word in more memories than this says nothing about two of them
MIN_OVERLAP = 0.25  # Jaccard of all distinct words below which a pair is not judged

_CJK = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}"
_WORD_RUN = regex.compile(r"[\p{L}\p{M}\p{N}]+")
_CJK_PIECES = regex.compile(f"([{_CJK}]+)")
_CJK_START = regex.compile(f"[{_CJK}]")
MIN_WORD = 3  # as the reference scorer's runs: shorter words match almost everything


class Vocabulary:
    """Words to numbers, so a memory's words are one small array."""

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self._ids)

    def words(self, text: str) -> array[int]:
        """The distinct words of `text` as sorted ids."""
        grams: set[str] = set()
        for run in set(_WORD_RUN.findall(normalize(text))):
            if run.isascii() or not _CJK_START.search(run):
                if len(run) >= MIN_WORD:
                    grams.add(run)
                continue
            for piece in _CJK_PIECES.split(run):  # `abc漢字`: a word and a CJK run
                if _CJK_START.match(piece):
                    grams.update(piece[k : k + 2] for k in range(len(piece) - 1))
                elif len(piece) >= MIN_WORD:
                    grams.add(piece)
        ids = self._ids
        return array("I", sorted(ids.setdefault(gram, len(ids)) for gram in grams))


def contains(words: array[int], word: int) -> bool:
    at = bisect_left(words, word)
    return at < len(words) and words[at] == word


def overlap(a: array[int], b: array[int]) -> float:
    """Jaccard similarity of two memories' distinct words."""
    if not a or not b:
        return 0.0
    shared = len(set(a).intersection(b))
    return shared / (len(a) + len(b) - shared)


def candidate_pairs(
    words: Sequence[array[int]], title_keys: Sequence[str], vocabulary_size: int
) -> list[tuple[int, int]]:
    """Index pairs (i < j) worth judging, in order."""
    df = array("I", bytes(4 * vocabulary_size))
    for memory in words:
        for word in memory:
            df[word] += 1
    buckets: dict[int, list[int]] = defaultdict(list)
    signatures = []
    for i, memory in enumerate(words):
        rare = sorted((w for w in memory if 1 < df[w] <= MAX_BUCKET), key=lambda w: (df[w], w))
        signature = rare[:SIGNATURE_TOKENS]
        signatures.append(signature)
        for word in signature:
            buckets[word].append(i)
    pairs: set[tuple[int, int]] = set()
    for i, signature in enumerate(signatures):
        shared: Counter[int] = Counter()
        for word in signature:
            shared.update(j for j in buckets[word] if j > i)
        for j, count in shared.items():
            if count >= SHARED_SIGNATURE and overlap(words[i], words[j]) >= MIN_OVERLAP:
                pairs.add((i, j))
    by_title: dict[str, list[int]] = defaultdict(list)
    for i, key in enumerate(title_keys):
        by_title[key].append(i)
    for members in by_title.values():
        if len(members) <= MAX_BUCKET:
            pairs.update((a, b) for x, a in enumerate(members) for b in members[x + 1 :])
    return sorted(pairs)
