"""``disclosure hook EVENT``: what Claude Code's hooks run, with the hook's JSON on stdin.

=================  =================  ============================================================
event              Claude Code event  what it does
=================  =================  ============================================================
``session-start``  SessionStart       starts the local service if none runs; adds a short context:
                                      the last session's prompts, last reply, unfinished todos
``prompt``         UserPromptSubmit   ``disclose`` for the prompt (level and budget chosen for it)
                                      added as context with its citations and savings line; runs
                                      the ``/mem-*`` slash commands
``tool-use``       PostToolUse        stores an observation: tool, target, an excerpt of the result
``stop``           Stop               stores the turn (prompt, replies, tool uses not stored yet)
                                      from the transcript; ``feedback`` on what the reply cited
``session-end``    SessionEnd         consolidates what left the working set
=================  =================  ============================================================

A hook never breaks the agent: whatever happens (malformed input, no service, a slow one, a
full disk, a bug) it exits 0 within a second of its start (``$TIERED_DISCLOSURE_HOOK_DEADLINE``
seconds, 0.9 by default; a watchdog ends it if a step overruns) with at most one line on
stderr. A memory the service could not take waits in a spool until a later hook hands it over
(:mod:`~disclosure.faces.agent.state`); files are written whole or not at all. It imports the
standard library and this package's thin modules only (no pydantic, spaCy, Chroma, torch or
onnxruntime): see :mod:`~disclosure.faces.agent.wire`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from disclosure.faces.agent.commands import parse_command, run_command
from disclosure.faces.agent.context import (
    additional_context,
    disclosure_context,
    session_start_context,
)
from disclosure.faces.agent.observe import OBSERVATION_KIND, observation, observation_id, skipped
from disclosure.faces.agent.project import (
    agent_home,
    default_root,
    namespace_key,
    parse_namespace,
    project_dir,
    project_namespace,
)
from disclosure.faces.agent.state import HookState, Spool
from disclosure.faces.agent.wire import (
    Deadline,
    HookError,
    ServiceAnswerError,
    ThinClient,
    find_address,
    ref_path,
    service_disabled,
    start_detached,
)

__all__ = ["DEADLINE_VARIABLE", "EVENTS", "main"]

DEADLINE_VARIABLE = "TIERED_DISCLOSURE_HOOK_DEADLINE"
DEFAULT_DEADLINE = 0.9  # seconds from the process's start
WATCHDOG_GRACE = 0.06
MAX_INPUT_BYTES = 32 * 1024 * 1024
MAX_QUERY_CHARS = 4000  # the service's max_query_chars
MAX_REPLY_CHARS = 200_000
START_WAIT = 0.3  # what the session start waits for a service it started
SPOOL_RESERVE = 0.25  # seconds a write leaves itself to spool what the service did not take
TRANSCRIPT_WAIT = 0.3  # seconds the Stop hook waits for the agent to write its reply down
FLUSH_RESERVE = 0.4  # ... and handing over the spool leaves the hook's own request
OPENER = "cc:opens-the-store"  # an id no memory has: reading it opens the namespace's store
KINDS = {"user": "prompt", "assistant": "response", "tool": OBSERVATION_KIND}


class SpooledError(HookError):
    """The service could not take the memories now: they wait in the spool."""


class Hook:
    """One hook run: its options, the agent's input, and the service it talks to."""

    def __init__(self, argv: Sequence[str], payload: Mapping[str, Any], deadline: Deadline):
        self.payload = payload
        self.deadline = deadline
        options = _options(argv)
        self.root = Path(options["root"]).expanduser() if "root" in options else default_root()
        self.profile = options.get("profile", "coding-agent")
        self.session_id = _session_id(payload)
        self.project = project_dir(_text(payload, "cwd"))
        if "namespace" in options:
            self.namespace = parse_namespace(options["namespace"])
        else:
            self.namespace = project_namespace(self.project)
        home = agent_home(self.root)
        self.key = namespace_key(self.namespace)
        self.state = HookState(home, self.key)
        self.spool = Spool(home, self.key)
        self._client: ThinClient | None = None

    def client(self, *, start: bool = True, wait: float = 0.0) -> ThinClient:
        """A client of the root's service; starts one (detached) if none runs and ``start``,
        waiting at most ``wait`` seconds for it. HookError when there is none to talk to."""
        if self._client is not None:
            return self._client
        address = find_address(self.root)
        if address is None:
            if service_disabled():
                raise HookError("$TIERED_DISCLOSURE_NO_SERVICE is set: hooks need the service")
            if not start:
                raise HookError(f"no memory service runs for {self.root}")
            started = start_detached(self.root, self.profile)
            address = self._wait_for_service(wait)
            if address is None:
                what = "started" if started else "is starting"
                raise HookError(f"the memory service for {self.root} {what}; not ready yet")
        self._client = ThinClient(address, self.namespace, self.deadline)
        return self._client

    def _wait_for_service(self, wait: float) -> Any:
        until = time.monotonic() + min(wait, max(0.0, self.deadline.left() - 0.2))
        while True:
            address = find_address(self.root)
            if address is not None or time.monotonic() >= until:
                return address
            time.sleep(0.03)

    def store(self, memories: list[dict[str, Any]]) -> None:
        """Ingest ``memories``; when the service cannot take them now they are spooled (and
        HookError says so)."""
        if not memories:
            return
        try:
            client = self.client()
            self.flush(client, reserve=SPOOL_RESERVE)
            cap = self.deadline.left() - SPOOL_RESERVE
            if cap <= 0:
                raise HookError("no time left to reach the memory service")
            client.post("/v1/ingest", {"memories": memories}, cap=cap)
        except ServiceAnswerError as exc:
            if exc.status < 500:
                raise  # refused: sending it again would not help
            self._spool(memories, exc)
        except HookError as exc:
            self._spool(memories, exc)

    def _spool(self, memories: list[dict[str, Any]], why: Exception) -> None:
        from disclosure.faces.agent.deliver import start_delivery

        try:
            self.spool.put([_without_secrets(m) for m in memories])
        except OSError as exc:
            lost = f"{why}; and {len(memories)} memories could not be kept: {exc}"
            raise HookError(lost) from None
        with contextlib.suppress(OSError):  # else the next hook that reaches it hands them over
            start_delivery(self.root, self.key, self.namespace)
        raise SpooledError(f"{why}; {len(memories)} memories kept until it answers")

    def flush(self, client: ThinClient, *, reserve: float = 0.0) -> int:
        """Hand the spooled memories to the service (leaving ``reserve`` seconds unused)."""
        if not self.spool.pending():
            return 0

        def send(batch: list[dict[str, Any]]) -> None:
            client.post("/v1/ingest", {"memories": batch}, cap=self.deadline.left() - reserve)

        return self.spool.flush(send)


