"""The rankers a recall or an eval can be asked to use, by name."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from memory_recall.server.ranking.baselines import ascii_tokens
from memory_recall.server.ranking.bm25f import PLAIN_PARAMS, Bm25Ranker
from memory_recall.server.ranking.shortlist import Ranker, index_ranker, reference_ranker
from memory_recall.server.tokens import query_tokens, recall_tokens


@dataclass(frozen=True)
class RankerSpec:
    name: str
    description: str
    rank: Ranker
    tokenize: Callable[[str], list[str]] = query_tokens


RANKERS: dict[str, RankerSpec] = {
    spec.name: spec
    for spec in (
        RankerSpec(
            "default",
            "BM25F over title/description/body with IDF, identifier and unspaced-script "
            "tokens, and silence when a query's rare words match nothing",
            Bm25Ranker(),
            recall_tokens,
        ),
        RankerSpec(
            "bm25",
            "baseline: plain BM25 (one bag of words, never silent) with the default's tokens",
            Bm25Ranker(PLAIN_PARAMS),
            recall_tokens,
        ),
        RankerSpec("indexed", "SPEC §3 scorer through the candidate index", index_ranker),
        RankerSpec("reference", "SPEC §3 scorer, exactly: scans every document", reference_ranker),
        RankerSpec(
            "ascii",
            "baseline: SPEC §3 scoring with [a-z0-9]{3,} tokens",
            reference_ranker,
            ascii_tokens,
        ),
    )
}
DEFAULT_RANKER = "indexed"  # the same answers as "reference", without the scan
