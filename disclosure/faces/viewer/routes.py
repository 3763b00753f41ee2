"""The web viewer's routes, served by ``disclosure serve`` at ``/``, and an offline ``/docs``.

Pages are rendered on the server; the only assets are a stylesheet and a small script shipped in
this package (``static/``), so nothing loads from the internet. Authentication and namespaces
are the API's: with API keys configured, a page needs the key (``X-API-Key``, a bearer token,
or the cookie ``/login`` sets); the namespace parts go in the query string (``?user=dana``).
Forgetting asks for confirmation on its own page, whose signed token the forget must carry (so
another site cannot make a browser forget on the user's behalf).
"""

import hashlib
import hmac
import secrets
from collections.abc import Callable
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response

from disclosure.core.empty import nothing_stored
from disclosure.faces.api.keys import ApiKeys
from disclosure.faces.viewer import views
from disclosure.faces.viewer.docs import docs_page
from disclosure.faces.viewer.html import page, qs, table
from disclosure.service.pool import ControllerPool
from disclosure.storage.namespaces import NAMESPACE_PARTS, Namespace, iter_namespaces
from tiers.errors import DisclosureError, MemoryNotFoundError

STATIC = Path(__file__).with_name("static")
ASSETS = {"viewer.css": "text/css", "viewer.js": "text/javascript"}
COOKIE = "td_viewer_key"
MAX_FORM_BYTES = 8192


def install_viewer(
    app: FastAPI, pool: ControllerPool, keys: ApiKeys, *, results_dir: Path | None = None
) -> None:
    """Add the viewer's pages, its static assets and the offline API docs to ``app``."""
    router = APIRouter(include_in_schema=False)
    results = results_dir or Path("results")
    secret = secrets.token_bytes(32)  # signs the forget confirmations this process hands out

    @router.get("/static/{name}")
    def static(name: str) -> Response:
        if name not in ASSETS:
            return _html(page("Not found", "<p>No such asset.</p>"), 404)
        return FileResponse(STATIC / name, media_type=ASSETS[name])

    @router.get("/docs")
    def docs() -> HTMLResponse:
        return HTMLResponse(docs_page(app.openapi()))

    @router.get("/login")
    def login_form() -> HTMLResponse:
        body = (
            "<form class=inline method=post action=/login>"
            "<input type=password name=key placeholder='API key' aria-label='API key'>"
            "<button type=submit>Sign in</button></form>"
        )
        return HTMLResponse(page("Sign in", body))

    @router.post("/login")
    async def login(request: Request) -> Response:
        form = await _form(request)
        key = form.get("key", "")
        if not keys.accepts(key):
            return _html(page("Sign in", "<p class=notice>That key is not accepted.</p>"), 401)
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(COOKIE, key, httponly=True, samesite="strict")
        return response

    def guarded(render: Callable[..., str | Response]) -> Callable[..., Any]:
        def handler(request: Request, **params: Any) -> Response:
            if keys and not keys.accepts(_key_of(request)):
                return RedirectResponse("/login", status_code=303)
            try:
                answer = render(request, **params)
            except MemoryNotFoundError as exc:
                return _html(page("Not found", f"<p>{escape(str(exc))}</p>"), 404)
            except DisclosureError as exc:
                return _html(
                    page("Cannot show this", f"<p class=notice>{escape(str(exc))}</p>"), 422
                )
            return answer if isinstance(answer, Response) else HTMLResponse(answer)

        return handler

    def with_controller(
        request: Request, title: str, body: Callable[..., str | None], *, one: bool = False
    ) -> str | Response:
        """The page ``body`` renders from the namespace's controller; a namespace nothing is
        stored in gets a notice instead (404 for ``one`` thing asked by reference), and is not
        created."""
        ns = _namespace(pool, request)
        parts = _parts(ns)
        if not pool.exists(ns):
            notice = f"<p class=notice>{escape(nothing_stored(ns))}.</p>"
            return _html(page(title, notice, ns=parts), 404 if one else 200)
        with pool.lease(ns) as controller:
            html = body(controller, parts)
        if html is None:
            return _html(page("Not found", "<p>Nothing by that reference here.</p>", ns=parts), 404)
        return page(title, html, ns=parts)

    def index(request: Request) -> str:
        rows = []
        for parts, _ in iter_namespaces(pool.root):
            label = ", ".join(f"{k}={v}" for k, v in parts.items()) or "(shared)"
            link = f"/ui/sessions{qs(parts)}"
            rows.append((f'<a href="{escape(link)}">{escape(label)}</a>',))
        body = (
            table(("namespace",), rows, raw=True)
            if rows
            else "<p class=muted>No namespaces yet.</p>"
        )
        return page("Namespaces", body)

    routes: dict[str, Callable[..., str | Response]] = {
        "/": index,
        "/ui/sessions": lambda r: with_controller(r, "Sessions", views.sessions),
        "/ui/session/{session_id}": lambda r, session_id: with_controller(
            r, f"Session {session_id}", lambda c, ns: views.session(c, session_id, ns)
        ),
        "/ui/search": lambda r: with_controller(
            r, "Search", lambda c, ns: views.search(c, r.query_params.get("q", ""), ns)
        ),
        "/ui/memory/{ref:path}": lambda r, ref: with_controller(
            r, "Memory", lambda c, ns: views.memory(c, ref, ns), one=True
        ),
        "/ui/summary/{summary_id}": lambda r, summary_id: with_controller(
            r, "Summary", lambda c, ns: views.summary_page(c, summary_id, ns), one=True
        ),
        "/ui/playground": lambda r: with_controller(
            r,
            "Disclosure playground",
            lambda c, ns: views.playground(c, r.query_params.get("q", ""), ns),
        ),
        "/ui/stats": lambda r: with_controller(r, "Stats", views.stats),
        "/ui/citations": lambda r: with_controller(r, "Popular citations", views.citations),
        "/ui/eval": lambda r: page("Latest evaluation report", views.latest_report(results)),
        "/ui/forget": lambda r: _confirm_forget(pool, r, secret),
    }
    for path, render in routes.items():
        router.add_api_route(
            path, _bind(guarded(render), path), methods=["GET"], response_class=HTMLResponse
        )

    @router.post("/ui/forget")
    async def forget(request: Request) -> Response:
        if keys and not keys.accepts(_key_of(request)):
            return RedirectResponse("/login", status_code=303)
        form = await _form(request)
        ns = _namespace(pool, request, form)
        parts = _parts(ns)
        token = _token(secret, ns, form.get("id", ""))
        if form.get("confirm") != token or not form.get("id"):
            return _html(
                page("Not forgotten", "<p>Forgetting needs the confirmation.</p>", ns=parts), 400
            )
        forgotten = _forget_one(pool, ns, form["id"])
        body = (
            f"<p>Forgot {len(forgotten)} memory: {escape(', '.join(forgotten)) or 'nothing'}.</p>"
        )
        return _html(page("Forgotten", body, ns=parts), 200)

    app.include_router(router)


