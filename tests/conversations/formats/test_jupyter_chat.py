"""A jupyterlab-chat ``.chat`` document (what jupyter-ai 3 writes): messages and users."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from supercontext_lab.conversations import parse_export, read_export

from ..conftest import Ran, assert_refused, stored

PERSONA = "jupyter-ai-personas::jupyter_ai::JupyternautPersona"


def _chat(**overrides: Any) -> dict[str, Any]:
    users = {
        "maya": {"username": "maya", "name": "Maya Lindqvist", "display_name": "Maya L."},
        PERSONA: {
            "username": PERSONA,
            "name": "Jupyternaut",
            "display_name": "Jupyternaut",
            "bot": True,
        },
    }
    messages = [
        {
            "type": "msg",
            "id": "m1",
            "time": 1_717_000_000.5,
            "sender": "maya",
            "raw_time": False,
            "body": "@Jupyternaut which kernel did we settle on for the dispersal model?",
        },
        {
            "type": "msg",
            "id": "m2",
            "time": 1_717_000_004.0,
            "sender": PERSONA,
            "body": "The 2Dt kernel, fitted per site.",
        },
        {
            "type": "msg",
            "id": "m3",
            "time": 1_717_000_010.0,
            "sender": "maya",
            "deleted": True,
            "body": "",
        },
        {
            "type": "msg",
            "id": "m4",
            "time": 1_717_000_020.0,
            "sender": "maya",
            "body": "Good, keep it for the renewal.",
            "attachments": ["a1"],
            "mentions": [],
        },
    ]
    data: dict[str, Any] = {
        "messages": messages,
        "users": users,
        "attachments": {"a1": {"type": "file", "value": "kernel.ipynb"}},
        "metadata": {"id": "9b2c1f4e-5d6a-4e8b-9c0d-1e2f3a4b5c6d"},
    }
    data.update(overrides)
    return data


def test_a_chat_file_is_one_conversation_with_the_persona_as_assistant(
    write: Callable[[str, Any], Path],
) -> None:
    parsed = read_export(write("kernel-talk.chat", _chat()))
    assert parsed.format == "jupyter-chat"
    (conversation,) = parsed.conversations
    assert conversation.id == "9b2c1f4e-5d6a-4e8b-9c0d-1e2f3a4b5c6d"
    assert conversation.title == "kernel-talk"
    assert conversation.date == "2024-05-29T16:26:40Z"
    assert [(t.role, t.content) for t in conversation.turns] == [
        ("user", "@Jupyternaut which kernel did we settle on for the dispersal model?"),
        ("assistant", "The 2Dt kernel, fitted per site."),
        ("user", "Good, keep it for the renewal."),
    ]


def test_with_two_people_each_user_turn_says_who_wrote_it() -> None:
    data = _chat()
    data["users"]["jonas"] = {"username": "jonas", "display_name": "Jonas"}
    data["messages"].append(
        {"type": "msg", "id": "m5", "time": 1_717_000_030, "sender": "jonas", "body": "Agreed."}
    )
    turns = parse_export(json.dumps(data), name="team").conversations[0].turns
    assert turns[0].content.startswith("Maya L.: @Jupyternaut")
    assert turns[-1].content == "Jonas: Agreed."
    assert turns[1].content == "The 2Dt kernel, fitted per site."


def test_older_files_name_the_sender_inline_and_have_no_id() -> None:
    data = _chat(metadata={})
    for message in data["messages"]:
        message["sender"] = data["users"][message["sender"]]
    data["users"] = {}
    (conversation,) = parse_export(json.dumps(data), name="old").conversations
    # Named after what it is, not after the file: another "old.chat" is another chat.
    assert conversation.id.startswith("chat-") and conversation.id != "chat-old"
    assert parse_export(json.dumps(data), name="new").conversations[0].id == conversation.id
    assert [t.role for t in conversation.turns] == ["user", "assistant", "user"]


def test_import_is_idempotent_and_the_conversation_can_be_forgotten(
    cli: Callable[..., Ran], write: Callable[[str, Any], Path], workspace: Path
) -> None:
    path = write("kernel-talk.chat", _chat())
    assert cli("memory", "import", str(path), "--workspace", str(workspace)).code == 0
    again = cli("memory", "import", str(path), "--workspace", str(workspace))
    assert "(1 unchanged), 0 turns indexed" in again.out
    listed = cli("memory", "list", "--conversations", "--workspace", str(workspace), "--json")
    (only,) = listed.json()["conversations"]
    assert only["source"] == "jupyter-chat" and only["turns"] == 3
    ident = only["id"]
    assert cli("memory", "forget", "--conversation", ident, "--workspace", str(workspace)).code == 0
    assert stored(workspace).conversations() == []
    counts = cli("memory", "list", "--workspace", str(workspace), "--json").json()["namespaces"]
    assert counts == {"global": 1}


def test_bad_chat_files_are_one_line(
    cli: Callable[..., Ran], write: Callable[[str, Any], Path], workspace: Path
) -> None:
    body = _chat()
    body["messages"][1]["body"] = {"text": "not a string"}
    cases = {
        "messages.chat": (_chat(messages={"m1": {}}), "'messages' must be a list"),
        "body.chat": (body, "message 2: 'body' must be a string"),
        "item.chat": (_chat(messages=["hello"]), "message 1: must be an object"),
        "array.chat": ([], "a .chat document is an object"),
    }
    for name, (data, needle) in cases.items():
        ran = cli(
            "memory",
            "import",
            str(write(name, data)),
            "--workspace",
            str(workspace),
            "--format",
            "jupyter-chat",
        )
        assert_refused(ran, name, needle)


def test_an_unrenamed_chat_is_titled_by_its_first_message_on_one_bounded_line(
    write: Callable[[str, Any], Path],
) -> None:
    """untitled.chat, untitled1.chat: the first message names them, not "untitled" """
    data = _chat()
    data["messages"][0]["body"] = "Where do I test participants\nfor the pilot? " + "very " * 60
    for name in ("untitled.chat", "Untitled1.chat"):
        (conversation,) = read_export(write(name, data)).conversations
        title = conversation.title
        assert title.startswith("Where do I test participants for the pilot? very very")
        assert "\n" not in title and len(title) <= 120 and "untitled" not in title.lower()
    # A renamed chat keeps its name, and a title of its own wins over both.
    assert read_export(write("pilot-planning.chat", data)).conversations[0].title == (
        "pilot-planning"
    )
    titled = _chat(metadata={"id": "x1", "title": "Pilot rooms"})
    assert read_export(write("untitled2.chat", titled)).conversations[0].title == "Pilot rooms"
