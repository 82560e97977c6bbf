"""The MCP face: `memory-recall mcp`, an MCP server over stdio on the daemon's own core."""
