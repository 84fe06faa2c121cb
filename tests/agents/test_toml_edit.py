from __future__ import annotations

import os
from pathlib import Path

import pytest

from supercontext_lab.agents import (
    backup_path,
    default_agent_toml,
    edit_agent_toml,
    load_agent_definition,
    save_agent_files,
    set_tool_enabled,
)
from supercontext_lab.errors import AgentDefinitionError


def test_edit_keeps_comments_and_order() -> None:
    text = default_agent_toml()
    new = edit_agent_toml(text, {"temperature": 0.7, "model.hint": "fast", "max_iterations": 5})
    old_lines, new_lines = text.splitlines(), new.splitlines()
    assert len(old_lines) == len(new_lines)
    changed = [(a, b) for a, b in zip(old_lines, new_lines, strict=True) if a != b]
    assert changed == [
        ("temperature = 0.3", "temperature = 0.7"),
        ("max_iterations = 8", "max_iterations = 5"),
        ('hint = "burst"', 'hint = "fast"'),
    ]
    d = load_agent_definition(new)
    assert (d.temperature, d.model.hint, d.max_iterations) == (0.7, "fast", 5)


def test_remove_key_with_none_falls_back_to_default() -> None:
    new = edit_agent_toml(default_agent_toml(), {"max_iterations": None})
    assert "max_iterations" not in new
    assert load_agent_definition(new).max_iterations == 8


@pytest.mark.parametrize(
    ("changes", "needle"),
    [
        ({"temperature": 3.0}, "temperature"),
        ({"max_iterations": 0}, "max_iterations"),
        ({"sandbox_mode": "nope"}, "sandbox_mode"),
        ({"tools.named": ["shell"]}, "shell"),
        ({"surprise": 1}, "surprise"),
        ({"temperature.x": 1}, "temperature"),
    ],
)
def test_invalid_edits_are_refused(changes: dict[str, object], needle: str) -> None:
    with pytest.raises(AgentDefinitionError, match=needle):
        edit_agent_toml(default_agent_toml(), changes)


def test_tool_toggle_keeps_array_layout() -> None:
    text = default_agent_toml()
    off = set_tool_enabled(text, "memory_recall", False)
    assert '  "memory_recall",' not in off
    assert '  "memory_flavour",' in off
    assert "memory_recall" not in load_agent_definition(off).tools.named
    on = set_tool_enabled(off, "memory_recall", True)
    assert load_agent_definition(on).tools.named[-1] == "memory_recall"
    assert set_tool_enabled(text, "memory_recall", True) == text
    with pytest.raises(AgentDefinitionError, match="memory_tree"):
        set_tool_enabled(text, "memory_tree", True)


def test_save_is_validated_atomic_and_keeps_a_backup(tmp_path: Path) -> None:
    path = tmp_path / "scout" / "agent.toml"
    first = save_agent_files(path, default_agent_toml())
    assert first.source == str(path)
    assert not backup_path(path).exists()
    edited = edit_agent_toml(default_agent_toml(), {"temperature": 0.9})
    second = save_agent_files(path, edited, prompt="# Scout v2\nEmit the bundle.")
    assert second.temperature == 0.9
    assert second.prompt.startswith("# Scout v2")
    assert backup_path(path).read_text("utf-8") == default_agent_toml()
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "agent.toml",
        "agent.toml.bak",
        "prompt.md",
    ]


def test_invalid_save_writes_nothing(tmp_path: Path) -> None:
    path = tmp_path / "agent.toml"
    save_agent_files(path, default_agent_toml())
    before = path.read_bytes()
    with pytest.raises(AgentDefinitionError):
        save_agent_files(path, default_agent_toml().replace("0.3", "7.5"))
    with pytest.raises(AgentDefinitionError, match="empty"):
        save_agent_files(path, default_agent_toml(), prompt=" ")
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["agent.toml"]


def test_crash_between_write_and_rename_leaves_old_file_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "agent.toml"
    save_agent_files(path, default_agent_toml())
    before = path.read_text("utf-8")
    real_replace = os.replace
    calls: list[str] = []

    def crash_on_target(src: str, dst: str) -> None:
        calls.append(str(dst))
        if Path(dst) == path:
            raise OSError("simulated crash before rename")
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", crash_on_target)
    with pytest.raises(AgentDefinitionError, match=r"could not save.*simulated crash"):
        save_agent_files(path, edit_agent_toml(before, {"temperature": 1.1}))
    monkeypatch.undo()
    assert path.read_text("utf-8") == before
    assert backup_path(path).read_text("utf-8") == before
    assert load_agent_definition(path).temperature == 0.3
    assert not [p for p in tmp_path.iterdir() if p.suffix == ".tmp"]
