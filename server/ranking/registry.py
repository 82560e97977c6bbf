"""The rankers a recall or an eval can be asked to use, by name.

`bm25f` is the daemon's default; `spec` is the reference scorer exactly (both:
docs/ranking.md).
The names of protocol v1 stay accepted everywhere (settings, CLI, both editors):
`default` is `bm25f`, `indexed` and `reference` are `spec`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field

from memory_recall.server.ranking.baselines import PlainBm25, ascii_tokens
from memory_recall.server.ranking.bm25f.index import Bm25Index, Bm25WindowIndex
from memory_recall.server.ranking.bm25f.ranker import Bm25Ranker
from memory_recall.server.ranking.bm25f.tokens import recall_tokens
from memory_recall.server.ranking.index import DocumentIndex
from memory_recall.server.ranking.postings import TermIndex
from memory_recall.server.ranking.shortlist import (
    Ranker,
    RecallQuery,
    index_ranker,
    reference_ranker,
)
from memory_recall.server.ranking.view import CorpusView
from memory_recall.server.tokens import query_tokens


@dataclass(frozen=True)
class RankerSpec:
    name: str
    description: str
    rank: Ranker
    tokenize: Callable[[str], list[str]] = query_tokens
    # The index the catalog keeps for this ranker (the daemon builds one kind only).
    index_kind: type[TermIndex] = field(default=DocumentIndex)
    served: bool = True  # False: a baseline for eval, too slow to serve recalls

    def query(
        self,
        snapshot: CorpusView,
        text: str,
        *,
        recent_tools: Sequence[str] = (),
        exclude_paths: Collection[str] = (),
    ) -> RecallQuery:
        """A query of this ranker over a snapshot, noise and exclusions left out: what a
        recall, an explanation and a search all start from."""
        return RecallQuery.build(
            snapshot,
            text,
            recent_tools=recent_tools,
            exclude_paths=exclude_paths,
            ranker=self.rank,
            tokenizer=self.tokenize,
        )


class _Rankers(dict[str, RankerSpec]):
    """Rankers by name; an old name (ALIASES) finds its ranker too."""

    def __missing__(self, name: str) -> RankerSpec:
        if name in ALIASES:
            return self[ALIASES[name]]
        raise KeyError(name)


# Protocol v1's names, kept as aliases.
ALIASES = {"default": "bm25f", "indexed": "spec", "reference": "spec"}
RANKERS: dict[str, RankerSpec] = _Rankers(
    (spec.name, spec)
    for spec in (
        RankerSpec(
            "bm25f",
            "the default: BM25F over title, description and whole body, with IDF, "
            "identifier and unspaced-script tokens, the passage that matched, and silence "
            "when a query's rare words match nothing",
            Bm25Ranker(),
            recall_tokens,
            Bm25Index,
        ),
        RankerSpec(
            "spec",
            "the reference scorer exactly (title 4, description 3, first 1,200 body characters "
            "1, type keywords), through its candidate index",
            index_ranker,
        ),
        RankerSpec(
            "bm25f-window",
            "baseline: bm25f indexing only the first 1,200 characters of each body",
            Bm25Ranker(index_kind=Bm25WindowIndex),
            recall_tokens,
            Bm25WindowIndex,
        ),
        RankerSpec(
            "spec-scan",
            "baseline: the reference scorer as a plain scan of every document (spec's answers)",
            reference_ranker,
            served=False,
        ),
        RankerSpec(
            "bm25",
            "baseline: plain BM25 over each whole memory as one bag of bm25f's tokens, "
            "exact matches, never silent",
            PlainBm25(),
            recall_tokens,
            served=False,
        ),
        RankerSpec(
            "ascii",
            "baseline: the reference scoring with [a-z0-9]{3,} tokens",
            reference_ranker,
            ascii_tokens,
            served=False,
        ),
    )
)
DEFAULT_RANKER = "bm25f"


def ranker_named(name: str) -> RankerSpec | None:
    """The ranker a name or alias stands for, or None."""
    return RANKERS.get(ALIASES.get(name, name))


def accepted_names(*, served_only: bool = False) -> list[str]:
    """Every name and alias accepted, sorted."""
    names = [n for n, spec in RANKERS.items() if spec.served or not served_only]
    return sorted([*names, *ALIASES])
