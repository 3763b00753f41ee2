"""Server-rendered HTML for the viewer: one layout, escaped text, citation badges, a chart."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from urllib.parse import quote, urlencode

NAV = (
    ("/", "Namespaces"),
    ("/ui/sessions", "Sessions"),
    ("/ui/search", "Search"),
    ("/ui/playground", "Playground"),
    ("/ui/stats", "Stats"),
    ("/ui/citations", "Citations"),
    ("/ui/eval", "Eval"),
    ("/docs", "API"),
)


def page(title: str, body: str, *, ns: Mapping[str, str] | None = None) -> str:
    """A whole page: the layout around ``body`` (already HTML)."""
    query = qs(ns or {})
    links = "".join(
        f'<a href="{href}{query if href.startswith("/ui") else ""}">{label}</a>'
        for href, label in NAV
    )
    where = ", ".join(f"{k}={v}" for k, v in (ns or {}).items())
    return (
        "<!doctype html><html lang=en><head><meta charset=utf-8>"
        '<meta name=viewport content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · tiered-disclosure</title>"
        '<link rel=icon href="data:,"><link rel=stylesheet href="/static/viewer.css">'
        '<script src="/static/viewer.js" defer></script></head><body>'
        f"<header><strong>tiered-disclosure</strong>{links}"
        f"<span class=ns>{escape(where) if where else ''}</span></header>"
        f"<main><h1>{escape(title)}</h1>{body}</main></body></html>"
    )


def qs(ns: Mapping[str, str], **extra: str) -> str:
    """``?tenant=..&user=..`` plus ``extra`` (empty when there is nothing)."""
    items = {**{k: v for k, v in ns.items() if v}, **{k: v for k, v in extra.items() if v}}
    return "?" + urlencode(items) if items else ""


def badge(citation: str, ns: Mapping[str, str]) -> str:
    """A citation badge: a click copies ``[mem:xxxxxx]`` and opens the memory's page."""
    if not citation:
        return ""
    href = f"/ui/memory/{quote(citation, safe=':')}{qs(ns)}"
    return (
        f'<a class=cite href="{escape(href)}" data-cite="[{escape(citation)}]" '
        f'title="copy [{escape(citation)}] and open">{escape(citation)}</a>'
    )


def table(head: Sequence[str], rows: Sequence[Sequence[str]], *, raw: bool = False) -> str:
    """A table; cells are escaped unless ``raw`` (then they are HTML already)."""
    cell = (lambda c: c) if raw else escape
    header = "".join(f"<th>{escape(h)}</th>" for h in head)
    body = "".join("<tr>" + "".join(f"<td>{cell(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{header}</tr></thead><tbody>{body}</tbody></table>"


def search_form(action: str, name: str, value: str, ns: Mapping[str, str], label: str) -> str:
    hidden = "".join(
        f'<input type=hidden name="{escape(k)}" value="{escape(v)}">' for k, v in ns.items() if v
    )
    return (
        f'<form class=inline method=get action="{action}">{hidden}'
        f'<input type=text name="{name}" value="{escape(value)}" placeholder="{escape(label)}" '
        f'aria-label="{escape(label)}"><button type=submit>'
        f"{escape(label.split(maxsplit=1)[0])}</button></form>"
    )


def line_chart(points: Sequence[tuple[str, float]], *, width: int = 640, height: int = 180) -> str:
    """An inline SVG line chart of ``(label, value)`` points (no script, no external asset)."""
    if not points:
        return "<p class=muted>No replies recorded yet: feedback adds a point per reply.</p>"
    top = max(v for _, v in points) or 1.0
    pad = 30
    step = (width - 2 * pad) / max(1, len(points) - 1)
    xy = [
        (pad + i * step, height - pad - (v / top) * (height - 2 * pad))
        for i, (_, v) in enumerate(points)
    ]
    path = " ".join(f"{x:.1f},{y:.1f}" for x, y in xy)
    dots = "".join(
        f'<circle cx="{x:.1f}" cy="{y:.1f}" r="3"><title>{escape(label)}: {value:.1f}x</title>'
        "</circle>"
        for (x, y), (label, value) in zip(xy, points, strict=True)
    )
    return (
        f'<svg class=chart role=img aria-label="savings over time" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}">'
        f'<text x="{pad}" y="16" font-size="11" fill="#5b6570">max {top:.1f}x</text>'
        f'<line x1="{pad}" y1="{height - pad}" x2="{width - pad}" y2="{height - pad}" '
        'stroke="#d9dee4"/>'
        f'<polyline fill="none" stroke="#1f5fbf" stroke-width="2" points="{path}"/>{dots}</svg>'
    )
