"""Chat middleware: memory for any chat-completion callable that takes OpenAI-style messages.

Wrap ``client.chat.completions.create`` (or any function of that call shape, sync or async)::

    chat = DisclosureMiddleware(controller).wrap(client.chat.completions.create)
    response = chat(model="gpt-4o-mini", messages=[{"role": "user", "content": "..."}])

Before the call: disclose for the last user message (the earlier turns are the history), and
insert the context as a system message where the profile's ``middleware.placement`` says,
within the model's context window: the conversation's own tokens are passed as
``prompt_tokens``, and a request that would still exceed the window goes without the context.
After the call: the user's message and the reply are ingested as memories (session id, kinds
prompt/response, speakers, timestamps, stable ids), and the reply goes to ``feedback``.

Per call, ``disclosure=CallOptions(...)`` (or a dict of its fields) names the namespace,
session, level or budget; it is removed before the wrapped callable is called. Streaming
(``stream=True``) is supported: the chunks pass through untouched, and the turn is recorded once
the stream is exhausted, or, when it is closed or dropped early, with the reply so far marked
partial. ``with_raw_response.create`` and an ``AsyncOpenAI`` method given to :meth:`wrap` work
too. The OpenAI SDK is never imported: responses are read duck-typed
(``.choices[0].message.content``, the same as a dict, or a plain string).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, fields
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, TypeVar

from analyzers import DisclosureLevel
from disclosure.core.pipeline.feedback import FeedbackReport
from disclosure.core.profile_sections import ContextPlacement
from disclosure.core.result import DisclosureResult
from disclosure.faces.middleware.messages import (
    MEMORY_CLOSE,
    MEMORY_OPEN,
    Message,
    context_message,
    conversation_tokens,
    default_session_id,
    insert_context,
    last_user_index,
    message_text,
    reply_text,
    stream_delta,
    turn_memories,
    with_rule,
)
from disclosure.service.pool import ControllerPool
from disclosure.storage.namespaces import Namespace
from tiers.errors import InvalidInputError
from tiers.reports import IngestReport

if TYPE_CHECKING:
    from disclosure.core.controller import DisclosureController

log = logging.getLogger(__name__)

#: The keyword a wrapped call takes its per-call options under: ``disclosure={"user": ...}``.
OPTIONS_KEY = "disclosure"
_JOIN_SLACK = 2  # tokens: the preamble and the context counted apart may merge differently
R = TypeVar("R")

__all__ = ["OPTIONS_KEY", "CallOptions", "DisclosureMiddleware", "PreparedCall", "TurnRecord"]


@dataclass(frozen=True, slots=True)
class CallOptions:
    """Per-call settings: the namespace parts, the session, and disclosure overrides."""

    tenant: str | None = None
    user: str | None = None
    conversation: str | None = None
    session_id: str | None = None
    level: DisclosureLevel | str | None = None
    budget: int | None = None
    context_window: int | None = None
    disclose: bool = True
    record: bool = True

    @classmethod
    def coerce(cls, value: CallOptions | Mapping[str, Any] | None) -> CallOptions:
        if value is None or isinstance(value, CallOptions):
            return value or cls()
        if not isinstance(value, Mapping):
            raise InvalidInputError(f"{OPTIONS_KEY}= must be CallOptions or a mapping")
        valid = {f.name for f in fields(cls)}
        unknown = sorted(set(value) - valid)
        if unknown:
            raise InvalidInputError(
                f"unknown {OPTIONS_KEY} option {unknown[0]!r}; valid: {', '.join(sorted(valid))}"
            )
        return cls(**value)

    def namespace_parts(self) -> dict[str, str | None]:
        return {"tenant": self.tenant, "user": self.user, "conversation": self.conversation}


@dataclass(frozen=True)
class PreparedCall:
    """One call before the model: what is sent, and what the turn needs to be recorded."""

    messages: list[Message]
    original: tuple[Message, ...]
    result: DisclosureResult | None
    namespace: Namespace | None
    session_id: str
    asked_at: datetime
    context_window: int
    request_tokens: int
    record: bool = True


@dataclass(frozen=True)
class TurnRecord:
    """One call after the model: the reply, what was stored, what the reply used."""

    prepared: PreparedCall
    reply: str | None
    ingest: IngestReport | None = None
    feedback: FeedbackReport | None = None
    errors: tuple[str, ...] = field(default=())
    partial: bool = False  # the reply was cut short (a stream closed early)


class DisclosureMiddleware:
    """Injects disclosed memory into chat calls and records each turn. Thread-safe.

    ``memory`` is one controller (one namespace) or a :class:`ControllerPool` (a namespace per
    call, from ``namespace`` and the call's options). ``context_window`` is the model's window,
    or a mapping of model names to windows (default: the profile's ``budget.context_window``).
    ``on_turn`` is called with every :class:`TurnRecord`.
    """

    def __init__(
        self,
        memory: DisclosureController | ControllerPool,
        *,
        namespace: Mapping[str, str] | None = None,
        session_id: str | None = None,
        placement: ContextPlacement | str | None = None,
        context_window: int | Mapping[str, int] | None = None,
        level: DisclosureLevel | str | None = None,
        budget: int | None = None,
        ingest: bool | None = None,
        feedback: bool | None = None,
        on_turn: Callable[[TurnRecord], None] | None = None,
        clock: Callable[[], datetime] | None = None,
    ) -> None:
        self.memory = memory
        config = memory.profile.middleware
        self.namespace_parts = dict(namespace or {})
        self.session_id = session_id
        self.placement = ContextPlacement(placement or config.placement)
        self.context_window = context_window
        self.level = level
        self.budget = budget
        self.ingest = config.ingest if ingest is None else ingest
        self.feedback = config.feedback if feedback is None else feedback
        self.on_turn = on_turn
        self._clock = clock or (lambda: datetime.now(UTC))
        if not isinstance(memory, ControllerPool) and self.namespace_parts:
            raise InvalidInputError(
                "one controller is one namespace; give a ControllerPool to name namespaces"
            )

    # -- wrapping ------------------------------------------------------------------------------

    def wrap(self, create: Callable[..., R]) -> Callable[..., R]:
        """``create`` with memory: same call shape (``model=..., messages=[...], **kw``)."""

        if inspect.iscoroutinefunction(create):
            return self.wrap_async(create)  # type: ignore[return-value]

        @functools.wraps(create)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            call = self._prepare_kwargs(kwargs)
            response = create(*args, **kwargs)
            if inspect.isawaitable(response):  # an async client's method, not marked as such
                return self._finish_async(call, response, stream=bool(kwargs.get("stream")))
            if kwargs.get("stream"):
                return _RecordingStream(response, functools.partial(self.complete, call))
            self.complete(call, reply_text(response))
            return response

        return wrapped

    async def _finish_async(
        self, call: PreparedCall, pending: Awaitable[Any], *, stream: bool
    ) -> Any:
        response = await pending
        if stream:
            return _AsyncRecordingStream(response, functools.partial(self.acomplete, call))
        await self.acomplete(call, reply_text(response))
        return response

    def wrap_async(self, create: Callable[..., Awaitable[R]]) -> Callable[..., Awaitable[R]]:
        """The async twin of :meth:`wrap` (for ``AsyncOpenAI().chat.completions.create``)."""

        @functools.wraps(create)
        async def wrapped(*args: Any, **kwargs: Any) -> Any:
            call = await asyncio.to_thread(self._prepare_kwargs, kwargs)
            response = await create(*args, **kwargs)
            if kwargs.get("stream"):
                return _AsyncRecordingStream(response, functools.partial(self.acomplete, call))
            await self.acomplete(call, reply_text(response))
            return response

        return wrapped

    def _prepare_kwargs(self, kwargs: dict[str, Any]) -> PreparedCall:
        options = CallOptions.coerce(kwargs.pop(OPTIONS_KEY, None))
        messages = kwargs.get("messages")
        if messages is None or isinstance(messages, str | bytes):
            raise InvalidInputError("call with messages=[{'role': ..., 'content': ...}, ...]")
        call = self.prepare(messages, options, model=kwargs.get("model"))
        kwargs["messages"] = call.messages
        return call

    # -- the two halves ------------------------------------------------------------------------

    def prepare(
        self,
        messages: Sequence[Message],
        options: CallOptions | Mapping[str, Any] | None = None,
        *,
        model: str | None = None,
    ) -> PreparedCall:
        """Disclose for the last user message; the messages to send, with the context in."""
        opts = CallOptions.coerce(options)
        original = tuple(messages)
        namespace = self._namespace(opts)
        window = self._window(opts, model)
        with self._lease(namespace) as controller:
            config = controller.profile.middleware
            base = conversation_tokens(
                original,
                controller.counter,
                per_message=config.message_tokens,
                reply=config.reply_tokens,
            )
            call = PreparedCall(
                messages=list(original),
                original=original,
                result=None,
                namespace=namespace,
                session_id=opts.session_id or self.session_id or default_session_id(original),
                asked_at=self._clock(),
                context_window=window,
                request_tokens=base,
                record=opts.record,
            )
            last = last_user_index(original)
            if not opts.disclose or last is None or not message_text(original[last]).strip():
                return call
            return self._inject(controller, call, last, opts)

    def _inject(
        self, controller: DisclosureController, call: PreparedCall, last: int, opts: CallOptions
    ) -> PreparedCall:
        config = controller.profile.middleware
        counter = controller.counter
        overhead = config.message_tokens + counter(f"{config.preamble}\n\n") + _JOIN_SLACK
        if config.context_role == "user":  # the block's markers and the rule in the system prompt
            marks = f"{MEMORY_OPEN}\n\n{MEMORY_CLOSE}\n\n{config.memory_rule}"
            overhead += counter(marks) + config.message_tokens
        prompt = call.request_tokens + overhead
        room = call.context_window - prompt
        if room <= 0:
            log.info("no room for memory: the conversation fills the context window")
            return call
        budget = opts.budget or self.budget
        result = controller.disclose(
            message_text(call.original[last]),
            history=call.original[:last],
            now=call.asked_at,
            level=opts.level or self.level,
            budget=min(budget, room) if budget else None,
            context_window=call.context_window,
            prompt_tokens=prompt,
        )
        if not result.text.strip():
            return _replace(call, result=result)
        injected = context_message(config.preamble, result.text, config.context_role)
        sent = insert_context(call.original, injected, self.placement)
        if config.context_role == "user":
            sent = with_rule(sent, config.memory_rule)
        total = conversation_tokens(
            sent, counter, per_message=config.message_tokens, reply=config.reply_tokens
        )
        if total > call.context_window:  # never push the request over the window
            log.warning("memory left out: %d tokens > window %d", total, call.context_window)
            return _replace(call, result=result)
        return _replace(call, messages=sent, result=result, request_tokens=total)

    def complete(
        self, call: PreparedCall, reply: str | None, *, partial: bool = False
    ) -> TurnRecord:
        """Record the turn: ingest the user's message and the reply; feedback on the reply.
        ``partial``: the reply was cut short; it is stored marked as such."""
        ingest: IngestReport | None = None
        feedback: FeedbackReport | None = None
        errors: list[str] = []
        result = call.result
        wants_feedback = self.feedback and bool(reply) and result is not None and result.items
        if call.record and (self.ingest or wants_feedback):
            with self._lease(call.namespace) as controller:
                if self.ingest:
                    ingest = _guard(
                        errors, "ingest", lambda: self._ingest(controller, call, reply, partial)
                    )
                if wants_feedback and result is not None and reply:
                    used = functools.partial(
                        controller.feedback, result, reply, session_id=call.session_id
                    )
                    feedback = _guard(errors, "feedback", used)
        record = TurnRecord(call, reply, ingest, feedback, tuple(errors), partial)
        if self.on_turn is not None:
            self.on_turn(record)
        return record

    async def acomplete(
        self, call: PreparedCall, reply: str | None, *, partial: bool = False
    ) -> TurnRecord:
        """:meth:`complete` in a worker thread."""
        return await asyncio.to_thread(self.complete, call, reply, partial=partial)

    # -- internals ------------------------------------------------------------------------------

    def _ingest(
        self,
        controller: DisclosureController,
        call: PreparedCall,
        reply: str | None,
        partial: bool = False,
    ) -> IngestReport:
        memories = turn_memories(
            call.original,
            reply,
            session_id=call.session_id,
            asked_at=call.asked_at,
            answered_at=self._clock(),
            partial=partial,
        )
        return controller.ingest(memories)

    def _namespace(self, opts: CallOptions) -> Namespace | None:
        given = {k: v for k, v in opts.namespace_parts().items() if v is not None}
        if not isinstance(self.memory, ControllerPool):
            if given:
                raise InvalidInputError(
                    "one controller is one namespace; give a ControllerPool to name namespaces"
                )
            return None
        return self.memory.namespace({**self.namespace_parts, **given})

    def _lease(self, namespace: Namespace | None) -> AbstractContextManager[DisclosureController]:
        if isinstance(self.memory, ControllerPool):
            assert namespace is not None
            return self.memory.lease(namespace)
        return nullcontext(self.memory)

    def _window(self, opts: CallOptions, model: str | None) -> int:
        window = opts.context_window or self.context_window
        if isinstance(window, Mapping):
            window = window.get(model or "")
        if window is None:
            return self.memory.profile.budget.context_window
        if window <= 0:
            raise InvalidInputError(f"context_window must be positive, not {window}")
        return int(window)


def _replace(call: PreparedCall, **changes: Any) -> PreparedCall:
    return PreparedCall(**{**{f.name: getattr(call, f.name) for f in fields(call)}, **changes})


def _guard(errors: list[str], stage: str, action: Callable[[], R]) -> R | None:
    """Run a recording step; a failure is logged and kept, never raised (the reply is paid for)."""
    try:
        return action()
    except Exception as exc:
        log.warning("recording the turn failed at %s: %s", stage, exc, exc_info=True)
        errors.append(f"{stage}: {exc}")
        return None


class _RecordingStream:
    """A streamed response passed through chunk by chunk, like the SDK's own stream (an
    iterator, a context manager, ``close()``). The turn is recorded once: when the stream is
    exhausted, or, if it is closed, left or broken before that, with the reply so far marked
    partial."""

    def __init__(self, stream: Any, on_done: Callable[..., TurnRecord]) -> None:
        self._stream = stream
        self._on_done = on_done
        self._iterator: Iterator[Any] | None = None
        self._parts: list[str] = []
        self._done = False

    def __iter__(self) -> _RecordingStream:
        return self

    def __next__(self) -> Any:
        if self._iterator is None:
            self._iterator = iter(self._stream)
        try:
            chunk = next(self._iterator)
        except StopIteration:
            self._finish(partial=False)
            raise
        except BaseException:
            self._finish(partial=True)
            raise
        self._parts.append(stream_delta(chunk))
        return chunk

    def close(self) -> None:
        """Close the underlying stream; an unfinished reply is recorded as partial."""
        try:
            closer = getattr(self._stream, "close", None)
            if closer is not None:
                closer()
        finally:
            self._finish(partial=True)

    def _finish(self, *, partial: bool) -> None:
        if not self._done:
            self._done = True
            self._on_done("".join(self._parts) or None, partial=partial)

    def __enter__(self) -> _RecordingStream:
        enter = getattr(self._stream, "__enter__", None)
        if enter is not None:
            enter()
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            leave = getattr(self._stream, "__exit__", None)
            if leave is not None:
                leave(*exc)
        finally:
            self._finish(partial=True)

    def __del__(self) -> None:  # dropped unread: still record the user's turn
        if not getattr(self, "_done", True):
            try:
                self._finish(partial=True)
            except Exception:  # never raise from a finaliser
                log.warning("recording a dropped stream's turn failed", exc_info=True)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


class _AsyncRecordingStream:
    """The async twin of :class:`_RecordingStream` (``async for``, ``async with``,
    ``close()``/``aclose()``)."""

    def __init__(self, stream: Any, on_done: Callable[..., Awaitable[TurnRecord]]) -> None:
        self._stream = stream
        self._on_done = on_done
        self._iterator: AsyncIterator[Any] | None = None
        self._parts: list[str] = []
        self._done = False

    def __aiter__(self) -> _AsyncRecordingStream:
        return self

    async def __anext__(self) -> Any:
        if self._iterator is None:
            self._iterator = aiter(self._stream)
        try:
            chunk = await anext(self._iterator)
        except StopAsyncIteration:
            await self._finish(partial=False)
            raise
        except BaseException:
            await self._finish(partial=True)
            raise
        self._parts.append(stream_delta(chunk))
        return chunk

    async def close(self) -> None:
        """Close the underlying stream; an unfinished reply is recorded as partial."""
        try:
            closer = getattr(self._stream, "close", None) or getattr(self._stream, "aclose", None)
            if closer is not None:
                closed = closer()
                if inspect.isawaitable(closed):
                    await closed
        finally:
            await self._finish(partial=True)

    aclose = close

    async def _finish(self, *, partial: bool) -> None:
        if not self._done:
            self._done = True
            await self._on_done("".join(self._parts) or None, partial=partial)

    async def __aenter__(self) -> _AsyncRecordingStream:
        enter = getattr(self._stream, "__aenter__", None)
        if enter is not None:
            await enter()
        return self

    async def __aexit__(self, *exc: object) -> None:
        try:
            leave = getattr(self._stream, "__aexit__", None)
            if leave is not None:
                await leave(*exc)
        finally:
            await self._finish(partial=True)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)
