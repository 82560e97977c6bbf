"""Organisation of a memory root (SPEC §10): the topic tree, and later retention,
staleness and consolidation."""
