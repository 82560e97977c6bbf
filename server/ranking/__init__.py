"""Rankers: the the reference (docs/ranking.md) and the shortlist a recall is built from."""
