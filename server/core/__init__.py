"""The memory core: every service a face needs, built once from validated options.

`core.py` is the composition root; the LSP daemon, the MCP server, the command line
and the host hooks each adapt the same `MemoryCore`.
"""