def _without_secrets(memory: dict[str, Any]) -> dict[str, Any]:
    """``memory`` as the spool keeps it: its secrets replaced by markers, as the service's
    ingest would (it does it again: redacting twice changes nothing), so none waits on disk."""
    from safeguards.secrets import redact, redact_field

    metadata = {
        key: redact_field(key, value).text if isinstance(value, str) else value
        for key, value in memory.get("metadata", {}).items()
    }
    return {**memory, "content": redact(memory["content"]).text, "metadata": metadata}


def session_start(hook: Hook) -> dict[str, Any] | None:
    client = hook.client(wait=START_WAIT)
    hook.flush(client, reserve=FLUSH_RESERVE)
    last = hook.state.last_other_session(hook.session_id)
    record = last[1] if last is not None else {}
    ids = [i for i in (*record.get("prompts", []), record.get("reply"), record.get("todo")) if i]
    try:  # the first read opens the namespace's store in the service, for the prompts to come
        memories = [m for m in (_memory(client, i) for i in ids or [OPENER]) if m]
    except ServiceAnswerError:
        raise
    except HookError:
        raise HookError(
            "the service is opening this project's memory; it is there from the next prompts on"
        ) from None
    started = str(memories[0].get("timestamp", ""))[:16].replace("T", " ") if memories else None
    text = session_start_context(started, memories)
    return additional_context("SessionStart", text) if text else None


