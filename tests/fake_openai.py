"""A scripted, loopback OpenAI-compatible HTTP server for tests.

Why a real HTTP server instead of mocking the client: the openai SDK's retry,
backoff and error mapping, and instructor's re-ask loop, all live above the
transport.  Serving real bytes on 127.0.0.1 exercises exactly the code paths
production uses, with no network and no API key.

Usage::

    with FakeOpenAI(script=[reply_http_error(500), reply_tool_call({"x": 1})]) as server:
        client = openai.OpenAI(base_url=server.base_url, api_key="test")
        ...
    assert len(server.requests) == 2

Each POST to ``/v1/chat/completions`` consumes the next script item, in order.
A script item is a :class:`Reply` (built by the ``reply_*`` helpers) or a
callable ``request_body -> item`` for replies computed from the request.
Only the standard library is used, so the fake has no dependency surprises.
"""

from __future__ import annotations

import itertools
import json
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any, Union

__all__ = [
    "DEFAULT_MODEL",
    "MAX_DELAY_S",
    "FakeOpenAI",
    "RecordedRequest",
    "Reply",
    "ScriptItem",
    "reply_delay",
    "reply_http_error",
    "reply_json",
    "reply_raw",
    "reply_text",
    "reply_tool_call",
]

DEFAULT_MODEL = "scripted-model"
# Delays exist only for client-timeout tests; a cap keeps a typo from hanging CI.
MAX_DELAY_S = 10.0
# Callables may return callables; a bound stops an accidental infinite chain.
_MAX_CALLABLE_DEPTH = 16

Json = dict[str, Any]
# (request body) -> (status, headers, body bytes)
Renderer = Callable[[Json], tuple[int, dict[str, str], bytes]]

_ids = itertools.count(1)  # process-wide, so completion ids never repeat across servers


@dataclass(frozen=True)
class Reply:
    """One scripted HTTP response. Build with the ``reply_*`` helpers."""

    render: Renderer
    # Model the reply reports, if any; advertised by GET /v1/models.
    model: str | None = None
    delay_s: float = 0.0


ScriptItem = Union[Reply, Callable[[Json], "ScriptItem"]]


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # keys lower-cased: HTTP header names are case-insensitive
    body: Json  # parsed JSON; {"_unparseable": text} if the client sent non-JSON
    received_at: float  # time.monotonic(); gaps between calls measure client backoff


# --------------------------------------------------------------------------- helpers


def _json_bytes(obj: Any) -> bytes:
    return json.dumps(obj).encode()


def _completion(
    model: str, message: Json, finish_reason: str, prompt_tokens: int, completion_tokens: int
) -> bytes:
    # Rendered per request so every completion gets a fresh id and timestamp.
    return _json_bytes(
        {
            "id": f"chatcmpl-fake-{next(_ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [
                {"index": 0, "message": message, "finish_reason": finish_reason, "logprobs": None}
            ],
            "usage": {
                "prompt_tokens": prompt_tokens,
                "completion_tokens": completion_tokens,
                "total_tokens": prompt_tokens + completion_tokens,
            },
        }
    )


def _as_text(obj: Json | str) -> str:
    # Strings pass through verbatim so tests can send malformed JSON on purpose.
    return obj if isinstance(obj, str) else json.dumps(obj)


_JSON_HEADERS = {"content-type": "application/json"}


def reply_tool_call(
    arguments: Json | str,
    model: str = DEFAULT_MODEL,
    name: str | None = None,
    prompt_tokens: int = 100,
    completion_tokens: int = 50,
) -> Reply:
    """A completion whose assistant message calls one function.

    ``name=None`` echoes the request's ``tools[0].function.name``: instructor's
    TOOLS mode sends a single tool named after the response model (and forces
    it via ``tool_choice``), so echoing it is what a real model would do.
    """

    def render(request: Json) -> tuple[int, dict[str, str], bytes]:
        fn_name = name
        if fn_name is None:
            tools = request.get("tools") or []
            try:
                fn_name = tools[0]["function"]["name"]
            except (IndexError, KeyError, TypeError):
                fn_name = "unnamed_function"  # request had no tools; still reply something
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": f"call_fake_{next(_ids)}",
                    "type": "function",
                    "function": {"name": fn_name, "arguments": _as_text(arguments)},
                }
            ],
        }
        body = _completion(model, message, "tool_calls", prompt_tokens, completion_tokens)
        return 200, dict(_JSON_HEADERS), body

    return Reply(render=render, model=model)


