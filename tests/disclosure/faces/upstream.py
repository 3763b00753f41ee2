"""A small stand-in for an OpenAI-compatible server, run on loopback by the tests: it answers
chat completions (plain or streamed as server-sent events) from the context it is sent."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.disclosure.conftest import ChatModel

UPSTREAM_KEY = "sk-upstream-0123456789"


@dataclass
class Upstream:
    """A stand-in for an OpenAI-compatible server: answers from the context it is sent."""

    url: str = ""
    requests: list[dict[str, Any]] = field(default_factory=list)
    model: ChatModel = field(default_factory=ChatModel)
    chunk_delay: float = 0.0


def _handler(upstream: Upstream) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            headers = {k.lower(): v for k, v in self.headers.items()}
            upstream.requests.append({"headers": headers, "body": body})
            if self.headers.get("Authorization") != f"Bearer {UPSTREAM_KEY}":
                self._json(401, {"error": {"message": "bad key", "type": "auth", "code": None}})
                return
            text = upstream.model.answer(body["messages"])
            if body.get("stream"):
                self._stream(body["model"], text)
            else:
                self._json(200, _completion(body["model"], text))

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def _stream(self, model: str, text: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Connection", "close")
            self.end_headers()
            try:
                for start in range(0, len(text), 4):
                    chunk = _chunk(model, {"content": text[start : start + 4]}, None)
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(upstream.chunk_delay)
                self.wfile.write(f"data: {json.dumps(_chunk(model, {}, 'stop'))}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")
            except (BrokenPipeError, ConnectionResetError):
                pass
            self.close_connection = True

    return Handler


def _completion(model: str, text: str) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 1_700_000_000,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": "stop",
            }
        ],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
    }


def _chunk(model: str, delta: dict[str, Any], finish: str | None) -> dict[str, Any]:
    return {
        "id": "chatcmpl-1",
        "object": "chat.completion.chunk",
        "created": 1_700_000_000,
        "model": model,
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def start_upstream() -> tuple[Upstream, Callable[[], None]]:
    """The stand-in on a free loopback port (``state.url`` is its base URL) and a stopper."""
    state = Upstream()
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(state))
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()

    def stop() -> None:
        server.shutdown()
        server.server_close()

    return state, stop
