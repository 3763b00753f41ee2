"""A loopback stand-in for a model's Messages API (``POST /v1/messages``), streaming its answer
as server-sent events the way the API does (``message_start`` ... ``message_stop``). The one
fake of the end-to-end test: the agent, the service and the store are real.

It keeps every request it gets, and answers with a function of the request (a ``Script``):
tool uses (say a ``Read`` of a file) and text.
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Self

Block = dict[str, Any]
Script = Callable[[dict[str, Any]], tuple[list[Block], str]]  # request -> (blocks, stop reason)
READ = re.compile(r"READ:(\S+)")
CITATION = re.compile(r"\[(mem:[A-Za-z0-9_-]+)\]")


def user_text(request: dict[str, Any]) -> str:
    """The text of the last user message (hook contexts ride in a system message)."""
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    if not users:
        return ""
    content = users[-1].get("content")
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if isinstance(b, dict))


def has_tool_result(request: dict[str, Any]) -> bool:
    users = [m for m in request.get("messages", []) if m.get("role") == "user"]
    content = users[-1].get("content") if users else None
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def agent_script(request: dict[str, Any]) -> tuple[list[Block], str]:
    """``READ:<path>`` in the prompt: use the Read tool on it; after a tool result: say so;
    else answer from what the request holds: quote a line with a memory citation if any."""
    if has_tool_result(request):
        return [{"type": "text", "text": "I read the file."}], "end_turn"
    asked = READ.search(user_text(request))
    if asked:
        use = {"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": "Read",
               "input": {"file_path": asked.group(1)}}  # fmt: skip
        return [use], "tool_use"
    whole = json.dumps(request)
    cited = CITATION.findall(whole)
    text = f"From memory [{cited[0]}]." if cited else "Nothing in memory about that."
    return [{"type": "text", "text": text}], "end_turn"


class StandInModel:
    """The Messages API on 127.0.0.1 (a free port), in a thread; a context manager."""

    def __init__(self, script: Script = agent_script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def messages_requests(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r["body"] for r in self.requests if r["path"].startswith("/v1/messages")]

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        model = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                self._json({})

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length", "0"))
                try:
                    body = json.loads(self.rfile.read(size) or b"{}")
                except ValueError:
                    body = {}
                with model._lock:
                    model.requests.append({"path": self.path, "body": body})
                if "count_tokens" in self.path:
                    self._json({"input_tokens": 100})
                    return
                blocks, stop = model.script(body)
                if body.get("stream"):
                    self._stream(body, blocks, stop)
                else:
                    self._json(_message(body, blocks, stop))

            def _json(self, data: Any) -> None:
                raw = json.dumps(data).encode("utf-8")
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def _stream(self, body: dict[str, Any], blocks: list[Block], stop: str) -> None:
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.send_header("connection", "close")
                self.end_headers()
                for name, data in _events(body, blocks, stop):
                    self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
                    self.wfile.flush()
                self.close_connection = True

        return Handler


def _message(body: dict[str, Any], blocks: list[Block], stop: str) -> dict[str, Any]:
    return {
        "id": f"msg_{uuid.uuid4().hex[:20]}",
        "type": "message",
        "role": "assistant",
        "model": body.get("model", "claude"),
        "content": blocks,
        "stop_reason": stop,
        "stop_sequence": None,
        "usage": {"input_tokens": 100, "output_tokens": 10},
    }


def _events(body: dict[str, Any], blocks: list[Block], stop: str) -> list[tuple[str, Any]]:
    start = {**_message(body, [], stop), "stop_reason": None}
    events: list[tuple[str, Any]] = [("message_start", {"type": "message_start", "message": start})]
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            opened = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opened = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": opened}),
            ("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]  # fmt: skip
    events += [
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": stop, "stop_sequence": None},
                           "usage": {"output_tokens": 10}}),
        ("message_stop", {"type": "message_stop"}),
    ]  # fmt: skip
    return events
