"""What every format shares: the bounds of one import hold whichever format it is in."""

from __future__ import annotations

import json

import pytest

from supercontext_lab.conversations.formats import base, parse_export
from supercontext_lab.errors import ConversationImportError


def test_too_many_conversations_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "MAX_CONVERSATIONS", 2)
    lines = "\n".join(
        json.dumps({"id": f"c{i}", "messages": [{"role": "user", "content": "x"}]})
        for i in range(3)
    )
    with pytest.raises(ConversationImportError, match="more than 2 conversations"):
        parse_export(lines, source="many.jsonl")


def _conversations(*openings: tuple[str, ...]) -> str:
    return json.dumps(
        [
            {"messages": [{"role": "user", "content": text} for text in opening]}
            for opening in openings
        ]
    )


def test_a_conversation_without_an_id_is_named_after_what_it_is_not_the_file() -> None:
    text = _conversations(("Alice: the boat?",), ("Alice: the freezer?",))
    first = [c.id for c in parse_export(text, name="conversations").conversations]
    again = [c.id for c in parse_export(text, name="renamed").conversations]
    assert first == again and all(i.startswith("openai-") for i in first)
    other = parse_export(_conversations(("Bob: the boat?",)), name="conversations")
    assert other.conversations[0].id not in first


def test_the_id_holds_while_the_conversation_grows_past_its_opening() -> None:
    (short,) = parse_export(_conversations(("Q", "A")), name="x").conversations
    (grown,) = parse_export(_conversations(("Q", "A", "Q2", "A2")), name="x").conversations
    assert short.id == grown.id and short.digest != grown.digest


def test_two_conversations_of_one_file_with_the_same_opening_stay_apart() -> None:
    parsed = parse_export(_conversations(("Hi",), ("Hi",), ("Hi",)), name="x")
    ids = [c.id for c in parsed.conversations]
    assert ids[1:] == [f"{ids[0]}-2", f"{ids[0]}-3"]
