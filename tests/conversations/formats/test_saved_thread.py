"""The lab's own saved threads (``Thread.save``): the turns as typed, the thread's id."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from supercontext_lab import Thread
from supercontext_lab.conversations import read_export
from supercontext_lab.sources.workspace import Workspace

from ..conftest import Ran, assert_refused, stored


def test_a_saved_thread_imports_its_turns_without_the_prepared_block(
    tmp_path: Path, workspace: Path, cli: Callable[..., Ran]
) -> None:
    thread = Thread(Workspace(workspace), thread_id="freezer-check", archive=False)
    first = thread.send("Help me check the lab freezer temperature log")
    assert first.prepared  # the message the orchestrator saw carries the bundle
    thread.send("And who holds the key?")
    saved = thread.save(tmp_path / "thread.json")
    parsed = read_export(saved)
    assert parsed.format == "thread"
    (conversation,) = parsed.conversations
    assert conversation.id == "freezer-check"
    assert conversation.title == thread.goal
    assert [(t.role, t.content) for t in conversation.turns][::2] == [
        ("user", "Help me check the lab freezer temperature log"),
        ("user", "And who holds the key?"),
    ]
    assert all("[context_bundle]" not in t.content for t in conversation.turns)
    assert [t.role for t in conversation.turns] == ["user", "assistant"] * 2
    ran = cli("memory", "import", str(saved), "--workspace", str(workspace))
    assert ran.code == 0 and "1 conversation from thread (1 added), 4 turns indexed" in ran.out
    assert stored(workspace).info("freezer-check") is not None


def test_bad_saved_threads_are_one_line(
    cli: Callable[..., Ran], write: Callable[[str, Any], Path], workspace: Path
) -> None:
    cases = {
        "transcript.json": (
            {"thread_id": "t", "transcript": "hello"},
            "'transcript' must be a list",
        ),
        "message.json": ({"thread_id": "t", "transcript": [[1]]}, "message 1: must be an object"),
        "empty.json": (
            {"thread_id": "t", "transcript": [{"role": "system", "content": "x"}]},
            "holds no conversation with any text",
        ),
    }
    for name, (data, needle) in cases.items():
        ran = cli(
            "memory",
            "import",
            str(write(name, data)),
            "--workspace",
            str(workspace),
            "--format",
            "thread",
        )
        assert_refused(ran, name, needle)