def _memory(client: ThinClient, ref: str) -> dict[str, Any] | None:
    try:
        answer = client.get(ref_path("/v1/memories", ref))
    except ServiceAnswerError as exc:
        if exc.status == 404:
            return None  # forgotten since
        raise
    memory = answer.get("memory")
    return memory if isinstance(memory, dict) else None


def prompt(hook: Hook) -> dict[str, Any] | None:
    text = _text(hook.payload, "prompt")
    if text is None or not text.strip():
        raise HookError("the hook input has no prompt")
    client = hook.client()
    hook.flush(client, reserve=FLUSH_RESERVE)  # what waits (rarely anything) goes first
    command = parse_command(text)
    if command is not None:
        return additional_context("UserPromptSubmit", run_command(client, *command))
    answer = client.post("/v1/disclose", {"query": text[:MAX_QUERY_CHARS]})
    context = disclosure_context(answer)
    if context is None:
        return None
    pending = {"prompt_id": _text(hook.payload, "prompt_id"), "id": answer.get("disclosure_id")}
    hook.state.update(hook.session_id, lambda record: record.update(pending=pending))
    return additional_context("UserPromptSubmit", context)


def tool_use(hook: Hook) -> None:
    tool = _text(hook.payload, "tool_name")
    if tool is None:
        raise HookError("the hook input has no tool_name")
    if skipped(tool):
        return
    tool_input = hook.payload.get("tool_input")
    tool_use_id = _text(hook.payload, "tool_use_id")
    text, metadata = observation(
        tool, tool_input, hook.payload.get("tool_response"), cwd=str(hook.project)
    )
    memory = {
        "id": observation_id(hook.session_id, tool_use_id, tool, tool_input),
        "content": text,
        "session_id": hook.session_id,
        "kind": OBSERVATION_KIND,
        "speaker": None,  # a tool is no participant: "Read" would name one in "read the docs"
        "timestamp": datetime.now(UTC).isoformat(),
        "metadata": {**metadata, "cwd": str(hook.project)},
    }

    def seen(record: dict[str, Any]) -> None:  # stored or spooled: the end of the turn skips it
        record["observed"] = [*record.get("observed", [])[-199:], memory["id"]]
        if tool == "TodoWrite":
            record["todo"] = memory["id"]

    try:
        hook.store([memory])
    except SpooledError:
        hook.state.update(hook.session_id, seen)
        raise
    hook.state.update(hook.session_id, seen)


def stop(hook: Hook) -> None:
    from disclosure.faces.agent.transcript import read_turn

    prompt_id = _text(hook.payload, "prompt_id")
    path = _text(hook.payload, "transcript_path")
    last = _text(hook.payload, "last_assistant_message")
    entries = _await_reply(hook, read_turn, path, prompt_id, last)
    if entries and entries[0].role == "user" and parse_command(entries[0].text):
        hook.state.update(hook.session_id, lambda record: record.pop("pending", None))
        return  # a /mem-* command: memory of memory is noise
    record = hook.state.session(hook.session_id)
    observed = set(record.get("observed", []))
    memories = [_entry_memory(e) for e in entries if e.id not in observed]
    replies = [e.text for e in entries if e.role == "assistant"]
    if last and last.strip() not in {r.strip() for r in replies}:
        memories.append(_fallback_reply(hook, prompt_id, last))
        replies.append(last)
    failure: HookError | None = None
    try:
        hook.store(memories)
    except HookError as exc:
        failure = exc
    _remember_turn(hook, memories)
    if failure is None and replies:
        _feedback(hook, record.get("pending"), prompt_id, "\n\n".join(replies))
    if failure is not None:
        raise failure


def _await_reply(
    hook: Hook,
    read: Callable[..., list[Any]],
    path: str | None,
    prompt_id: str | None,
    last: str | None,
) -> list[Any]:
    """The turn's entries, read again for a moment while the transcript lacks the reply the
    Stop input carries: the agent can fire Stop before its transcript holds the reply, and a reply
    stored from the input keeps an id of its own, which a later import of the transcript would
    store a second time under the transcript's id."""
    entries = _turn(read, path, prompt_id)
    if not last or path is None:
        return entries
    until = time.monotonic() + min(TRANSCRIPT_WAIT, max(0.0, hook.deadline.left() - 0.5))
    while not _holds_reply(entries, last) and time.monotonic() < until:
        time.sleep(0.03)
        entries = _turn(read, path, prompt_id)
    return entries


