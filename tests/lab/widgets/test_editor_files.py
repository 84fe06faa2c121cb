"""The files behind the editor, without the widget: where Save goes, what it refuses."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from supercontext_lab.agents import backup_path, default_agent_toml, default_prompt
from supercontext_lab.lab.widgets.editor_files import SHIPPED_DIR, AgentFiles, Outcome


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        ("", "type the path of your copy in 'Save to' first"),
        ("   ", "type the path of your copy in 'Save to' first"),
        ("a\0b", "holds a NUL"),
        (str(SHIPPED_DIR / "agent.toml"), "the shipped definition is read-only"),
        (str(SHIPPED_DIR), "the shipped definition is read-only"),
    ],
)
def test_save_to_refuses_what_it_may_not_write(raw: str, said: str) -> None:
    refusal = AgentFiles(None).save_target(raw)
    assert isinstance(refusal, Outcome) and said in refusal.message


def test_a_folder_means_its_agent_toml(tmp_path: Path) -> None:
    assert AgentFiles(None).save_target(str(tmp_path)) == tmp_path / "agent.toml"


def test_a_save_over_a_file_changed_since_it_was_seen_is_refused_and_revert_shows_it(
    tmp_path: Path,
) -> None:
    path = tmp_path / "agent.toml"
    path.write_text(default_agent_toml(), "utf-8")
    files = AgentFiles(path)
    assert files.text == default_agent_toml() and files.prompt == default_prompt()
    assert files.check_unchanged(path) is None
    # Another path is a first save: named on purpose, never refused for this reason.
    assert files.check_unchanged(tmp_path / "other.toml") is None

    theirs = default_agent_toml().replace("temperature = 0.3", "temperature = 0.7")
    path.write_text(theirs, "utf-8")
    refusal = files.check_unchanged(path)
    assert refusal is not None and "changed on disk since you opened it" in refusal.message

    text, _prompt, outcome, changes = files.revert()
    assert text == theirs
    assert "which changed on disk since you opened it" in outcome.message
    assert "temperature = 0.7" in changes
    assert files.check_unchanged(path) is None


def test_save_writes_keeps_a_backup_and_becomes_the_file_edited(tmp_path: Path) -> None:
    files = AgentFiles(None)
    target = tmp_path / "mine" / "agent.toml"
    target.parent.mkdir()
    first = files.save(target, default_agent_toml(), default_prompt(), allowed=[])
    assert first.written and first.kind == "ok" and "kept in" not in first.message
    assert first.message == f"Saved {target} and prompt.md."
    assert target.with_name("prompt.md").read_text("utf-8") == default_prompt()
    assert files.source_path == target
    again = files.save(target, default_agent_toml(), default_prompt(), allowed=[])
    assert again.message.startswith(f"Saved {target} (prompt.md beside it unchanged)")
    assert not backup_path(target.with_name("prompt.md")).exists()
    target.with_name("prompt.md").chmod(0o640)
    edited = default_agent_toml().replace("temperature = 0.3", "temperature = 0.5")
    second = files.save(target, edited, default_prompt() + "\nOne more rule.\n", allowed=[])
    assert "and prompt.md" in second.message
    assert "(previous version kept in agent.toml.bak)" in second.message
    assert target.read_text("utf-8") == edited
    assert stat.S_IMODE(target.with_name("prompt.md").stat().st_mode) == 0o640  # mode kept
