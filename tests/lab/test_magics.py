"""The magics, driven through a bare InteractiveShell with the extension loaded."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import RichOutput, capture_output

from supercontext_lab import ModelRoute, set_model_route, super_context_status
from supercontext_lab.agents import edit_agent_toml
from supercontext_lab.agents.definition import default_agent_toml
from supercontext_lab.harness import Thread
from supercontext_lab.lab.display import METADATA_KEY
from supercontext_lab.lab.magics import SupercontextMagics
from supercontext_lab.lab.shown import WIDGET_VIEW_MIME
from supercontext_lab.lab.widgets import AgentEditor, Composer
from supercontext_lab.models.offline import OfflineOrchestratorModel, OfflineScoutModel
from supercontext_lab.scout import ScoutRun
from supercontext_lab.testing import OpenAITestServer, build_workspace

GRANT = "Help me finish the sensitivity analysis section for the grant renewal"
GOAL = "Finish the sensitivity analysis section for the grant renewal"


def _outputs(action: Callable[[], Any]) -> tuple[list[RichOutput], str]:
    """What ``action`` displayed with a text form, and what it printed. The live status
    line of %%scout and %%chat has none (see test_scout_and_chat_show_a_live_status)."""
    with capture_output() as captured:
        action()
    return [o for o in captured.outputs if "text/plain" in o.data], captured.stdout


def _error(shell: InteractiveShell, cell: str) -> BaseException | None:
    with capture_output():
        result = shell.run_cell(cell)
    return result.error_in_exec


# --------------------------------------------------------------------------- loading


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        ("line", "supercontext"),
        ("line", "scout_thread"),
        ("line", "agent_toml"),
        ("cell", "chat"),
        ("cell", "scout"),
    ],
)
def test_load_ext_registers_the_magics_and_unload_removes_them(
    shell: InteractiveShell, kind: str, name: str
) -> None:
    assert name in shell.magics_manager.magics[kind]
    shell.run_line_magic("unload_ext", "supercontext_lab")
    assert name not in shell.magics_manager.magics[kind]
    assert not any(isinstance(c, SupercontextMagics) for c in shell.configurables)
    shell.run_line_magic("load_ext", "supercontext_lab")
    assert name in shell.magics_manager.magics[kind]


def test_the_evaluation_magic_is_registered_too(shell: InteractiveShell) -> None:
    assert "scout_eval" in shell.magics_manager.magics["line"]
    assert "EvalMagics" in shell.magics_manager.registry
    shell.run_line_magic("unload_ext", "supercontext_lab")
    assert "scout_eval" not in shell.magics_manager.magics["line"]
    assert "EvalMagics" not in shell.magics_manager.registry
    shell.run_line_magic("load_ext", "supercontext_lab")


@pytest.mark.parametrize(
    ("kind", "name", "fragments"),
    [
        ("line", "supercontext", ["%supercontext [action]", "status (default)", "environment"]),
        (
            "line",
            "scout_thread",
            ["%scout_thread", "--workspace", "--agent", "composer", "SupercontextMagics.workspace"],
        ),
        ("cell", "chat", ["%chat", "first turn"]),
        ("cell", "scout", ["--workspace", "--focus", "--agent", "--out", "_scout"]),
        ("line", "agent_toml", ["%agent_toml [path]", "Run again"]),
    ],
)
def test_every_magic_has_help_from_magic_arguments(
    shell: InteractiveShell, kind: str, name: str, fragments: list[str]
) -> None:
    magic = shell.magics_manager.magics[kind][name]
    doc = magic.__doc__ or ""
    for fragment in fragments:
        assert fragment in doc


def test_question_mark_help_prints_the_usage(shell: InteractiveShell) -> None:
    with capture_output() as captured:
        shell.run_cell("%supercontext?")
    assert "%supercontext [action]" in captured.stdout


def test_scout_thread_help_names_the_workspace_option(shell: InteractiveShell) -> None:
    with capture_output() as captured:
        shell.run_cell("%scout_thread?")
    text = " ".join(captured.stdout.split())
    assert "%config SupercontextMagics.workspace" in text
    assert "default: the current thread's, else SupercontextMagics.workspace, else" in text


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


# --------------------------------------------------------------------------- misuse


def _bad_agent(tmp_path: Path) -> str:
    path = tmp_path / "agent.toml"
    path.write_text(default_agent_toml().replace("temperature = 0.3", "temperature = 7.5"), "utf-8")
    return str(path)


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("%supercontext bogus", "unknown subcommand 'bogus'; use %supercontext status, on or off."),
        ("%supercontext on off", "unrecognized arguments: off"),
        ("%scout_thread old", "unknown subcommand 'old'; use %scout_thread new."),
        ("%scout_thread", "the following arguments are required: action"),
        ("%scout_thread new --workspace {tmp}/missing", "workspace folder not found: "),
        ("%%scout --workspace {tmp}/missing\nhello", "workspace folder not found: "),
        ("%%scout\n   \n", "%%scout needs a message in the cell body"),
        ("%%chat\n\n", "%%chat needs a message in the cell body"),
        ("%%chat --old\nhi", "unrecognized arguments: --old"),
        ("%%scout --agent {tmp}/none.toml\nhello", "agent definition not found: "),
        ("%%scout --agent {bad}\nhello", "temperature"),
        ("%scout_thread new --agent {bad}", "temperature"),
        ("%%scout --out 1x\nhello", "--out needs a Python variable name, not '1x'."),
        ("%%scout --out class\nhello", "--out needs a Python variable name, not 'class'."),
        ("%%scout --bogus\nhello", "unrecognized arguments: --bogus"),
        ('%%scout --focus "open\nhello', "check the quotes"),
        ("%agent_toml {tmp}/no/such/folder/agent.toml", "folder not found for "),
    ],
)
def test_misuse_raises_a_one_line_usage_error(
    shell: InteractiveShell, tmp_path: Path, cell: str, message: str
) -> None:
    error = _error(shell, cell.format(tmp=tmp_path, bad=_bad_agent(tmp_path)))
    assert isinstance(error, UsageError)
    assert message in str(error)
    assert "\n" not in str(error)


def test_invalid_agent_shows_the_loaders_message(shell: InteractiveShell, tmp_path: Path) -> None:
    bad = _bad_agent(tmp_path)
    error = _error(shell, f"%%scout --agent {bad}\nhello")
    assert isinstance(error, UsageError)
    assert str(error).startswith(f"{bad}: temperature:")


def test_corrupt_config_is_a_usage_error(shell: InteractiveShell, lab_home: Path) -> None:
    (lab_home / "config.toml").write_text("[context\n", "utf-8")
    error = _error(shell, "%supercontext status")
    assert isinstance(error, UsageError)
    assert "config.toml" in str(error)


def test_a_real_bug_keeps_its_traceback(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(self: Thread, message: str, **_: Any) -> ScoutRun:
        raise RuntimeError("a bug in the engine")

    monkeypatch.setattr(Thread, "run_scout", broken)
    error = _error(shell, "%%scout\nhello there")
    assert isinstance(error, RuntimeError)
    assert not isinstance(error, UsageError)


# --------------------------------------------------------------------------- %%scout


def test_scout_stores_the_run_and_displays_the_panel(shell: InteractiveShell) -> None:
    outputs, _ = _outputs(lambda: shell.run_cell_magic("scout", "", GRANT))
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


@pytest.mark.parametrize(
    ("magic", "what", "phases"),
    [
        ("scout", "Scout", ["asking the model", "gathering", "asking the model", "checking"]),
        ("chat", "Turn", ["asking the model", "gathering", "asking the model", "checking"]),
    ],
)
def test_scout_and_chat_show_a_live_status_then_hide_it(
    shell: InteractiveShell,
    monkeypatch: pytest.MonkeyPatch,
    magic: str,
    what: str,
    phases: list[str],
) -> None:
    from supercontext_lab.harness.progress import Progress
    from supercontext_lab.lab.widgets import RunStatus

    told: list[Progress] = []
    shown: list[RunStatus] = []
    show = RunStatus.show

    def recording(self: RunStatus, progress: Progress) -> None:
        told.append(progress)
        shown.append(self)
        show(self, progress)

    monkeypatch.setattr(RunStatus, "show", recording)
    with capture_output() as captured:
        shell.run_cell_magic(magic, "", GRANT)
    status_output, result = captured.outputs
    # The status comes first, as a widget view only: no text for nbval or a saved notebook.
    assert set(status_output.data) == {WIDGET_VIEW_MIME}
    status = shown[0]
    assert {id(s) for s in shown} == {id(status)}
    assert status_output.data[WIDGET_VIEW_MIME]["model_id"] == status.model_id
    assert status.what == what
    assert status.value == "" and status.layout.display == "none"
    said = [p.phase for p in told]
    for phase in phases:
        assert any(s.startswith(phase) for s in said), (phase, said)
    assert told[0].describe() == "asking the model offline:scout (call 1 of up to 8)"
    if magic == "chat":
        assert said[-1] == "asking the orchestrator"
    assert "text/plain" in result.data


def test_scout_options_focus_out_and_workspace(
    shell: InteractiveShell, workspace_dir: Path
) -> None:
    line = f'--workspace {workspace_dir} --focus "the Friday review" --out husbandry'
    _outputs(lambda: shell.run_cell_magic("scout", line, "Help me plan the husbandry log"))
    run = shell.user_ns["husbandry"]
    assert "_scout" not in shell.user_ns
    assert "QUOKKA-7731" in run.system_prompt
    assert "[Focus]\nthe Friday review" in run.task_message


def test_scout_is_the_explicit_path_even_with_the_flag_off(shell: InteractiveShell) -> None:
    _outputs(lambda: shell.run_line_magic("supercontext", "off"))
    _outputs(lambda: shell.run_cell_magic("scout", "", "hi"))
    assert shell.user_ns["_scout"].model_calls >= 1


def test_config_workspace_option_is_used_without_flag(
    shell: InteractiveShell, workspace_dir: Path
) -> None:
    shell.run_line_magic("config", f"SupercontextMagics.workspace = {str(workspace_dir)!r}")
    _outputs(lambda: shell.run_cell_magic("scout", "", "Help me plan the husbandry log"))
    assert "QUOKKA-7731" in shell.user_ns["_scout"].system_prompt


def _kelp(tmp_path: Path) -> Path:
    """A workspace of one's own: marine biology notes the demo does not have."""
    return build_workspace(
        tmp_path / "kelp-ws",
        {
            "PROFILE.md": "# Profile\n\nI study kelp forests off Tasmania.\n",
            "memory/global/urchin-survey.md": (
                "The urchin survey at Maria Island counts 412 urchins per transect.\n"
            ),
        },
    )


