"""askd mcp: the Model Context Protocol bridge."""
