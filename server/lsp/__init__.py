"""The LSP face: JSON-RPC with LSP framing over stdio (or a socket), over the memory core."""
