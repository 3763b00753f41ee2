"""The HTTP API (the ``[server]`` extra: FastAPI and uvicorn); ``disclosure serve`` runs it.

from disclosure.faces.api import create_app
app = create_app("default", root="/srv/memory", api_keys=load_api_keys())
"""

from disclosure.faces.extras import require

require("server", "the HTTP API")

from disclosure.faces.api.app import create_app  # noqa: E402
from disclosure.faces.api.errors import ApiError  # noqa: E402
from disclosure.faces.api.guards import RecentResults  # noqa: E402
from disclosure.faces.api.keys import ApiKeys, Grant, hash_key, load_api_keys  # noqa: E402
from disclosure.service.error_codes import ERROR_CODES  # noqa: E402

__all__ = [
    "ERROR_CODES",
    "ApiError",
    "ApiKeys",
    "Grant",
    "RecentResults",
    "create_app",
    "hash_key",
    "load_api_keys",
]
