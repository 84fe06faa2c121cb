"""OpenAI chat messages: one conversation a line, or one message a line with its id."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from supercontext_lab.conversations import parse_export, read_export

from ..conftest import Ran, assert_refused


def _lines(*items: Any) -> str:
    return "\n".join(json.dumps(item, ensure_ascii=False) for item in items) + "\n"


def test_one_conversation_a_line(write: Callable[[str, Any], Path]) -> None:
    text = _lines(
        {
            "id": "boat-1",
            "title": "Boat booking",
            "messages": [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Book the boat for the October dives."},
                {
                    "role": "assistant",
                    "content": [{"type": "text", "text": "Booked for 12 October."}],
                },
                {"role": "assistant", "content": None, "tool_calls": [{"id": "c1"}]},
                {"role": "tool", "content": "ok", "tool_call_id": "c1"},
            ],
        },
        {
            "messages": [
                {"role": "user", "content": "Thanks!"},
                {"role": "assistant", "content": "Any time."},
            ]
        },
    )
    parsed = read_export(write("chats.jsonl", text))
    assert parsed.format == "openai-jsonl"
    first, second = parsed.conversations
    assert (first.id, first.title) == ("boat-1", "Boat booking")
    assert [(t.role, t.content) for t in first.turns] == [
        ("user", "Book the boat for the October dives."),
        ("assistant", "Booked for 12 October."),
    ]
    assert second.id == "chats-2"  # named after the file and its line
    assert second.title == "Thanks!"


def test_one_message_a_line_grouped_by_conversation_id() -> None:
    text = _lines(
        {
            "conversation_id": "a",
            "role": "user",
            "content": "Is the freezer at minus eighty?",
            "created_at": "2024-03-01T09:00:00Z",
        },
        {"conversation_id": "b", "role": "user", "content": "When is the committee meeting?"},
        {"conversation_id": "a", "role": "assistant", "content": "Yes, minus eighty."},
        {"conversation_id": "b", "role": "assistant", "content": "On 3 June at 10:00."},
    )
    parsed = parse_export(text, name="log")
    assert [c.id for c in parsed.conversations] == ["a", "b"]
    a, b = parsed.conversations
    assert [t.content for t in a.turns] == ["Is the freezer at minus eighty?", "Yes, minus eighty."]
    assert a.date == "2024-03-01T09:00:00Z"
    assert [t.role for t in b.turns] == ["user", "assistant"]


def test_a_json_document_of_messages_is_read_too() -> None:
    single = {"messages": [{"role": "user", "content": "Hi there, is the boat free?"}]}
    assert parse_export(json.dumps(single), name="one").conversations[0].id == "one"
    listed = [{"role": "user", "content": "A"}, {"role": "assistant", "content": "B"}]
    (conversation,) = parse_export(json.dumps(listed), name="plain").conversations
    assert conversation.id == "plain" and len(conversation.turns) == 2


def test_bad_lines_name_the_line(
    cli: Callable[..., Ran], write: Callable[[str, Any], Path], workspace: Path
) -> None:
    good = {"conversation_id": "a", "role": "user", "content": "x"}
    cases = {
        "broken.jsonl": (
            _lines(good) + '{"role": "user", "content": \n',
            "line 2 is not valid JSON",
        ),
        "neither.jsonl": (_lines(good, {"text": "hi"}), "line 2: is neither a conversation"),
        "mixed.jsonl": (
            _lines(good, {"role": "user", "content": "y"}),
            "line 2: a message without",
        ),
        "array.jsonl": (_lines(good, [1, 2]), "line 2: must be a JSON object"),
        "messages.jsonl": (_lines({"messages": "hello"}), "line 1: 'messages' must be a list"),
        "twice.jsonl": (
            _lines({"id": "x", "messages": [good]}, {"id": "x", "messages": [good]}),
            "line 2: has the id 'x' of line 1",
        ),
    }
    for name, (text, needle) in cases.items():
        ran = cli(
            "memory",
            "import",
            str(write(name, text)),
            "--workspace",
            str(workspace),
            "--format",
            "openai-jsonl",
        )
        assert_refused(ran, name, needle)
