"""The MCP face (the ``[mcp]`` extra): the search -> timeline -> details workflow as tools.

:mod:`~disclosure.core.workflow` holds the three steps over one controller (the HTTP API serves
the first two as well); :mod:`~disclosure.faces.mcp.server` builds the MCP server that exposes them.
"""

from disclosure.core import workflow  # noqa: F401 - `from disclosure.mcp import workflow` still works
from disclosure.core.workflow import IndexEntry, details, search_index, timeline
from disclosure.faces.mcp.server import DiscloseOutput, SearchOutput, create_mcp_server

__all__ = [
    "DiscloseOutput",
    "IndexEntry",
    "SearchOutput",
    "create_mcp_server",
    "details",
    "search_index",
    "timeline",
]
