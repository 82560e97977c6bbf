"""How sure the fast phase is of each memory it could deliver (docs/ranking.md).

`evidence`: what a ranker says about its best memories for one query (coverage of
the query, margins, which fields matched). `calibration`: those figures turned into
a probability-like confidence by a model fitted on labelled corpora (its numbers
are data, `data/calibration.json`, written by `memory-recall dev calibrate`), and the
gate that delivers 0, 1 or 2 memories by it.
"""
