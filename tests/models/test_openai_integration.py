"""The OpenAI-compatible model against a real HTTP server on 127.0.0.1 (real sockets)."""

from __future__ import annotations

import http.server
import itertools
import json
import ssl
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest

from supercontext_lab import _http as http_helpers
from supercontext_lab.errors import ModelError, ModelTimeoutError
from supercontext_lab.models.base import Message, ModelReply, ToolCall, ToolSpec, Usage
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.testing import (
    OpenAITestServer,
    ScriptedModel,
    ScriptedResponse,
    tool_call_message,
)
from supercontext_lab.tools.web import fetch_url

KEY_ENV = "SUPERCONTEXT_TEST_API_KEY"
USER = [Message(role="user", content="Plan my trip to Rome")]
RECALL = ToolSpec(
    name="memory_recall",
    description="Search the memory tree.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}},
)


def client_for(
    server: OpenAITestServer, **options: Any
) -> tuple[OpenAICompatibleModel, list[float]]:
    sleeps: list[float] = []
    options.setdefault("timeout_s", 5.0)
    model = OpenAICompatibleModel(
        base_url=server.base_url, model="test-model", sleep=sleeps.append, **options
    )
    return model, sleeps


def test_json_reply_and_the_recorded_request() -> None:
    with OpenAITestServer([ScriptedResponse.reply("Hello from the server")]) as server:
        model, _ = client_for(server)
        reply = model.complete(USER, temperature=0.3)
        model.close()
    assert server.base_url.startswith("http://127.0.0.1:")
    assert server.base_url.endswith("/v1")
    assert reply.message == Message(role="assistant", content="Hello from the server")
    assert reply.usage == Usage(10, 5)
    assert reply.finish_reason == "stop"
    (request,) = server.requests
    assert (request.method, request.path) == ("POST", "/v1/chat/completions")
    assert request.json == {
        "model": "test-model",
        "messages": [{"role": "user", "content": "Plan my trip to Rome"}],
        "temperature": 0.3,
    }
    assert request.headers["content-type"] == "application/json"
    assert request.headers["Content-Type"] == "application/json"
    assert server.pending == 0


def test_tool_call_reply() -> None:
    response = ScriptedResponse.reply(
        tool_calls=[("memory_recall", {"query": "Rome"}), ("list_workflows", "{}")]
    )
    with OpenAITestServer([response]) as server:
        model, _ = client_for(server)
        reply = model.complete(USER, tools=[RECALL])
    assert reply.message.content is None
    assert reply.message.tool_calls == (
        ToolCall("call_1", "memory_recall", '{"query": "Rome"}'),
        ToolCall("call_2", "list_workflows", "{}"),
    )
    assert reply.finish_reason == "tool_calls"
    assert server.requests[0].json["tools"] == [RECALL.to_openai()]
    assert server.requests[0].json["tool_choice"] == "auto"


def test_sse_stream_with_text_and_tool_call_deltas() -> None:
    calls = [
        ("memory_recall", {"query": "trips to Rome in spring", "limit": 5}),
        ("web_fetch", {"url": "https://example.org/rome", "max_bytes": 4000}),
    ]
    response = ScriptedResponse.stream("Let me check your notes first.", calls, Usage(21, 8))
    assert response.sse is not None
    argument_lines = [line for line in response.sse if '"function": {"arguments"' in line]
    assert len(argument_lines) >= 4  # each call's arguments arrive in pieces
    with OpenAITestServer([response]) as server:
        model, _ = client_for(server, stream=True)
        deltas: list[str] = []
        reply = model.complete(USER, tools=[RECALL], on_text=deltas.append)
    assert deltas == ["Let ", "me ", "check ", "your ", "notes ", "first."]
    assert reply.message.content == "Let me check your notes first."
    assert reply.message.tool_calls == (
        ToolCall("call_1", "memory_recall", '{"query": "trips to Rome in spring", "limit": 5}'),
        ToolCall("call_2", "web_fetch", '{"url": "https://example.org/rome", "max_bytes": 4000}'),
    )
    assert reply.usage == Usage(21, 8)
    assert reply.finish_reason == "tool_calls"
    assert server.requests[0].json["stream"] is True


def test_429_then_success_honours_retry_after_zero() -> None:
    responses = [
        ScriptedResponse.error(429, "slow down", retry_after=0),
        ScriptedResponse.reply("ok"),
    ]
    with OpenAITestServer(responses) as server:
        model = OpenAICompatibleModel(base_url=server.base_url, model="m", timeout_s=5)
        started = time.monotonic()
        reply = model.complete(USER)
        elapsed = time.monotonic() - started
    assert reply.message.content == "ok"
    assert len(server.requests) == 2
    assert elapsed < 0.45  # the 0.5 s backoff was replaced by Retry-After: 0