def reply_json(
    obj: Json | str,
    model: str = DEFAULT_MODEL,
    prompt_tokens: int = 100,
    completion_tokens: int = 50,
) -> Reply:
    """A completion whose content is JSON text (instructor JSON / MD_JSON modes)."""
    return reply_text(
        _as_text(obj),
        model=model,
        prompt_tokens=prompt_tokens,
        completion_tokens=completion_tokens,
    )


def reply_text(
    text: str,
    model: str = DEFAULT_MODEL,
    finish_reason: str = "stop",
    prompt_tokens: int = 100,
    completion_tokens: int = 50,
) -> Reply:
    """A completion with plain content, e.g. a refusal or a ``"length"`` truncation."""
    message = {"role": "assistant", "content": text}

    def render(_request: Json) -> tuple[int, dict[str, str], bytes]:
        body = _completion(model, message, finish_reason, prompt_tokens, completion_tokens)
        return 200, dict(_JSON_HEADERS), body

    return Reply(render=render, model=model)


def reply_http_error(
    status: int,
    body: Json | None = None,
    headers: Mapping[str, str] | None = None,
) -> Reply:
    """An HTTP error with an OpenAI-shaped error body.

    Unless the caller sets ``Retry-After``/``retry-after-ms`` themselves, we add
    ``retry-after-ms: 1``: openai 3.x ignores ``Retry-After: 0`` (it only honours
    values > 0) and would otherwise sleep ~0.4-0.5 s, then ~0.8-1 s, per retry.
    """
    hdrs = {k.lower(): v for k, v in (headers or {}).items()}
    if "retry-after" not in hdrs and "retry-after-ms" not in hdrs:
        hdrs["retry-after-ms"] = "1"
    hdrs.setdefault("content-type", "application/json")
    payload = body if body is not None else {
        "error": {
            "message": f"scripted HTTP {status}",
            "type": "rate_limit_error" if status == 429 else "server_error",
            "param": None,
            "code": None,
        }
    }
    data = _json_bytes(payload)
    return Reply(render=lambda _request: (status, dict(hdrs), data))


def reply_raw(status: int, body_bytes: bytes, content_type: str = "application/json") -> Reply:
    """Arbitrary bytes: non-JSON, truncated JSON, HTML error pages, ..."""
    return Reply(render=lambda _request: (status, {"content-type": content_type}, body_bytes))


def reply_delay(seconds: float, then: ScriptItem) -> Reply | Callable[[Json], ScriptItem]:
    """Wait ``seconds`` (capped at MAX_DELAY_S) before sending ``then``.

    The wait is cut short when the server shuts down, so a client that timed
    out never leaves the ``with`` block hanging.
    """
    if not 0 <= seconds <= MAX_DELAY_S:
        raise ValueError(f"delay must be within [0, {MAX_DELAY_S}] s, got {seconds}")
    if isinstance(then, Reply):
        return Reply(render=then.render, model=then.model, delay_s=then.delay_s + seconds)

    def delayed(request: Json) -> ScriptItem:
        return reply_delay(seconds, _resolve(then, request))

    return delayed


def _resolve(item: ScriptItem, request: Json) -> Reply:
    for _ in range(_MAX_CALLABLE_DEPTH):
        if isinstance(item, Reply):
            return item
        item = item(request)
    raise TypeError("script callable did not produce a Reply")


def _error_reply(status: int, message: str) -> Reply:
    # x-should-retry: false makes the openai client fail at once instead of
    # retrying a reply that can never change (saves seconds per failing test).
    data = _json_bytes(
        {"error": {"message": message, "type": "fake_openai_error", "param": None, "code": None}}
    )
    headers = {"content-type": "application/json", "x-should-retry": "false"}
    return Reply(render=lambda _request: (status, dict(headers), data))


# --------------------------------------------------------------------------- server


@dataclass
class _State:
    script: list[ScriptItem]
    lock: threading.Lock = field(default_factory=threading.Lock)
    cursor: int = 0
    recorded: list[RecordedRequest] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    closing: threading.Event = field(default_factory=threading.Event)


