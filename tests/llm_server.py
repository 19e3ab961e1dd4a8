"""A real HTTP server on 127.0.0.1 that speaks enough of the OpenAI and Anthropic protocols for tests.

    from tests.llm_server import llm_server          # in conftest.py or a test module: the fixture

    def test_something(llm_server):
        llm_server.script(("status", 429, 0.2), ("text", "hello"))
        ... point a client at llm_server.openai_url (".../v1") or llm_server.anthropic_url ...
        assert llm_server.requests[-1].messages[-1]["content"] == "..."

Endpoints: ``POST /v1/chat/completions`` (OpenAI chat completions: ``choices[0].message.content``,
``finish_reason``, ``usage.prompt_tokens/completion_tokens``) and ``POST /v1/messages`` (Anthropic
messages: ``content`` text blocks, ``stop_reason``, ``usage.input_tokens/output_tokens``; the request's
``system`` field is recorded as a leading system message). ``GET /v1/models`` lists one model.

Each request takes the next behaviour from one FIFO queue (``script``); when the queue is empty it
asks ``responder(request)`` if one is set, else replies ``default``. Behaviours are tuples:

    ("text", "reply")                      200 with that reply (finish_reason stop / end_turn)
    ("truncated", "partial rep")           200, cut at max_tokens (finish_reason length / max_tokens)
    ("empty",)                             200 with empty content (null for OpenAI, no blocks for Anthropic)
    ("status", 429) / ("status", 429, 0.2) that error status, with Retry-After: 0.2 when given
    ("sleep", 2.0) / ("sleep", 2.0, "slow reply")   wait, then reply (default "slow reply")
    ("raw", 200, "not json", "text/plain") exactly that status, body and content type
    ("hang_up",)                           close the connection without a response

and a callable ``f(request) -> behaviour`` is called to choose one. ``requests`` records every request
(path, headers, JSON body, normalised messages, time); ``max_in_flight`` is the largest number of
requests being handled at once. ``require_key="..."`` answers 401 to a request without that key.
"""

from __future__ import annotations

import collections
import json
import threading
import time
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

try:
    import pytest
except ImportError:  # the server needs only the standard library; lab/gpu_bench_llm.py runs it without pytest
    pytest = None

Behaviour = tuple


@dataclass
class Request:
    """One request as the server saw it."""

    path: str
    protocol: str                      # "openai" or "anthropic"
    headers: dict[str, str]
    body: Any                          # the parsed JSON body (None if it was not JSON)
    started: float                     # time.monotonic() on arrival
    behaviour: Behaviour | None = None
    finished: float | None = None

    @property
    def messages(self) -> list[dict[str, str]]:
        """The chat as role/content dicts (Anthropic's system field first, content blocks joined)."""
        body = self.body if isinstance(self.body, dict) else {}
        out = []
        if self.protocol == "anthropic" and body.get("system"):
            out.append({"role": "system", "content": _text(body["system"])})
        for m in body.get("messages") or []:
            out.append({"role": m.get("role"), "content": _text(m.get("content"))})
        return out

    @property
    def model(self) -> str | None:
        return self.body.get("model") if isinstance(self.body, dict) else None

    @property
    def prompt(self) -> str:
        """Every message's content joined: handy for ``assert "..." in req.prompt``."""
        return "\n".join(m["content"] for m in self.messages)


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(b.get("text", "") for b in content if isinstance(b, dict))
    return "" if content is None else str(content)


def _tokens(text: str) -> int:
    return len(text.split())


class LLMServer:
    """The scripted server; start() / stop(), or use it as a context manager or through the fixture."""

    def __init__(self, default: Behaviour = ("text", "ok"), require_key: str | None = None):
        self.default = default
        self.require_key = require_key
        self.responder: Callable[[Request], Behaviour] | None = None
        self.requests: list[Request] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._queue: collections.deque = collections.deque()
        self._lock = threading.Lock()
        self._counter = 0
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- control

    def script(self, *behaviours: Behaviour | Callable[[Request], Behaviour]) -> "LLMServer":
        """Queue behaviours for the next requests, in order."""
        with self._lock:
            self._queue.extend(behaviours)
        return self

    def reset(self) -> None:
        with self._lock:
            self._queue.clear()
            self.requests.clear()
            self.max_in_flight = self.in_flight

    @property
    def pending(self) -> int:
        """Scripted behaviours not used yet."""
        with self._lock:
            return len(self._queue)

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def openai_url(self) -> str:
        """base_url for the openai SDK (it appends /chat/completions)."""
        return f"{self.url}/v1"

    @property
    def anthropic_url(self) -> str:
        """base_url for the anthropic SDK (it appends /v1/messages)."""
        return self.url

    def start(self) -> "LLMServer":
        server = self

        class Handler(_Handler):
            owner = server

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._httpd.block_on_close = False
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="llm-server", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> "LLMServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    # -- used by the handler thread

    def _begin(self, request: Request) -> Behaviour:
        with self._lock:
            self.requests.append(request)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._counter += 1
            behaviour = self._queue.popleft() if self._queue else None
        if behaviour is None:
            behaviour = self.responder(request) if self.responder is not None else self.default
        while callable(behaviour):
            behaviour = behaviour(request)
        request.behaviour = behaviour
        return behaviour

    def _end(self, request: Request) -> None:
        with self._lock:
            self.in_flight -= 1
            request.finished = time.monotonic()

    def _next_id(self) -> int:
        with self._lock:
            return self._counter


