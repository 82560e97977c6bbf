"""Ready means ready (docs/ranking.md): the recall path is rehearsed before the first
message, so the first recall finds done what every later one does."""

from __future__ import annotations

from memory_recall.server.core.rehearsal import REHEARSAL_QUERIES, rehearsal_corpus, rehearse
from memory_recall.server.ranking.bm25f import folding
from memory_recall.server.ranking.confidence import calibration
from memory_recall.server.ranking.registry import RANKERS
from memory_recall.server.recall.service import RecallRequest, lexical_phases


def test_the_rehearsal_fills_what_a_first_recall_would_pay_for():
    rehearse(RANKERS["bm25f"])
    assert folding._han_table.cache_info().currsize == 1  # OpenCC's table is built
    assert calibration.default_calibration.cache_info().currsize == 1  # the data is read
    assert folding.fold.cache_info().currsize > 0


def test_the_rehearsal_reaches_every_script_and_a_silent_query():
    snapshot = rehearsal_corpus()
    spec = RANKERS["bm25f"]
    delivered = [
        lexical_phases(snapshot, RecallRequest(i, q), spec)[0]
        for i, q in enumerate(REHEARSAL_QUERIES)
    ]
    assert sum(d is not None for d in delivered) >= len(REHEARSAL_QUERIES) - 2
    assert delivered[-1] is None  # the question nothing answers
