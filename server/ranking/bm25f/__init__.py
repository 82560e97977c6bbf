"""The `bm25f` ranker (the daemon's default, docs/ranking.md): its tokens (`tokens`), word
lists (`data/`, read by `words`), document terms (`terms`), index (`index`), query
side (`query`), ranker (`ranker`) and its plain document-by-document scan (`scan`)."""

from memory_recall.server.ranking.bm25f.query import QUERY_STOPWORDS, light_stem, without_clitic
from memory_recall.server.ranking.bm25f.ranker import DEFAULT_PARAMS, Bm25Params, Bm25Ranker

__all__ = [
    "DEFAULT_PARAMS",
    "QUERY_STOPWORDS",
    "Bm25Params",
    "Bm25Ranker",
    "light_stem",
    "without_clitic",
]
