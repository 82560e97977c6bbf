"""Rankers: the SPEC §3 reference and the shortlist a recall is built from."""
