"""A real OpenAI-compatible HTTP server on 127.0.0.1, for tests, demos and benchmarks.

:class:`OpenAITestServer` listens on a loopback port in a daemon thread and answers
``POST /v1/chat/completions``, ``POST /v1/embeddings`` and ``GET /v1/models``. It answers
from a queue of
:class:`ScriptedResponse` objects (exact statuses, headers, bodies, delays, SSE lines and
connections cut mid-stream: everything a client must survive) or, when the queue is
empty, from a :class:`~supercontext_lab.models.base.ChatModel`, so the offline model can
be served over real HTTP, and embeddings from a hashed bag of words (:mod:`.embeddings`).
Every request is recorded for assertions.

    with OpenAITestServer([ScriptedResponse.reply("hi")]) as server:
        model = OpenAICompatibleModel(base_url=server.base_url, model="m")
"""

from __future__ import annotations

import json as _json
import socket
import sys
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, cast
from urllib.parse import urlsplit

from .._bounded import json_loads
from ..errors import ModelError, ModelTimeoutError
from ..models.base import ChatModel, Message, ModelReply, ToolCall, Usage
from ..models.wire import messages_from_openai
from .embeddings import embeddings_answer
from .wire import reply_to_openai, reply_to_sse_chunks, tools_from_openai

__all__ = ["OpenAITestServer", "RecordedRequest", "RequestHeaders", "ScriptedResponse"]

_ToolCallItem = ToolCall | tuple[str, Mapping[str, Any] | str]
_DEFAULT_USAGE = Usage(prompt_tokens=10, completion_tokens=5)


def _tool_calls(items: Iterable[_ToolCallItem]) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    for index, item in enumerate(items, start=1):
        if isinstance(item, ToolCall):
            calls.append(item)
        else:
            name, arguments = item
            text = arguments if isinstance(arguments, str) else _json.dumps(dict(arguments))
            calls.append(ToolCall(id=f"call_{index}", name=name, arguments=text))
    return tuple(calls)


def _error_json(message: str, kind: str, code: int) -> dict[str, Any]:
    return {"error": {"message": message, "type": kind, "code": code}}


@dataclass(frozen=True)
class ScriptedResponse:
    """One scripted answer of :class:`OpenAITestServer`.

    ``json`` is sent as a JSON body, else ``body`` raw, else ``sse`` as event-stream lines
    (each followed by a blank line, chunked). ``cut_after`` drops the connection after that
    many SSE lines, without finishing the chunked body. ``delay_s`` waits before answering.
    """

    status: int = 200
    json: Any = None
    body: bytes | str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    sse: Sequence[str] | None = None
    cut_after: int | None = None

    @classmethod
    def reply(
        cls,
        text: str | None = None,
        tool_calls: Iterable[_ToolCallItem] = (),
        usage: Usage | None = None,
        *,
        model: str = "test-model",
        finish_reason: str | None = None,
        delay_s: float = 0.0,
    ) -> ScriptedResponse:
        """A ``chat.completion`` JSON reply with ``text`` and/or tool calls.

        Tool calls are :class:`ToolCall` objects or ``(name, arguments)`` pairs (ids
        ``call_1``, … by position). ``usage`` defaults to 10 prompt and 5 completion tokens.
        """
        calls = _tool_calls(tool_calls)
        message = Message(role="assistant", content=text, tool_calls=calls)
        reply = ModelReply(message, usage or _DEFAULT_USAGE, finish_reason=finish_reason)
        return cls(json=reply_to_openai(reply, model), delay_s=delay_s)

    @classmethod
    def error(
        cls, status: int, message: str = "scripted error", retry_after: float | str | None = None
    ) -> ScriptedResponse:
        """An OpenAI-style JSON error, with a ``Retry-After`` header when given."""
        headers = {} if retry_after is None else {"Retry-After": str(retry_after)}
        return cls(
            status=status, json=_error_json(message, "scripted_error", status), headers=headers
        )

    @classmethod
    def garbage(cls, status: int = 200) -> ScriptedResponse:
        """A body that is not JSON (an HTML page, as a wrong base_url often gives)."""
        page = "<html><body><h1>Welcome</h1><p>This is not an API.</p></body></html>"
        return cls(status=status, body=page, headers={"Content-Type": "text/html"})

    @classmethod
    def stream(
        cls,
        text: str | None,
        tool_calls: Iterable[_ToolCallItem] = (),
        usage: Usage | None = None,
        *,
        model: str = "test-model",
        cut_after: int | None = None,
    ) -> ScriptedResponse:
        """A streamed reply: SSE chunks ending in ``data: [DONE]`` (see ``reply_to_sse_chunks``)."""
        calls = _tool_calls(tool_calls)
        reply = ModelReply(Message("assistant", text, calls), usage or _DEFAULT_USAGE)
        return cls(sse=reply_to_sse_chunks(reply, model), cut_after=cut_after)


