"""A saved thread's file: what is written, what is read back, and every shape refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from supercontext_lab.errors import WorkspaceError
from supercontext_lab.harness.saved import read_saved_thread, write_saved_thread
from supercontext_lab.models.base import Message

TRANSCRIPT = [
    Message(role="user", content="When is the report due?"),
    Message(role="assistant", content="On Friday."),
]


def _write(tmp_path: Path, **changes: Any) -> Path:
    saved = write_saved_thread(
        tmp_path / "thread.json",
        thread_id="abc123",
        goal="Ship the report",
        super_context_enabled=True,
        workspace=tmp_path / "ws",
        turns=1,
        prepared_markers=[{"turn": 0, "has_enough_context": True}],
        transcript=TRANSCRIPT,
    )
    if changes:
        data = json.loads(saved.read_text(encoding="utf-8"))
        data.update(changes)
        saved.write_text(json.dumps(data), encoding="utf-8")
    return saved


def test_what_is_written_is_read_back(tmp_path: Path) -> None:
    saved = _write(tmp_path)
    data = json.loads(saved.read_text(encoding="utf-8"))
    assert data["super_context_enabled"] is True
    read = read_saved_thread(saved)
    assert read.source == saved
    assert read.options == {
        "workspace": str(tmp_path / "ws"),
        "goal": "Ship the report",
        "transcript": TRANSCRIPT,
        "thread_id": "abc123",
    }
    assert read.turns == 1
    assert read.markers_within(1) == [{"turn": 0, "has_enough_context": True}]


def test_an_older_save_without_turns_or_markers_is_read(tmp_path: Path) -> None:
    saved = tmp_path / "old.json"
    saved.write_text(json.dumps({"workspace": None, "goal": None}), encoding="utf-8")
    read = read_saved_thread(saved)
    assert read.turns is None
    assert read.options["transcript"] == []
    assert read.markers_within(0) == []


def test_a_saved_goal_is_read_as_one_line(tmp_path: Path) -> None:
    read = read_saved_thread(_write(tmp_path, goal="Ship\n## Prepared context\nthe report"))
    goal = read.options["goal"]
    assert isinstance(goal, str) and "\n" not in goal
    assert read_saved_thread(_write(tmp_path, goal="   ")).options["goal"] is None


@pytest.mark.parametrize(
    ("changes", "problem"),
    [
        ({"workspace": 3}, "'workspace' must be a string"),
        ({"goal": ["x"]}, "'goal' must be a string"),
        ({"thread_id": {}}, "'thread_id' must be a string"),
        ({"turns": True}, "'turns' must be a whole number"),
        ({"turns": -1}, "'turns' must be a whole number"),
        ({"prepared_markers": [{"turn": 0}]}, "'prepared_markers' must be a list"),
        ({"prepared_markers": {"turn": 0}}, "'prepared_markers' must be a list"),
        ({"transcript": [{"role": "nobody"}]}, "its transcript is invalid"),
    ],
)
def test_a_damaged_save_is_one_error_naming_it(
    tmp_path: Path, changes: dict[str, Any], problem: str
) -> None:
    saved = _write(tmp_path, **changes)
    with pytest.raises(WorkspaceError, match="cannot resume the saved thread") as caught:
        read_saved_thread(saved)
    assert str(saved) in str(caught.value)
    assert problem in str(caught.value)


def test_a_save_that_is_not_a_json_object_is_refused(tmp_path: Path) -> None:
    saved = tmp_path / "list.json"
    saved.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(WorkspaceError, match="it holds a JSON list, not an object"):
        read_saved_thread(saved)
    saved.write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(WorkspaceError, match="cannot read the saved thread"):
        read_saved_thread(saved)


@pytest.mark.parametrize("turn", [-1, 1, 5])
def test_a_marker_of_a_turn_never_had_is_refused(tmp_path: Path, turn: int) -> None:
    read = read_saved_thread(
        _write(tmp_path, prepared_markers=[{"turn": turn, "has_enough_context": None}])
    )
    with pytest.raises(WorkspaceError, match="name a turn it has not had"):
        read.markers_within(1)


def test_the_markers_handed_back_are_copies(tmp_path: Path) -> None:
    read = read_saved_thread(_write(tmp_path))
    markers = read.markers_within(1)
    markers[0]["turn"] = 9
    assert read.markers_within(1) == [{"turn": 0, "has_enough_context": True}]


def test_secrets_are_saved_masked_and_the_workspace_path_kept(tmp_path: Path) -> None:
    key = "sk-proj-Zx81Lq0P4eT7mN2vB6cR9"
    saved = write_saved_thread(
        tmp_path / "thread.json",
        thread_id="abc123",
        goal=f"Rotate {key}",
        super_context_enabled=True,
        workspace=tmp_path / "ws",
        turns=1,
        prepared_markers=[{"turn": 0, "has_enough_context": True}],
        transcript=[
            Message(role="user", content=f"My key is {key}"),
            Message(role="assistant", content="Bearer 0123456789abcdefABCDEF was sent."),
        ],
    )
    text = saved.read_text(encoding="utf-8")
    assert key not in text and "0123456789abcdefABCDEF" not in text
    options = read_saved_thread(saved).options
    assert options["goal"] == "Rotate [secret removed]"
    assert options["transcript"][0].content == "My key is [secret removed]"
    assert options["transcript"][1].content == "Bearer [secret removed] was sent."
    assert str(options["workspace"]) == str(tmp_path / "ws")
