"""The scout's run loop, driven by the scripted model on a small hand-built workspace."""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

import pytest

from supercontext_lab.agents import (
    AgentDefinition,
    default_agent_toml,
    edit_agent_toml,
    load_agent_definition,
    set_tool_enabled,
)
from supercontext_lab.errors import ModelError
from supercontext_lab.models.base import Message, ModelInfo, ModelReply, ToolSpec
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.models.window import ContextBudget, conversation_bytes
from supercontext_lab.scout import (
    GRACE_INSTRUCTION,
    ScoutStatus,
    StopCause,
    run_scout,
    trace_summary,
)
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import (
    OpenAITestServer,
    ScriptedModel,
    ScriptedResponse,
    build_workspace,
    envelope,
    tool_call_message,
)

# Every run reads PROFILE.md (it is in the system prompt), so the claim and the goal are
# grounded.
GOOD = envelope(
    has_enough_context=True, proposed_goal="Write reports", summary="- I write reports (profile)"
)


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    files = {
        "memory/global/canary.md": "---\ncategory: fact\n---\nThe canary word is PELICAN-42.\n",
        "PROFILE.md": "I write reports.\n",
    }
    return Workspace(build_workspace(tmp_path / "ws", files))


def _definition(**changes: object) -> AgentDefinition:
    return load_agent_definition(edit_agent_toml(default_agent_toml(), changes))


def test_tool_calls_then_envelope(workspace: Workspace) -> None:
    model = ScriptedModel(
        [tool_call_message(("memory_recall", {"query": "canary word", "namespace": "*"})), GOOD]
    )
    run = run_scout("What is the canary word?", workspace=workspace, model=model)
    assert run.ok
    assert run.status == "completed"
    assert run.bundle is not None
    assert run.bundle.proposed_goal == "Write reports"
    assert run.model_calls == 2
    tool_steps = [s for s in run.trace if s.kind == "tool"]
    assert [s.tool for s in tool_steps] == ["memory_recall"]
    assert "PELICAN-42" in tool_steps[0].result_preview
    # The second call saw the tool result as a tool message answering the call id.
    second = model.calls[1].messages
    assert second[-1].role == "tool"
    assert second[-1].tool_call_id == "call_1"
    assert "PELICAN-42" in (second[-1].content or "")
    assert model.calls[0].temperature == 0.3
    offered = {spec.name for spec in model.calls[0].tools or ()}
    assert "memory_recall" in offered
    assert "memory_tree" not in offered


def test_prose_around_the_envelope_is_dropped(workspace: Workspace) -> None:
    run = run_scout(
        "hi there friend",
        workspace=workspace,
        model=ScriptedModel([f"Sure! Here it is:\n{GOOD}\nHope that helps."]),
    )
    assert run.envelope == GOOD


@pytest.mark.parametrize(
    ("output", "needle"),
    [
        ("I could not find anything.", "no [context_bundle] opening tag"),
        (GOOD + "\n" + GOOD, "2 opening tags"),
        ("[context_bundle]\nhas_enough_context: true", "unterminated"),
        ("[context_bundle]\n  \n[/context_bundle]", "empty"),
    ],
)
def test_invalid_output_gives_no_envelope_and_a_problem(
    workspace: Workspace, output: str, needle: str
) -> None:
    run = run_scout("plan the report", workspace=workspace, model=ScriptedModel([output]))
    assert not run.ok
    assert run.envelope is None
    assert any(needle in p for p in run.problems), run.problems


@pytest.mark.parametrize(
    "name", ["memory_tree", "shell", "file_write", "agent_prepare_context", "teleport"]
)
def test_forbidden_tools_are_refused_and_answered(workspace: Workspace, name: str) -> None:
    model = ScriptedModel([tool_call_message((name, {"x": 1})), GOOD])
    run = run_scout("plan the report", workspace=workspace, model=model)
    assert run.ok
    (step,) = [s for s in run.trace if s.kind == "tool"]
    assert step.refused
    assert not step.ok
    answer = model.calls[1].messages[-1]
    assert answer.role == "tool"
    assert name in (answer.content or "")
    assert "not allowed" in (answer.content or "")
    assert f"refused tool call: {name}" in run.problems
    assert not (workspace.root / "files").exists()