class RequestHeaders(Mapping[str, str]):
    """Request headers as a read-only mapping whose lookups ignore case."""

    def __init__(self, items: Iterable[tuple[str, str]]) -> None:
        self._items: dict[str, tuple[str, str]] = {}
        for name, value in items:
            self._items[name.lower()] = (name, value)

    def __getitem__(self, name: str) -> str:
        return self._items[name.lower()][1]

    def __iter__(self) -> Iterator[str]:
        return (name for name, _ in self._items.values())

    def __len__(self) -> int:
        return len(self._items)

    def __repr__(self) -> str:
        return f"RequestHeaders({dict(self.items())!r})"


@dataclass(frozen=True)
class RecordedRequest:
    """One request the server received: ``json`` is the parsed body (``None`` if not JSON)."""

    method: str
    path: str
    headers: RequestHeaders
    json: Any
    body: bytes


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    # Benchmarks open many connections at once; the default backlog of 5 would make the
    # kernel drop SYNs and stall clients for a second.
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], owner: OpenAITestServer) -> None:
        self.owner = owner
        super().__init__(address, _Handler)

    def handle_error(self, request: object, client_address: object) -> None:
        # Quiet by design: keep the error for inspection instead of printing a traceback.
        self.owner._record_error(sys.exc_info()[1])


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "supercontext-lab-test/1"

    def log_message(self, format: str, *args: Any) -> None:
        return  # no request log on stderr

    def do_GET(self) -> None:
        cast(_HTTPServer, self.server).owner._serve(self, "GET")

    def do_POST(self) -> None:
        cast(_HTTPServer, self.server).owner._serve(self, "POST")


