"""The MCP face (the ``[mcp]`` extra): the search -> timeline -> details workflow as tools.

:mod:`~disclosure.faces.mcp.workflow` holds the three steps over one controller (the HTTP API serves
the first two as well); :mod:`~disclosure.faces.mcp.server` builds the MCP server that exposes them.
"""

from disclosure.faces.mcp.server import DiscloseOutput, SearchOutput, create_mcp_server
from disclosure.faces.mcp.workflow import IndexEntry, details, search_index, timeline

__all__ = [
    "DiscloseOutput",
    "IndexEntry",
    "SearchOutput",
    "create_mcp_server",
    "details",
    "search_index",
    "timeline",
]