def _bind(handler: Callable[..., Response], path: str) -> Callable[..., Response]:
    """A route function whose signature FastAPI reads: the request and the path's parameters."""
    names = [p.strip("{}").split(":")[0] for p in path.split("/") if p.startswith("{")]

    def plain(request: Request) -> Response:
        return handler(request)

    def session(request: Request, session_id: str) -> Response:
        return handler(request, session_id=session_id)

    def memory(request: Request, ref: str) -> Response:
        return handler(request, ref=ref)

    def summary(request: Request, summary_id: str) -> Response:
        return handler(request, summary_id=summary_id)

    chosen = {"session_id": session, "ref": memory, "summary_id": summary}
    return chosen[names[0]] if names else plain


def _token(secret: bytes, ns: Namespace, memory_id: str) -> str:
    """The confirmation a forget must carry: only this process's confirmation page has it, so
    another site cannot make a browser forget on the user's behalf."""
    message = f"{ns.key}\x1f{memory_id}".encode()
    return hmac.new(secret, message, hashlib.sha256).hexdigest()


def _forget_one(pool: ControllerPool, ns: Namespace, memory_id: str) -> tuple[str, ...]:
    """The ids forgotten; a namespace nothing is stored in has nothing to forget, and is not
    created for it."""
    if not pool.exists(ns):
        return ()
    with pool.lease(ns) as controller:
        return controller.forget(ids=[memory_id]).ids


def _confirm_forget(pool: ControllerPool, request: Request, secret: bytes) -> str | Response:
    ns = _namespace(pool, request)
    parts = _parts(ns)
    memory_id = request.query_params.get("id", "")
    found = None
    if memory_id and pool.exists(ns):
        with pool.lease(ns) as controller:
            found = controller.resolve(memory_id)
    if found is None:
        return _html(page("Not found", "<p>No such memory.</p>", ns=parts), 404)
    hidden = "".join(
        f'<input type=hidden name="{escape(k)}" value="{escape(v)}">' for k, v in parts.items()
    )
    body = (
        f"<p class=notice>Forget memory <b>{escape(found.id)}</b> of session "
        f"{escape(found.session_id)} from every tier, summary and log? This cannot be undone.</p>"
        f"<pre>{escape(found.content[:600])}</pre>"
        '<form method=post action="/ui/forget" data-confirm="Forget this memory for good?">'
        f'{hidden}<input type=hidden name=id value="{escape(found.id)}">'
        f'<input type=hidden name=confirm value="{_token(secret, ns, found.id)}">'
        "<button class=danger type=submit>Yes, forget it</button></form>"
    )
    return page("Forget a memory?", body, ns=parts)


def _refused(request: Request, ns: Namespace, *, write: bool) -> Response | None:
    """A 403 page unless the key's grant covers ``ns`` (and writes, for a write)."""
    grant = getattr(request.state, "grant", None)
    if grant is None or grant.allows(ns.as_dict().get("tenant"), write=write):
        return None
    what = "change" if write and grant.read_only else "see"
    body = f"<p class=notice>This API key may not {what} {escape(str(ns))}.</p>"
    return _html(page("Forbidden", body), 403)


def _namespace(
    pool: ControllerPool, request: Request, form: dict[str, str] | None = None
) -> Namespace:
    given = {
        part: request.query_params.get(part) or (form or {}).get(part) for part in NAMESPACE_PARTS
    }
    return pool.namespace({k: v for k, v in given.items() if v})


def _parts(ns: Namespace) -> dict[str, str]:
    return {k: v for k, v in ns.as_dict().items() if v and k in ns.as_dict()}


def _key_of(request: Request) -> str | None:
    header = request.headers.get("x-api-key")
    bearer = request.headers.get("authorization", "")
    if header:
        return header
    if bearer.lower().startswith("bearer "):
        return bearer[7:].strip()
    return request.cookies.get(COOKIE)


async def _form(request: Request) -> dict[str, str]:
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        return {}
    parsed = parse_qs(body.decode("utf-8", "replace"), keep_blank_values=True)
    return {k: v[0] for k, v in parsed.items() if v}


def _html(text: str, status: int) -> HTMLResponse:
    return HTMLResponse(text, status_code=status)
