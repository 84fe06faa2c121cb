"""The scout and editor magics, ``%%scout`` and ``%agent_toml``, driven through a bare
InteractiveShell with the extension loaded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from supercontext_lab.agents import edit_agent_toml
from supercontext_lab.agents.definition import default_agent_toml
from supercontext_lab.harness import Thread
from supercontext_lab.lab.display import METADATA_KEY
from supercontext_lab.lab.scout_magics import ScoutMagics
from supercontext_lab.lab.shown import WIDGET_VIEW_MIME
from supercontext_lab.lab.widgets import AgentEditor
from supercontext_lab.scout import ScoutRun

from .conftest import GOAL, GRANT, bad_agent, error_of, outputs_of


def test_the_scout_magics_are_scout_and_agent_toml() -> None:
    assert ScoutMagics.magics == {"line": {"agent_toml": "agent_toml"}, "cell": {"scout": "scout"}}


# --------------------------------------------------------------------------- %%scout


def test_scout_stores_the_run_and_displays_the_panel(shell: InteractiveShell) -> None:
    outputs, _ = outputs_of(lambda: shell.run_cell_magic("scout", "", GRANT))
    run = shell.user_ns["_scout"]
    assert isinstance(run, ScoutRun)
    assert run.ok
    assert run.bundle is not None and run.bundle.proposed_goal == GOAL
    assert len(outputs) == 1
    data, metadata = outputs[0].data, outputs[0].metadata
    assert set(data) == {"text/plain", "text/markdown", WIDGET_VIEW_MIME}
    assert f"proposed_goal: {GOAL}" in data["text/plain"]
    provenance = metadata[METADATA_KEY]
    assert provenance["definition_hash"] == run.definition_hash
    assert provenance["scout"] == {"route": "offline", "model": "offline:scout", "base_url": None}
    assert provenance["tokens"]["total"] == run.usage.total_tokens > 0
    assert json.loads(json.dumps(provenance)) == provenance


def test_scout_options_focus_out_and_workspace(
    shell: InteractiveShell, workspace_dir: Path
) -> None:
    line = f'--workspace {workspace_dir} --focus "the Friday review" --out husbandry'
    outputs_of(lambda: shell.run_cell_magic("scout", line, "Help me plan the husbandry log"))
    run = shell.user_ns["husbandry"]
    assert "_scout" not in shell.user_ns
    assert "QUOKKA-7731" in run.system_prompt
    assert "[Focus]\nthe Friday review" in run.task_message


def test_scout_is_the_explicit_path_even_with_the_flag_off(shell: InteractiveShell) -> None:
    outputs_of(lambda: shell.run_line_magic("supercontext", "off"))
    outputs_of(lambda: shell.run_cell_magic("scout", "", "hi"))
    assert shell.user_ns["_scout"].model_calls >= 1


def test_invalid_agent_shows_the_loaders_message(shell: InteractiveShell, tmp_path: Path) -> None:
    bad = bad_agent(tmp_path)
    error = error_of(shell, f"%%scout --agent {bad}\nhello")
    assert isinstance(error, UsageError)
    assert str(error).startswith(f"{bad}: temperature:")


def test_a_real_bug_keeps_its_traceback(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Thread, message: str, **_: Any) -> ScoutRun:
        raise RuntimeError("a bug in the engine")

    monkeypatch.setattr(Thread, "run_scout", broken)
    error = error_of(shell, "%%scout\nhello there")
    assert isinstance(error, RuntimeError)
    assert not isinstance(error, UsageError)


# --------------------------------------------------------------------------- %agent_toml


def test_agent_toml_shows_an_editor_on_the_shipped_definition_as_the_cell_result(
    shell: InteractiveShell, magics: Any
) -> None:
    with capture_output():
        result = shell.run_cell("%agent_toml")
    assert result.success
    editor = magics.editor
    assert isinstance(editor, AgentEditor)
    # The cell's result is what a kernel shows under the cell (Out[n]).
    assert result.result is editor
    assert editor.toml_text.value == default_agent_toml()


def test_agent_toml_assigned_opens_a_new_editor_without_showing_it(
    shell: InteractiveShell, magics: Any
) -> None:
    with capture_output() as captured:
        first = shell.run_cell("%agent_toml").result
        assigned = shell.run_cell("second = %agent_toml")
    assert assigned.result is None
    assert captured.outputs == []
    assert shell.user_ns["second"] is magics.editor
    assert magics.editor is not first


def test_agent_toml_opens_a_path(shell: InteractiveShell, magics: Any, tmp_path: Path) -> None:
    path = tmp_path / "agent.toml"
    path.write_text(edit_agent_toml(default_agent_toml(), {"max_iterations": 3}), "utf-8")
    outputs_of(lambda: shell.run_line_magic("agent_toml", str(path)))
    assert magics.editor.toml_text.value == path.read_text("utf-8")
    assert magics.editor.definition.max_iterations == 3


def test_apply_makes_later_scout_runs_and_new_threads_use_the_definition(
    shell: InteractiveShell, magics: Any
) -> None:
    outputs_of(lambda: shell.run_cell_magic("chat", "", GRANT))
    current = magics.thread
    outputs_of(lambda: shell.run_line_magic("agent_toml", ""))
    editor = magics.editor
    editor.toml_text.value = edit_agent_toml(editor.toml_text.value, {"max_iterations": 2})
    editor.apply_button.click()
    applied = magics.applied_definition
    assert applied is not None and applied.max_iterations == 2
    assert current.definition.max_iterations == 8

    outputs_of(lambda: shell.run_cell_magic("scout", "", GRANT))
    assert shell.user_ns["_scout"].definition_hash == applied.definition_hash()
    outputs_of(lambda: shell.run_line_magic("scout_thread", "new"))
    assert magics.thread.definition.definition_hash() == applied.definition_hash()


def test_run_again_reruns_the_last_message_with_the_edited_definition(
    shell: InteractiveShell, magics: Any
) -> None:
    outputs_of(lambda: shell.run_cell_magic("scout", "--focus budget", GRANT))
    baseline = shell.user_ns["_scout"]
    outputs_of(lambda: shell.run_line_magic("agent_toml", ""))
    editor = magics.editor
    editor.toml_text.value = edit_agent_toml(editor.toml_text.value, {"max_iterations": 1})
    editor.rerun_button.click()
    rerun = editor.last_run
    assert isinstance(rerun, ScoutRun)
    assert rerun is not baseline
    assert rerun.definition_hash != baseline.definition_hash
    assert rerun.task_message == baseline.task_message
    assert "[Focus]\nbudget" in rerun.task_message


def test_run_again_follows_the_first_chat_message(shell: InteractiveShell, magics: Any) -> None:
    outputs_of(lambda: shell.run_cell_magic("chat", "", GRANT))
    outputs_of(lambda: shell.run_cell_magic("chat", "", "And the budget?"))
    assert magics.last_message == GRANT
    assert magics.last_run is magics.thread.turns[0].scout


def test_run_again_before_any_message_explains_itself(shell: InteractiveShell, magics: Any) -> None:
    outputs_of(lambda: shell.run_line_magic("agent_toml", ""))
    editor = magics.editor
    editor.rerun_button.click()
    assert editor.last_run is None
    assert "no message to run again" in editor.status.value
