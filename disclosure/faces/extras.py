"""Optional parts of the distribution (extras) and the one clear error when one is missing."""

from __future__ import annotations

import importlib
from types import ModuleType

from tiers.errors import MissingDependencyError

__all__ = ["EXTRAS", "require"]

# extra -> the modules it must make importable
EXTRAS = {
    "server": ("fastapi", "uvicorn"),
    "mcp": ("mcp.server.mcpserver",),
    "langchain": ("langchain_core",),
    "llamaindex": ("llama_index.core",),
}


def require(extra: str, purpose: str) -> list[ModuleType]:
    """Import the modules of ``extra``; MissingDependencyError says what to install if absent."""
    modules = []
    for name in EXTRAS[extra]:
        try:
            modules.append(importlib.import_module(name))
        except ImportError as exc:
            raise MissingDependencyError(
                f"{purpose} needs the [{extra}] extra ({exc.name or name} is missing): "
                f"pip install 'tiered-disclosure[{extra}]'"
            ) from None
    return modules
