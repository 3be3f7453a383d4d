"""assocmem as an MCP server."""
