"""Server-sent events: data lines and the accumulation of streamed deltas into one reply."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supercontext_lab.errors import ModelError
from supercontext_lab.models.base import Message, ModelReply, ToolCall, Usage
from supercontext_lab.models.sse import StreamAccumulator, sse_data
from supercontext_lab.models.wire import completion_from_openai
from supercontext_lab.testing.wire import reply_to_openai, reply_to_sse_chunks


@pytest.mark.parametrize(
    "reply",
    [
        ModelReply(Message("assistant", "Hello there, world."), Usage(3, 4), "stop"),
        ModelReply(
            Message(
                "assistant",
                None,
                (
                    ToolCall("c1", "memory_recall", '{"query": "a fairly long query text"}'),
                    ToolCall(
                        "c2", "web_fetch", '{"url": "https://example.org/x", "max_bytes": 100}'
                    ),
                ),
            ),
            Usage(9, 2),
            "tool_calls",
        ),
        ModelReply(Message("assistant", "  leading and trailing  "), Usage(), "length"),
    ],
)
def test_reply_round_trips_through_json_and_sse(reply: ModelReply) -> None:
    as_json = completion_from_openai(json.loads(json.dumps(reply_to_openai(reply, "m"))))
    assert as_json == ModelReply(reply.message, reply.usage, reply.finish_reason, "m")
    lines = reply_to_sse_chunks(reply, "m")
    assert lines[-1] == "data: [DONE]"
    assert all(line.startswith("data: ") for line in lines)
    accumulator = StreamAccumulator()
    for line in lines[:-1]:
        accumulator.feed(json.loads(line[6:]))
    streamed = accumulator.build()
    assert streamed.message.content == (reply.message.content or None)
    assert streamed.message.tool_calls == reply.message.tool_calls
    assert streamed.usage == reply.usage
    assert streamed.finish_reason == reply.finish_reason
    for call_index, call in enumerate(reply.message.tool_calls):
        pieces = [
            line for line in lines if f'"index": {call_index}, "function": {{"arguments"' in line
        ]
        assert len(pieces) >= 2, call.name


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("data: {}", "{}"),
        ("data:{}", "{}"),
        ("data:  x", " x"),
        ("data: [DONE]", "[DONE]"),
        (": comment", None),
        ("event: delta", None),
        ("", None),
        ("id: 4", None),
    ],
)
def test_sse_data_table(line: str, expected: str | None) -> None:
    assert sse_data(line) == expected


_CHUNK_KEYS = ["choices", "delta", "content", "tool_calls", "index", "id", "function", "name"]
_CHUNK_KEYS += ["arguments", "usage", "finish_reason", "error", "model", "x"]
_chunk_like = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(_CHUNK_KEYS), inner, max_size=5)
    ),
    max_leaves=20,
)


@given(_chunk_like)
def test_stream_accumulator_raises_only_model_errors(chunk_value: Any) -> None:
    accumulator = StreamAccumulator()
    try:
        accumulator.feed(chunk_value)
        accumulator.build()
    except ModelError:
        pass
