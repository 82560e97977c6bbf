"""`projectInit` without a model: a workspace's manifests and configs as one project memory.

`reader.read_project(workspace)` walks the workspace (bounded), lets each
ecosystem's reader add what its files say to a `Component` (one per folder
that holds a manifest), resolves one command per kind, and `render` writes it
as a docs/memory-files.md memory. A file that cannot be parsed is skipped and reported.
"""
