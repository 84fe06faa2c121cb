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
    # Named after what it is (format and opening), never after the file or its line.
    assert second.id.startswith("openai-") and "chats" not in second.id
    assert second.title == "Thanks!"
    moved = read_export(write("other-name.jsonl", _lines({"messages": second_messages(text)})))
    assert moved.conversations[0].id == second.id


def second_messages(text: str) -> Any:
    return json.loads(text.splitlines()[1])["messages"]


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
    (one,) = parse_export(json.dumps(single), name="one").conversations
    assert one.id.startswith("openai-")
    assert parse_export(json.dumps(single), name="two").conversations[0].id == one.id
    listed = [{"role": "user", "content": "A"}, {"role": "assistant", "content": "B"}]
    (conversation,) = parse_export(json.dumps(listed), name="plain").conversations
    assert conversation.id.startswith("openai-") and len(conversation.turns) == 2
    assert conversation.id != one.id


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


def test_messages_spread_over_lines_or_in_a_list_are_grouped_by_conversation() -> None:
    messages = [
        {"conversation_id": "a", "role": "user", "content": "Freezer?"},
        {"conversation_id": "b", "role": "user", "content": "Meeting?"},
        {"conversation_id": "a", "role": "assistant", "content": "Minus eighty."},
    ]
    layouts = [
        "\n".join(json.dumps(m, indent=2) for m in messages),
        json.dumps(messages),
        json.dumps(messages, indent=2),
    ]
    for text in layouts:
        for fmt in ("auto", "openai-jsonl"):
            parsed = parse_export(text, fmt, name="x")
            assert [(c.id, len(c.turns)) for c in parsed.conversations] == [("a", 2), ("b", 1)]


def test_a_pretty_printed_conversation_is_read_with_the_format_named() -> None:
    single = {"id": "boat", "messages": [{"role": "user", "content": "Is the boat free?"}]}
    (conversation,) = parse_export(json.dumps(single, indent=2), "openai-jsonl").conversations
    assert conversation.id == "boat"
