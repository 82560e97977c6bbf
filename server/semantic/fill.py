"""How semantic hits join a lexical result: fill (the daemon's rule) and reciprocal-rank
fusion (measured against it by `memory-recall dev semantic-eval`).

Fill never moves a lexical document up or down: semantic hits take the slots the lexical
result left empty (and, in the refined phase, its last slot: `RESERVED_SLOTS`), and only
hits at least `Z_FLOOR` standard deviations above the query's typical similarity. A
lexical match is evidence a reader can check (the words are there); a similarity is not,
so it never goes above one. The figures that chose this are in the README ("Semantic
recall").
"""

from __future__ import annotations

from collections.abc import Sequence

from memory_recall.server.ranking.spec import ScoredDocument

# Measured on fixtures/eval with multilingual-e5-small and USE-multilingual (README): a
# hit this far above the query's mean similarity over the corpus is about the subject.
Z_FLOOR = 3.0
# The refined phase's last slot goes to a strong semantic hit before the lexical fifth:
# bm25f nearly always finds five weak matches for a question that shares no word with its
# memory, so pure fill left the semantic slice at 0-9 % (semantic-eval, README). One slot
# keeps the lexical top 4 and top-1 exactly; the fast phase (2 slots) reserves none.
RESERVED_SLOTS = 1
# Into the model's candidates: more, with their similarity, for the model to judge.
CANDIDATE_Z_FLOOR = 1.5
CANDIDATE_HITS = 20
RRF_K = 60  # the constant of Cormack et al. (2009)


def fill(
    lexical: Sequence[ScoredDocument],
    hits: Sequence[tuple[ScoredDocument, float, float]],
    limit: int,
    z_floor: float = Z_FLOOR,
    reserve: int = 0,
    alone: bool = True,
) -> tuple[list[ScoredDocument], dict[str, float]]:
    """`lexical` in its order, then hits `(doc, similarity, z)` with z ≥ floor not already
    in it, up to `limit`; and the similarity of each document added.

    `reserve` (measured, see the README): the last `reserve` slots go to hits above the
    floor before the lexical tail; the lexical head is never moved, and no hit is ever
    placed above a lexical document. `alone=False`: hits never fill a result with no
    lexical document — a question nothing matches stays silent, as without vectors
    (docs/ranking.md, "The semantic channel")."""
    if not lexical and not alone:
        return [], {}
    head = list(lexical[: max(0, limit - reserve)])
    seen = {s.document.path for s in head}
    strong = [h for h in hits if h[2] >= z_floor and h[0].document.path not in seen]
    out = head
    added: dict[str, float] = {}
    lexical_tail = [s for s in lexical[len(head) : limit]]
    tail_paths = {s.document.path for s in lexical_tail}
    taken = 0
    for scored, similarity, _z in strong:
        if taken >= reserve or len(out) >= limit:
            break
        if scored.document.path in tail_paths:
            continue  # already there: it keeps its lexical slot below
        out.append(scored)
        seen.add(scored.document.path)
        added[scored.document.path] = similarity
        taken += 1
    for scored in lexical_tail:
        if len(out) >= limit:
            break
        if scored.document.path not in seen:
            out.append(scored)
            seen.add(scored.document.path)
    for scored, similarity, _z in strong:
        if len(out) >= limit:
            break
        if scored.document.path not in seen:
            out.append(scored)
            seen.add(scored.document.path)
            added[scored.document.path] = similarity
    return out, added


def fuse(
    lexical: Sequence[ScoredDocument],
    hits: Sequence[tuple[ScoredDocument, float, float]],
    limit: int,
    z_floor: float = Z_FLOOR,
    k: int = RRF_K,
) -> list[ScoredDocument]:
    """Reciprocal-rank fusion of the lexical ranking and the hits above the floor:
    score = Σ 1 / (k + rank) over the lists a document is in (ties: lexical order)."""
    score: dict[str, float] = {}
    docs: dict[str, ScoredDocument] = {}
    for rank, scored in enumerate(lexical, 1):
        score[scored.document.path] = 1 / (k + rank)
        docs[scored.document.path] = scored
    kept = [h for h in hits if h[2] >= z_floor]
    for rank, (scored, _sim, _z) in enumerate(kept, 1):
        path = scored.document.path
        score[path] = score.get(path, 0.0) + 1 / (k + rank)
        docs.setdefault(path, scored)
    order = sorted(score, key=lambda p: -score[p])  # stable: lexical order on ties
    return [docs[p] for p in order[:limit]]
