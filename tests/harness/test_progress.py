"""The phases a waiting user is shown, from the steps a run reports."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from supercontext_lab import ModelRoute, set_model_route
from supercontext_lab.agents import (
    AgentDefinition,
    default_agent_toml,
    edit_agent_toml,
    load_agent_definition,
)
from supercontext_lab.harness import Thread
from supercontext_lab.harness.progress import (
    ASKING,
    CHECKING,
    DONE,
    GATHERING,
    ORCHESTRATOR,
    STARTING_MODEL,
    Progress,
    RunProgress,
)
from supercontext_lab.scout import run_scout
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, build_workspace, envelope, tool_call_message

MESSAGE = "Help me plan the husbandry log"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    files = {"memory/global/husbandry.md": "The zebrafish husbandry log is reviewed on Fridays.\n"}
    return Workspace(build_workspace(tmp_path / "ws", files))


class Recorder:
    """A listener keeping every distinct state it was told, in order."""

    def __init__(self) -> None:
        self.seen: list[Progress] = []

    def __call__(self, progress: Progress) -> None:
        if not self.seen or self.seen[-1].describe() != progress.describe():
            self.seen.append(progress)

    @property
    def phases(self) -> list[tuple[str, str]]:
        return [(p.phase, p.detail) for p in self.seen]


def _definition(**fields: object) -> AgentDefinition:
    return load_agent_definition(edit_agent_toml(default_agent_toml(), fields))


def test_a_scout_run_goes_from_the_model_to_its_tools_and_back(workspace: Workspace) -> None:
    model = ScriptedModel(
        [
            tool_call_message(("memory_recall", {"query": "husbandry"}), ("list_workflows", {})),
            envelope(summary="- The log is reviewed on Fridays (memory: global/husbandry)"),
        ],
        name="scripted",
    )
    definition = _definition(prefetch="never")
    recorder = Recorder()
    with RunProgress(recorder, interval_s=60) as progress:
        progress.scout(model, definition)
        run_scout(
            MESSAGE,
            workspace=workspace,
            model=model,
            definition=definition,
            on_step=progress.on_step,
        )
    assert recorder.phases == [
        (ASKING, "scripted (call 1 of up to 8)"),
        (GATHERING, "with memory_recall, list_workflows"),
        (ASKING, "scripted (call 2 of up to 8)"),
        (CHECKING, ""),
        (DONE, ""),
    ]


def test_a_turn_gathers_first_then_asks_then_the_orchestrator(workspace: Workspace) -> None:
    thread = Thread(
        workspace,
        super_context_enabled=True,
        scout_model=ScriptedModel(
            [envelope(summary="- Reviewed on Fridays (memory: global/husbandry)")],
            name="small",
        ),
        definition=_definition(prefetch="always"),
    )
    recorder = Recorder()
    with RunProgress(recorder, interval_s=60) as progress:
        progress.turn_of(thread, MESSAGE)
        thread.send(MESSAGE, on_step=progress.on_step)
    phases = [phase for phase, _ in recorder.phases]
    assert phases == [GATHERING, ASKING, CHECKING, ORCHESTRATOR]
    assert recorder.phases[1] == (ASKING, "small (call 1 of up to 8)")
    assert recorder.phases[-1] == (ORCHESTRATOR, "offline:orchestrator")


@pytest.mark.parametrize(("enabled", "message"), [(False, MESSAGE), (True, "thanks")])
def test_a_turn_the_gate_skips_goes_straight_to_the_orchestrator(
    workspace: Workspace, enabled: bool, message: str
) -> None:
    thread = Thread(workspace, super_context_enabled=enabled)
    recorder = Recorder()
    with RunProgress(recorder, interval_s=60) as progress:
        progress.turn_of(thread, message)
        thread.send(message, on_step=progress.on_step)
    assert recorder.phases == [(ORCHESTRATOR, "offline:orchestrator")]


def test_a_failed_model_call_ends_the_scout_and_the_turn_goes_on(workspace: Workspace) -> None:
    thread = Thread(
        workspace,
        super_context_enabled=True,
        scout_model=ScriptedModel([], name="empty"),  # raises: the script is used up
        definition=_definition(prefetch="never"),
    )
    recorder = Recorder()
    with RunProgress(recorder, interval_s=60) as progress:
        progress.turn_of(thread, MESSAGE)
        turn = thread.send(MESSAGE, on_step=progress.on_step)
    assert turn.preparation == "failed"
    assert recorder.phases[-1] == (
        ORCHESTRATOR,
        "offline:orchestrator (the scout's model failed; the turn goes on cold)",
    )


def test_a_missed_deadline_ends_the_scout_and_the_turn_goes_on(workspace: Workspace) -> None:
    thread = Thread(
        workspace,
        super_context_enabled=True,
        scout_model=ScriptedModel([], name="stuck", delay_s=5.0),
        definition=_definition(prefetch="never"),
        deadline_ms=100,
    )
    recorder = Recorder()
    with RunProgress(recorder, interval_s=60) as progress:
        progress.turn_of(thread, MESSAGE)
        turn = thread.send(MESSAGE, on_step=progress.on_step)
    assert turn.deadline_missed  # prepared by the pack, or cold when it was not ready
    assert recorder.phases[-1] == (
        ORCHESTRATOR,
        "offline:orchestrator (the scout missed its deadline)",
    )


@pytest.mark.parametrize(
    ("policy", "after_the_tools"),
    [
        ("extended", [(ASKING, "m (a last call, for the envelope)"), (CHECKING, ""), (DONE, "")]),
        ("strict", [(DONE, "")]),
    ],
)
def test_the_grace_call_and_the_strict_cap_are_named(
    workspace: Workspace, policy: str, after_the_tools: list[tuple[str, str]]
) -> None:
    ask = tool_call_message(("memory_recall", {"query": "log"}))
    model = ScriptedModel([ask, envelope(summary="- x (memory)")], name="m")
    definition = _definition(prefetch="never", max_iterations=1, iteration_policy=policy)
    recorder = Recorder()
    with RunProgress(recorder, interval_s=60) as progress:
        progress.scout(model, definition)
        run_scout(
            MESSAGE,
            workspace=workspace,
            model=model,
            definition=definition,
            on_step=progress.on_step,
        )
        assert recorder.phases == [
            (ASKING, "m (call 1 of up to 1)"),
            (GATHERING, "with memory_recall"),
            *after_the_tools,
        ]


def test_a_local_route_says_the_server_is_starting_before_the_thread_builds_it(
    workspace: Workspace,
) -> None:
    set_model_route("burst", ModelRoute(kind="local", model="/nowhere/model.gguf"))
    thread = Thread(workspace, super_context_enabled=True)
    recorder = Recorder()
    progress = RunProgress(recorder, interval_s=60)
    progress.scout_of(thread)
    assert recorder.phases == [
        (
            STARTING_MODEL,
            "local:/nowhere/model.gguf (a llama.cpp server on this machine, started on first use)",
        )
    ]
    assert thread._scout_model is None  # the run builds it, and reports its failure


def test_the_ticker_repeats_the_state_with_the_time_so_far() -> None:
    times = iter([0.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])
    told: list[Progress] = []
    ticked = threading.Event()

    def listener(progress: Progress) -> None:
        told.append(progress)
        if len(told) >= 3:
            ticked.set()

    with RunProgress(listener, interval_s=0.01, clock=lambda: next(times, 9.0)) as progress:
        progress.set(ASKING, "m (call 1 of up to 8)")
        assert ticked.wait(5)
    count = len(told)
    assert all(p.describe() == "asking the model m (call 1 of up to 8)" for p in told)
    assert [p.elapsed_s for p in told[:2]] == sorted(p.elapsed_s for p in told[:2])
    assert told[1].line().endswith(" s") and " · " in told[1].line()
    threading.Event().wait(0.05)
    assert len(told) == count  # stopped when the block ended
