"""Whether a serving process may take traffic: what ``GET /ready`` answers.

``/health`` says the process lives; ``/ready`` says a request would be answered at its usual
speed. A server starts loading at once, in a background thread, everything the first request
would otherwise wait for, each step a *check*:

- ``analyzer``: the profile's query analyzer (its rule pipeline built, one throw-away query read);
- ``tokens``: the token counter (its encoding loaded, one text counted);
- ``embedder``: the warm tier's embedder (the model loaded, one throw-away text embedded), when
  the profile has one;
- ``pipeline``: the modules a namespace's first open imports (the controller, the stores of the
  profile's backends) and one throw-away disclosure of a namespace that holds nothing (analysis,
  budget), which creates nothing;
- ``render``: the injection filter's model read, and every formatter the profile's levels name
  rendering two made-up memories at every layer within a budget (their text scanned);
- ``postgresql``: the archive's connection pool opened and one ``SELECT 1`` answered, when the
  archive is in PostgreSQL (the pool is then held for the process's life, so closing the last
  open namespace does not close it);
- ``chroma``: the process's client of the Chroma server made (and held for the process's life,
  shared by every namespace's warm tier) and its heartbeat answered, when the vectors are on a
  server.

A face adds steps of its own with :meth:`Readiness.add_step` (the HTTP API: ``routes``, its
routes built before the first request needs them). Until every check is ``ok`` the process is
not ready, and ``/ready`` names the first that is not. Once loaded, the backends are asked
again (at most once a second, each within :data:`PROBE_SECONDS`), so a replica whose database
or vector server went away stops being ready and becomes ready again when it is back. A step
that failed while loading is retried every :data:`RETRY_SECONDS`. Reasons name the step, never
an address or a credential; the log has the details.
"""

from __future__ import annotations

import logging
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from tiers.backends import database_url

if TYPE_CHECKING:
    from disclosure.service.pool import ControllerPool

log = logging.getLogger(__name__)

__all__ = ["PROBE_SECONDS", "RECHECK_SECONDS", "RETRY_SECONDS", "Readiness", "ReadyState"]

PROBE_SECONDS = 2.0  # a backend that does not answer within this is not reachable
RECHECK_SECONDS = 1.0  # how long a backend check's answer is reused
RETRY_SECONDS = 2.0  # how soon a step that failed while loading is tried again
_WARM_QUERY = "What did we decide about the deploy last week, and why?"
_LOADING, _OK = "loading", "ok"


@dataclass(frozen=True)
class ReadyState:
    """What ``/ready`` answers: ready or not, why not, and every check's state."""

    ready: bool
    reason: str | None
    checks: dict[str, str] = field(default_factory=dict)