ROUTES = {"/v1/chat/completions": "openai", "/chat/completions": "openai", "/v1/messages": "anthropic"}


class _Handler(BaseHTTPRequestHandler):
    owner: LLMServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # keep pytest output clean
        pass

    def _send(self, status: int, body: bytes, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout test)

    def _json(self, status: int, obj: Any, headers: dict[str, str] | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), headers=headers)

    def do_GET(self):
        if self.path.rstrip("/") in ("/v1/models", "/models"):
            self._json(200, {"object": "list", "data": [{"id": "test-model", "object": "model"}]})
        else:
            self._json(404, {"error": {"message": f"no route {self.path}", "type": "not_found"}})

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        path = self.path.split("?")[0]
        protocol = ROUTES.get(path)
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        if protocol is None:
            self._json(404, {"error": {"message": f"no route {path}", "type": "not_found"}})
            return
        request = Request(path=path, protocol=protocol, headers={k.lower(): v for k, v in self.headers.items()},
                          body=body, started=time.monotonic())
        owner = self.owner
        if owner.require_key is not None and not self._key_ok(request, owner.require_key):
            with owner._lock:
                owner.requests.append(request)
            self._error(protocol, 401, "invalid api key")
            return
        behaviour = owner._begin(request)
        try:
            self._perform(request, behaviour)
        finally:
            owner._end(request)

    @staticmethod
    def _key_ok(request: Request, key: str) -> bool:
        # Anthropic's SDK sends x-api-key (older) or a bearer token (newer); OpenAI's a bearer token
        return key in (request.headers.get("x-api-key"), request.headers.get("authorization", "")[7:])

    def _error(self, protocol: str, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        kind = {400: "invalid_request_error", 401: "authentication_error", 404: "not_found_error",
                429: "rate_limit_error", 529: "overloaded_error"}.get(status, "api_error")
        if protocol == "anthropic":
            obj = {"type": "error", "error": {"type": kind, "message": message}}
        else:
            obj = {"error": {"message": message, "type": kind, "code": None, "param": None}}
        self._json(status, obj, headers)

    def _perform(self, request: Request, behaviour: Behaviour) -> None:
        kind = behaviour[0]
        if isinstance(request.body, dict) and request.body.get("stream"):
            self._error(request.protocol, 400, "this test server does not stream")
            return
        if kind == "text":
            self._reply(request, behaviour[1], truncated=False)
        elif kind == "truncated":
            self._reply(request, behaviour[1], truncated=True)
        elif kind == "empty":
            self._reply(request, None, truncated=False)
        elif kind == "sleep":
            time.sleep(float(behaviour[1]))
            self._reply(request, behaviour[2] if len(behaviour) > 2 else "slow reply", truncated=False)
        elif kind == "status":
            status = int(behaviour[1])
            headers = {}
            if len(behaviour) > 2 and behaviour[2] is not None:
                headers["Retry-After"] = str(behaviour[2])
            message = behaviour[3] if len(behaviour) > 3 else f"scripted error {status}"
            self._error(request.protocol, status, message, headers)
        elif kind == "raw":
            _, status, text = behaviour[:3]
            content_type = behaviour[3] if len(behaviour) > 3 else "application/json"
            self._send(int(status), text.encode() if isinstance(text, str) else text, content_type)
        elif kind == "hang_up":
            self.close_connection = True
            try:
                self.connection.shutdown(2)
            except OSError:
                pass
        else:
            self._error(request.protocol, 500, f"test server: unknown behaviour {behaviour!r}")

    def _reply(self, request: Request, text: str | None, truncated: bool) -> None:
        body = request.body if isinstance(request.body, dict) else {}
        model = body.get("model") or "test-model"
        n = self.owner._next_id()
        prompt_tokens = _tokens(request.prompt)
        completion_tokens = _tokens(text or "")
        if request.protocol == "openai":
            self._json(200, {
                "id": f"chatcmpl-test-{n}", "object": "chat.completion", "created": int(time.time()),
                "model": model,
                "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                             "finish_reason": "length" if truncated else "stop", "logprobs": None}],
                "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                          "total_tokens": prompt_tokens + completion_tokens},
            })
        else:
            self._json(200, {
                "id": f"msg_test_{n}", "type": "message", "role": "assistant", "model": model,
                "content": [] if text is None else [{"type": "text", "text": text}],
                "stop_reason": "max_tokens" if truncated else "end_turn", "stop_sequence": None,
                "usage": {"input_tokens": prompt_tokens, "output_tokens": completion_tokens},
            })


__all__ = ["LLMServer", "Request"]

if pytest is not None:
    @pytest.fixture
    def llm_server():
        """A fresh scripted server on 127.0.0.1 for one test."""
        server = LLMServer().start()
        try:
            yield server
        finally:
            server.stop()

    __all__.append("llm_server")
