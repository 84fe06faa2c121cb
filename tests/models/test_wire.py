"""The client side of the wire format: messages, completions and text-protocol tool calls."""

from __future__ import annotations

import contextlib
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supercontext_lab.errors import ModelError
from supercontext_lab.models.base import Message, ToolCall
from supercontext_lab.models.openai import (
    message_from_openai,
    messages_from_openai,
)
from supercontext_lab.models.wire import (
    completion_from_openai,
    parse_tool_call_blocks,
    render_tool_call_block,
)


@pytest.mark.parametrize(
    ("text", "content", "names"),
    [
        ("plain text", "plain text", []),
        ("<tool_call>not json</tool_call>", "<tool_call>not json</tool_call>", []),
        (
            '<tool_call>{"arguments": {}}</tool_call>',
            '<tool_call>{"arguments": {}}</tool_call>',
            [],
        ),
        ('a <tool_call>{"name": "x"}</tool_call> b', "a  b", ["x"]),
        ('<tool_call>{"name": "x"}', '<tool_call>{"name": "x"}', []),
        (
            '<tool_call>[1]</tool_call><tool_call>{"name": "y"}</tool_call>',
            "<tool_call>[1]</tool_call>",
            ["y"],
        ),
    ],
)
def test_parse_tool_call_blocks_table(text: str, content: str, names: list[str]) -> None:
    rest, calls = parse_tool_call_blocks(text)
    assert rest == content
    assert [c.name for c in calls] == names
    assert [c.id for c in calls] == [f"call_{i}" for i in range(1, len(names) + 1)]


_names = st.from_regex(r"[a-z][a-z_]{0,15}", fullmatch=True)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
_plain = st.text(max_size=60).filter(lambda s: "<tool_call>" not in s and "</tool_call>" not in s)


@given(st.text(max_size=300))
def test_parse_tool_call_blocks_never_raises(text: str) -> None:
    rest, calls = parse_tool_call_blocks(text)
    assert isinstance(rest, str)
    for call in calls:
        json.loads(call.arguments)


@given(
    _plain,
    st.lists(
        st.tuples(_names, st.dictionaries(st.text(max_size=8), _json_values, max_size=3)),
        max_size=3,
    ),
    _plain,
)
def test_parse_tool_call_blocks_round_trip(
    before: str, calls: list[tuple[str, dict[str, Any]]], after: str
) -> None:
    built = [ToolCall(f"x{i}", name, json.dumps(args)) for i, (name, args) in enumerate(calls)]
    text = before + "".join(render_tool_call_block(c) for c in built) + after
    rest, parsed = parse_tool_call_blocks(text)
    assert [(c.name, json.loads(c.arguments)) for c in parsed] == calls
    if calls:
        assert rest == (before + after).strip()
    else:
        assert rest == text


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"role": "user", "content": "hi"}, Message("user", "hi")),
        ({"role": "developer", "content": "be brief"}, Message("system", "be brief")),
        (
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "a"},
                    {"type": "image_url"},
                    {"type": "text", "text": "b"},
                ],
            },
            Message("user", "ab"),
        ),
        (
            {"role": "tool", "content": "r", "tool_call_id": "c1", "name": "memory_recall"},
            Message("tool", "r", tool_call_id="c1", name="memory_recall"),
        ),
        (
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}],
            },
            Message("assistant", None, (ToolCall("call_1", "f", '{"a": 1}'),)),
        ),
    ],
)
def test_message_from_openai_table(raw: dict[str, Any], expected: Message) -> None:
    assert message_from_openai(raw) == expected


@pytest.mark.parametrize(
    ("raw", "problem"),
    [
        ([{"role": "robot", "content": "x"}], r"unknown role 'robot' \(messages\[0\]\)"),
        ([{"role": "user"}, "x"], r"not a JSON object .*\(messages\[1\]\)"),
        ([{"role": "user", "content": 3}], "message content of type int"),
    ],
)
def test_messages_from_openai_errors(raw: list[Any], problem: str) -> None:
    with pytest.raises(ModelError, match=problem):
        messages_from_openai(raw)


def test_messages_round_trip_through_openai_shape() -> None:
    call = ToolCall("call_7", "memory_recall", '{"query": "q"}')
    messages = [
        Message("system", "s"),
        Message("user", "u"),
        Message("assistant", None, (call,)),
        Message("tool", "result", tool_call_id="call_7", name="memory_recall"),
        Message("assistant", "done"),
    ]
    assert messages_from_openai([m.to_openai() for m in messages]) == messages


@given(_json_values)
def test_completion_parser_raises_only_model_errors(value: Any) -> None:
    for candidate in (value, {"choices": [{"message": value}]}, {"choices": value}):
        with contextlib.suppress(ModelError):
            completion_from_openai(candidate)
