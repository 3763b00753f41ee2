"""The faces: how people and programs reach the memory.

:mod:`~disclosure.faces.api` (the HTTP API, the ``[server]`` extra), :mod:`~disclosure.faces.cli`
(the ``disclosure`` command line), :mod:`~disclosure.faces.mcp` (the MCP server, ``[mcp]``),
:mod:`~disclosure.faces.middleware` (memory around a chat-completion call, and the LangChain
adapter), :mod:`~disclosure.faces.viewer` (the web viewer the HTTP API shows at ``/``) and
:mod:`~disclosure.faces.memories` (the mem0-style facade) and :mod:`~disclosure.faces.agent`
(memory inside a coding agent: its hooks, installer and history importers). Beside them:
:mod:`~disclosure.faces.extras` (the optional parts a face needs, and the error when one is
missing) and :mod:`~disclosure.faces.limits` (limits on what callers send, checked before
parsing).

The faces sit at the top of :mod:`disclosure`: they may import every room below them, and no
room imports them. Nothing is imported here, so a face loads only what it needs.
"""
