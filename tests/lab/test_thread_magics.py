"""The thread magics, ``%supercontext``, ``%%chat`` and ``%scout_thread``, driven through a
bare InteractiveShell with the extension loaded."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from supercontext_lab import ModelRoute, set_model_route, super_context_status
from supercontext_lab.harness import Thread
from supercontext_lab.lab.display import METADATA_KEY
from supercontext_lab.lab.shown import WIDGET_VIEW_MIME
from supercontext_lab.lab.thread_magics import ThreadMagics
from supercontext_lab.lab.widgets import Composer
from supercontext_lab.models.offline import OfflineOrchestratorModel
from supercontext_lab.testing import OpenAITestServer

from .conftest import GOAL, GRANT, error_of, kelp_workspace, outputs_of


def test_the_thread_magics_are_supercontext_scout_thread_and_chat() -> None:
    assert ThreadMagics.magics == {
        "line": {"supercontext": "supercontext", "scout_thread": "scout_thread", "chat": "chat"},
        "cell": {"chat": "chat"},
    }


# --------------------------------------------------------------------------- %supercontext


@pytest.mark.parametrize(
    ("env", "commands", "last_line", "file_value"),
    [
        (
            {},
            ["status"],
            "Super Context: on (from the default (no config file value, no environment override))",
            None,
        ),
        (
            {},
            [""],
            "Super Context: on (from the default (no config file value, no environment override))",
            None,
        ),
        (
            {},
            ["off"],
            "Super Context: off (saved in the config file; applies to new threads).",
            False,
        ),
        ({}, ["off", "status"], "Super Context: off (from the config file ", False),
        (
            {},
            ["off", "on"],
            "Super Context: on (saved in the config file; applies to new threads).",
            True,
        ),
        (
            {"OPENHUMAN_SUPER_CONTEXT": "1"},
            ["off"],
            "Super Context: saved off in the config file, but the environment overrides it "
            "(OPENHUMAN_SUPER_CONTEXT=1): it stays on.",
            False,
        ),
        (
            {"OPENHUMAN_CONTEXT_SUPER_CONTEXT_ENABLED": "no"},
            ["status"],
            "Super Context: off (from the environment OPENHUMAN_CONTEXT_SUPER_CONTEXT_ENABLED=no)",
            None,
        ),
    ],
)
def test_supercontext_status_on_off(
    shell: InteractiveShell,
    lab_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    env: dict[str, str],
    commands: list[str],
    last_line: str,
    file_value: bool | None,
) -> None:
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with capture_output() as captured:
        for command in commands:
            shell.run_line_magic("supercontext", command)
    assert captured.stdout.splitlines()[-1].startswith(last_line)
    config = lab_home / "config.toml"
    if file_value is None:
        assert not config.exists()
    else:
        assert f"super_context_enabled = {str(file_value).lower()}" in config.read_text("utf-8")


def test_corrupt_config_is_a_usage_error(shell: InteractiveShell, lab_home: Path) -> None:
    (lab_home / "config.toml").write_text("[context\n", "utf-8")
    error = error_of(shell, "%supercontext status")
    assert isinstance(error, UsageError)
    assert "config.toml" in str(error)


# --------------------------------------------------------------------------- %%chat


def test_chat_first_turn_shows_the_panel_then_later_turns_the_reply_only(
    shell: InteractiveShell, magics: Any
) -> None:
    first, _ = outputs_of(lambda: shell.run_cell_magic("chat", "", GRANT))
    second, _ = outputs_of(lambda: shell.run_cell_magic("chat", "", "And what about the budget?"))
    thread = magics.thread
    assert isinstance(thread, Thread)
    assert len(thread.turns) == 2
    assert thread.goal == GOAL

    assert len(first) == 1
    assert WIDGET_VIEW_MIME in first[0].data
    text = first[0].data["text/plain"]
    assert text.startswith("Turn (first turn): prepared")
    assert f"proposed_goal: {GOAL}" in text
    assert text.index("ContextBundle") < text.index("Reply:")
    assert first[0].metadata[METADATA_KEY]["preparation"] == "prepared"

    assert len(second) == 1
    assert WIDGET_VIEW_MIME not in second[0].data
    assert second[0].data["text/plain"].startswith("Reply:")
    assert "ContextBundle" not in second[0].data["text/plain"]
    assert second[0].metadata[METADATA_KEY]["reason"] == "not_first_turn"


def test_the_line_form_sends_a_python_string_and_new_starts_a_thread(
    shell: InteractiveShell, magics: Any
) -> None:
    shell.user_ns["first_message"] = GRANT + " (Maya's draft)"
    shell.run_cell("%supercontext off")
    with capture_output():
        shell.run_cell("%chat $first_message")
    first = magics.thread
    assert first.turns[0].message == GRANT + " (Maya's draft)"
    assert first.turns[0].reason == "super_context_disabled"
    with capture_output():
        shell.run_cell("%chat And the travel line, please")
    assert magics.thread is first and len(first.turns) == 2
    # --new: a new current thread, which reads the flag now.
    shell.run_cell("%supercontext on")
    with capture_output():
        shell.run_cell("%chat --new $first_message")
    assert magics.thread is not first
    assert magics.thread.turns[0].preparation == "prepared"
    assert magics.thread.workspace.root == first.workspace.root
    outputs, _ = outputs_of(lambda: shell.run_cell_magic("chat", "--new", "Plan the budget"))
    assert len(magics.thread.turns) == 1
    assert outputs[-1].data["text/plain"].startswith("Turn (first turn): prepared")


@pytest.mark.parametrize("line", ["", "   ", "--new", "--new   "])
def test_the_line_form_needs_a_message(shell: InteractiveShell, line: str) -> None:
    error = error_of(shell, f"%chat {line}")
    assert isinstance(error, UsageError)
    assert "%chat needs a message" in str(error)


def test_chat_with_the_flag_off_goes_cold_and_says_why(shell: InteractiveShell) -> None:
    outputs_of(lambda: shell.run_line_magic("supercontext", "off"))
    outputs, _ = outputs_of(lambda: shell.run_cell_magic("chat", "", GRANT))
    assert (
        outputs[0]
        .data["text/plain"]
        .startswith(
            "Turn (first turn): skipped\n  workspace: demo-workspace\n"
            "  reason: super_context_disabled"
        )
    )
    assert outputs[0].metadata[METADATA_KEY]["reason"] == "super_context_disabled"


def test_chat_streams_the_reply_then_shows_one_final_display(
    shell: InteractiveShell, magics: Any
) -> None:
    with OpenAITestServer(model=OfflineOrchestratorModel()) as server:
        set_model_route(
            "agentic",
            ModelRoute(kind="openai", base_url=server.base_url, model="orch", stream=True),
        )
        outputs, stdout = outputs_of(lambda: shell.run_cell_magic("chat", "", GRANT))
        bodies = [request.json for request in server.requests]
    turn = magics.thread.turns[0]
    assert turn.reply and turn.orchestrator_error is None
    assert all(body["stream"] is True for body in bodies)
    assert stdout == turn.reply + "\n"
    assert len(outputs) == 1
    assert outputs[0].metadata[METADATA_KEY]["orchestrator"]["route"] == "openai"
    assert outputs[0].metadata[METADATA_KEY]["orchestrator"]["stream"] is True


def test_chat_without_streaming_prints_nothing(shell: InteractiveShell) -> None:
    outputs, stdout = outputs_of(lambda: shell.run_cell_magic("chat", "", GRANT))
    assert stdout == ""
    assert len(outputs) == 1


# --------------------------------------------------------------------------- %scout_thread


def test_scout_thread_new_reads_the_flag_now_and_shows_the_composer(
    shell: InteractiveShell, magics: Any, workspace_dir: Path
) -> None:
    outputs_of(lambda: shell.run_line_magic("supercontext", "off"))
    outputs, _ = outputs_of(
        lambda: shell.run_line_magic("scout_thread", f"new --workspace {workspace_dir}")
    )
    composer = magics.composer
    assert isinstance(composer, Composer)
    assert len(outputs) == 1 and WIDGET_VIEW_MIME in outputs[0].data
    assert composer.thread is magics.thread
    assert magics.thread.enabled is False
    assert magics.thread.workspace.root == workspace_dir.resolve()
    assert composer.toggle.value is False

    outputs_of(lambda: shell.run_cell_magic("chat", "", "Help me plan the husbandry log"))
    assert composer.thread is magics.thread
    assert magics.thread.turns[0].reason == "super_context_disabled"


def test_chat_on_the_composers_thread_hides_its_toggle(
    shell: InteractiveShell, magics: Any
) -> None:
    outputs_of(lambda: shell.run_line_magic("scout_thread", "new"))
    composer = magics.composer
    assert composer.toggle_row.layout.display is None
    outputs_of(lambda: shell.run_cell_magic("chat", "", GRANT))
    outputs_of(lambda: shell.run_cell_magic("chat", "", "And the budget?"))
    assert composer.thread is magics.thread
    assert composer.toggle_row.layout.display == "none"
    assert "This thread has 2 turns" in composer.status.value


def test_composer_toggle_persists_the_flag_and_rebuilds_the_current_thread(
    shell: InteractiveShell, magics: Any
) -> None:
    outputs_of(lambda: shell.run_line_magic("scout_thread", "new"))
    before = magics.thread
    assert before.enabled is True
    magics.composer.toggle.value = False
    assert super_context_status().source == "file"
    assert super_context_status().enabled is False
    assert magics.thread is not before
    assert magics.thread is magics.composer.thread
    assert magics.thread.enabled is False


def test_a_new_thread_replaces_the_one_chat_continues(shell: InteractiveShell, magics: Any) -> None:
    outputs_of(lambda: shell.run_cell_magic("chat", "", GRANT))
    old = magics.thread
    outputs_of(lambda: shell.run_line_magic("scout_thread", "new"))
    assert magics.thread is not old
    outputs, _ = outputs_of(lambda: shell.run_cell_magic("chat", "", GRANT))
    assert outputs[0].data["text/plain"].startswith("Turn (first turn): prepared")


def test_the_composers_new_thread_becomes_the_one_chat_continues(
    shell: InteractiveShell, magics: Any
) -> None:
    outputs_of(lambda: shell.run_line_magic("scout_thread", "new"))
    composer = magics.composer
    outputs_of(lambda: shell.run_cell_magic("chat", "", GRANT))
    first = magics.thread
    composer.new_button.click()
    assert magics.thread is composer.thread is not first
    outputs_of(lambda: shell.run_cell_magic("chat", "", "thanks"))
    assert len(magics.thread.turns) == 1 and len(first.turns) == 1


def test_the_composers_new_thread_keeps_its_workspace(
    shell: InteractiveShell, magics: Any, tmp_path: Path, workspace_dir: Path
) -> None:
    kelp = kelp_workspace(tmp_path)
    outputs_of(lambda: shell.run_line_magic("scout_thread", f"new --workspace {kelp}"))
    shell.run_line_magic("config", f"SupercontextMagics.workspace = {str(workspace_dir)!r}")
    # Flipping the toggle rebuilds the composer's empty thread: on the composer's folder.
    magics.composer.toggle.value = not magics.composer.toggle.value
    assert magics.thread.workspace.root == kelp.resolve()
    assert magics.composer.thread is magics.thread
