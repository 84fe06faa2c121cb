"""The OpenAI-compatible model over httpx.MockTransport: requests, the key, timeouts,
retries, bodies, streams, text-protocol tools, construction and the shared TLS context."""

from __future__ import annotations

import email.utils
import logging
import re
import ssl
import threading
import time
import traceback
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from supercontext_lab import _http as http_helpers
from supercontext_lab._http import tls_context
from supercontext_lab.errors import ConfigError, ModelError, ModelTimeoutError
from supercontext_lab.models.base import ChatModel, Message, ToolCall, ToolSpec, Usage
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.models.wire import messages_for_text_tools
from supercontext_lab.routes import ModelRoute

from .support import (
    BASE,
    CANARY,
    KEY_ENV,
    RECALL,
    URL,
    USER,
    Recorder,
    chunk,
    completion,
    make,
    ok,
    sse_response,
)

# --- request shape --------------------------------------------------------------------


@pytest.mark.parametrize("base_url", [BASE, BASE + "/", " " + BASE + "// "])
def test_posts_model_and_messages_to_chat_completions(base_url: str) -> None:
    recorder = Recorder(ok())
    model, _ = make(recorder, base_url=base_url)
    reply = model.complete(USER)
    request = recorder.requests[0]
    assert request.method == "POST"
    assert str(request.url) == URL
    assert request.headers["content-type"] == "application/json"
    assert recorder.body() == {
        "model": "m",
        "messages": [
            {"role": "system", "content": "You are a scout."},
            {"role": "user", "content": "hi"},
        ],
    }
    assert reply.message == Message(role="assistant", content="ok")
    assert reply.finish_reason == "stop"
    assert reply.model == "served-model"


@pytest.mark.parametrize(("temperature", "expected"), [(0.3, 0.3), (0, 0), (1.5, 1.5)])
def test_temperature_is_sent_when_given(temperature: float, expected: float) -> None:
    recorder = Recorder(ok())
    model, _ = make(recorder)
    model.complete(USER, temperature=temperature)
    assert recorder.body()["temperature"] == expected


@pytest.mark.parametrize(
    ("tool_choice", "expected"),
    [
        (None, "auto"),
        ("auto", "auto"),
        ("none", "none"),
        ("required", "required"),
        ("memory_recall", {"type": "function", "function": {"name": "memory_recall"}}),
    ],
)
def test_tools_and_tool_choice_in_native_mode(tool_choice: str | None, expected: Any) -> None:
    recorder = Recorder(ok())
    model, _ = make(recorder)
    model.complete(USER, tools=[RECALL], tool_choice=tool_choice)
    body = recorder.body()
    assert body["tools"] == [RECALL.to_openai()]
    assert body["tool_choice"] == expected


@pytest.mark.parametrize("tools", [None, []])
def test_no_tools_means_no_tools_and_no_tool_choice(tools: list[ToolSpec] | None) -> None:
    recorder = Recorder(ok())
    model, _ = make(recorder)
    model.complete(USER, tools=tools, tool_choice="none")
    assert "tools" not in recorder.body()
    assert "tool_choice" not in recorder.body()
    assert "temperature" not in recorder.body()


def test_streaming_request_asks_for_usage() -> None:
    recorder = Recorder(sse_response(["data: [DONE]"], finish=True))
    model, _ = make(recorder, stream=True)
    model.complete(USER)
    assert recorder.body()["stream"] is True
    assert recorder.body()["stream_options"] == {"include_usage": True}
    assert recorder.requests[0].headers["accept"] == "text/event-stream"


def test_history_with_tool_calls_is_sent_in_openai_shape() -> None:
    recorder = Recorder(ok())
    model, _ = make(recorder)
    call = ToolCall(id="call_9", name="memory_recall", arguments='{"query": "trip"}')
    history = [
        *USER,
        Message(role="assistant", tool_calls=(call,)),
        Message(role="tool", content="no hits", tool_call_id="call_9", name="memory_recall"),
    ]
    model.complete(history, tools=[RECALL])
    sent = recorder.body()["messages"]
    assert sent[2] == {"role": "assistant", "content": None, "tool_calls": [call.to_openai()]}
    assert sent[3] == {
        "role": "tool",
        "content": "no hits",
        "tool_call_id": "call_9",
        "name": "memory_recall",
    }