def test_500_then_success() -> None:
    responses = [ScriptedResponse.error(500, "internal"), ScriptedResponse.reply("recovered")]
    with OpenAITestServer(responses) as server:
        model, sleeps = client_for(server)
        assert model.complete(USER).message.content == "recovered"
    assert sleeps == [0.5]
    assert len(server.requests) == 2


def test_garbage_body_is_a_model_error() -> None:
    with OpenAITestServer([ScriptedResponse.garbage(), ScriptedResponse.reply("unused")]) as server:
        model, sleeps = client_for(server)
        with pytest.raises(ModelError, match='not JSON: "<html><body><h1>Welcome</h1>'):
            model.complete(USER)
    assert len(server.requests) == 1
    assert sleeps == []
    assert server.pending == 1


def test_slow_server_past_the_route_timeout() -> None:
    slow = ScriptedResponse(json={"choices": []}, delay_s=10)
    with OpenAITestServer([slow, slow]) as server:
        model, sleeps = client_for(server, timeout_s=0.3, max_retries=1)
        started = time.monotonic()
        with pytest.raises(ModelTimeoutError, match=r"did not answer within 0\.3 s") as info:
            model.complete(USER)
        elapsed = time.monotonic() - started
        closing = time.monotonic()
    assert time.monotonic() - closing < 1.0  # close() does not wait for the slow handlers
    assert 0.5 < elapsed < 2.0
    assert len(server.requests) == 2
    assert sleeps == [0.5]
    assert "gave up after 2 attempts" in str(info.value)


def test_the_callers_budget_bounds_the_whole_call() -> None:
    slow = ScriptedResponse(json={"choices": []}, delay_s=10)
    with OpenAITestServer([slow, slow, slow]) as server:
        model = OpenAICompatibleModel(base_url=server.base_url, model="m", timeout_s=60)
        started = time.monotonic()
        with pytest.raises(ModelTimeoutError):
            model.complete(USER, timeout=0.4)
        elapsed = time.monotonic() - started
    assert elapsed < 1.5
    assert len(server.requests) == 1


def test_stream_cut_midway_is_a_model_error() -> None:
    response = ScriptedResponse.stream("one two three four five six", cut_after=4)
    with OpenAITestServer([response, ScriptedResponse.stream("unused")]) as server:
        model, sleeps = client_for(server, stream=True)
        deltas: list[str] = []
        with pytest.raises(ModelError, match="ended early") as info:
            model.complete(USER, on_text=deltas.append)
    assert not isinstance(info.value, ModelTimeoutError)
    assert deltas == ["one ", "two ", "three "]
    assert len(server.requests) == 1
    assert sleeps == []


def test_connection_refused_names_the_url() -> None:
    server = OpenAITestServer()
    base_url = server.base_url
    server.close()
    model = OpenAICompatibleModel(base_url=base_url, model="m", max_retries=1, sleep=lambda _: None)
    with pytest.raises(ModelError) as info:
        model.complete(USER)
    message = str(info.value)
    assert message.startswith(f"Cannot reach the model server at {base_url}")
    assert f"Is the server running at {base_url}?" in message
    assert "gave up after 2 attempts" in message