def _holds_reply(entries: list[Any], last: str) -> bool:
    return last.strip() in {e.text.strip() for e in entries if e.role == "assistant"}


def _turn(read: Callable[..., list[Any]], path: str | None, prompt_id: str | None) -> list[Any]:
    if path is None:
        return []
    try:
        return read(path, prompt_id)
    except OSError:
        return []  # not written yet, or gone: the Stop input's own copy of the reply is kept


def _entry_memory(entry: Any) -> dict[str, Any]:
    memory = {
        "id": entry.id,
        "content": entry.text,
        "session_id": entry.session_id,
        "kind": KINDS[entry.role],
        "metadata": entry.metadata,
    }
    if entry.speaker is not None:
        memory["speaker"] = entry.speaker
    if entry.timestamp:
        memory["timestamp"] = entry.timestamp
    return memory


def _fallback_reply(hook: Hook, prompt_id: str | None, text: str) -> dict[str, Any]:
    """The reply as the Stop input gives it, when the transcript did not have it yet."""
    return {
        "id": f"cc:{hook.session_id}:reply:{prompt_id or int(time.time() * 1000)}"[:256],
        "content": text[:100_000],
        "session_id": hook.session_id,
        "kind": "response",
        "speaker": "assistant",
        "timestamp": datetime.now(UTC).isoformat(),
        "metadata": {"source": "claude-code", "cwd": str(hook.project)},
    }


def _remember_turn(hook: Hook, memories: list[dict[str, Any]]) -> None:
    prompts = [m["id"] for m in memories if m["kind"] == "prompt"]
    replies = [m["id"] for m in memories if m["kind"] == "response"]

    def change(record: dict[str, Any]) -> None:
        if prompts:
            record["prompts"] = [*record.get("prompts", []), *prompts][-5:]
        if replies:
            record["reply"] = replies[-1]
        record["observed"] = []

    hook.state.update(hook.session_id, change)


def _feedback(hook: Hook, pending: Any, prompt_id: str | None, reply: str) -> None:
    if not isinstance(pending, dict) or not isinstance(pending.get("id"), str):
        return
    if prompt_id is not None and pending.get("prompt_id") not in (None, prompt_id):
        return  # that disclosure was for another prompt
    body = {"disclosure_id": pending["id"], "reply": reply[:MAX_REPLY_CHARS],
            "session_id": hook.session_id}  # fmt: skip
    try:
        hook.client().post("/v1/feedback", body)
    except ServiceAnswerError as exc:
        if exc.code != "unknown_disclosure":  # expired (the service keeps them an hour)
            raise
    finally:
        hook.state.update(hook.session_id, lambda record: record.pop("pending", None))


def session_end(hook: Hook) -> None:
    hook.state.update(hook.session_id, lambda record: record.pop("pending", None))
    client = hook.client(start=False)
    hook.flush(client, reserve=FLUSH_RESERVE)
    try:
        client.post("/v1/consolidate", {})
    except HookError as exc:
        if isinstance(exc, ServiceAnswerError):
            raise
        raise HookError(f"{exc}; the service finishes the consolidation") from None


EVENTS: dict[str, Callable[[Hook], dict[str, Any] | None]] = {
    "session-start": session_start,
    "prompt": prompt,
    "tool-use": tool_use,
    "stop": stop,
    "session-end": session_end,
}
ALIASES = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "prompt",
    "user-prompt-submit": "prompt",
    "PostToolUse": "tool-use",
    "post-tool-use": "tool-use",
    "Stop": "stop",
    "SessionEnd": "session-end",
}


