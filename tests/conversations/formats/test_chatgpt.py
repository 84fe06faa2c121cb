"""ChatGPT's data export, conversations.json: the branch the user last saw, turn by turn."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from supercontext_lab.conversations import parse_export

from ..conftest import Ran, assert_refused, stored


def _node(
    node_id: str,
    parent: str | None,
    children: list[str],
    role: str | None = None,
    text: str | None = None,
    *,
    created: float | None = None,
    content: dict[str, Any] | None = None,
    hidden: bool = False,
    recipient: str = "all",
) -> dict[str, Any]:
    message = None
    if role is not None:
        message = {
            "id": node_id,
            "author": {"role": role, "name": None, "metadata": {}},
            "create_time": created,
            "content": content or {"content_type": "text", "parts": [text or ""]},
            "status": "finished_successfully",
            "metadata": {"is_visually_hidden_from_conversation": True} if hidden else {},
            "recipient": recipient,
        }
    return {"id": node_id, "message": message, "parent": parent, "children": children}


def _conversation(**overrides: Any) -> dict[str, Any]:
    """A conversation whose first answer was regenerated: two branches, the second current."""
    mapping = {
        "root": _node("root", None, ["sys"]),
        "sys": _node("sys", "root", ["u1"], "system", "You are ChatGPT.", hidden=True),
        "u1": _node(
            "u1", "sys", ["a1", "a1b"], "user", "Which palette for the poster?", created=1.7e9
        ),
        "a1": _node("a1", "u1", [], "assistant", "Try the orange one.", created=1.7e9 + 5),
        "a1b": _node(
            "a1b", "u1", ["u2"], "assistant", "Use teal: it prints well.", created=1.7e9 + 9
        ),
        "u2": _node(
            "u2",
            "a1b",
            ["t1"],
            "user",
            None,
            created=1.7e9 + 60,
            content={
                "content_type": "multimodal_text",
                "parts": [
                    {"content_type": "image_asset_pointer", "asset_pointer": "x"},
                    "Teal it is.",
                ],
            },
        ),
        "t1": _node("t1", "u2", ["tool"], "assistant", "search('teal')", recipient="browser"),
        "tool": _node("tool", "t1", ["a2"], "tool", "results …"),
        "a2": _node(
            "a2",
            "tool",
            [],
            "assistant",
            None,
            content={"content_type": "code", "language": "python", "text": "palette = 'teal'"},
        ),
    }
    data: dict[str, Any] = {
        "title": "Poster palette",
        "create_time": 1.7e9,
        "update_time": 1.7e9 + 100,
        "mapping": mapping,
        "current_node": "a2",
        "conversation_id": "6790f6f0-0000-4000-8000-000000000001",
        "id": "6790f6f0-0000-4000-8000-000000000001",
    }
    data.update(overrides)
    return data


def test_the_current_branch_is_read_without_system_tool_or_hidden_messages() -> None:
    parsed = parse_export(json.dumps([_conversation()]), source="conversations.json", name="x")
    assert parsed.format == "chatgpt"
    (conversation,) = parsed.conversations
    assert conversation.id == "6790f6f0-0000-4000-8000-000000000001"
    assert conversation.title == "Poster palette"
    assert conversation.date == "2023-11-14T22:13:20Z"
    assert [(t.role, t.content) for t in conversation.turns] == [
        ("user", "Which palette for the poster?"),
        ("assistant", "Use teal: it prints well."),
        ("user", "Teal it is."),
        ("assistant", "```\npalette = 'teal'\n```"),
    ]
    assert conversation.turns[0].time == "2023-11-14T22:13:20Z"


def test_without_current_node_the_newest_leaf_is_read() -> None:
    data = _conversation()
    del data["current_node"]
    data["mapping"]["a1"]["message"]["create_time"] = 1.8e9  # the orange answer is newest
    (conversation,) = parse_export(json.dumps([data])).conversations
    assert [t.content for t in conversation.turns][-1] == "Try the orange one."


def test_a_cycle_of_parents_ends_the_walk() -> None:
    data = _conversation()
    data["mapping"]["root"]["parent"] = "a2"  # a loop back to the leaf
    (conversation,) = parse_export(json.dumps([data])).conversations
    assert len(conversation.turns) == 4


def test_import_then_again_changes_nothing_and_an_edit_updates(
    cli: Callable[..., Ran], write: Callable[[str, Any], Path], workspace: Path
) -> None:
    other = _conversation(conversation_id="second", id="second", title="Field season")
    other["mapping"]["u1"]["message"]["content"]["parts"] = ["When does the field season start?"]
    path = write("conversations.json", [_conversation(), other])
    first = cli("memory", "import", str(path), "--workspace", str(workspace), "--json").json()
    assert first["format"] == "chatgpt"
    assert sorted(first["added"]) == ["6790f6f0-0000-4000-8000-000000000001", "second"]
    assert first["turns_indexed"] == 8
    again = cli("memory", "import", str(path), "--workspace", str(workspace), "--json").json()
    assert again["added"] == [] and again["turns_indexed"] == 0
    assert sorted(again["unchanged"]) == ["6790f6f0-0000-4000-8000-000000000001", "second"]
    # The user went on in ChatGPT: one conversation changed, the file was exported again.
    other["mapping"]["a2"]["message"]["content"]["text"] = "start = '14 April'"
    write("conversations.json", [_conversation(), other])
    changed = cli("memory", "import", str(path), "--workspace", str(workspace), "--json").json()
    assert changed["updated"] == ["second"]
    assert stored(workspace).get("second").turns[-1].content == "```\nstart = '14 April'\n```"  # type: ignore[union-attr]
    # The user's notes are never written.
    assert sorted(p.name for p in (workspace / "memory").rglob("*")) == ["freezer.md", "global"]


def test_a_conversation_without_text_is_skipped_and_said(
    cli: Callable[..., Ran], write: Callable[[str, Any], Path], workspace: Path
) -> None:
    empty = _conversation(conversation_id="empty", id="empty", title="Nothing")
    empty["mapping"] = {"root": _node("root", None, [])}
    empty["current_node"] = "root"
    path = write("conversations.json", [_conversation(), empty])
    ran = cli("memory", "import", str(path), "--workspace", str(workspace))
    assert ran.code == 0
    assert "1 conversation from chatgpt (1 added)" in ran.out
    assert "skipped: conversation 2 (Nothing): no user or assistant message with text" in ran.out


def test_bad_exports_are_one_line_and_import_nothing(
    cli: Callable[..., Ran], write: Callable[[str, Any], Path], workspace: Path
) -> None:
    cases = {
        "not-json.json": ('[{"mapping": {', "is not valid JSON"),
        "mapping.json": ([{"title": "x", "mapping": []}], "conversation 1: its 'mapping'"),
        "item.json": ([_conversation(), 7], "conversation 2: must be an object"),
        "only-empty.json": ([{"mapping": {}, "title": "E"}], "holds no conversation"),
    }
    for name, (data, needle) in cases.items():
        path = write(name, data)
        ran = cli(
            "memory", "import", str(path), "--workspace", str(workspace), "--format", "chatgpt"
        )
        assert_refused(ran, name, needle)
    assert not (workspace / ".supercontext" / "conversations.sqlite3").exists() or (
        stored(workspace).conversations() == []
    )