def _echo(messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> str:
    return f"echo: {messages[-1].content}"


def test_concurrent_requests_are_served_in_parallel() -> None:
    responder = ScriptedModel(itertools.repeat(_echo))
    with OpenAITestServer(model=responder, delay_s=0.25) as server:
        model, _ = client_for(server)
        prompts = [f"question {i}" for i in range(16)]
        started = time.monotonic()
        with ThreadPoolExecutor(max_workers=16) as pool:
            replies = list(
                pool.map(lambda p: model.complete([Message(role="user", content=p)]), prompts)
            )
        elapsed = time.monotonic() - started
        model.close()
    assert [r.message.content for r in replies] == [f"echo: {p}" for p in prompts]
    assert len(server.requests) == 16
    assert len(responder.calls) == 16
    assert elapsed < 2.0  # one at a time would take 16 x 0.25 s = 4 s


@pytest.mark.parametrize(
    ("api_key_env", "value", "expected"),
    [
        (None, None, None),
        (KEY_ENV, None, None),
        (KEY_ENV, "", None),
        (KEY_ENV, "sk-local-123", "Bearer sk-local-123"),
    ],
)
def test_authorization_header_reaches_the_server_only_with_a_key(
    monkeypatch: pytest.MonkeyPatch,
    api_key_env: str | None,
    value: str | None,
    expected: str | None,
) -> None:
    if value is not None:
        monkeypatch.setenv(KEY_ENV, value)
    with OpenAITestServer([ScriptedResponse.reply("ok")]) as server:
        model, _ = client_for(server, api_key_env=api_key_env)
        model.complete(USER)
    assert server.requests[0].headers.get("Authorization") == expected
    assert ("authorization" in server.requests[0].headers) is (expected is not None)


def test_model_responder_answers_json_and_sse() -> None:
    responder = ScriptedModel(
        [
            tool_call_message(("memory_recall", {"query": "Rome"})),
            "Here is the answer.",
        ]
    )
    with OpenAITestServer(model=responder) as server:
        plain, _ = client_for(server)
        first = plain.complete(USER, tools=[RECALL], tool_choice="required", temperature=0.2)
        streaming, _ = client_for(server, stream=True)
        deltas: list[str] = []
        second = streaming.complete(USER, on_text=deltas.append)
    assert first.message.tool_calls == (ToolCall("call_1", "memory_recall", '{"query": "Rome"}'),)
    assert first.model == "test-model"
    assert second.message.content == "Here is the answer."
    assert "".join(deltas) == "Here is the answer."
    assert len(deltas) == 4
    call = responder.calls[0]
    assert call.messages == tuple(USER)
    assert call.tools == (RECALL,)
    assert call.tool_choice == "required"
    assert call.temperature == 0.2
    assert responder.calls[1].tools is None


def test_model_responder_serves_tool_calls_as_text_for_non_native_clients() -> None:
    def answer(messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> str:
        assert tools is None  # the client sent a catalogue, not tools
        assert messages[0].role == "system"
        assert "- memory_recall(query: string (optional)): Search the memory tree." in (
            messages[0].content or ""
        )
        return 'Searching.\n<tool_call>{"name": "memory_recall", "arguments": {"query": "Rome"}}</tool_call>'

    with OpenAITestServer(model=ScriptedModel([answer])) as server:
        model, _ = client_for(server, native_tool_calling=False)
        reply = model.complete(USER, tools=[RECALL])
    assert reply.message.content == "Searching."
    assert reply.message.tool_calls == (ToolCall("call_1", "memory_recall", '{"query": "Rome"}'),)


def test_model_errors_become_http_errors() -> None:
    with OpenAITestServer(model=ScriptedModel([])) as server:
        model, sleeps = client_for(server, max_retries=1)
        with pytest.raises(ModelError, match=r"HTTP 500: .*has no more steps"):
            model.complete(USER)
    assert sleeps == [0.5]


def test_empty_queue_without_model_is_a_clear_500() -> None:
    with OpenAITestServer() as server:
        response = httpx.post(server.base_url + "/chat/completions", json={"messages": []})
    assert response.status_code == 500
    assert "no scripted response left" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("method", "path", "body", "status"),
    [
        ("GET", "/v1/models", None, 200),
        ("GET", "/v1/chat/completions", None, 404),
        ("POST", "/v2/chat/completions", {}, 404),
        ("POST", "/v1/chat/completions", "not json", 400),
    ],
)
def test_routes(method: str, path: str, body: Any, status: int) -> None:
    with OpenAITestServer(model_name="served") as server:
        url = server.base_url.removesuffix("/v1") + path
        content = body.encode() if isinstance(body, str) else None
        response = httpx.request(
            method, url, json=body if isinstance(body, dict) else None, content=content
        )
    assert response.status_code == status
    assert response.headers["content-type"] == "application/json"
    if status == 200:
        assert response.json()["data"][0]["id"] == "served"
    else:
        assert response.json()["error"]["message"]
    assert [(r.method, r.path) for r in server.requests] == [(method, path)]


def test_raw_sse_lines_and_headers_are_sent_as_given() -> None:
    lines = [
        ": ping",
        'data: {"choices": [{"index": 0, "delta": {"content": "raw"}}]}',
        'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}',
        "data: [DONE]",
    ]
    response = ScriptedResponse(sse=lines, headers={"X-Request-Id": "abc"})
    server = OpenAITestServer([response])
    with server, httpx.stream("POST", server.base_url + "/chat/completions", json={}) as raw:
        text = raw.read().decode()
        headers = raw.headers
    assert text == "".join(line + "\n\n" for line in lines)
    assert headers["x-request-id"] == "abc"
    assert headers["content-type"] == "text/event-stream"


def test_close_is_prompt_while_a_request_waits() -> None:
    server = OpenAITestServer([ScriptedResponse(json={}, delay_s=30)])
    outcome: list[BaseException] = []

    def call() -> None:
        model = OpenAICompatibleModel(base_url=server.base_url, model="m", max_retries=0)
        try:
            model.complete(USER)
        except ModelError as exc:
            outcome.append(exc)

    worker = threading.Thread(target=call)
    worker.start()
    while not server.requests:
        time.sleep(0.01)
    started = time.monotonic()
    server.close()
    worker.join(timeout=5)
    assert time.monotonic() - started < 1.0
    assert not worker.is_alive()
    assert len(outcome) == 1
    server.close()  # closing twice is harmless


def test_enqueue_adds_responses_in_order() -> None:
    with OpenAITestServer() as server:
        server.enqueue(ScriptedResponse.reply("first"), ScriptedResponse.reply("second"))
        model, _ = client_for(server)
        texts = [model.complete(USER).message.content for _ in range(2)]
    assert texts == ["first", "second"]
    assert repr(server).endswith("closed)")


def test_scripted_reply_helper_round_trip() -> None:
    reply = ModelReply(Message("assistant", "x"), Usage(1, 2), "length")
    response = ScriptedResponse.reply("x", usage=Usage(1, 2), finish_reason="length")
    with OpenAITestServer([response]) as server:
        model, _ = client_for(server)
        got = model.complete(USER)
    assert got == ModelReply(reply.message, reply.usage, reply.finish_reason, "test-model")


# A self-signed certificate for localhost and 127.0.0.1 (valid 2000-2199), made for these
# tests only: no trust store holds it, so a client that verifies must refuse it.
TEST_CERT = """-----BEGIN CERTIFICATE-----
MIIBXDCCAQGgAwIBAgIUPCpbV9CzFhWv4JgBHsz3HSgXdo4wCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTAwMDEwMTAwMDAwMFoYDzIxOTkxMjMx
MDAwMDAwWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQm9iDWH8MQxJUPWUvdFSrZs+wCugefMFpurcZDphXxf9+fiZNcWL2x
hMOer8ZIiA/yMykzYgqVM4x2IrkyRAQboy8wLTAaBgNVHREEEzARgglsb2NhbGhv
c3SHBH8AAAEwDwYDVR0TAQH/BAUwAwEB/zAKBggqhkjOPQQDAgNJADBGAiEA2H3h
LR0/gGDAyfgOi5/fC410bZayxBpWDqILUUCCrMUCIQC4p5HXxtpLGk0yXCxORhg0
HQIc7uCgn8iPgexkke87NQ==
-----END CERTIFICATE-----
"""
TEST_KEY = """-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgFbPYeXLDQzE7cgWR
J5albdpUimGwVvZn/B0Kk/DTgcChRANCAAQm9iDWH8MQxJUPWUvdFSrZs+wCugef
MFpurcZDphXxf9+fiZNcWL2xhMOer8ZIiA/yMykzYgqVM4x2IrkyRAQb
-----END PRIVATE KEY-----
"""


class _TLSHandler(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"a page over TLS"
        self.send_response(200)
        self.send_header("content-type", "text/plain")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("content-length", "0")))
        body = json.dumps(
            {
                "model": "test-model",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": "over TLS"},
                        "finish_reason": "stop",
                    }
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        del format, args


@pytest.fixture
def tls_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """An HTTPS server on 127.0.0.1 with the self-signed certificate; yields its base URL
    and the certificate's file. The shared TLS contexts start empty and are put back."""
    monkeypatch.setattr(http_helpers, "_SSL_CONTEXTS", {})
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    cert.write_text(TEST_CERT, encoding="ascii")
    key.write_text(TEST_KEY, encoding="ascii")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _TLSHandler)
    httpd.socket = context.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05})
    thread.start()
    try:
        yield f"https://127.0.0.1:{httpd.server_address[1]}/v1", cert
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_https_verifies_the_server_certificate(tls_server: tuple[str, Path]) -> None:
    base_url, _ = tls_server
    with (
        OpenAICompatibleModel(base_url=base_url, model="m", max_retries=0) as model,
        pytest.raises(ModelError, match="CERTIFICATE_VERIFY_FAILED"),
    ):
        model.complete(USER)