# --- the key --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("api_key_env", "value", "expected"),
    [
        (None, None, None),
        (KEY_ENV, None, None),
        (KEY_ENV, "", None),
        (KEY_ENV, "   ", None),
        (KEY_ENV, "sk-abc", "Bearer sk-abc"),
        (KEY_ENV, " sk-abc\n", "Bearer sk-abc"),
        ("", "sk-abc", None),
    ],
)
def test_authorization_header_only_with_a_key(
    monkeypatch: pytest.MonkeyPatch,
    api_key_env: str | None,
    value: str | None,
    expected: str | None,
) -> None:
    if value is not None:
        monkeypatch.setenv(KEY_ENV, value)
    recorder = Recorder(ok())
    model, _ = make(recorder, api_key_env=api_key_env)
    model.complete(USER)
    assert recorder.requests[0].headers.get("authorization") == expected


def test_key_is_read_at_call_time(monkeypatch: pytest.MonkeyPatch) -> None:
    recorder = Recorder(ok())
    model, _ = make(recorder, api_key_env=KEY_ENV)
    model.complete(USER)
    monkeypatch.setenv(KEY_ENV, "sk-first")
    model.complete(USER)
    monkeypatch.setenv(KEY_ENV, "sk-second")
    model.complete(USER)
    seen = [r.headers.get("authorization") for r in recorder.requests]
    assert seen == [None, "Bearer sk-first", "Bearer sk-second"]


@pytest.mark.parametrize("bad", ["sk-\x01x", "sk-ké", "sk-a\nb"])
def test_key_with_unsendable_characters_is_refused_without_quoting_it(
    monkeypatch: pytest.MonkeyPatch, bad: str
) -> None:
    monkeypatch.setenv(KEY_ENV, bad)
    recorder = Recorder(ok())
    model, _ = make(recorder, api_key_env=KEY_ENV)
    with pytest.raises(ModelError, match=KEY_ENV) as info:
        model.complete(USER)
    assert bad.strip() not in str(info.value)
    assert recorder.requests == []


def test_canary_key_never_leaks(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv(KEY_ENV, CANARY)
    caplog.set_level(logging.DEBUG)
    # A server that echoes the key in its error bodies, then fails, then times out.
    echo = httpx.Response(503, text=f"overloaded; your key {CANARY} is fine")
    rejected = httpx.Response(401, json={"error": {"message": f"Incorrect API key: {CANARY}"}})
    recorder = Recorder(echo, echo, rejected)
    model, sleeps = make(recorder, api_key_env=KEY_ENV)
    with pytest.raises(ModelError) as info:
        model.complete(USER)
    assert recorder.requests[0].headers["authorization"] == f"Bearer {CANARY}"
    assert sleeps == [0.5, 1.0]
    timeout = Recorder(httpx.ReadTimeout("timed out"))
    slow, _ = make(timeout, api_key_env=KEY_ENV)
    with pytest.raises(ModelTimeoutError) as slow_info:
        slow.complete(USER)
    shown = [
        repr(model),
        model.name,
        str(model.__dict__),
        str(info.value),
        repr(info.value),
        "".join(traceback.format_exception(info.value)),
        str(slow_info.value),
        "".join(traceback.format_exception(slow_info.value)),
        caplog.text,
    ]
    assert "HTTP 401" in str(info.value)
    assert "[secret removed]" in str(info.value)
    assert "Retrying" in caplog.text
    for text in shown:
        assert CANARY not in text


# --- timeouts -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("timeout_s", "budget", "expected"),
    [
        (60.0, None, {"connect": 10.0, "read": 60.0, "write": 60.0, "pool": 60.0}),
        (4.0, None, {"connect": 4.0, "read": 4.0, "write": 4.0, "pool": 4.0}),
        (60.0, 30.0, {"connect": 10.0, "read": 30.0, "write": 30.0, "pool": 30.0}),
        (20.0, 1000.0, {"connect": 10.0, "read": 20.0, "write": 20.0, "pool": 20.0}),
    ],
)
def test_each_attempt_gets_explicit_timeouts(
    timeout_s: float, budget: float | None, expected: dict[str, float]
) -> None:
    recorder = Recorder(ok())
    model, _ = make(recorder, timeout_s=timeout_s)
    model.complete(USER, timeout=budget)
    seen = recorder.requests[0].extensions["timeout"]
    assert seen.keys() == expected.keys()
    for key, value in expected.items():
        assert value - 0.5 < seen[key] <= value


