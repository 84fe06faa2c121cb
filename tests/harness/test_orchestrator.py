"""The orchestrator's part of a turn: the tools offered, the answers to its calls, its rounds."""

from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab.harness.orchestrator import (
    answer_tool_call,
    call_orchestrator,
    orchestrator_specs,
)
from supercontext_lab.harness.turn import Preparation, TurnResult
from supercontext_lab.models.base import ChatModel, Message, ToolCall
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, build_workspace, tool_call_message


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(build_workspace(tmp_path / "ws", {}))


def _result(sent: str = "What is due?", *, prepared: bool = False) -> TurnResult:
    return TurnResult(
        message="What is due?",
        sent_message=sent,
        reply="",
        preparation=Preparation.PREPARED if prepared else Preparation.SKIPPED,
        reason=None,
        first_turn=True,
    )


def _never_prepares(question: str, focus: str | None) -> str:
    raise AssertionError(f"agent_prepare_context was run for {question!r}")


def _call(
    result: TurnResult,
    workspace: Workspace,
    model: ChatModel,
    *,
    goal: str | None = None,
    transcript: tuple[Message, ...] = (),
) -> None:
    call_orchestrator(
        result,
        workspace=workspace,
        model=lambda: model,
        goal=goal,
        transcript=transcript,
        prepare_context=_never_prepares,
        on_text=None,
    )


def test_agent_prepare_context_is_offered_only_on_an_unprepared_turn(
    workspace: Workspace,
) -> None:
    unprepared = {spec.name for spec in orchestrator_specs(workspace, prepared=False)}
    prepared = {spec.name for spec in orchestrator_specs(workspace, prepared=True)}
    assert "agent_prepare_context" in unprepared
    assert prepared == unprepared - {"agent_prepare_context"}


@pytest.mark.parametrize(
    ("arguments", "answer"),
    [
        ("{not json", "error: agent_prepare_context got invalid JSON arguments."),
        ("[1, 2]", "error: agent_prepare_context needs a 'question' string argument."),
        ('{"question": 3}', "error: agent_prepare_context needs a 'question' string argument."),
        ('{"question": "q", "focus": 7}', "prepared: q / None"),
        ('{"question": "q", "focus": "budget"}', "prepared: q / budget"),
    ],
)
def test_agent_prepare_context_calls_are_checked_before_they_run(
    arguments: str, answer: str
) -> None:
    def prepare(question: str, focus: str | None) -> str:
        return f"prepared: {question} / {focus}"

    call = ToolCall(id="call_1", name="agent_prepare_context", arguments=arguments)
    assert answer_tool_call(call, prepare) == answer


def test_any_other_tool_call_is_shown_but_not_run() -> None:
    answer = answer_tool_call(ToolCall(id="c", name="shell"), _never_prepares)
    assert answer.startswith("'shell' was not executed")


def test_the_goal_and_the_history_come_before_the_message_as_sent(workspace: Workspace) -> None:
    model = ScriptedModel(["Friday."])
    history = (Message(role="user", content="hi"), Message(role="assistant", content="hello"))
    result = _result("PREPARED\n---\nWhat is due?")
    _call(result, workspace, model, goal="Ship the report", transcript=history)
    messages = model.calls[0].messages
    assert [m.role for m in messages] == ["system", "user", "assistant", "user"]
    assert (messages[0].content or "").endswith("\n\n## Thread goal\nShip the report")
    assert messages[-1].content == "PREPARED\n---\nWhat is due?"
    assert result.reply == "Friday."
    assert result.orchestrator_model == "scripted"
    assert result.orchestrator_messages[-1] == Message(role="assistant", content="Friday.")


def test_the_rounds_end_with_one_offered_no_tools(workspace: Workspace) -> None:
    calling = tool_call_message(("shell", {"cmd": "ls"}))
    model = ScriptedModel([calling, calling, calling, calling])
    result = _result()
    _call(result, workspace, model)
    assert [call.tools is None for call in model.calls] == [False, False, False, True]
    # The calls of the last reply are neither answered nor counted: the turn ends there.
    assert result.orchestrator_tool_calls == ["shell"] * 3
    assert [m.role for m in result.orchestrator_messages].count("tool") == 3
    assert result.reply == ""


def test_a_model_error_is_the_turns_error_not_an_exception(workspace: Workspace) -> None:
    result = _result()
    _call(result, workspace, ScriptedModel([]))
    assert result.orchestrator_error is not None
    assert result.reply == ""


def test_a_broken_catalogue_is_a_note_and_the_model_is_asked_without_tools(
    workspace: Workspace,
) -> None:
    (workspace.root / "orchestrator_tools.toml").write_text("[[tool]\nname = ", "utf-8")
    model = ScriptedModel(["Here."])
    result = _result()
    _call(result, Workspace(workspace.root), model)
    assert result.orchestrator_tools == []
    assert model.calls[0].tools is None
    assert any("orchestrator_tools.toml" in note for note in result.notes)
    assert result.reply == "Here."


def test_the_model_is_built_after_the_tools_are_listed(workspace: Workspace) -> None:
    seen: list[list[str]] = []
    result = _result()

    def build() -> ChatModel:
        seen.append(list(result.orchestrator_tools))
        return ScriptedModel(["ok"])

    call_orchestrator(
        result,
        workspace=workspace,
        model=build,
        goal=None,
        transcript=(),
        prepare_context=_never_prepares,
        on_text=None,
    )
    assert len(seen) == 1 and "agent_prepare_context" in seen[0]