def test_https_trusts_the_certificate_named_by_ssl_cert_file(
    tls_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    base_url, cert = tls_server
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    with OpenAICompatibleModel(base_url=base_url, model="m", max_retries=0) as first:
        assert first.complete(USER).message.content == "over TLS"
    with OpenAICompatibleModel(base_url=base_url, model="m", max_retries=0) as second:
        assert second.complete(USER).message.content == "over TLS"
    assert len(http_helpers._SSL_CONTEXTS) == 1


def test_web_fetch_trusts_the_same_certificates_as_the_models(
    tls_server: tuple[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    base_url, cert = tls_server
    page = base_url.rsplit("/v1", 1)[0] + "/page"
    refused = fetch_url(page, allow_private_addresses=True, timeout=5)
    assert not refused.ok and "CERTIFICATE_VERIFY_FAILED" in refused.content
    monkeypatch.setenv("SSL_CERT_FILE", str(cert))
    fetched = fetch_url(page, allow_private_addresses=True, timeout=5)
    assert fetched.ok, fetched.content
    with OpenAICompatibleModel(base_url=base_url, model="m", max_retries=0) as model:
        assert model.complete(USER).message.content == "over TLS"
    assert len(http_helpers._SSL_CONTEXTS) == 2  # one per SSL_CERT_FILE value, shared
