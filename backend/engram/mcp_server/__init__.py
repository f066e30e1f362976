"""`engram mcp`: the MCP stdio server for agents."""