def test_read_timeout_is_retried_then_gives_up_as_model_timeout() -> None:
    recorder = Recorder(httpx.ReadTimeout("timed out"))
    model, sleeps = make(recorder, timeout_s=7)
    with pytest.raises(
        ModelTimeoutError, match=r"did not answer within 7 s.*gave up after 4"
    ) as info:
        model.complete(USER)
    assert len(recorder.requests) == 4
    assert sleeps == [0.5, 1.0, 2.0]
    assert "Is the server running at http://llm.test/v1?" in str(info.value)
    assert isinstance(info.value.__cause__, httpx.ReadTimeout)


@pytest.mark.parametrize(
    "error",
    [httpx.ReadTimeout("t"), httpx.ConnectTimeout("t"), httpx.ConnectError("refused")],
)
def test_transient_transport_errors_are_retried(error: Exception) -> None:
    recorder = Recorder(error, ok())
    model, sleeps = make(recorder)
    assert model.complete(USER).message.content == "ok"
    assert len(recorder.requests) == 2
    assert sleeps == [0.5]


def test_unreachable_server_names_the_base_url() -> None:
    recorder = Recorder(httpx.ConnectError("[Errno 111] Connection refused"))
    model, sleeps = make(recorder, max_retries=1)
    with pytest.raises(ModelError) as info:
        model.complete(USER)
    message = str(info.value)
    assert not isinstance(info.value, ModelTimeoutError)
    assert message.startswith("Cannot reach the model server at http://llm.test/v1")
    assert "Connection refused" in message
    assert "Is the server running at http://llm.test/v1?" in message
    assert "\n" not in message
    assert sleeps == [0.5]


def test_no_time_left_means_no_request() -> None:
    recorder = Recorder(ok())
    model, _ = make(recorder)
    with pytest.raises(ModelTimeoutError, match="No time was left") as caught:
        model.complete(USER, timeout=0)
    assert recorder.requests == []
    assert caught.value.attempts == 0


def test_a_failed_call_says_how_many_requests_it_made() -> None:
    recorder = Recorder(httpx.Response(503, text="busy"))
    model, sleeps = make(recorder, max_retries=2)
    with pytest.raises(ModelError) as caught:
        model.complete(USER)
    assert caught.value.attempts == len(recorder.requests) == 3
    assert len(sleeps) == 2
    refused, _ = make(Recorder(httpx.Response(400, text="bad")))
    with pytest.raises(ModelError) as once:
        refused.complete(USER)
    assert once.value.attempts == 1


def test_retries_stop_at_the_callers_budget() -> None:
    recorder = Recorder(httpx.Response(503, headers={"Retry-After": "5"}, text="busy"))
    model, sleeps = make(recorder)
    with pytest.raises(ModelError, match="no time left in the call's budget") as info:
        model.complete(USER, timeout=1.0)
    assert not isinstance(info.value, ModelTimeoutError)
    assert "HTTP 503" in str(info.value)
    assert len(recorder.requests) == 1
    assert sleeps == []


# --- retries --------------------------------------------------------------------------


@pytest.mark.parametrize("status", [429, 500, 502, 503, 504])
def test_retryable_statuses_then_success(status: int) -> None:
    recorder = Recorder(httpx.Response(status, text="busy"), httpx.Response(status), ok())
    model, sleeps = make(recorder)
    reply = model.complete(USER)
    assert reply.message.content == "ok"
    assert len(recorder.requests) == 3
    assert reply.attempts == 3
    assert sleeps == [0.5, 1.0]


def test_a_reply_at_the_first_attempt_says_one_attempt() -> None:
    model, _ = make(Recorder(ok()))
    assert model.complete(USER).attempts == 1


@pytest.mark.parametrize(
    ("max_retries", "expected_sleeps"),
    [
        (0, []),
        (1, [0.5]),
        (3, [0.5, 1.0, 2.0]),
        (6, [0.5, 1.0, 2.0, 4.0, 8.0, 8.0]),
    ],
)
def test_backoff_doubles_and_is_capped(max_retries: int, expected_sleeps: list[float]) -> None:
    recorder = Recorder(httpx.Response(503, text="Service Unavailable"))
    model, sleeps = make(recorder, max_retries=max_retries)
    with pytest.raises(ModelError, match="HTTP 503") as info:
        model.complete(USER)
    assert sleeps == expected_sleeps
    assert len(recorder.requests) == max_retries + 1
    assert "Service Unavailable" in str(info.value)
    if max_retries:
        assert f"gave up after {max_retries + 1} attempts" in str(info.value)


