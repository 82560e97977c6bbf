"""Developer tools: benchmarks, evaluation, the demo and synthetic corpora.

Imported lazily by the CLI; `memory-recall serve` never imports them.
"""