def test_magics_follow_the_current_threads_workspace(
    shell: InteractiveShell, magics: Any, tmp_path: Path
) -> None:
    kelp = _kelp(tmp_path)
    _outputs(lambda: shell.run_line_magic("scout_thread", f"new --workspace {kelp}"))
    outputs, _ = _outputs(
        lambda: shell.run_cell_magic("scout", "", "How many urchins per transect at Maria Island?")
    )
    run = shell.user_ns["_scout"]
    assert "412 urchins" in (run.envelope or "")
    assert "sourdough" not in (run.envelope or "")
    # The panel and its text fallback name the workspace searched.
    panel_output = outputs[-1]
    assert "workspace: kelp-ws" in panel_output.data["text/plain"]
    assert r"**Workspace:** kelp\-ws" in panel_output.data["text/markdown"]
    # A new thread, a first %%chat turn and the editor stay on it too.
    _outputs(lambda: shell.run_line_magic("scout_thread", "new"))
    assert magics.thread.workspace.root == kelp.resolve()
    outputs, _ = _outputs(lambda: shell.run_cell_magic("chat", "", "Plan the urchin survey"))
    assert "workspace: kelp-ws" in outputs[-1].data["text/plain"]
    assert "412 urchins" in (magics.thread.turns[0].envelope or "")
    editor = shell.run_line_magic("agent_toml", "")
    assert editor.workspace.root == kelp.resolve()