class _Handler(BaseHTTPRequestHandler):
    # HTTP/1.0: one request per connection, so shutdown never waits on an idle
    # keep-alive socket and the client never reuses a connection we closed.
    protocol_version = "HTTP/1.0"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib name
        pass  # keep pytest output clean

    def _send(self, reply: Reply, request: Json) -> None:
        if reply.delay_s:
            self.server.state.closing.wait(reply.delay_s)
        status, headers, body = reply.render(request)
        self.send_response(status)
        for key, value in headers.items():
            self.send_header(key, value)
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        try:
            self.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # client gave up (e.g. a timeout test); nothing to report

    def _path(self) -> str:
        return self.path.split("?", 1)[0].rstrip("/")

    def do_GET(self) -> None:
        if self._path() in ("/v1/models", "/models"):
            state = self.server.state
            with state.lock:
                names = list(dict.fromkeys(state.models)) or [DEFAULT_MODEL]
            data = {
                "object": "list",
                "data": [
                    {"id": n, "object": "model", "created": 0, "owned_by": "fake-openai"}
                    for n in names
                ],
            }
            reply = Reply(render=lambda _r: (200, dict(_JSON_HEADERS), _json_bytes(data)))
            self._send(reply, {})
            return
        self._send(_error_reply(404, f"no route for GET {self.path}"), {})

    def do_POST(self) -> None:
        length = int(self.headers.get("content-length") or 0)
        raw = self.rfile.read(length)
        try:
            parsed = json.loads(raw)
            body: Json = parsed if isinstance(parsed, dict) else {"_unparseable": raw.decode()}
        except (ValueError, UnicodeDecodeError):
            body = {"_unparseable": raw.decode(errors="replace")}

        path = self._path()
        if path not in ("/v1/chat/completions", "/chat/completions"):
            self._send(_error_reply(404, f"no route for POST {self.path}"), body)
            return

        state = self.server.state
        headers = {k.lower(): v for k, v in self.headers.items()}
        streaming = bool(body.get("stream"))
        with state.lock:
            # Record and consume under one lock so arrival order == script order.
            state.recorded.append(RecordedRequest("POST", path, headers, body, time.monotonic()))
            item = None
            if not streaming and state.cursor < len(state.script):
                item = state.script[state.cursor]
                state.cursor += 1

        if streaming:
            # Streaming is not scripted; fail loudly (without consuming a reply)
            # rather than hand back a non-stream body the SDK would misparse.
            self._send(_error_reply(400, "FakeOpenAI does not support stream=true"), body)
            return
        if item is None:
            self._send(_error_reply(500, "script exhausted"), body)
            return
        try:
            reply = _resolve(item, body)
        except Exception as exc:  # a buggy test callable should surface, not hang
            self._send(_error_reply(500, f"script callable raised {exc!r}"), body)
            return
        if reply.model is not None:
            with state.lock:
                state.models.append(reply.model)
        self._send(reply, body)


class _Server(ThreadingHTTPServer):
    daemon_threads = True  # a stuck handler must not keep the test process alive
    state: _State


class FakeOpenAI:
    """Scripted OpenAI-compatible server on 127.0.0.1; serves only inside ``with``."""

    def __init__(self, script: Sequence[ScriptItem] = ()) -> None:
        self._state = _State(script=list(script))
        # Advertise the models the script will report, before any request arrives.
        self._state.models.extend(
            i.model for i in self._state.script if isinstance(i, Reply) and i.model
        )
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    def __enter__(self) -> FakeOpenAI:
        server = _Server(("127.0.0.1", 0), _Handler)
        server.state = self._state
        self._server = server
        self._thread = threading.Thread(
            target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        assert self._server is not None and self._thread is not None
        self._state.closing.set()  # wake any delayed handlers
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("FakeOpenAI is not running; use it as a context manager")
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    @property
    def calls(self) -> list[RecordedRequest]:
        """Every chat-completion request (method, path, headers, body), in arrival order."""
        with self._state.lock:
            return list(self._state.recorded)

    @property
    def requests(self) -> list[Json]:
        """Parsed JSON bodies of chat-completion requests, in arrival order."""
        return [c.body for c in self.calls]

    @property
    def request_headers(self) -> list[dict[str, str]]:
        """Lower-cased headers of each chat-completion request, in arrival order."""
        return [c.headers for c in self.calls]

    @property
    def remaining(self) -> int:
        """Script items not yet consumed (assert 0 to prove every reply was used)."""
        with self._state.lock:
            return max(0, len(self._state.script) - self._state.cursor)
