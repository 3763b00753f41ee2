"""The faces through which people and programs reach the memory: CLI, API, MCP, agents."""
