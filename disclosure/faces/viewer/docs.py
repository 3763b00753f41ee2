"""An offline API reference: the OpenAPI schema rendered on the server, no CDN, no script."""

from __future__ import annotations

from html import escape
from typing import Any

from disclosure.faces.viewer.html import page

METHODS = ("get", "post", "put", "patch", "delete")


def docs_page(schema: dict[str, Any]) -> str:
    """Every route of ``schema``: method, path, summary, parameters, body and responses."""
    blocks = []
    for path, item in sorted(schema.get("paths", {}).items()):
        for method in METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            params = ", ".join(
                f"{p['name']} ({p['in']}{', required' if p.get('required') else ''})"
                for p in operation.get("parameters", [])
            )
            body = operation.get("requestBody", {}).get("content", {}).get("application/json", {})
            ref = body.get("schema", {}).get("$ref", "").rsplit("/", 1)[-1]
            statuses = ", ".join(sorted(operation.get("responses", {})))
            blocks.append(
                f"<div class=card id='{escape(method)}-{escape(path)}'><b>{method.upper()} "
                f"{escape(path)}</b><p>{escape(operation.get('summary', ''))}</p>"
                f"<p class=small>{escape(operation.get('description', '') or '')}</p>"
                f"<p class=small>parameters: {escape(params or '-')} · "
                f"body: {escape(ref or '-')} · "
                f"responses: {escape(statuses)}</p></div>"
            )
    intro = (
        f"<p>{escape(schema.get('info', {}).get('description', ''))} The machine-readable schema "
        "is at <a href='/openapi.json'>/openapi.json</a>.</p>"
    )
    return page(f"{schema.get('info', {}).get('title', 'API')} API", intro + "".join(blocks))