def test_an_evaluation_follows_the_current_threads_workspace(
    shell: InteractiveShell, tmp_path: Path
) -> None:
    kelp = _kelp(tmp_path)
    dataset = tmp_path / "cases.jsonl"
    case = {
        "id": "urchins",
        "message": "How many urchins per transect at Maria Island?",
        "expect": {"mentions": ["412 urchins"]},
    }
    dataset.write_text(json.dumps(case) + "\n", "utf-8")
    _outputs(lambda: shell.run_line_magic("scout_thread", f"new --workspace {kelp}"))
    _outputs(lambda: shell.run_line_magic("scout_eval", f"{dataset} --no-progress"))
    report = shell.user_ns["eval_report"]
    assert report.variants[0].metrics["mention_rate"] == 1.0


def test_the_workspace_option_set_after_a_thread_wins_until_the_next_thread(
    shell: InteractiveShell, magics: Any, tmp_path: Path, workspace_dir: Path
) -> None:
    kelp = _kelp(tmp_path)
    _outputs(lambda: shell.run_line_magic("scout_thread", f"new --workspace {kelp}"))
    shell.run_line_magic("config", f"SupercontextMagics.workspace = {str(workspace_dir)!r}")
    _outputs(lambda: shell.run_cell_magic("scout", "", "Help me plan the husbandry log"))
    assert "QUOKKA-7731" in shell.user_ns["_scout"].system_prompt
    # --workspace is a one-off: the current workspace stays as it was.
    _outputs(lambda: shell.run_cell_magic("scout", f"--workspace {kelp}", "urchins"))
    _outputs(lambda: shell.run_cell_magic("scout", "", "Help me plan the husbandry log"))
    assert "QUOKKA-7731" in shell.user_ns["_scout"].system_prompt
    # A thread started now is on the configured folder, and the magics follow it.
    _outputs(lambda: shell.run_line_magic("scout_thread", "new"))
    assert magics.thread.workspace.root == workspace_dir.resolve()


