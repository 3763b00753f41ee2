"""Memory inside a coding agent: Claude Code's hooks, its installer, and history importers.

``disclosure agent install claude-code`` writes what the agent reads (hooks in its
settings.json, slash commands, the MCP server entry); ``disclosure hook EVENT`` is what those
hooks run. The hook path (:mod:`~disclosure.faces.agent.hooks`) imports only the standard
library and a thin HTTP client of the local service, so that it can sit on every prompt.
Nothing is imported here: each module is loaded by the command that needs it.
"""

__all__: list[str] = []
