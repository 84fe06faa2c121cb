"""The magics as ``%load_ext supercontext_lab`` registers them, driven through a bare
InteractiveShell: loading, help, misuse, the live status, and the options and the current
workspace that every magic shares."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from IPython.core.error import UsageError
from IPython.core.interactiveshell import InteractiveShell
from IPython.utils.capture import capture_output

from supercontext_lab.lab.display import METADATA_KEY
from supercontext_lab.lab.magics import SupercontextMagics
from supercontext_lab.lab.scout_magics import ScoutMagics
from supercontext_lab.lab.shown import WIDGET_VIEW_MIME
from supercontext_lab.lab.thread_magics import ThreadMagics
from supercontext_lab.models.offline import OfflineScoutModel
from supercontext_lab.testing import OpenAITestServer

from .conftest import GRANT, bad_agent, error_of, kelp_workspace, outputs_of

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


def test_the_registered_table_joins_the_thread_and_scout_magics() -> None:
    assert SupercontextMagics.magics == {
        "line": {**ThreadMagics.magics["line"], **ScoutMagics.magics["line"]},
        "cell": {**ThreadMagics.magics["cell"], **ScoutMagics.magics["cell"]},
    }
    assert set(ThreadMagics.magics["line"]).isdisjoint(ScoutMagics.magics["line"])
    assert set(ThreadMagics.magics["cell"]).isdisjoint(ScoutMagics.magics["cell"])


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


# --------------------------------------------------------------------------- misuse


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
    error = error_of(shell, cell.format(tmp=tmp_path, bad=bad_agent(tmp_path)))
    assert isinstance(error, UsageError)
    assert message in str(error)
    assert "\n" not in str(error)


# --------------------------------------------------------------------------- live status


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


# ------------------------------------------------------------ options and the current workspace


def test_config_workspace_option_is_used_without_flag(
    shell: InteractiveShell, workspace_dir: Path
) -> None:
    shell.run_line_magic("config", f"SupercontextMagics.workspace = {str(workspace_dir)!r}")
    outputs_of(lambda: shell.run_cell_magic("scout", "", "Help me plan the husbandry log"))
    assert "QUOKKA-7731" in shell.user_ns["_scout"].system_prompt


def test_magics_follow_the_current_threads_workspace(
    shell: InteractiveShell, magics: Any, tmp_path: Path
) -> None:
    kelp = kelp_workspace(tmp_path)
    outputs_of(lambda: shell.run_line_magic("scout_thread", f"new --workspace {kelp}"))
    outputs, _ = outputs_of(
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
    outputs_of(lambda: shell.run_line_magic("scout_thread", "new"))
    assert magics.thread.workspace.root == kelp.resolve()
    outputs, _ = outputs_of(lambda: shell.run_cell_magic("chat", "", "Plan the urchin survey"))
    assert "workspace: kelp-ws" in outputs[-1].data["text/plain"]
    assert "412 urchins" in (magics.thread.turns[0].envelope or "")
    editor = shell.run_line_magic("agent_toml", "")
    assert editor.workspace.root == kelp.resolve()


def test_an_evaluation_follows_the_current_threads_workspace(
    shell: InteractiveShell, tmp_path: Path
) -> None:
    kelp = kelp_workspace(tmp_path)
    dataset = tmp_path / "cases.jsonl"
    case = {
        "id": "urchins",
        "message": "How many urchins per transect at Maria Island?",
        "expect": {"mentions": ["412 urchins"]},
    }
    dataset.write_text(json.dumps(case) + "\n", "utf-8")
    outputs_of(lambda: shell.run_line_magic("scout_thread", f"new --workspace {kelp}"))
    outputs_of(lambda: shell.run_line_magic("scout_eval", f"{dataset} --no-progress"))
    report = shell.user_ns["eval_report"]
    assert report.variants[0].metrics["mention_rate"] == 1.0


def test_the_workspace_option_set_after_a_thread_wins_until_the_next_thread(
    shell: InteractiveShell, magics: Any, tmp_path: Path, workspace_dir: Path
) -> None:
    kelp = kelp_workspace(tmp_path)
    outputs_of(lambda: shell.run_line_magic("scout_thread", f"new --workspace {kelp}"))
    shell.run_line_magic("config", f"SupercontextMagics.workspace = {str(workspace_dir)!r}")
    outputs_of(lambda: shell.run_cell_magic("scout", "", "Help me plan the husbandry log"))
    assert "QUOKKA-7731" in shell.user_ns["_scout"].system_prompt
    # --workspace is a one-off: the current workspace stays as it was.
    outputs_of(lambda: shell.run_cell_magic("scout", f"--workspace {kelp}", "urchins"))
    outputs_of(lambda: shell.run_cell_magic("scout", "", "Help me plan the husbandry log"))
    assert "QUOKKA-7731" in shell.user_ns["_scout"].system_prompt
    # A thread started now is on the configured folder, and the magics follow it.
    outputs_of(lambda: shell.run_line_magic("scout_thread", "new"))
    assert magics.thread.workspace.root == workspace_dir.resolve()


def test_config_workspace_that_is_missing_names_the_option(
    shell: InteractiveShell, tmp_path: Path
) -> None:
    shell.run_line_magic("config", f"SupercontextMagics.workspace = '{tmp_path}/gone'")
    error = error_of(shell, "%%scout\nhello")
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
        outputs, stdout = outputs_of(lambda: shell.run_cell_magic("scout", "", GRANT))
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
    error = error_of(shell, "%%scout\nhello")
    assert isinstance(error, UsageError)
    assert "SupercontextMagics.model" in str(error)


def test_bad_model_id_is_a_usage_error(shell: InteractiveShell) -> None:
    shell.run_line_magic("config", "SupercontextMagics.model = 'no-provider-model'")
    error = error_of(shell, "%%scout\nhello")
    assert isinstance(error, UsageError)
    assert "no provider prefix" in str(error)


def test_one_model_setting_runs_the_scout_and_the_reply(shell: InteractiveShell) -> None:
    """%config SupercontextMagics.model = ID: the scout and the reply both come from ID"""
    shell.run_line_magic("supercontext", "on")
    with OpenAITestServer(model=OfflineScoutModel(), model_name="served") as server:
        shell.run_line_magic("config", "SupercontextMagics.model = 'qwen-test'")
        shell.run_line_magic("config", f"SupercontextMagics.base_url = {server.base_url!r}")
        with capture_output():
            shell.run_cell_magic("chat", "--new", GRANT)
        requests = server.requests
    turn = shell.magics_manager.registry["SupercontextMagics"].thread.turns[0]
    assert turn.scout is not None and turn.scout.model_name == "openai:qwen-test"
    assert turn.orchestrator_model == "openai:qwen-test"
    assert turn.orchestrator_error is None
    # Every model call of the turn went to the server: the scout's, then the reply's.
    assert len(requests) == turn.scout.model_calls + 1


@pytest.mark.parametrize(
    ("option", "value", "scout", "reply"),
    [
        ("scout_model", "baseline:rank", "baseline:rank", "openai:qwen-test"),
        ("orchestrator_model", "offline", "openai:qwen-test", "offline:orchestrator"),
    ],
)
def test_scout_model_or_orchestrator_model_sets_one_role_apart(
    shell: InteractiveShell, option: str, value: str, scout: str, reply: str
) -> None:
    shell.run_line_magic("supercontext", "on")
    with OpenAITestServer(model=OfflineScoutModel(), model_name="served") as server:
        shell.run_line_magic("config", "SupercontextMagics.model = 'qwen-test'")
        shell.run_line_magic("config", f"SupercontextMagics.base_url = {server.base_url!r}")
        shell.run_line_magic("config", f"SupercontextMagics.{option} = {value!r}")
        with capture_output():
            shell.run_cell_magic("chat", "--new", GRANT)
    turn = shell.magics_manager.registry["SupercontextMagics"].thread.turns[0]
    assert turn.scout is not None and turn.scout.model_name == scout
    assert turn.orchestrator_model == reply