def test_the_composers_new_thread_becomes_the_one_chat_continues(
    shell: InteractiveShell, magics: Any
) -> None:
    _outputs(lambda: shell.run_line_magic("scout_thread", "new"))
    composer = magics.composer
    _outputs(lambda: shell.run_cell_magic("chat", "", GRANT))
    first = magics.thread
    composer.new_button.click()
    assert magics.thread is composer.thread is not first
    _outputs(lambda: shell.run_cell_magic("chat", "", "thanks"))
    assert len(magics.thread.turns) == 1 and len(first.turns) == 1


def test_the_composers_new_thread_keeps_its_workspace(
    shell: InteractiveShell, magics: Any, tmp_path: Path, workspace_dir: Path
) -> None:
    kelp = _kelp(tmp_path)
    _outputs(lambda: shell.run_line_magic("scout_thread", f"new --workspace {kelp}"))
    shell.run_line_magic("config", f"SupercontextMagics.workspace = {str(workspace_dir)!r}")
    # Flipping the toggle rebuilds the composer's empty thread: on the composer's folder.
    magics.composer.toggle.value = not magics.composer.toggle.value
    assert magics.thread.workspace.root == kelp.resolve()
    assert magics.composer.thread is magics.thread


def test_config_workspace_that_is_missing_names_the_option(
    shell: InteractiveShell, tmp_path: Path
) -> None:
    shell.run_line_magic("config", f"SupercontextMagics.workspace = '{tmp_path}/gone'")
    error = _error(shell, "%%scout\nhello")
    assert isinstance(error, UsageError)
    assert "%config SupercontextMagics.workspace" in str(error)