def _http_date(offset_s: float) -> str:
    return email.utils.formatdate(time.time() + offset_s, usegmt=True)


@pytest.mark.parametrize(
    ("header", "low", "high"),
    [
        ("3", 3.0, 3.0),
        ("0", 0.0, 0.0),
        ("1.5", 1.5, 1.5),
        ("120", 30.0, 30.0),
        ("-4", 0.0, 0.0),
        ("soon", 0.5, 0.5),  # unreadable: the backoff applies
    ],
)
def test_retry_after_replaces_the_backoff(header: str, low: float, high: float) -> None:
    recorder = Recorder(httpx.Response(429, headers={"Retry-After": header}), ok())
    model, sleeps = make(recorder)
    model.complete(USER)
    assert len(sleeps) == 1
    assert low <= sleeps[0] <= high


@pytest.mark.parametrize(
    ("offset", "low", "high"), [(10.0, 8.0, 10.0), (3600.0, 30.0, 30.0), (-60.0, 0.0, 0.0)]
)
def test_retry_after_as_an_http_date(offset: float, low: float, high: float) -> None:
    recorder = Recorder(httpx.Response(503, headers={"Retry-After": _http_date(offset)}), ok())
    model, sleeps = make(recorder)
    model.complete(USER)
    assert len(sleeps) == 1
    assert low <= sleeps[0] <= high


@pytest.mark.parametrize(
    ("status", "hint"),
    [
        (400, "native_tool_calling = false"),
        (401, "No API key is configured"),
        (403, "No API key is configured"),
        (404, "usually ends in /v1"),
        (422, "check the model name 'm'"),
    ],
)
def test_client_errors_are_not_retried(status: int, hint: str) -> None:
    recorder = Recorder(httpx.Response(status, json={"error": {"message": "nope"}}))
    model, sleeps = make(recorder)
    with pytest.raises(ModelError) as info:
        model.complete(USER)
    message = str(info.value)
    assert len(recorder.requests) == 1
    assert sleeps == []
    assert f"{URL} answered HTTP {status}" in message
    assert '"nope"' in message
    assert hint in message
    assert "\n" not in message


def test_redirect_is_reported_with_its_target() -> None:
    moved = httpx.Response(308, headers={"Location": "https://llm.test/v1/chat/completions"})
    recorder = Recorder(moved)
    model, sleeps = make(recorder)
    with pytest.raises(
        ModelError, match=re.escape("redirects to https://llm.test/v1/chat/completions")
    ):
        model.complete(USER)
    assert len(recorder.requests) == 1
    assert sleeps == []


@pytest.mark.parametrize(
    ("value", "hint"),
    [
        (None, f"{KEY_ENV} is not set"),
        ("sk-set", f"Check the API key in the environment variable {KEY_ENV}"),
    ],
)
def test_unauthorised_hint_names_the_variable(
    monkeypatch: pytest.MonkeyPatch, value: str | None, hint: str
) -> None:
    if value is not None:
        monkeypatch.setenv(KEY_ENV, value)
    model, _ = make(Recorder(httpx.Response(401)), api_key_env=KEY_ENV)
    with pytest.raises(ModelError, match=hint):
        model.complete(USER)


# --- bodies ---------------------------------------------------------------------------


def test_garbage_body_is_a_model_error_and_not_retried() -> None:
    page = "<html><body>" + "Welcome to nginx! " * 300 + "</body></html>"
    recorder = Recorder(httpx.Response(200, text=page, headers={"content-type": "text/html"}))
    model, sleeps = make(recorder)
    with pytest.raises(ModelError) as info:
        model.complete(USER)
    message = str(info.value)
    assert not isinstance(info.value, ModelTimeoutError)
    assert "a body that is not JSON" in message
    assert "<html><body>Welcome to nginx!" in message
    assert len(message) < 600
    assert len(recorder.requests) == 1
    assert sleeps == []


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({}, "without 'choices'"),
        ({"choices": []}, "without 'choices'"),
        ({"choices": [{}]}, "has no 'message'"),
        ({"choices": [{"message": "hi"}]}, "has no 'message'"),
        ([1, 2], "not an object"),
        ("just a string", "not an object"),
        ({"error": {"message": "model not loaded"}}, "model not loaded"),
        ({"choices": [{"message": {"tool_calls": "x"}}]}, "'tool_calls' that is not a list"),
        ({"choices": [{"message": {"tool_calls": [{"id": "a"}]}}]}, "without a 'function'"),
    ],
)
def test_wrong_shaped_json_is_a_model_error_and_not_retried(body: Any, problem: str) -> None:
    recorder = Recorder(httpx.Response(200, json=body))
    model, sleeps = make(recorder)
    with pytest.raises(ModelError, match=problem):
        model.complete(USER)
    assert len(recorder.requests) == 1
    assert sleeps == []