def main(argv: Sequence[str]) -> int:
    """Run the hook ``argv[0]`` (an event) with the agent's JSON on stdin; always 0."""
    event = ALIASES.get(argv[0], argv[0]) if argv else ""
    deadline = Deadline(_budget())
    _watchdog(event, deadline)
    try:
        handler = EVENTS.get(event)
        if handler is None:
            raise HookError(f"unknown event {event!r}; events: {', '.join(EVENTS)}")
        output = handler(Hook(argv[1:], _payload(), deadline))
        signal.setitimer(signal.ITIMER_REAL, 0)
        if output is not None:
            _write(json.dumps(output, ensure_ascii=False) + "\n")
    except HookError as exc:
        _say(event, str(exc))
    except OSError as exc:
        _say(event, f"{exc.strerror or exc} ({type(exc).__name__}); nothing more was done")
    except Exception as exc:  # a hook never breaks the agent, whatever went wrong
        _say(event, f"internal error: {type(exc).__name__}: {exc}")
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
    return 0


def _write(text: str) -> None:
    """The whole output on stdout, unbuffered (nothing is left for a flush at exit to fail on)."""
    data = memoryview(text.encode("utf-8"))
    while data:
        data = data[os.write(1, data) :]


def _options(argv: Sequence[str]) -> dict[str, str]:
    """``--root DIR``, ``--namespace PARTS``, ``--profile NAME`` (also ``--x=value``)."""
    options: dict[str, str] = {}
    items = list(argv)
    while items:
        item = items.pop(0)
        name, equals, value = item.partition("=")
        if name not in ("--root", "--data-dir", "--namespace", "--profile"):
            raise HookError(f"unknown option {item!r}; options: --root, --namespace, --profile")
        if not equals:
            if not items:
                raise HookError(f"{name} needs a value")
            value = items.pop(0)
        options["root" if name == "--data-dir" else name[2:]] = value
    return options


def _payload() -> dict[str, Any]:
    stdin = sys.stdin
    if stdin is None or stdin.isatty():
        raise HookError("expects the agent's hook input (JSON) on standard input")
    data = stdin.buffer.read(MAX_INPUT_BYTES + 1)
    if len(data) > MAX_INPUT_BYTES:
        raise HookError(f"the hook input is over {MAX_INPUT_BYTES // 2**20} MB; nothing was done")
    try:
        payload = json.loads(data)
    except ValueError as exc:
        raise HookError(f"the hook input is not JSON ({exc})") from None
    if not isinstance(payload, dict):
        raise HookError("the hook input is not a JSON object")
    return payload


def _session_id(payload: Mapping[str, Any]) -> str:
    value = payload.get("session_id")
    if not isinstance(value, str) or not value.strip() or len(value) > 200:
        raise HookError("the hook input has no usable session_id")
    if any(ord(ch) < 32 or ch == "\x7f" for ch in value) or value != value.strip():
        raise HookError("the hook input's session_id holds control characters or spaces")
    return value


def _text(payload: Mapping[str, Any], key: str) -> str | None:
    value = payload.get(key)
    return value if isinstance(value, str) and value else None


def _budget() -> float:
    try:
        total = float(os.environ.get(DEADLINE_VARIABLE, DEFAULT_DEADLINE))
    except ValueError:
        total = DEFAULT_DEADLINE
    return max(0.05, total - _since_start())


def _since_start() -> float:
    """Seconds since this process started (the interpreter's own start-up included)."""
    try:
        with open("/proc/self/stat", "rb") as file:  # noqa: PTH123 - pathlib would cost more
            ticks = int(file.read().rsplit(b")", 1)[1].split()[19])
        with open("/proc/uptime", "rb") as file:  # noqa: PTH123
            uptime = float(file.read().split()[0])
        return max(0.0, uptime - ticks / os.sysconf("SC_CLK_TCK"))
    except (OSError, ValueError, IndexError):
        return 0.0


def _watchdog(event: str, deadline: Deadline) -> None:
    """End the process (exit 0, one line) if a step overruns the deadline."""

    def expire(signum: int, frame: object) -> None:
        _say(event, "out of time; the agent goes on without this hook")
        os._exit(0)

    signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, max(0.01, deadline.left() + WATCHDOG_GRACE))


def _say(event: str, message: str) -> None:
    line = " ".join(f"disclosure hook {event or '?'}: {message}".split())[:400]
    with contextlib.suppress(OSError):
        os.write(2, (line + "\n").encode("utf-8", "replace"))
