"""The viewer's page bodies, each from what the controller answers (HTML, escaped)."""

from __future__ import annotations

from collections.abc import Mapping
from html import escape
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from disclosure.consolidation.service import CollapsedSession
from disclosure.consolidation.store import Summary
from disclosure.core.workflow import IndexEntry, search_index
from disclosure.faces.viewer.html import badge, line_chart, qs, search_form, table

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController

Ns = Mapping[str, str]


def sessions(controller: DisclosureController, ns: Ns) -> str:
    cold = controller.store.cold
    rows = (
        cold.query(
            "SELECT session_id, MIN(ts_us), MAX(ts_us), COUNT(*) FROM memories "
            "GROUP BY session_id ORDER BY MIN(ts_us), session_id"
        )
        if cold is not None
        else []
    )
    if not rows:
        return "<p class=muted>No memories in this namespace yet.</p>"
    entries = []
    for session_id, first, last, count in rows:
        found = controller.consolidation.of_session(str(session_id))
        line = found[0].index_line if found else "not consolidated yet"
        when = _day(int(first)) + (
            "" if _day(int(first)) == _day(int(last)) else f" to {_day(int(last))}"
        )
        link = f"/ui/session/{quote(str(session_id), safe='')}{qs(ns)}"
        entries.append(
            f'<div class=entry><a href="{escape(link)}"><b>{escape(str(session_id))}</b></a> '
            f"<span class=muted>{escape(when)} · {int(count)} memories</span>"
            f"<div class=small>{escape(line)}</div></div>"
        )
    return f"<div class=timeline>{''.join(entries)}</div>"


def session(controller: DisclosureController, session_id: str, ns: Ns) -> str:
    ids = controller.store.ids_in_session(session_id)
    memories = controller.store.get(ids)
    if not memories:
        return "<p class=muted>No such session in this namespace.</p>"
    cites = controller.composer.citations([m.id for m in memories])
    found = controller.consolidation.of_session(session_id)
    parts = [summary_block(s, controller, ns) for s in found if s.kind == "topic"]
    rows = [
        (
            badge(cites.get(m.id, ""), ns),
            escape(m.timestamp.strftime("%Y-%m-%d %H:%M")),
            escape(m.speaker or m.kind.value),
            escape(m.summary or m.content[:160]),
        )
        for m in memories
    ]
    head = f"<p class=small>{escape(found[0].index_line)}</p>" if found else ""
    topics = f"<h2>Topics</h2>{''.join(parts)}" if parts else ""
    return (
        head
        + topics
        + "<h2>Memories</h2>"
        + table(("cite", "when", "who", "index line"), rows, raw=True)
    )


def summary_block(summary: Summary, controller: DisclosureController, ns: Ns) -> str:
    link = f"/ui/summary/{quote(summary.id, safe=':')}{qs(ns)}"
    return (
        f'<div class=card><a href="{escape(link)}">{escape(summary.id)}</a> '
        f"<span class=small>{escape(summary.index_line)}</span>"
        f"<p class=small>{_linked(summary.paragraph, ns)}</p></div>"
    )


def search(controller: DisclosureController, query: str, ns: Ns) -> str:
    form = search_form("/ui/search", "q", query, ns, "Search memories")
    if not query.strip():
        return form
    entries = search_index(controller, query, limit=20)
    rows = []
    for entry in controller.consolidation.collapse(entries):
        if isinstance(entry, CollapsedSession):
            cites = " ".join(badge(h.citation, ns) for h in entry.hits if isinstance(h, IndexEntry))
            line = f"{len(entry.hits)} matches in this session: {entry.summary.index_line}"
            link = f"/ui/session/{quote(entry.summary.session_id, safe='')}{qs(ns)}"
            rows.append(
                (
                    cites,
                    "",
                    "summary",
                    f'<a href="{escape(link)}">{escape(entry.summary.session_id)}</a>',
                    escape(line),
                )
            )
            continue
        rows.append(
            (
                badge(entry.citation, ns),
                f"{entry.score:.2f}",
                escape(entry.tier),
                escape(entry.session_id),
                escape(entry.summary),
            )
        )
    hits = controller.search_summaries(query, k=5)
    summaries = "".join(summary_block(h.summary, controller, ns) for h in hits)
    found = table(("citation", "score", "tier", "session", "index line"), rows, raw=True)
    return (
        form
        + (f"<h2>Summaries</h2>{summaries}" if summaries else "")
        + f"<h2>Memories ({len(entries)})</h2>"
        + (found if rows else "<p class=muted>Nothing matches.</p>")
    )


def memory(controller: DisclosureController, ref: str, ns: Ns) -> str | None:
    found = controller.resolve(ref)
    if found is None:
        return None
    detail = controller.show(found.id)
    neighbours = controller.store.neighbours(found.id, 3)
    cites = controller.composer.citations([found.id, *(n.id for n in neighbours)])
    near = [
        (
            badge(cites.get(n.id, ""), ns),
            escape(n.speaker or ""),
            escape(n.summary or n.content[:140]),
        )
        for n in neighbours
        if n.id != found.id
    ]
    citing = "".join(
        summary_block(s, controller, ns) for s in controller.consolidation.citing(found.id)
    )
    uses = controller.citation_log.where(found.id, 20)
    used = [(u.at.strftime("%Y-%m-%d %H:%M"), u.how, u.session_id or "-", u.query) for u in uses]
    forget = (
        '<form method=get action="/ui/forget">'
        + "".join(
            f'<input type=hidden name="{escape(k)}" value="{escape(v)}">' for k, v in ns.items()
        )
        + f'<input type=hidden name=id value="{escape(found.id)}">'
        "<button class=danger type=submit>Forget this memory…</button></form>"
    )
    return (
        f"<p>{badge(cites.get(found.id, ''), ns)} <span class=muted>{escape(found.id)} · "
        f"session {escape(found.session_id)}</span></p>"
        f"<pre id=detail>{escape(detail)}</pre>"
        "<h2>Neighbours</h2>"
        + table(("cite", "who", "index line"), near, raw=True)
        + "<h2>Summaries that cite it</h2>"
        + (citing or "<p class=muted>None yet (consolidation writes them).</p>")
        + "<h2>Where replies used it</h2>"
        + (
            table(("when", "how", "session", "query"), used)
            if used
            else "<p class=muted>Not yet.</p>"
        )
        + forget
    )