def test_a_tool_removed_from_the_allowlist_is_refused(workspace: Workspace) -> None:
    definition = load_agent_definition(
        set_tool_enabled(default_agent_toml(), "memory_recall", False)
    )
    model = ScriptedModel([tool_call_message(("memory_recall", {"query": "canary"})), GOOD])
    run = run_scout("x y z", workspace=workspace, model=model, definition=definition)
    assert run.trace[1].refused
    assert "memory_recall" not in {spec.name for spec in model.calls[0].tools or ()}


@pytest.mark.parametrize(
    ("arguments", "needle"),
    [
        ("{not json", "invalid"),
        ('{"query": 5}', "invalid"),
        ('{"query": "a", "x": 1}', "invalid"),
        ("[1, 2]", "invalid"),
    ],
)
def test_bad_arguments_are_a_tool_error(workspace: Workspace, arguments: str, needle: str) -> None:
    from supercontext_lab.models.base import ToolCall

    bad = Message(role="assistant", tool_calls=(ToolCall("c1", "memory_recall", arguments),))
    model = ScriptedModel([bad, GOOD])
    run = run_scout("x y z", workspace=workspace, model=model)
    step = run.trace[1]
    assert not step.ok
    assert not step.refused
    content = model.calls[1].messages[-1].content or ""
    assert "memory_recall" in content
    assert needle in content.lower()
    assert run.ok


def test_iteration_cap_with_extended_policy_gets_a_grace_call(workspace: Workspace) -> None:
    loop = tool_call_message(("list_workflows", {}))
    definition = _definition(max_iterations=3)
    model = ScriptedModel([loop, loop, loop, GOOD])
    run = run_scout("x y z", workspace=workspace, model=model, definition=definition)
    assert run.ok
    assert run.model_calls == 4
    grace = model.calls[3]
    assert grace.tools is None
    assert grace.messages[-1].content == GRACE_INSTRUCTION
    assert [step for step in run.trace if step.kind == "model"][-1].grace


def test_iteration_cap_with_strict_policy_is_incomplete(workspace: Workspace) -> None:
    loop = tool_call_message(("list_workflows", {}))
    definition = _definition(max_iterations=2, iteration_policy="strict")
    run = run_scout(
        "x y z", workspace=workspace, model=ScriptedModel([loop, loop, GOOD]), definition=definition
    )
    assert run.status == "incomplete"
    assert not run.ok
    assert run.model_calls == 2
    assert "iteration cap" in (run.reason or "")
    assert run.stopped is StopCause.ITERATION_CAP


def test_model_error_is_a_failed_run(workspace: Workspace) -> None:
    def boom(messages: Sequence[Message], tools: Sequence[ToolSpec] | None) -> ModelReply:
        raise ModelError("the server at http://127.0.0.1:9/v1 answered 500")

    run = run_scout("x y z", workspace=workspace, model=ScriptedModel([boom]))
    assert run.status == "failed"
    assert run.status is ScoutStatus.FAILED and run.stopped is StopCause.MODEL_ERROR
    assert "500" in (run.reason or "")
    assert not run.ok


def test_a_failed_call_records_how_many_attempts_it_made(workspace: Workspace) -> None:
    failing = [ScriptedResponse.error(503)] * 4
    with OpenAITestServer(failing) as server:
        model = OpenAICompatibleModel(base_url=server.base_url, model="m", sleep=lambda _: None)
        run = run_scout("x y z", workspace=workspace, model=model)
        assert len(server.requests) == 4
    step = run.trace[-1]
    assert (step.kind, step.ok, step.attempts) == ("model", False, 4)
    assert step.to_dict()["attempts"] == 4
    assert "gave up after 4 attempts" in (run.reason or "")
    good = run_scout("x y z", workspace=workspace, model=ScriptedModel([GOOD]))
    assert good.trace[0].to_dict()["attempts"] == 1


def test_wall_clock_timeout_bounds_the_run(workspace: Workspace) -> None:
    model = ScriptedModel([tool_call_message(("list_workflows", {}))] * 20, delay_s=0.2)
    started = time.perf_counter()
    run = run_scout("x y z", workspace=workspace, model=model, timeout_s=0.5)
    assert time.perf_counter() - started < 2.0
    assert run.status == "incomplete"
    assert run.stopped is StopCause.TIMEOUT
    assert "timeout" in (run.reason or "")


