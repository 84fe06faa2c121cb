"""End-to-end harness turns: what the orchestrator receives, and every cold-start path."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from supercontext_lab import Thread, set_super_context_enabled
from supercontext_lab.agents.definition import default_agent_definition
from supercontext_lab.errors import ConfigError
from supercontext_lab.gate import ColdStartReason
from supercontext_lab.harness import (
    AGENT_CONTEXT_STATUS_HEADER,
    PREPARED_CONTEXT_HEADER,
    already_prepared_envelope,
)
from supercontext_lab.harness.turn import TurnResult, failure_reason
from supercontext_lab.models.base import Message, ModelInfo, ModelReply, ToolSpec
from supercontext_lab.scout import ScoutRun, ScoutStatus, StopCause
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, build_workspace, envelope, tool_call_message

CANARY = "PELICAN-42"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    files = {
        "memory/global/canary.md": (
            f"---\ncategory: fact\n---\nThe quarterly report code is {CANARY}.\n"
        ),
        "memory/global/bread.md": "---\ncategory: note\n---\nSourdough starter feeding schedule.\n",
    }
    return Workspace(build_workspace(tmp_path / "ws", files))


def _orchestrator() -> ScriptedModel:
    return ScriptedModel(["Here is my answer."] * 5, name="scripted-orchestrator")


def test_offline_canary_reaches_the_orchestrator_inside_the_prepared_block(
    workspace: Workspace,
) -> None:
    orchestrator = _orchestrator()
    thread = Thread(workspace, orchestrator_model=orchestrator, super_context_enabled=True)
    result = thread.send("Help me write the quarterly report")
    assert result.prepared, result.reason
    sent = orchestrator.calls[0].messages[-1].content or ""
    assert sent == result.sent_message
    assert sent.startswith(AGENT_CONTEXT_STATUS_HEADER)
    block, _, original = sent.partition("\n---\n")
    assert original == "Help me write the quarterly report"
    assert PREPARED_CONTEXT_HEADER in block
    assert CANARY in block
    assert "Sourdough" not in block
    assert block.index("[context_bundle]") < block.index(CANARY) < block.index("[/context_bundle]")


def test_prose_wrapped_bundle_reaches_the_orchestrator_without_prose(workspace: Workspace) -> None:
    env = envelope(
        has_enough_context=True,
        proposed_goal="Write it",
        summary="Missing: last quarter's figures.",
    )
    scout = ScriptedModel([f"Sure thing, here you go!\n```\n{env}\n```\nAnything else?"])
    orchestrator = _orchestrator()
    thread = Thread(
        workspace, scout_model=scout, orchestrator_model=orchestrator, super_context_enabled=True
    )
    result = thread.send("Help me write the quarterly report")
    sent = orchestrator.calls[0].messages[-1].content or ""
    assert result.envelope == env
    assert "Sure thing" not in sent
    assert "Anything else" not in sent
    assert "```" not in sent


def test_agent_prepare_context_is_hidden_on_a_prepared_turn_only(workspace: Workspace) -> None:
    orchestrator = _orchestrator()
    thread = Thread(workspace, orchestrator_model=orchestrator, super_context_enabled=True)
    first = thread.send("Help me write the quarterly report")
    second = thread.send("And the next steps?")
    first_tools = {spec.name for spec in orchestrator.calls[0].tools or ()}
    second_tools = {spec.name for spec in orchestrator.calls[1].tools or ()}
    assert "agent_prepare_context" not in first_tools
    assert "agent_prepare_context" not in first.orchestrator_tools
    assert "agent_prepare_context" in second_tools
    assert not second.first_turn
    assert second.preparation == "skipped"
    assert second.reason == "not_first_turn"
    assert second.sent_message == "And the next steps?"


def test_scout_system_prompt_differs_from_the_orchestrators(workspace: Workspace) -> None:
    scout = ScriptedModel([envelope(summary="x")])
    orchestrator = _orchestrator()
    Thread(
        workspace, scout_model=scout, orchestrator_model=orchestrator, super_context_enabled=True
    ).send("Help me write the quarterly report")
    scout_system = scout.calls[0].messages[0].content
    orchestrator_system = orchestrator.calls[0].messages[0].content
    assert scout_system != orchestrator_system
    assert "[context_bundle]" in (scout_system or "")


def test_goal_bootstrap_only_when_the_thread_has_none(workspace: Workspace) -> None:
    env = envelope(proposed_goal="Write the quarterly report", summary="Missing: the figures.")
    fresh = Thread(
        workspace,
        scout_model=ScriptedModel([env]),
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
    )
    result = fresh.send("Help me write the quarterly report")
    assert fresh.goal == "Write the quarterly report"
    assert result.goal_from_bundle
    preset = Thread(
        workspace,
        scout_model=ScriptedModel([env]),
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
        goal="My own goal",
    )
    assert not preset.send("Help me write the quarterly report").goal_from_bundle
    assert preset.goal == "My own goal"
    none_goal = Thread(
        workspace,
        scout_model=ScriptedModel([envelope(summary="x")]),
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
    )
    none_goal.send("Help me write the quarterly report")
    assert none_goal.goal is None


def test_flag_is_read_at_construction(workspace: Workspace) -> None:
    set_super_context_enabled(False)
    off = Thread(workspace, orchestrator_model=_orchestrator())
    set_super_context_enabled(True)
    on = Thread(workspace, orchestrator_model=_orchestrator())
    result = off.send("Help me write the quarterly report")
    assert not off.enabled
    assert result.preparation == "skipped"
    assert result.reason == "super_context_disabled"
    assert result.scout is None
    assert on.send("Help me write the quarterly report").prepared


def test_resumed_thread_with_an_assistant_message_does_not_scout(
    workspace: Workspace, tmp_path: Path
) -> None:
    thread = Thread(workspace, orchestrator_model=_orchestrator(), super_context_enabled=True)
    thread.send("Help me write the quarterly report")
    saved = thread.save(tmp_path / "thread.json")
    resumed = Thread.load(saved, orchestrator_model=_orchestrator(), super_context_enabled=True)
    assert resumed.goal == thread.goal
    result = resumed.send("Help me write the quarterly report again")
    assert result.preparation == "skipped"
    assert result.first_turn
    assert result.reason == "prior_conversation"


def test_attachment_first_thread_with_only_a_user_message_is_new(workspace: Workspace) -> None:
    thread = Thread(
        workspace,
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
        transcript=[Message(role="user", content="(attached: report.pdf)")],
    )
    assert thread.send("Help me write the quarterly report").prepared


@pytest.mark.parametrize(
    ("message", "reason"),
    [
        ("hi!", "context_free_greeting"),
        ("   ", "empty_message"),
        ("please create a folder named reports", "simple_local_filesystem_action"),
    ],
)
def test_skip_reasons_mean_no_scout(workspace: Workspace, message: str, reason: str) -> None:
    scout = ScriptedModel([])
    thread = Thread(
        workspace, scout_model=scout, orchestrator_model=_orchestrator(), super_context_enabled=True
    )
    result = thread.send(message)
    assert result.reason == reason
    assert scout.calls == []
    assert result.sent_message == message


def test_non_native_provider_needs_explicit_intent(workspace: Workspace) -> None:
    thread = Thread(
        workspace,
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
        native_tool_calling=False,
    )
    assert (
        thread.send("Tell me a joke about owls").reason == "non_native_provider_no_explicit_intent"
    )


@pytest.mark.parametrize(
    "scout_output",
    [
        "no envelope at all",
        "[context_bundle]\n[/context_bundle]",
        envelope(summary="a") + envelope(summary="b"),
    ],
)
def test_invalid_bundle_means_a_cold_start(workspace: Workspace, scout_output: str) -> None:
    orchestrator = _orchestrator()
    thread = Thread(
        workspace,
        scout_model=ScriptedModel([scout_output]),
        orchestrator_model=orchestrator,
        super_context_enabled=True,
    )
    result = thread.send("Help me write the quarterly report")
    assert result.preparation == "failed"
    assert result.reason is ColdStartReason.NO_ENVELOPE
    assert result.reason_detail is not None and "no valid envelope" in result.reason_detail
    assert result.sent_message == "Help me write the quarterly report"
    assert thread.prepared_markers == []
    assert "agent_prepare_context" in {s.name for s in orchestrator.calls[0].tools or ()}
    assert result.reply == "Here is my answer."


def test_scout_model_error_means_a_cold_start(workspace: Workspace) -> None:
    from supercontext_lab.errors import ModelError

    def boom(messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> ModelReply:
        raise ModelError("connection refused at http://127.0.0.1:9/v1")

    thread = Thread(
        workspace,
        scout_model=ScriptedModel([boom]),
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
    )
    result = thread.send("Help me write the quarterly report")
    assert result.preparation == "failed"
    assert result.reason is ColdStartReason.MODEL_ERROR
    assert "connection refused" in (result.reason_detail or "")
    assert result.reply == "Here is my answer."


def test_agent_prepare_context_after_preparation_is_synthetic(workspace: Workspace) -> None:
    env = envelope(has_enough_context=False, summary="Missing: the facts.")
    orchestrator = ScriptedModel(
        [tool_call_message(("agent_prepare_context", {"question": "more?"})), "done"]
    )
    thread = Thread(
        workspace,
        scout_model=ScriptedModel([env]),
        orchestrator_model=orchestrator,
        super_context_enabled=True,
    )
    result = thread.send("Help me write the quarterly report")
    assert result.orchestrator_tool_calls == ["agent_prepare_context"]
    answer = orchestrator.calls[1].messages[-1].content
    assert answer == already_prepared_envelope(has_enough_context=False)
    assert result.reply == "done"


def test_explicit_agent_prepare_context_runs_the_scout(workspace: Workspace) -> None:
    thread = Thread(workspace, orchestrator_model=_orchestrator(), super_context_enabled=False)
    out = thread.agent_prepare_context("What is the quarterly report code?", focus="codes")
    assert out.startswith("[context_bundle]")
    assert CANARY in out


def test_offline_demo_turn_end_to_end() -> None:
    thread = Thread(super_context_enabled=True)
    result = thread.send("Help me finish the sensitivity analysis section for the grant renewal")
    assert result.prepared
    assert result.bundle is not None
    assert "GR-7731" in result.sent_message or "Reviewer 2" in result.sent_message
    assert "offline orchestrator" in result.reply
    assert result.goal == "Finish the sensitivity analysis section for the grant renewal"
    text = result._repr_mimebundle_()["text/plain"]
    assert "ms" not in text.split("Reply:")[0]


def test_later_turns_keep_the_prepared_context_in_the_history(workspace: Workspace) -> None:
    orchestrator = _orchestrator()
    thread = Thread(workspace, orchestrator_model=orchestrator, super_context_enabled=True)
    first = thread.send("Help me write the quarterly report")
    thread.send("Thanks, and the next step?")
    history = orchestrator.calls[1].messages
    assert [m.role for m in history] == ["system", "user", "assistant", "user"]
    assert history[1].content == first.sent_message
    assert CANARY in (history[1].content or "")


def test_a_broken_tool_catalogue_does_not_break_the_turn(workspace: Workspace) -> None:
    (workspace.root / "orchestrator_tools.toml").write_text("[[tool]\nname = ", "utf-8")
    broken = Workspace(workspace.root)
    orchestrator = _orchestrator()
    result = Thread(broken, orchestrator_model=orchestrator, super_context_enabled=True).send(
        "Help me write the quarterly report"
    )
    assert result.reply == "Here is my answer."
    assert result.orchestrator_tools == []
    assert any("orchestrator_tools.toml" in note for note in result.notes)
    assert "orchestrator_tools.toml" in result.describe()


# ------------------------------------------------------------------------------ reasons


def _cold_turn(workspace: Workspace, step: str) -> TurnResult:
    thread = Thread(
        workspace,
        scout_model=ScriptedModel([step]),
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
    )
    return thread.send("Help me write the quarterly report")


def test_each_failed_preparation_says_why_with_a_code_and_a_detail(workspace: Workspace) -> None:
    loop = tool_call_message(("memory_recall", {"query": "report"}))
    definition = default_agent_definition().model_copy(
        update={"max_iterations": 1, "iteration_policy": "strict"}
    )
    capped = Thread(
        workspace,
        definition=definition,
        scout_model=ScriptedModel([loop]),
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
    ).send("Help me write the quarterly report")
    assert capped.reason is ColdStartReason.ITERATION_CAP
    assert capped.reason_detail is not None and "iteration cap" in capped.reason_detail

    slow = Thread(
        workspace,
        scout_model=ScriptedModel(["x"], delay_s=0.5),
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
        scout_timeout_s=0.05,
    ).send("Help me write the quarterly report")
    assert slow.reason is ColdStartReason.TIMEOUT


def test_a_scout_that_cannot_start_is_a_scout_error(workspace: Workspace) -> None:
    class Broken:
        name = "broken"
        info = ModelInfo()

        def complete(self, *args: object, **kwargs: object) -> ModelReply:
            raise ConfigError("the burst route names no model")

    result = Thread(
        workspace,
        scout_model=Broken(),
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
    ).send("Help me write the quarterly report")
    assert result.reason is ColdStartReason.SCOUT_ERROR
    assert result.reason_detail == "the burst route names no model"


def _run(stopped: StopCause | None) -> ScoutRun:
    from supercontext_lab.models.base import Usage

    return ScoutRun(
        status=ScoutStatus.INCOMPLETE if stopped else ScoutStatus.COMPLETED,
        reason=None,
        output="",
        envelope=None,
        bundle=None,
        problems=[],
        trace=[],
        usage=Usage(),
        model_calls=0,
        elapsed_ms=0.0,
        model_name="m",
        definition_hash="h",
        stopped=stopped,
    )


@pytest.mark.parametrize("cause", list(StopCause))
def test_every_stop_cause_maps_to_its_own_reason(cause: StopCause) -> None:
    reason = failure_reason(_run(cause))
    assert reason.value == cause.value
    assert not reason.skipped


def test_a_run_that_ends_without_an_envelope_is_no_envelope() -> None:
    assert failure_reason(_run(None)) is ColdStartReason.NO_ENVELOPE


def test_to_dict_shows_the_code_as_a_string_and_the_detail_beside_it(
    workspace: Workspace,
) -> None:
    import json

    result = _cold_turn(workspace, "no envelope at all")
    data = result.to_dict()
    assert data["reason"] == "no_envelope" and type(data["reason"]) is str
    assert "no valid envelope" in data["reason_detail"]
    assert json.loads(json.dumps(data))["reason"] == "no_envelope"
    text = result.describe()
    assert "reason: no_envelope\n" in text
    assert "detail: no valid envelope" in text


def test_a_bundle_the_grounding_check_empties_is_a_cold_start(workspace: Workspace) -> None:
    invented = envelope(
        summary="- Generic advice nobody wrote down (memory)",
        recommended_tool_calls=[("seedscape-pipeline", "{}", "made up")],
    )
    thread = Thread(
        workspace,
        scout_model=ScriptedModel([invented]),
        orchestrator_model=_orchestrator(),
        super_context_enabled=True,
    )
    result = thread.send("What did we decide about the budget?")
    assert result.reason is ColdStartReason.UNGROUNDED
    assert result.envelope is None
    assert result.sent_message == "What did we decide about the budget?"
    assert result.scout is not None and result.scout.ungrounded
    assert "dropped tool 'seedscape-pipeline'" in (result.reason_detail or "")
    assert failure_reason(result.scout) is ColdStartReason.UNGROUNDED


def test_to_dict_masks_a_key_whoever_typed_or_quoted_it(workspace: Workspace) -> None:
    key = "AKIAIOSFODNN7EXAMPLE"
    result = Thread(
        workspace, orchestrator_model=_orchestrator(), super_context_enabled=False
    ).send(f"Store {key} for the deploy")
    assert key in result.message  # the turn itself keeps what was typed
    data = result.to_dict()
    assert data["message"] == "Store [secret removed] for the deploy"
    assert key not in str(data)


def test_preview_runs_the_preflight_and_leaves_the_thread_as_it_was() -> None:
    thread = Thread(archive=False)
    preview = thread.preview("Help me finish the budget section of the grant renewal")
    assert preview.prepared and preview.envelope is not None and preview.first_turn
    assert preview.reply == ""
    assert (thread.turns, thread.transcript, thread.prepared_markers, thread.goal) == (
        [],
        [],
        [],
        None,
    )
