"""Organisation of a memory root (docs/organisation.md): the topic tree, and later retention,
staleness and consolidation."""