def test_a_run_out_of_time_does_not_survey_the_workspace(tmp_path: Path) -> None:
    files = {"memory/global/a.md": "A note.\n", "memory/todo.txt": "Not a note.\n"}
    workspace = Workspace(build_workspace(tmp_path / "ws", files))
    late = run_scout(
        "x y z", workspace=workspace, model=ScriptedModel([], delay_s=5.0), timeout_s=0.05
    )
    assert late.stopped is StopCause.TIMEOUT and not workspace.surveyed
    assert late.problems[-1].startswith("workspace: not surveyed for refused files")
    done = run_scout("x y z", workspace=workspace, model=ScriptedModel([GOOD]))
    assert workspace.surveyed and not any("not surveyed" in line for line in done.problems)
    assert any(line.startswith("workspace: memory/todo.txt is not read") for line in done.problems)


def test_status_values_serialise_as_plain_strings(workspace: Workspace) -> None:
    run = run_scout("x y z", workspace=workspace, model=ScriptedModel([GOOD]))
    assert run.status is ScoutStatus.COMPLETED and run.stopped is None
    assert json.loads(json.dumps(run.to_dict()))["status"] == "completed"
    assert f"{run.status}" == str(run.status) == "completed"


def test_oversized_envelope_is_fitted(workspace: Workspace) -> None:
    huge = envelope(
        has_enough_context=False,
        proposed_goal="Write big reports",
        summary="- I write reports (profile)\n" + "word " * 20000,
    )
    run = run_scout("x y z", workspace=workspace, model=ScriptedModel([huge]))
    assert run.ok
    assert run.envelope is not None
    assert len(run.envelope) <= 5000
    assert run.bundle is not None
    assert run.bundle.has_enough_context is False
    assert run.bundle.proposed_goal == "Write big reports"
    assert any("fitted" in p for p in run.problems)


def test_tool_calls_of_one_reply_run_concurrently(workspace: Workspace) -> None:
    calls = tool_call_message(
        ("memory_recall", {"query": "canary"}),
        ("list_workflows", {}),
        ("memory_flavour", {"flavour": "comms"}),
    )
    run = run_scout("x y z", workspace=workspace, model=ScriptedModel([calls, GOOD]))
    tools = [s for s in run.trace if s.kind == "tool"]
    assert [s.tool for s in tools] == ["memory_recall", "list_workflows", "memory_flavour"]
    summary = trace_summary(run.trace)
    assert summary["model_calls"] == 2
    assert summary["tool_calls"] == 3
    assert summary["refused"] == 0


def test_system_prompt_and_task(workspace: Workspace) -> None:
    model = ScriptedModel([GOOD])
    run = run_scout("Write the report", workspace=workspace, model=model, focus="deadline")
    system, task = model.calls[0].messages[:2]
    assert system.content == run.system_prompt
    assert "I write reports." in run.system_prompt
    assert "Result Contract" not in run.system_prompt
    assert task.content is not None
    assert task.content.startswith("[Request]\nWrite the report\n\n[Focus]\ndeadline")
    assert "agent_prepare_context" not in task.content.split("[Orchestrator tools]")[1]
    data = run.to_dict()
    assert set(data) >= {"envelope", "bundle", "problems", "trace", "elapsed_ms"}


# -- prefetch and the grounding check ---------------------------------------------------

CANARY = "The canary word is PELICAN-42."


def test_prefetch_runs_the_first_round_before_the_first_model_call(workspace: Workspace) -> None:
    cited = envelope(summary=f"- {CANARY} (memory: global/canary)")
    model = ScriptedModel([cited])
    run = run_scout(
        "What is the canary word?",
        workspace=workspace,
        model=model,
        definition=_definition(prefetch="always"),
    )
    first = model.calls[0]
    gathered = [m for m in first.messages if m.role == "tool"]
    assert any("PELICAN-42" in (m.content or "") for m in gathered)
    tools = [step for step in run.trace if step.kind == "tool"]
    assert tools and all(step.prefetched and step.iteration == 0 for step in tools)
    assert {step.tool for step in tools} >= {"memory_recall", "list_workflows"}
    assert run.model_calls == 1 and run.ok
    assert trace_summary(run.trace)["prefetched"] == len(tools)
    assert first.choices is not None
    assert "memory: global/canary" in first.choices.attributions
    assert [fact.text for fact in first.choices.facts] == [CANARY]
    assert run.grounding is not None and run.grounding.badge == "grounded 1 of 1"


