"""Small memory folders made of the labelled corpora: what the fast phase's gate is fitted
and measured on for a user who keeps a handful of memories (docs/ranking.md, "Small
folders").

A labelled corpus holds 30 to 150 memories written around one person or project, with
near misses on purpose. A new user's folder holds five, on unrelated things. Each case
of a corpus becomes a folder of its own: the memories that answer it and others drawn
at random from the same corpus, `size` in all (an unanswerable case gets `size` random
ones). The draw is seeded by the corpus, the size and `seed`, so the folders never move.
"""

from __future__ import annotations

import random

from memory_recall.server.dev.evaluation import EvalCorpus

# The folder sizes measured. The small folders' gate is fitted on those at which the
# corpora's gate loses too much, below the smallest labelled corpus (`calibrate_small`
# in server/dev/calibration.py); the larger ones show where it hands over.
SIZES = (5, 10, 15, 20, 30, 40)


def folder_name(corpus: str, size: int) -> str:
    """The name the folders of `corpus` at `size` go by (each is a corpus of its own
    for the gate's per-corpus floors)."""
    return f"{corpus}@{size}"


def small_folders(corpus: EvalCorpus, size: int, seed: int = 0) -> list[EvalCorpus]:
    """One folder per case of `corpus`: its relevant memories and random others, `size`
    memories in all (the relevant ones all kept, whatever `size`), in corpus order."""
    rng = random.Random(f"{corpus.name}/{size}/{seed}")
    place = {doc.path: i for i, doc in enumerate(corpus.documents)}
    by_path = {doc.path: doc for doc in corpus.documents}
    folders = []
    for case in corpus.cases:
        relevant = set(case.relevant_ids)
        kept = [by_path[path] for path in case.relevant_ids]
        others = [doc for doc in corpus.documents if doc.path not in relevant]
        kept += rng.sample(others, min(len(others), max(0, size - len(kept))))
        kept.sort(key=lambda doc: place[doc.path])
        folders.append(
            EvalCorpus(tuple(kept), (case,), folder_name(corpus.name, size), corpus.links)
        )
    return folders
