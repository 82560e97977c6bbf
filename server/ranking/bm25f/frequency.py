"""A body's term frequency in bm25f: count over length, in quarter-octave codes.

BM25 divides a term's count in a body by the body's length normalization; bm25f
takes both in quarter-octave steps (within 9 %), so that a frequency is the
difference of two small integers — one fixed per posting, one per length class
of the corpus — and the index can form it for every document at once.
"""

from __future__ import annotations

import math

# Length normalization of the body (BM25's b): a body of the corpus's average
# length counts its terms as they are, a longer one for less.
BODY_B = 0.75
# A body's term frequency, count / norm, is taken in quarter-octave steps (within
# 9 %): code(count) - code(norm), so that the index can subtract one from the other
# for every document at once. FREQUENCY_ZERO keeps the difference positive.
FREQUENCY_STEPS = 4
FREQUENCY_ZERO = 160


def body_norm(length: float, average: float) -> float:
    return 1.0 - BODY_B + BODY_B * length / average


def count_code(count: int) -> int:
    if count < len(_COUNT_CODES):
        return _COUNT_CODES[count]
    return round(FREQUENCY_STEPS * math.log2(count))


def norm_code(norm: float) -> int:
    return round(FREQUENCY_STEPS * math.log2(norm))


_COUNT_CODES = [0, *(round(FREQUENCY_STEPS * math.log2(count)) for count in range(1, 1024))]