def test_prefetch_never_and_auto_on_a_hosted_model_leave_the_reads_to_the_model(
    workspace: Workspace,
) -> None:
    for definition in (_definition(prefetch="never"), None):
        model = ScriptedModel([GOOD])
        run_scout(
            "What is the canary word?", workspace=workspace, model=model, definition=definition
        )
        assert not [m for m in model.calls[0].messages if m.role == "tool"]


def test_a_greeting_prefetches_nothing(workspace: Workspace) -> None:
    model = ScriptedModel([GOOD])
    run = run_scout(
        "hi", workspace=workspace, model=model, definition=_definition(prefetch="always")
    )
    assert not [step for step in run.trace if step.kind == "tool"]


def test_the_check_drops_an_invented_tool_and_an_unsupported_bullet(workspace: Workspace) -> None:
    reply = envelope(
        summary=f"- {CANARY} (memory: global/canary)\n- Everything is fine (memory)",
        recommended_tool_calls=[{"tool": "seedscape-pipeline", "args": "{}", "why": "made up"}],
    )
    model = ScriptedModel(
        [tool_call_message(("memory_recall", {"query": "canary word", "namespace": "*"})), reply]
    )
    run = run_scout("What is the canary word?", workspace=workspace, model=model)
    assert run.ok and run.bundle is not None and run.unchecked is not None
    assert [b.text for b in run.bundle.bullets] == [f"{CANARY} (memory: global/canary)"]
    assert run.bundle.recommended_tool_calls == []
    assert len(run.unchecked.bullets) == 2
    assert any("dropped tool 'seedscape-pipeline'" in p for p in run.problems)
    assert any("dropped bullet 'Everything is fine (memory)'" in p for p in run.problems)
    check = [step for step in run.trace if step.kind == "check"]
    assert len(check) == 1 and check[0].ok
    assert check[0].result_preview.startswith("grounded 1 of 2")
    assert run.to_dict()["grounding"]["grounded"] == 1


def test_a_bundle_the_check_empties_yields_no_envelope(workspace: Workspace) -> None:
    model = ScriptedModel([envelope(summary="- Generic advice about reports (memory)")])
    run = run_scout("What is the canary word?", workspace=workspace, model=model)
    assert not run.ok and run.ungrounded
    assert run.envelope is None and run.bundle is None
    assert run.status is ScoutStatus.COMPLETED


def test_grounding_mark_keeps_what_it_flags(workspace: Workspace) -> None:
    reply = envelope(summary="- Generic advice about reports (memory)")
    run = run_scout(
        "What is the canary word?",
        workspace=workspace,
        model=ScriptedModel([reply]),
        definition=_definition(grounding="mark"),
    )
    assert run.ok and run.envelope == reply
    assert any(p.startswith("grounding: flagged bullet") for p in run.problems)


def test_a_megabyte_recall_is_cut_to_the_window_the_model_declares(tmp_path: Path) -> None:
    answer = "The canary word is PELICAN-42."
    minutes = "\n\n".join(
        [*(f"Meeting {i}: the lab talked about freezers and pipettes." for i in range(9000))]
    )
    minutes = minutes[: len(minutes) // 2] + f"\n\n{answer}\n\n" + minutes[len(minutes) // 2 :]
    workspace = Workspace(build_workspace(tmp_path / "ws", {"memory/global/minutes.md": minutes}))
    model = ScriptedModel(
        [tool_call_message(("memory_recall", {"query": "canary word"})), GOOD],
        info=ModelInfo(context_tokens=4096),
    )
    run = run_scout("What is the canary word?", workspace=workspace, model=model)
    sent = model.calls[1].messages
    assert conversation_bytes(sent) <= ContextBudget.of(model.info).prompt_bytes
    assert answer in (sent[-1].content or "")
    assert "content_cut" in (sent[-1].content or "")
    # The run keeps what the tool returned whole, for its trace and its sources.
    step = next(step for step in run.trace if step.kind == "tool")
    assert len(step.result) > len(minutes) // 2
