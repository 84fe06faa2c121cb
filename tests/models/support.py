"""What the tests of the OpenAI-compatible model share: a recording MockTransport handler,
models built on it, and completion bodies and SSE lines to answer with."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx

from supercontext_lab.models.base import Message, ToolSpec
from supercontext_lab.models.openai import OpenAICompatibleModel

BASE = "http://llm.test/v1"
URL = BASE + "/chat/completions"
KEY_ENV = "SUPERCONTEXT_TEST_API_KEY"
CANARY = "sk-canary-7f3a9c1e5b2d4068"
RECALL = ToolSpec(
    name="memory_recall",
    description="Search the memory tree.",
    parameters={"type": "object", "properties": {"query": {"type": "string"}}},
)
USER = [Message(role="system", content="You are a scout."), Message(role="user", content="hi")]

Handler = Callable[[httpx.Request], httpx.Response]


def completion(
    content: str | None = "ok",
    tool_calls: list[dict[str, Any]] | None = None,
    usage: dict[str, Any] | None = None,
    finish_reason: str | None = "stop",
) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls is not None:
        message["tool_calls"] = tool_calls
    body: dict[str, Any] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "model": "served-model",
        "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
    }
    if usage is not None:
        body["usage"] = usage
    return body


class Recorder:
    """A MockTransport handler answering from a list and recording every request."""

    def __init__(self, *answers: httpx.Response | Exception | Handler) -> None:
        self.answers = list(answers)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        answer = self.answers.pop(0) if len(self.answers) > 1 else self.answers[0]
        if isinstance(answer, Exception):
            raise answer
        if callable(answer):
            return answer(request)
        return answer

    def body(self, index: int = -1) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.requests[index].content)
        return data


def make(recorder: Recorder, **options: Any) -> tuple[OpenAICompatibleModel, list[float]]:
    sleeps: list[float] = []
    options.setdefault("base_url", BASE)
    options.setdefault("model", "m")
    model = OpenAICompatibleModel(
        transport=httpx.MockTransport(recorder), sleep=sleeps.append, **options
    )
    return model, sleeps


def ok(body: Any = None, **headers: str) -> httpx.Response:
    return httpx.Response(200, json=completion() if body is None else body, headers=headers)


def sse_response(lines: list[str], *, finish: bool = False) -> httpx.Response:
    if finish:
        lines = [chunk({}, "stop"), *lines]
    text = "".join(line + "\n\n" for line in lines)
    return httpx.Response(200, text=text, headers={"content-type": "text/event-stream"})


def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> str:
    body = {
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }
    body.update(extra)
    return "data: " + json.dumps(body)