class Readiness:
    """Loads what ``pool``'s first request would pay for, in a background thread, and says
    whether the process is ready (see the module). Thread-safe."""

    def __init__(self, pool: ControllerPool) -> None:
        self.pool = pool
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._loaded = False
        self._probed: tuple[float, dict[str, str]] = (0.0, {})
        self._held_url: str | None = None
        self._held_client: Any = None
        tiers = pool.profile.tiers
        self._database = database_url(tiers)
        self._vectors = pool.has_vectors()
        self._chroma = self._vectors and tiers.warm.backend == "server"
        self._steps: dict[str, Callable[[], None]] = {
            "analyzer": self._analyzer,
            "tokens": self._tokens,
            **({"embedder": self._embedder} if self._vectors else {}),
            "pipeline": self._pipeline,
            "render": self._render,
            **({"postgresql": self._postgresql} if self._database else {}),
            **({"chroma": self._chroma_client} if self._chroma else {}),
        }
        self._checks = dict.fromkeys(self._steps, _LOADING)

    def add_step(self, name: str, step: Callable[[], None]) -> None:
        """One more thing to load before the process is ready (before :meth:`start`)."""
        with self._lock:
            if self._thread is not None:
                raise RuntimeError("Readiness.add_step after start")
            self._steps[name] = step
            self._checks[name] = _LOADING

    def start(self) -> None:
        """Begin loading in the background (once)."""
        with self._lock:
            if self._thread is not None:
                return
            self._thread = threading.Thread(target=self._load, name="readiness", daemon=True)
            self._thread.start()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop loading (a step under way finishes first) and let go of the database pool."""
        self._stop.set()
        thread = self._thread
        if thread is not None:
            thread.join(timeout)
        with self._lock:
            url, self._held_url = self._held_url, None
            client, self._held_client = self._held_client, None
        if url is not None:
            from tiers.pg_schema import POOLS

            POOLS.release(url)
        if client is not None:
            from tiers.chroma_client import return_client

            return_client(client)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until loaded (or ``timeout``); whether it is."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while not self._stop.is_set():
            with self._lock:
                if self._loaded:
                    return True
            if deadline is not None and time.monotonic() >= deadline:
                return False
            time.sleep(0.05)
        return False

    def state(self) -> ReadyState:
        """Ready or not, now (loading steps as they stand; once loaded, the backends probed)."""
        with self._lock:
            checks = dict(self._checks)
            loaded = self._loaded
        if loaded:
            checks.update(self._probe())
        for name, status in checks.items():
            if status != _OK:
                return ReadyState(False, f"{name}: {status}", checks)
        return ReadyState(True, None, checks)

    # -- loading --------------------------------------------------------------------------------

    def _load(self) -> None:
        started = time.perf_counter()
        pending = list(self._steps)
        while pending and not self._stop.is_set():
            failed = []
            for name in pending:
                if self._stop.is_set():
                    return
                if not self._run(name):
                    failed.append(name)
            pending = failed
            if pending:
                self._stop.wait(RETRY_SECONDS)
        if self._stop.is_set():
            return
        with self._lock:
            self._loaded = True
        log.info("ready in %.1f s (%s)", time.perf_counter() - started, ", ".join(self._steps))

    def _run(self, name: str) -> bool:
        began = time.perf_counter()
        try:
            self._steps[name]()
        except Exception as exc:  # a step that fails keeps the process unready, never kills it
            log.warning("readiness: %s failed: %s", name, exc)
            with self._lock:
                self._checks[name] = f"failed ({type(exc).__name__}); retrying"
            return False
        log.debug("readiness: %s in %.0f ms", name, (time.perf_counter() - began) * 1000)
        with self._lock:
            self._checks[name] = _OK
        return True

    def _analyzer(self) -> None:
        from disclosure.core.empty import analyzer_of

        analyzer_of(self.pool.profile).analyze(_WARM_QUERY)

    def _tokens(self) -> None:
        from formatters import get_token_counter

        get_token_counter(self.pool.profile.tokens.encoding)(_WARM_QUERY)

    def _embedder(self) -> None:
        self.pool.embedder().embed([_WARM_QUERY])

    def _pipeline(self) -> None:
        import importlib

        modules = ["disclosure.core.controller", "tiers.lifecycle", "tiers.hot"]
        modules += ["tiers.warm"] if self._vectors else []
        modules += ["tiers.pg_archive", "tiers.pg_outbox"] if self._database else []
        for name in modules:  # what a namespace's first open would import
            importlib.import_module(name)
        if not self._stop.is_set():  # the pool is closed right after a stop
            self.pool.empty.disclose(_WARM_QUERY, warning="readiness check")

    def _render(self) -> None:
        from datetime import UTC, datetime

        from formatters import (
            Layer,
            RenderItem,
            WrapperInfo,
            get_formatter,
            get_token_counter,
            render_context,
        )
        from safeguards.injection_lexicon import load_lexicon
        from safeguards.injection_model import load_model
        from tiers.memory import Memory

        load_model()  # else read when a text first needs it: in a first answer's rendering
        load_lexicon().prepare()  # else its patterns compile as a first answer's texts meet them

        profile = self.pool.profile
        counter = get_token_counter(profile.tokens.encoding)
        now = datetime.now(UTC)
        said = [
            Memory(id=f"ready-{i}", content=text, session_id="ready", timestamp=now)
            for i, text in enumerate((_WARM_QUERY, "We moved the deploy to Friday: tests failed."))
        ]
        items = [
            RenderItem(memory=said[1], citation="mem:ready1", layer=layer, neighbours=(said[0],))
            for layer in Layer
        ]
        for name in sorted({level.formatter for level in profile.levels.values()}):
            render_context(
                get_formatter(name, profile.formatting),
                items,
                budget=400,
                counter=counter,
                now=now,
                info=WrapperInfo(level="standard", full_history_tokens=1000),
                options=profile.formatting,
            )

    def _postgresql(self) -> None:
        from tiers.pg_schema import POOLS

        assert self._database is not None
        with self._lock:
            held = self._held_url is not None
        if not held:
            POOLS.acquire(self._database)  # kept for the process's life (released by stop)
            with self._lock:
                self._held_url = self._database
        self._select_one()

    def _chroma_client(self) -> None:
        from tiers.chroma_client import acquire_client

        with self._lock:
            client = self._held_client
        if client is None:
            client = acquire_client(None, self.pool.profile.tiers.warm)  # kept (see stop)
            with self._lock:
                self._held_client = client
        client.heartbeat()

    # -- probing the backends once loaded --------------------------------------------------------

    def _probe(self) -> dict[str, str]:
        now = time.monotonic()
        with self._lock:
            when, found = self._probed
            if now - when < RECHECK_SECONDS:
                return dict(found)
        found = {}
        if self._database:
            found["postgresql"] = self._checked(self._select_one, "unreachable")
        if self._chroma:
            found["chroma"] = self._checked(self._heartbeat, "unreachable")
        with self._lock:
            self._probed = (time.monotonic(), found)
        return dict(found)

    @staticmethod
    def _checked(probe: Callable[[], Any], failure: str) -> str:
        try:
            probe()
        except Exception as exc:
            log.warning("readiness: %s: %s", failure, exc)
            return failure
        return _OK

    def _select_one(self) -> None:
        from tiers.pg_schema import POOLS

        assert self._database is not None
        pool = POOLS.peek(self._database)
        if pool is None:
            raise ConnectionError("the database pool is closed")
        with pool.connection(timeout=PROBE_SECONDS) as conn:
            conn.execute("SELECT 1").fetchone()

    def _heartbeat(self) -> None:
        warm = self.pool.profile.tiers.warm
        scheme = "https" if warm.ssl else "http"
        url = f"{scheme}://{warm.host}:{warm.port}/api/v2/heartbeat"
        try:
            with urllib.request.urlopen(url, timeout=PROBE_SECONDS) as response:
                if int(response.status) != 200:
                    raise ConnectionError(f"heartbeat answered {response.status}")
        except (urllib.error.URLError, OSError) as exc:
            raise ConnectionError(str(exc)) from None