def test_tool_calls_are_parsed_with_object_arguments_and_missing_ids() -> None:
    calls = [
        {
            "id": "call_abc",
            "type": "function",
            "function": {"name": "memory_recall", "arguments": '{"query": "x"}'},
        },
        {
            "type": "function",
            "function": {"name": "web_fetch", "arguments": {"url": "https://a.b"}},
        },
        {"id": "", "function": {"name": "list_workflows"}},
    ]
    recorder = Recorder(ok(completion(None, calls, finish_reason="tool_calls")))
    model, _ = make(recorder)
    reply = model.complete(USER, tools=[RECALL])
    assert reply.message.content is None
    assert reply.message.tool_calls == (
        ToolCall(id="call_abc", name="memory_recall", arguments='{"query": "x"}'),
        ToolCall(id="call_2", name="web_fetch", arguments='{"url": "https://a.b"}'),
        ToolCall(id="call_3", name="list_workflows", arguments="{}"),
    )
    assert reply.finish_reason == "tool_calls"


@pytest.mark.parametrize(
    ("usage", "expected"),
    [
        (None, Usage(0, 0)),
        ({"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15}, Usage(12, 3)),
        ({"prompt_tokens": 12}, Usage(12, 0)),
        ({"prompt_tokens": "12", "completion_tokens": -1}, Usage(0, 0)),
    ],
)
def test_usage_is_read_with_zeros_for_missing(
    usage: dict[str, Any] | None, expected: Usage
) -> None:
    model, _ = make(Recorder(ok(completion(usage=usage))))
    assert model.complete(USER).usage == expected


def test_on_text_gets_the_whole_text_once_without_streaming() -> None:
    model, _ = make(Recorder(ok(completion("all at once"))))
    seen: list[str] = []
    model.complete(USER, on_text=seen.append)
    assert seen == ["all at once"]


def test_null_content_without_tool_calls_becomes_empty_text() -> None:
    model, _ = make(Recorder(ok(completion(None))))
    assert model.complete(USER).message.content == ""


# --- streaming ------------------------------------------------------------------------


def test_stream_joins_text_and_tool_calls_by_index() -> None:
    lines = [
        ": keep-alive",
        "event: message",
        chunk({"role": "assistant", "content": ""}),
        chunk({"content": "Look"}),
        chunk({"content": "ing up"}),
        chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "c0",
                        "type": "function",
                        "function": {"name": "memory_recall", "arguments": ""},
                    }
                ]
            }
        ),
        chunk(
            {
                "tool_calls": [
                    {"index": 1, "id": "c1", "function": {"name": "web_fetch", "arguments": '{"ur'}}
                ]
            }
        ),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"query"'}}]}),
        chunk({"tool_calls": [{"index": 1, "function": {"arguments": 'l": "h"}'}}]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": ': "trip"}'}}]}),
        chunk({}, "tool_calls"),
        'data: {"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 9}, "model": "m-1"}',
        "data: [DONE]",
        chunk({"content": "after done is ignored"}),
    ]
    model, _ = make(Recorder(sse_response(lines)), stream=True)
    seen: list[str] = []
    reply = model.complete(USER, tools=[RECALL], on_text=seen.append)
    assert seen == ["Look", "ing up"]
    assert reply.message.content == "Looking up"
    assert reply.message.tool_calls == (
        ToolCall(id="c0", name="memory_recall", arguments='{"query": "trip"}'),
        ToolCall(id="c1", name="web_fetch", arguments='{"url": "h"}'),
    )
    assert reply.finish_reason == "tool_calls"
    assert reply.usage == Usage(7, 9)
    assert reply.model == "m-1"


def test_stream_without_done_but_with_finish_reason_is_complete() -> None:
    lines = ["data:" + chunk({"content": "hi"})[5:], chunk({}, "stop")]
    model, _ = make(Recorder(sse_response(lines)), stream=True)
    reply = model.complete(USER)
    assert reply.message.content == "hi"
    assert reply.usage == Usage(0, 0)


def test_stream_ending_early_after_content_is_not_retried() -> None:
    recorder = Recorder(sse_response([chunk({"content": "half"})]))
    model, sleeps = make(recorder, stream=True)
    seen: list[str] = []
    with pytest.raises(ModelError, match="ended early"):
        model.complete(USER, on_text=seen.append)
    assert seen == ["half"]
    assert len(recorder.requests) == 1
    assert sleeps == []


def _broken_stream(lines: list[str], error: Exception) -> httpx.Response:
    def body() -> Iterator[bytes]:
        for line in lines:
            yield (line + "\n\n").encode()
        raise error

    return httpx.Response(200, content=body(), headers={"content-type": "text/event-stream"})


@pytest.mark.parametrize(
    ("error", "kind"),
    [
        (httpx.RemoteProtocolError("incomplete chunked read"), ModelError),
        (httpx.ReadError("reset"), ModelError),
        (httpx.ReadTimeout("slow"), ModelTimeoutError),
    ],
)
def test_stream_broken_after_content_is_not_retried(
    error: Exception, kind: type[Exception]
) -> None:
    recorder = Recorder(_broken_stream([chunk({"content": "par"})], error), ok())
    model, sleeps = make(recorder, stream=True)
    with pytest.raises(kind) as info:
        model.complete(USER)
    assert type(info.value) is kind
    assert len(recorder.requests) == 1
    assert sleeps == []


def test_stream_broken_before_content_is_retried() -> None:
    broken = _broken_stream([chunk({"role": "assistant"})], httpx.RemoteProtocolError("cut"))
    recorder = Recorder(broken, sse_response([chunk({"content": "fine"}), "data: [DONE]"]))
    model, sleeps = make(recorder, stream=True)
    assert model.complete(USER).message.content == "fine"
    assert len(recorder.requests) == 2
    assert sleeps == [0.5]


def test_stream_error_chunk_is_a_model_error() -> None:
    lines = [chunk({"content": "a"}), 'data: {"error": {"message": "context length exceeded"}}']
    model, _ = make(Recorder(sse_response(lines)), stream=True)
    with pytest.raises(ModelError, match="context length exceeded"):
        model.complete(USER)


def test_stream_chunk_that_is_not_json_is_a_model_error() -> None:
    model, _ = make(Recorder(sse_response(["data: {not json"])), stream=True)
    with pytest.raises(ModelError, match="a stream chunk that is not JSON"):
        model.complete(USER)


def test_stream_requested_but_html_answered() -> None:
    page = httpx.Response(
        200, text="<html>\n<p>hello</p>\n</html>", headers={"content-type": "text/html"}
    )
    recorder = Recorder(page)
    model, _ = make(recorder, stream=True)
    with pytest.raises(ModelError, match=r"not an event stream: \"<html> <p>hello</p> </html>\""):
        model.complete(USER)
    assert len(recorder.requests) == 1


def test_stream_requested_but_json_answered() -> None:
    model, _ = make(Recorder(ok(completion("plain json"))), stream=True)
    seen: list[str] = []
    assert model.complete(USER, on_text=seen.append).message.content == "plain json"
    assert seen == ["plain json"]


# --- tool calling through text ------------------------------------------------------


def test_non_native_sends_a_catalogue_instead_of_tools() -> None:
    recorder = Recorder(ok())
    model, _ = make(recorder, native_tool_calling=False)
    call = ToolCall(id="call_1", name="memory_recall", arguments='{"query": "trip"}')
    history = [
        *USER,
        Message(role="assistant", content="Let me look.", tool_calls=(call,)),
        Message(role="tool", content="hit: Rome", tool_call_id="call_1"),
        Message(role="user", content="Now the envelope."),
    ]
    model.complete(history, tools=[RECALL], tool_choice="auto")
    body = recorder.body()
    assert "tools" not in body
    assert "tool_choice" not in body
    sent = body["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "user"]
    system = sent[0]["content"]
    assert system.startswith("You are a scout.\n\n## Tools")
    # One signature line per tool instead of its JSON schema: the catalogue is re-read on
    # every call, so it stays short.
    assert "- memory_recall(query: string (optional)): Search the memory tree." in system
    assert '<tool_call>{"name": "tool_name", "arguments": {"key": "value"}}</tool_call>' in system
    assert sent[2]["content"] == (
        'Let me look.\n<tool_call>{"name": "memory_recall", "arguments": {"query": "trip"}}</tool_call>'
    )
    assert "tool_calls" not in sent[2]
    assert sent[3]["content"] == "[tool result: memory_recall] hit: Rome\n\nNow the envelope."


def test_non_native_without_a_system_message_inserts_one() -> None:
    messages = messages_for_text_tools([Message(role="user", content="hi")], [RECALL])
    assert messages[0].role == "system"
    assert messages[0].content is not None
    assert messages[0].content.startswith("## Tools")
    assert messages[1] == Message(role="user", content="hi")


def test_non_native_parses_tool_call_blocks_from_the_reply() -> None:
    text = (
        "I will search.\n"
        '<tool_call>{"name": "memory_recall", "arguments": {"query": "trip"}}</tool_call>\n'
        '<tool_call>\n```json\n{"name": "web_fetch", "parameters": {"url": "u"}}\n```\n</tool_call>'
    )
    model, _ = make(Recorder(ok(completion(text))), native_tool_calling=False)
    seen: list[str] = []
    reply = model.complete(USER, tools=[RECALL], on_text=seen.append)
    assert reply.message.content == "I will search."
    assert reply.message.tool_calls == (
        ToolCall(id="call_1", name="memory_recall", arguments='{"query": "trip"}'),
        ToolCall(id="call_2", name="web_fetch", arguments='{"url": "u"}'),
    )
    assert reply.finish_reason == "tool_calls"
    assert seen == ["I will search."]


def test_non_native_with_tool_choice_none_sends_no_catalogue_and_parses_nothing() -> None:
    text = '<tool_call>{"name": "memory_recall", "arguments": {}}</tool_call>'
    recorder = Recorder(ok(completion(text)))
    model, _ = make(recorder, native_tool_calling=False)
    reply = model.complete(USER, tools=[RECALL], tool_choice="none")
    assert "## Tools" not in recorder.body()["messages"][0]["content"]
    assert reply.message.content == text
    assert reply.message.tool_calls == ()


def test_non_native_streaming_parses_blocks_after_the_stream() -> None:
    block = '<tool_call>{"name": "memory_recall", "arguments": {"query": "x"}}</tool_call>'
    lines = [
        chunk({"content": "ok "}),
        chunk({"content": block[:20]}),
        chunk({"content": block[20:]}),
        chunk({}, "stop"),
    ]
    model, _ = make(Recorder(sse_response(lines)), stream=True, native_tool_calling=False)
    reply = model.complete(USER, tools=[RECALL])
    assert reply.message.content == "ok"
    assert reply.message.tool_calls == (ToolCall("call_1", "memory_recall", '{"query": "x"}'),)


# --- construction ---------------------------------------------------------------------


def test_name_repr_and_protocol() -> None:
    model, _ = make(Recorder(ok()), api_key_env=KEY_ENV)
    assert model.name == "openai:m"
    assert isinstance(model, ChatModel)
    assert repr(model) == (
        "OpenAICompatibleModel(base_url='http://llm.test/v1', model='m', "
        f"api_key_env='{KEY_ENV}', timeout_s=60.0, stream=False, native_tool_calling=True, "
        "bundle_format='text')"
    )


def test_userinfo_in_the_base_url_is_never_shown() -> None:
    recorder = Recorder(httpx.Response(500, text="boom"))
    model, _ = make(recorder, base_url="http://user:s3cret@llm.test/v1", max_retries=0)
    with pytest.raises(ModelError) as info:
        model.complete(USER)
    assert "s3cret" not in str(info.value)
    assert "s3cret" not in repr(model)
    assert "http://llm.test/v1/chat/completions" in str(info.value)


@pytest.mark.parametrize(
    ("options", "problem"),
    [
        ({"base_url": "llm.test/v1"}, "not an http"),
        ({"base_url": ""}, "not an http"),
        ({"model": " "}, "needs a model name"),
        ({"timeout_s": 0}, "positive number"),
        ({"timeout_s": float("nan")}, "positive number"),
        ({"max_retries": -1}, "max_retries"),
    ],
)
def test_invalid_settings_are_config_errors(options: dict[str, Any], problem: str) -> None:
    settings: dict[str, Any] = {"base_url": BASE, "model": "m", **options}
    with pytest.raises(ConfigError, match=problem):
        OpenAICompatibleModel(**settings)


def test_from_route_reads_every_field(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-route")
    route = ModelRoute(
        kind="openai",
        base_url="http://127.0.0.1:11434/v1/",
        model="qwen2.5",
        api_key_env=KEY_ENV,
        timeout_s=12.5,
        native_tool_calling=False,
        stream=True,
    )
    recorder = Recorder(sse_response(["data: [DONE]"], finish=True))
    model = OpenAICompatibleModel.from_route(route, transport=httpx.MockTransport(recorder))
    assert (model.base_url, model.model, model.api_key_env) == (
        "http://127.0.0.1:11434/v1",
        "qwen2.5",
        KEY_ENV,
    )
    assert (model.timeout_s, model.native_tool_calling, model.stream) == (12.5, False, True)
    model.complete(USER, tools=[RECALL])
    assert recorder.requests[0].headers["authorization"] == "Bearer sk-route"
    assert str(recorder.requests[0].url) == "http://127.0.0.1:11434/v1/chat/completions"
    assert "tools" not in recorder.body()


@pytest.mark.parametrize(
    ("fields", "problem"),
    [
        ({"kind": "offline"}, "kind 'offline'"),
        ({"base_url": None}, "needs a base_url"),
        ({"model": None}, "needs a model name"),
    ],
)
def test_from_route_rejects_unusable_routes(fields: dict[str, Any], problem: str) -> None:
    # Built without validation: a validated route cannot lack these.
    route = ModelRoute.model_construct(
        **{"kind": "openai", "base_url": BASE, "model": "m", **fields}
    )
    with pytest.raises(ConfigError, match=problem):
        OpenAICompatibleModel.from_route(route)


def test_from_route_with_the_config_model_route() -> None:
    route = ModelRoute(kind="openai", base_url=BASE, model="m", timeout_s=5.0)
    model = OpenAICompatibleModel.from_route(route)
    assert (model.base_url, model.model, model.timeout_s, model.stream) == (BASE, "m", 5.0, False)
    model.close()


def test_injected_client_is_used_and_left_open() -> None:
    recorder = Recorder(ok())
    client = httpx.Client(transport=httpx.MockTransport(recorder))
    with OpenAICompatibleModel(base_url=BASE, model="m", client=client) as model:
        model.complete(USER)
    assert len(recorder.requests) == 1
    assert not client.is_closed
    client.close()


# --- the shared TLS context -----------------------------------------------------------


@pytest.fixture
def ssl_builds(monkeypatch: pytest.MonkeyPatch) -> tuple[list[int], list[object]]:
    """A fresh context cache; counts the contexts built and records each client's verify."""
    monkeypatch.setattr(http_helpers, "_SSL_CONTEXTS", {})
    for name in ("SSL_CERT_FILE", "SSL_CERT_DIR"):
        monkeypatch.delenv(name, raising=False)
    built: list[int] = []
    verify: list[object] = []
    real_build = httpx.create_ssl_context

    def counting_build() -> ssl.SSLContext:
        built.append(1)
        time.sleep(0.01)  # widen the window in which racing threads could build twice
        return real_build()

    class RecordingClient(httpx.Client):
        def __init__(self, **options: Any) -> None:
            verify.append(options.get("verify"))
            super().__init__(**options)

    monkeypatch.setattr(httpx, "create_ssl_context", counting_build)
    monkeypatch.setattr(httpx, "Client", RecordingClient)
    return built, verify


def test_models_share_one_verifying_tls_context(
    ssl_builds: tuple[list[int], list[object]],
) -> None:
    built, verify = ssl_builds
    models: list[OpenAICompatibleModel] = []
    lock = threading.Lock()

    def build() -> None:
        model = OpenAICompatibleModel(base_url="https://llm.test/v1", model="m")
        with lock:
            models.append(model)

    threads = [threading.Thread(target=build) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    context = tls_context()
    assert len(built) == 1
    assert len(verify) == 8 and all(item is context for item in verify)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.get_ca_certs(), "the default trust store holds certificates"
    for model in models:
        model.close()


def test_an_injected_transport_or_client_builds_no_context(
    ssl_builds: tuple[list[int], list[object]],
) -> None:
    built, verify = ssl_builds
    recorder = Recorder(ok())
    with OpenAICompatibleModel(
        base_url=BASE, model="m", transport=httpx.MockTransport(recorder)
    ) as model:
        assert model.complete(USER).message.content == "ok"
    client = httpx.Client(transport=httpx.MockTransport(recorder))
    with OpenAICompatibleModel(base_url=BASE, model="m", client=client) as model:
        assert model.complete(USER).message.content == "ok"
    client.close()
    assert built == []
    assert verify == [None, None]
    assert len(recorder.requests) == 2