class OpenAITestServer:
    """An OpenAI-compatible server on ``127.0.0.1`` running in a daemon thread.

    It starts listening when constructed (``port=0`` picks a free port) and stops on
    :meth:`close` or at the end of a ``with`` block. Answers come from the queue of
    scripted responses first, then from ``model`` (embeddings: hashed vectors); with
    neither, a 500 JSON error. ``delay_s`` delays every answer to a POST (on top of a
    scripted response's own delay).
    """

    def __init__(
        self,
        responses: Iterable[ScriptedResponse] = (),
        *,
        model: ChatModel | None = None,
        delay_s: float = 0.0,
        port: int = 0,
        model_name: str = "test-model",
    ) -> None:
        self.model = model
        self.delay_s = delay_s
        self.model_name = model_name
        self.errors: list[BaseException] = []
        self._queue: deque[ScriptedResponse] = deque(responses)
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._closing = threading.Event()
        self._httpd = _HTTPServer(("127.0.0.1", port), self)
        self.port: int = self._httpd.server_address[1]
        self._thread = threading.Thread(
            target=self._httpd.serve_forever,
            kwargs={"poll_interval": 0.05},
            name=f"openai-test-server-{self.port}",
            daemon=True,
        )
        self._thread.start()

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def requests(self) -> list[RecordedRequest]:
        """Every request received so far, oldest first (a copy)."""
        with self._lock:
            return list(self._requests)

    @property
    def pending(self) -> int:
        """How many scripted responses are still queued."""
        with self._lock:
            return len(self._queue)

    def enqueue(self, *responses: ScriptedResponse) -> None:
        """Queue more scripted responses."""
        with self._lock:
            self._queue.extend(responses)

    def close(self) -> None:
        """Stop serving and release the port; requests still waiting are dropped."""
        if self._closing.is_set():
            return
        self._closing.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> OpenAITestServer:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def __repr__(self) -> str:
        state = "closed" if self._closing.is_set() else "running"
        return f"OpenAITestServer(base_url={self.base_url!r}, {state})"

    # --- request handling (runs in the server's handler threads) ---------------------

    def _record_error(self, error: BaseException | None) -> None:
        if error is not None:
            with self._lock:
                self.errors.append(error)

    def _serve(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        try:
            self._answer(handler, method)
        except (BrokenPipeError, ConnectionResetError) as exc:
            # The client gave up (its timeout, usually); nothing left to answer.
            self._record_error(exc)
            handler.close_connection = True

    def _answer(self, handler: BaseHTTPRequestHandler, method: str) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        raw = handler.rfile.read(length) if length > 0 else b""
        parsed: Any = None
        try:
            parsed = json_loads(raw) if raw else None
        except ValueError:
            parsed = None
        path = urlsplit(handler.path).path.rstrip("/")
        record = RecordedRequest(method, path, RequestHeaders(handler.headers.items()), parsed, raw)
        with self._lock:
            self._requests.append(record)
        if method == "GET" and path == "/v1/models":
            models = {
                "object": "list",
                "data": [
                    {"id": self.model_name, "object": "model", "owned_by": "supercontext-lab"}
                ],
            }
            _send_json(handler, 200, models)
            return
        if method != "POST" or path not in ("/v1/chat/completions", "/v1/embeddings"):
            message = (
                f"No route for {method} {path}; this server answers POST "
                "/v1/chat/completions and /v1/embeddings."
            )
            _send_json(handler, 404, _error_json(message, "not_found", 404))
            return
        if not isinstance(parsed, dict):
            message = "The request body must be a JSON object."
            _send_json(handler, 400, _error_json(message, "invalid_request_error", 400))
            return
        with self._lock:
            scripted = self._queue.popleft() if self._queue else None
        if self._wait(self.delay_s) or (scripted is not None and self._wait(scripted.delay_s)):
            handler.close_connection = True
            return
        if scripted is not None:
            _send_scripted(handler, scripted)
        elif path == "/v1/embeddings":
            _send_json(handler, *embeddings_answer(parsed, self.model_name))
        elif self.model is not None:
            self._answer_with_model(handler, parsed)
        else:
            message = (
                "The test server has no scripted response left for this request; queue one "
                "with enqueue() or give the server a model."
            )
            _send_json(handler, 500, _error_json(message, "server_error", 500))

    def _wait(self, seconds: float) -> bool:
        """Sleep ``seconds`` unless the server closes first; true when it is closing."""
        if seconds <= 0:
            return self._closing.is_set()
        return self._closing.wait(seconds)

    def _answer_with_model(self, handler: BaseHTTPRequestHandler, body: dict[str, Any]) -> None:
        assert self.model is not None
        try:
            messages = messages_from_openai(body.get("messages") or [])
            tools = tools_from_openai(body.get("tools"))
        except ModelError as exc:
            _send_json(handler, 400, _error_json(str(exc), "invalid_request_error", 400))
            return
        choice = body.get("tool_choice")
        if isinstance(choice, dict):
            function = choice.get("function")
            choice = function.get("name") if isinstance(function, dict) else None
        temperature = body.get("temperature")
        try:
            reply = self.model.complete(
                messages,
                tools=tools or None,
                tool_choice=choice if isinstance(choice, str) else None,
                temperature=float(temperature) if isinstance(temperature, int | float) else None,
            )
        except ModelTimeoutError as exc:
            _send_json(handler, 504, _error_json(str(exc), "timeout", 504))
            return
        except ModelError as exc:
            _send_json(handler, 500, _error_json(str(exc), "server_error", 500))
            return
        requested = body.get("model")
        name = requested if isinstance(requested, str) and requested else self.model_name
        if body.get("stream") is True:
            _send_sse(handler, 200, reply_to_sse_chunks(reply, name), {}, None)
        else:
            _send_json(handler, 200, reply_to_openai(reply, name))


def _merged_headers(defaults: Mapping[str, str], given: Mapping[str, str]) -> dict[str, str]:
    out = dict(defaults)
    for name, value in given.items():
        for existing in [k for k in out if k.lower() == name.lower()]:
            del out[existing]
        out[name] = value
    return out


def _send_head(handler: BaseHTTPRequestHandler, status: int, headers: Mapping[str, str]) -> None:
    handler.send_response(status)
    for name, value in headers.items():
        handler.send_header(name, value)
    # One request per connection keeps shutdown simple and prompt.
    handler.send_header("Connection", "close")
    handler.end_headers()


def _send_bytes(
    handler: BaseHTTPRequestHandler, status: int, body: bytes, headers: Mapping[str, str]
) -> None:
    _send_head(handler, status, _merged_headers(headers, {"Content-Length": str(len(body))}))
    handler.wfile.write(body)
    handler.wfile.flush()


def _send_json(
    handler: BaseHTTPRequestHandler,
    status: int,
    data: Any,
    headers: Mapping[str, str] | None = None,
) -> None:
    body = _json.dumps(data).encode()
    merged = _merged_headers({"Content-Type": "application/json"}, headers or {})
    _send_bytes(handler, status, body, merged)


def _send_sse(
    handler: BaseHTTPRequestHandler,
    status: int,
    lines: Sequence[str],
    headers: Mapping[str, str],
    cut_after: int | None,
) -> None:
    defaults = {"Content-Type": "text/event-stream", "Cache-Control": "no-cache"}
    merged = _merged_headers(defaults, headers)
    merged["Transfer-Encoding"] = "chunked"
    _send_head(handler, status, merged)
    for count, line in enumerate(lines):
        if cut_after is not None and count >= cut_after:
            # Drop the connection without the closing zero-length chunk: the client sees
            # the body end in the middle, as when a proxy or server dies mid-stream.
            handler.close_connection = True
            handler.wfile.flush()
            handler.connection.shutdown(socket.SHUT_RDWR)
            return
        data = (line + "\n\n").encode()
        handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        handler.wfile.flush()
    handler.wfile.write(b"0\r\n\r\n")
    handler.wfile.flush()


def _send_scripted(handler: BaseHTTPRequestHandler, response: ScriptedResponse) -> None:
    if response.json is not None:
        _send_json(handler, response.status, response.json, response.headers)
    elif response.body is not None:
        body = response.body.encode() if isinstance(response.body, str) else response.body
        merged = _merged_headers({"Content-Type": "text/plain; charset=utf-8"}, response.headers)
        _send_bytes(handler, response.status, body, merged)
    elif response.sse is not None:
        _send_sse(handler, response.status, response.sse, response.headers, response.cut_after)
    else:
        _send_bytes(handler, response.status, b"", dict(response.headers))