def test_config_model_routes_the_scout_and_never_leaks_the_key(
    shell: InteractiveShell, monkeypatch: pytest.MonkeyPatch
) -> None:
    canary = "sk-canary-5f0d1c2b9a"
    monkeypatch.setenv("SCL_TEST_KEY", canary)
    with OpenAITestServer(model=OfflineScoutModel(), model_name="served") as server:
        shell.run_line_magic("config", "SupercontextMagics.model = 'qwen-test'")
        shell.run_line_magic("config", f"SupercontextMagics.base_url = {server.base_url!r}")
        shell.run_line_magic("config", "SupercontextMagics.api_key_env = 'SCL_TEST_KEY'")
        outputs, stdout = _outputs(lambda: shell.run_cell_magic("scout", "", GRANT))
        requests = server.requests
    run = shell.user_ns["_scout"]
    assert run.model_name == "openai:qwen-test"
    assert requests and requests[0].headers["Authorization"] == f"Bearer {canary}"
    provenance = outputs[0].metadata[METADATA_KEY]
    assert provenance["scout"]["route"] == "openai"
    assert provenance["scout"]["base_url"] == server.base_url
    rendered = json.dumps([o.data for o in outputs]) + json.dumps(provenance) + stdout
    assert canary not in rendered


def test_base_url_without_model_is_a_usage_error(shell: InteractiveShell) -> None:
    shell.run_line_magic("config", "SupercontextMagics.base_url = 'http://127.0.0.1:9/v1'")
    error = _error(shell, "%%scout\nhello")
    assert isinstance(error, UsageError)
    assert "SupercontextMagics.model" in str(error)


def test_bad_model_id_is_a_usage_error(shell: InteractiveShell) -> None:
    shell.run_line_magic("config", "SupercontextMagics.model = 'no-provider-model'")
    error = _error(shell, "%%scout\nhello")
    assert isinstance(error, UsageError)
    assert "no provider prefix" in str(error)


# --------------------------------------------------------------------------- %%chat


def test_chat_first_turn_shows_the_panel_then_later_turns_the_reply_only(
    shell: InteractiveShell, magics: Any
) -> None:
    first, _ = _outputs(lambda: shell.run_cell_magic("chat", "", GRANT))
    second, _ = _outputs(lambda: shell.run_cell_magic("chat", "", "And what about the budget?"))
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
    outputs, _ = _outputs(lambda: shell.run_cell_magic("chat", "--new", "Plan the budget"))
    assert len(magics.thread.turns) == 1
    assert outputs[-1].data["text/plain"].startswith("Turn (first turn): prepared")


@pytest.mark.parametrize("line", ["", "   ", "--new", "--new   "])
def test_the_line_form_needs_a_message(shell: InteractiveShell, line: str) -> None:
    error = _error(shell, f"%chat {line}")
    assert isinstance(error, UsageError)
    assert "%chat needs a message" in str(error)


def test_chat_with_the_flag_off_goes_cold_and_says_why(shell: InteractiveShell) -> None:
    _outputs(lambda: shell.run_line_magic("supercontext", "off"))
    outputs, _ = _outputs(lambda: shell.run_cell_magic("chat", "", GRANT))
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
        outputs, stdout = _outputs(lambda: shell.run_cell_magic("chat", "", GRANT))
        bodies = [request.json for request in server.requests]
    turn = magics.thread.turns[0]
    assert turn.reply and turn.orchestrator_error is None
    assert all(body["stream"] is True for body in bodies)
    assert stdout == turn.reply + "\n"
    assert len(outputs) == 1
    assert outputs[0].metadata[METADATA_KEY]["orchestrator"]["route"] == "openai"
    assert outputs[0].metadata[METADATA_KEY]["orchestrator"]["stream"] is True


def test_chat_without_streaming_prints_nothing(shell: InteractiveShell) -> None:
    outputs, stdout = _outputs(lambda: shell.run_cell_magic("chat", "", GRANT))
    assert stdout == ""
    assert len(outputs) == 1


# --------------------------------------------------------------------------- %scout_thread


def test_scout_thread_new_reads_the_flag_now_and_shows_the_composer(
    shell: InteractiveShell, magics: Any, workspace_dir: Path
) -> None:
    _outputs(lambda: shell.run_line_magic("supercontext", "off"))
    outputs, _ = _outputs(
        lambda: shell.run_line_magic("scout_thread", f"new --workspace {workspace_dir}")
    )
    composer = magics.composer
    assert isinstance(composer, Composer)
    assert len(outputs) == 1 and WIDGET_VIEW_MIME in outputs[0].data
    assert composer.thread is magics.thread
    assert magics.thread.enabled is False
    assert magics.thread.workspace.root == workspace_dir.resolve()
    assert composer.toggle.value is False

    _outputs(lambda: shell.run_cell_magic("chat", "", "Help me plan the husbandry log"))
    assert composer.thread is magics.thread
    assert magics.thread.turns[0].reason == "super_context_disabled"


