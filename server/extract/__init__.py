"""Extraction (docs/extraction.md): memories the daemon proposes from a workspace or a session.

`project/` reads a workspace's manifests and configs without a model
(`projectInit`); the model pipeline (prompt, transcript, parse) sits beside it.
"""
