"""The query string of a namespaced route: valid UTF-8, and no parameter the route does not
take (a misspelt namespace part must not quietly select another namespace)."""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from typing import Any
from urllib.parse import parse_qsl

from fastapi import Request
from fastapi.routing import APIRoute

from disclosure.storage.namespaces import NAMESPACE_PARTS
from tiers.errors import NamespaceError

__all__ = ["check_query_encoding", "query_names", "refuse_unknown_parameters"]


def refuse_unknown_parameters(request: Request, scope: Sequence[str]) -> None:
    """A misspelt query parameter (``?usr=bob``) is an error naming it, never dropped: the
    request would otherwise go to another namespace than the client meant. The namespace
    parts and the route's own parameters (``limit``, ``cursor``, ...) are known."""
    route = request.scope.get("route")
    own = query_names(route.dependant) if isinstance(route, APIRoute) else set()
    known = own - set(NAMESPACE_PARTS) | set(scope)
    unknown = sorted(k for k in request.query_params if k not in NAMESPACE_PARTS and k not in own)
    if unknown:
        close = difflib.get_close_matches(unknown[0], sorted(known), n=1)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise NamespaceError(
            f"unknown query parameter {unknown[0][:40]!r}{hint}; this route takes "
            f"{', '.join(sorted(known)) or 'no namespace parts'}"
        )


def query_names(dependant: Any) -> set[str]:
    """The query parameters a route and its dependencies declare."""
    names = {param.alias for param in dependant.query_params}
    for sub in dependant.dependencies:
        names |= query_names(sub)
    return names


def check_query_encoding(request: Request) -> None:
    """Percent-escapes must spell UTF-8: the usual lenient decoding turns every invalid byte
    into U+FFFD, so ``a%FF`` and ``a%FE`` would name one namespace."""
    raw = request.scope.get("query_string", b"").decode("latin-1")
    try:
        parse_qsl(raw, keep_blank_values=True, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:
        raise NamespaceError("query parameters must be valid UTF-8 (percent-encoded)") from None