def test_chat_on_the_composers_thread_hides_its_toggle(
    shell: InteractiveShell, magics: Any
) -> None:
    _outputs(lambda: shell.run_line_magic("scout_thread", "new"))
    composer = magics.composer
    assert composer.toggle_row.layout.display is None
    _outputs(lambda: shell.run_cell_magic("chat", "", GRANT))
    _outputs(lambda: shell.run_cell_magic("chat", "", "And the budget?"))
    assert composer.thread is magics.thread
    assert composer.toggle_row.layout.display == "none"
    assert "This thread has 2 turns" in composer.status.value


def test_composer_toggle_persists_the_flag_and_rebuilds_the_current_thread(
    shell: InteractiveShell, magics: Any
) -> None:
    _outputs(lambda: shell.run_line_magic("scout_thread", "new"))
    before = magics.thread
    assert before.enabled is True
    magics.composer.toggle.value = False
    assert super_context_status().source == "file"
    assert super_context_status().enabled is False
    assert magics.thread is not before
    assert magics.thread is magics.composer.thread
    assert magics.thread.enabled is False


def test_a_new_thread_replaces_the_one_chat_continues(shell: InteractiveShell, magics: Any) -> None:
    _outputs(lambda: shell.run_cell_magic("chat", "", GRANT))
    old = magics.thread
    _outputs(lambda: shell.run_line_magic("scout_thread", "new"))
    assert magics.thread is not old
    outputs, _ = _outputs(lambda: shell.run_cell_magic("chat", "", GRANT))
    assert outputs[0].data["text/plain"].startswith("Turn (first turn): prepared")


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
    _outputs(lambda: shell.run_line_magic("agent_toml", str(path)))
    assert magics.editor.toml_text.value == path.read_text("utf-8")
    assert magics.editor.definition.max_iterations == 3


def test_apply_makes_later_scout_runs_and_new_threads_use_the_definition(
    shell: InteractiveShell, magics: Any
) -> None:
    _outputs(lambda: shell.run_cell_magic("chat", "", GRANT))
    current = magics.thread
    _outputs(lambda: shell.run_line_magic("agent_toml", ""))
    editor = magics.editor
    editor.toml_text.value = edit_agent_toml(editor.toml_text.value, {"max_iterations": 2})
    editor.apply_button.click()
    applied = magics.applied_definition
    assert applied is not None and applied.max_iterations == 2
    assert current.definition.max_iterations == 8

    _outputs(lambda: shell.run_cell_magic("scout", "", GRANT))
    assert shell.user_ns["_scout"].definition_hash == applied.definition_hash()
    _outputs(lambda: shell.run_line_magic("scout_thread", "new"))
    assert magics.thread.definition.definition_hash() == applied.definition_hash()


def test_run_again_reruns_the_last_message_with_the_edited_definition(
    shell: InteractiveShell, magics: Any
) -> None:
    _outputs(lambda: shell.run_cell_magic("scout", "--focus budget", GRANT))
    baseline = shell.user_ns["_scout"]
    _outputs(lambda: shell.run_line_magic("agent_toml", ""))
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
    _outputs(lambda: shell.run_cell_magic("chat", "", GRANT))
    _outputs(lambda: shell.run_cell_magic("chat", "", "And the budget?"))
    assert magics.last_message == GRANT
    assert magics.last_run is magics.thread.turns[0].scout


def test_run_again_before_any_message_explains_itself(shell: InteractiveShell, magics: Any) -> None:
    _outputs(lambda: shell.run_line_magic("agent_toml", ""))
    editor = magics.editor
    editor.rerun_button.click()
    assert editor.last_run is None
    assert "no message to run again" in editor.status.value
