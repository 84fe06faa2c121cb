"""Imports of past conversations: a killed update, a second export of the same name, and
OpenAI messages laid out as JSON allows.

* An update import (a changed file imported again) killed while the old turns were taken
  out of the index left thousands of them there, and the next run said "unchanged".
* A different ``conversations.json`` (another account, another person) imported into the
  same workspace replaced the first file's conversations ("2 updated") without a word:
  conversations without an id of their own were named after the file.
* OpenAI messages one object each, spread over several lines or in a JSON array, were
  refused with exit 2 even with ``--format openai-jsonl``, or merged into one conversation.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from supercontext_lab.conversations import NAMESPACE, open_store
from supercontext_lab.sources.memory import MemoryTree
from supercontext_lab.testing import build_workspace

from .support import REPO, finishes, run_cli, write

# The child imports FILE into WORKSPACE and kills itself (SIGKILL, no cleanup of any kind)
# just before the memory index runs its KILL_AT-th "DELETE FROM docs": in the middle of
# taking the old turns out, wherever the import does that.
_KILLED_IMPORT = textwrap.dedent(
    """
    import os, signal, sqlite3, sys

    file, workspace, kill_at = sys.argv[1], sys.argv[2], int(sys.argv[3])
    connect = sqlite3.connect
    deletes = 0

    def trace(statement):
        global deletes
        if statement.lstrip().upper().startswith("DELETE FROM DOCS"):
            deletes += 1
            if deletes == kill_at:
                os.kill(os.getpid(), signal.SIGKILL)

    def traced(*args, **kwargs):
        conn = connect(*args, **kwargs)
        if str(args[0]).endswith("memory.sqlite3"):
            conn.set_trace_callback(trace)
        return conn

    sqlite3.connect = traced
    from supercontext_lab.conversations import import_conversations

    print(import_conversations(file, workspace).summary())
    """
)


def _conversation(turns: int, word: str) -> str:
    lines = []
    for i in range(turns):
        role = "user" if i % 2 == 0 else "assistant"
        text = f"Turn {i} of the long chat about the {word} freezer inventory."
        lines.append(json.dumps({"conversation_id": "long", "role": role, "content": text}))
    return "\n".join(lines) + "\n"


def _indexed(root: Path) -> int:
    with MemoryTree(root) as memory:
        return memory.count(NAMESPACE)


@pytest.mark.parametrize("kill_at", [1, 100, 2000])
def test_a_killed_update_import_leaves_no_stale_turn(tmp_path: Path, kill_at: int) -> None:
    """An update import (3,000 turns to 10) killed mid-delete, then rerun: no stale turn

    Killed with SIGKILL at the 1st, 100th or 2,000th delete of the index; the rerun leaves
    the index holding the 10 turns the store holds, and the run after it is unchanged."""
    root = build_workspace(tmp_path / "ws", {"memory/global/note.md": "A note.\n"})
    export = write(tmp_path / "chat.jsonl", _conversation(3000, "old"))
    done = run_cli("memory", "import", str(export), "--workspace", str(root), timeout=300)
    assert done.returncode == 0, done.stderr
    assert _indexed(root) == 3000
    write(tmp_path / "chat.jsonl", _conversation(10, "new"))
    killed = subprocess.run(
        [sys.executable, "-c", _KILLED_IMPORT, str(export), str(root), str(kill_at)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO,
        env=dict(os.environ),
    )
    assert killed.returncode == -signal.SIGKILL, (killed.returncode, killed.stdout, killed.stderr)
    again = run_cli("memory", "import", str(export), "--workspace", str(root), "--json")
    assert again.returncode == 0, again.stderr
    with open_store(root) as store:
        assert store.count_turns() == 10
        first = store.turns("long")[0].content
        assert first == "Turn 0 of the long chat about the new freezer inventory."
    assert _indexed(root) == 10
    # And the run after that has nothing left to do.
    last = run_cli("memory", "import", str(export), "--workspace", str(root), "--json")
    assert json.loads(last.stdout)["unchanged"] == ["long"]
    assert _indexed(root) == 10


# -- a second export of the same name ------------------------------------------------------


def _openai_export(person: str) -> list[dict[str, object]]:
    """Conversations without ids of their own, as an OpenAI-style export writes them."""
    return [
        {"messages": [{"role": "user", "content": f"{person}: which boat do we book?"}]},
        {"messages": [{"role": "user", "content": f"{person}: the freezer code?"}]},
    ]


def _chatgpt_export(person: str, ident: str | None) -> list[dict[str, object]]:
    """One ChatGPT conversation titled "New chat", without a time; with or without an id."""
    node = {
        "message": {
            "author": {"role": "user"},
            "content": {"content_type": "text", "parts": [f"{person} asks about the grant."]},
        },
        "parent": None,
        "children": [],
    }
    item: dict[str, object] = {"title": "New chat", "mapping": {"n1": node}, "current_node": "n1"}
    if ident is not None:
        item["id"] = ident
    return [item]


def _import(export: Path, root: Path) -> dict[str, object]:
    done = run_cli("memory", "import", str(export), "--workspace", str(root), "--json")
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


@pytest.mark.parametrize("layout", ["openai without ids", "chatgpt without ids"])
def test_another_persons_export_of_the_same_name_replaces_nothing(
    tmp_path: Path, layout: str
) -> None:
    """Two people's conversations.json without conversation ids: both kept, none replaced

    Imported one after the other into one workspace: nothing updated or replaced; the
    first imported again is unchanged."""
    root = build_workspace(tmp_path / "ws", {"memory/global/note.md": "A note.\n"})
    exports = []
    for person in ("Alice", "Bob"):
        data = (
            _openai_export(person) if layout.startswith("openai") else _chatgpt_export(person, None)
        )
        exports.append(write(tmp_path / person / "conversations.json", json.dumps(data)))
    first, second = (_import(export, root) for export in exports)
    assert first["added"] and not first["updated"] and not first["replaced"]
    assert len(second["added"]) == len(first["added"])  # type: ignore[arg-type]
    assert not second["updated"] and not second["replaced"] and not second["unchanged"]
    listed = run_cli("memory", "list", "--conversations", "--workspace", str(root), "--json")
    titles = [c["title"] for c in json.loads(listed.stdout)["conversations"]]
    assert len(titles) == 2 * len(first["added"])  # type: ignore[arg-type]
    with open_store(root) as store:
        texts = {t.content for c in store.conversations() for t in store.turns(c.id)}
    assert any(text.startswith("Alice") for text in texts)
    assert any(text.startswith("Bob") for text in texts)
    again = _import(exports[0], root)
    assert again["unchanged"] == first["added"] and not again["added"]


def test_a_different_conversation_under_the_same_id_is_said_out_loud(tmp_path: Path) -> None:
    """Another conversation under a stored id: said on a replaced: line and in the result

    Bob's export holds a conversation under the id of Alice's; the grown original is an
    update, not a replacement."""
    from supercontext_lab.conversations import import_conversations

    root = build_workspace(tmp_path / "ws", {"memory/global/note.md": "A note.\n"})
    alice = write(tmp_path / "a" / "conversations.json", json.dumps(_chatgpt_export("Alice", "x1")))
    bob = write(tmp_path / "b" / "conversations.json", json.dumps(_chatgpt_export("Bob", "x1")))
    assert _import(alice, root)["added"] == ["x1"]
    done = run_cli("memory", "import", str(bob), "--workspace", str(root))
    assert done.returncode == 0, done.stderr
    assert "1 replaced" in done.stdout
    (line,) = [line for line in done.stdout.splitlines() if line.startswith("replaced:")]
    assert "x1" in line and "different conversation" in line and "New chat" in line
    report = import_conversations(alice, root)
    assert report.replaced == ("x1",) and report.updated == ()
    assert "x1" in report.replacements[0]
    # The same conversation grown by a turn is an update, said as one.
    grown = _chatgpt_export("Alice", "x1")
    mapping = grown[0]["mapping"]
    assert isinstance(mapping, dict)
    mapping["n1"]["children"] = ["n2"]
    mapping["n2"] = {
        "message": {
            "author": {"role": "assistant"},
            "content": {"content_type": "text", "parts": ["The grant is due in May."]},
        },
        "parent": "n1",
        "children": [],
    }
    grown[0]["current_node"] = "n2"
    report = import_conversations(
        write(tmp_path / "a" / "conversations.json", json.dumps(grown)), root
    )
    assert report.updated == ("x1",) and report.replaced == () and report.replacements == ()


# -- OpenAI messages laid out as JSON allows -------------------------------------------------

_MESSAGES = [
    {"conversation_id": "a", "role": "user", "content": "Is the freezer at minus eighty?"},
    {"conversation_id": "b", "role": "user", "content": "When is the committee meeting?"},
    {"conversation_id": "a", "role": "assistant", "content": "Yes, minus eighty."},
]
_LAYOUTS = {
    "pretty-printed messages": "\n".join(json.dumps(m, indent=2) for m in _MESSAGES) + "\n",
    "messages on one line": " ".join(json.dumps(m) for m in _MESSAGES),
    "messages over CRLF lines": "\r\n".join(json.dumps(m, indent=1) for m in _MESSAGES),
    "a JSON array of messages": json.dumps(_MESSAGES),
    "a pretty-printed array of messages": json.dumps(_MESSAGES, indent=2),
    "pretty-printed conversations": "\n\n".join(
        json.dumps(
            {"id": ident, "messages": [m for m in _MESSAGES if m["conversation_id"] == ident]},
            indent=2,
        )
        for ident in ("a", "b")
    ),
}


@pytest.mark.parametrize("fmt", ["auto", "openai-jsonl"])
@pytest.mark.parametrize("layout", list(_LAYOUTS))
def test_openai_messages_in_any_json_layout_are_imported(
    tmp_path: Path, layout: str, fmt: str
) -> None:
    """OpenAI messages over lines, on one line or in an array: imported and grouped

    With --format auto and openai-jsonl: exit 0, conversation a with 2 turns, b with 1."""
    root = build_workspace(tmp_path / "ws", {"memory/global/note.md": "A note.\n"})
    export = write(tmp_path / "chats.json", _LAYOUTS[layout])
    done = run_cli(
        "memory", "import", str(export), "--workspace", str(root), "--format", fmt, "--json"
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["format"] == "openai-jsonl"
    with open_store(root) as store:
        turns = {c.id: [t.content for t in store.turns(c.id)] for c in store.conversations()}
    assert turns == {
        "a": ["Is the freezer at minus eighty?", "Yes, minus eighty."],
        "b": ["When is the committee meeting?"],
    }


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        (json.dumps(_MESSAGES[0]) + ",\n" + json.dumps(_MESSAGES[1]), "line 1 is not valid JSON"),
        (json.dumps(_MESSAGES[0], indent=2) + "\n42\n", "must be a JSON object"),
        (json.dumps(_MESSAGES[0], indent=2) + '\n{"role": "user",\n', "line 6 is not valid JSON"),
        (
            json.dumps({"text": "hi"}, indent=2) + "\n" + json.dumps(_MESSAGES[0]),
            "line 1: is neither",
        ),
    ],
    ids=["objects joined by commas", "a number between objects", "an unclosed object", "no role"],
)
def test_what_the_format_does_not_say_is_still_refused(
    tmp_path: Path, text: str, needle: str
) -> None:
    """Comma-joined objects, a bare number, an unclosed object, no role: still refused

    Exit 2 with one line naming where, and nothing imported."""
    root = build_workspace(tmp_path / "ws", {"memory/global/note.md": "A note.\n"})
    export = write(tmp_path / "chats.json", text)
    for fmt in ("auto", "openai-jsonl"):
        done = run_cli("memory", "import", str(export), "--workspace", str(root), "--format", fmt)
        assert done.returncode == 2, (fmt, done.stdout, done.stderr)
        assert needle in done.stderr, (fmt, done.stderr)
        assert not (root / ".supercontext" / "conversations.sqlite3").exists()


def test_splitting_objects_stays_linear(tmp_path: Path) -> None:
    """50,000 pretty-printed messages; 400,000 escaped quotes unclosed: split linearly"""
    from supercontext_lab.conversations import parse_export
    from supercontext_lab.errors import ConversationImportError

    message = {"conversation_id": "a", "role": "user", "content": "x"}
    many = "\n".join(
        json.dumps({**message, "conversation_id": f"c{i % 200}"}, indent=1) for i in range(50_000)
    )
    parsed = finishes(60, lambda: parse_export(many, "openai-jsonl"))
    assert sum(len(c.turns) for c in parsed.conversations) == 50_000
    hostile = json.dumps(message, indent=1) + '\n{"content": "' + '\\"' * 400_000

    def refuse() -> str:
        with pytest.raises(ConversationImportError) as caught:
            parse_export(hostile, "auto")
        return str(caught.value)

    assert "line 6 is not valid JSON" in finishes(30, refuse)