def summary_page(controller: DisclosureController, summary_id: str, ns: Ns) -> str | None:
    found = controller.consolidation.get(summary_id)
    if found is None:
        return None
    cites = controller.composer.citations(list(found.sources))
    sources = " ".join(badge(cites.get(i, ""), ns) for i in found.sources)
    return (
        f"<p class=muted>{escape(found.kind)} summary of session {escape(found.session_id)} · "
        f"{len(found.sources)} sources · by {escape(found.summarizer)}</p>"
        f"<h2>Index line</h2><p>{escape(found.index_line)}</p>"
        f"<h2>Paragraph</h2><p>{_linked(found.paragraph, ns)}</p>"
        f"<h2>Full text</h2><pre>{escape(found.full_text)}</pre><h2>Sources</h2><p>{sources}</p>"
    )


def playground(controller: DisclosureController, query: str, ns: Ns) -> str:
    form = search_form("/ui/playground", "q", query, ns, "Disclose for a query")
    if not query.strip():
        return form + "<p class=muted>Type a query: see the level, the budget, and the context.</p>"
    result = controller.disclose(query)
    cards = [
        ("level", result.level.value, result.analysis.reason),
        ("budget", str(result.budget), result.budget_reason),
        (
            "tokens",
            str(result.tokens_used),
            f"of {result.budget}; full history {result.full_history_tokens}",
        ),
        ("savings", f"{result.savings:.1f}x", result.savings_line),
    ]
    grid = "".join(
        f"<div class=card id=card-{k}>{escape(k)}<b>{escape(v)}</b>"
        f"<span class=small>{escape(why)}</span></div>"
        for k, v, why in cards
    )
    timings = ", ".join(f"{k} {v:.1f} ms" for k, v in result.timings_ms.items())
    return (
        form + f"<div class=grid>{grid}</div>"
        f"<p class=small>expansion: {escape(result.expansion_reason or '-')} · "
        f"timings: {escape(timings)}</p><h2>Context, exactly as the model gets it</h2>"
        f'<pre id=context data-tokens="{result.tokens_used}" '
        f'data-budget="{result.budget}">{escape(result.text)}</pre>'
    )


def stats(controller: DisclosureController, ns: Ns) -> str:
    data: dict[str, Any] = controller.stats()
    store = data["store"]
    cards = [
        ("hot", store["hot"]),
        ("warm", "-" if store["warm"] is None else store["warm"]),
        ("cold", store["cold"]),
        ("pending embeddings", store["pending"]),
        ("summaries", data["summaries"]["topic"] + data["summaries"]["session"]),
        ("waiting to consolidate", data["summaries"]["waiting"]),
    ]
    grid = "".join(f"<div class=card>{escape(k)}<b>{escape(str(v))}</b></div>" for k, v in cards)
    budget = [
        (level, "yes" if row["learned"] else "no", str(row["observations"]))
        for level, row in data["budget"].items()
    ]
    points = [
        (p.at.strftime("%Y-%m-%d %H:%M"), p.savings) for p in controller.citation_log.replies(200)
    ]
    return (
        f"<div class=grid>{grid}</div><h2>Adaptive budget</h2>"
        + table(("level", "learned", "replies seen"), budget)
        + "<h2>Savings over time (full history / tokens disclosed, per reply)</h2>"
        + line_chart(points)
    )


def citations(controller: DisclosureController, ns: Ns, top: int = 25) -> str:
    counts = controller.citations(top=top)
    if not counts:
        return "<p class=muted>No reply has used a citation yet (feedback records them).</p>"
    rows = [
        (
            badge(c.citation, ns),
            str(c.cited),
            str(c.echoed),
            escape(c.last.strftime("%Y-%m-%d %H:%M")),
        )
        for c in counts
    ]
    return table(("citation", "cited", "echoed", "last used"), rows, raw=True)


def latest_report(results: Path) -> str:
    reports = (
        sorted(results.glob("*/report.md"), key=lambda p: p.stat().st_mtime)
        if results.is_dir()
        else []
    )
    if not reports:
        where = escape(str(results))
        return f"<p class=muted>No <code>disclosure eval</code> report under {where} yet.</p>"
    newest = reports[-1]
    text = escape(newest.read_text(encoding="utf-8"))
    return f"<p class=muted>{escape(str(newest))}</p><pre>{text}</pre>"


def _linked(text: str, ns: Ns) -> str:
    """``text`` escaped, its ``[mem:xxxxxx]`` citations as badges."""
    import re

    out, last = [], 0
    for match in re.finditer(r"\[([a-z][a-z0-9_-]{0,15}:[A-Za-z0-9_-]{4,16})\]", text):
        out.append(escape(text[last : match.start()]))
        out.append(badge(match.group(1), ns))
        last = match.end()
    out.append(escape(text[last:]))
    return "".join(out)


def _day(us: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(us / 1e6, tz=UTC).strftime("%Y-%m-%d")
