"""A resumed thread: its "already prepared" marker is about the turn it was made in.

The harness records a marker when it prepares a turn, so that ``agent_prepare_context``
called by the orchestrator later in the same turn answers "already prepared" instead of
running the scout again. A thread saved and loaded starts counting its turns again; a
marker of the first turn must not make the first *resumed* turn answer "already
prepared", when no bundle exists in it. A saved file naming a turn the thread has not had
is refused.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from supercontext_lab.errors import WorkspaceError
from supercontext_lab.harness import Thread, already_prepared_envelope
from supercontext_lab.testing import ScriptedModel, build_workspace, tool_call_message

from .support import MESSAGE, scripted_orchestrator, write

ALREADY = already_prepared_envelope(has_enough_context=True)
FACT = "The grant renewal budget is capped at 250k EUR"


def _asks_for_context() -> ScriptedModel:
    """An orchestrator that calls agent_prepare_context, then answers."""
    call = tool_call_message(("agent_prepare_context", {"question": "grant renewal budget cap"}))
    return ScriptedModel([call, "Answered."], name="asking-orchestrator")


def _answer(orchestrator: ScriptedModel) -> str:
    return orchestrator.calls[1].messages[-1].content or ""


@pytest.mark.parametrize("save", [False, True])
def test_the_first_resumed_turn_prepares_again(tmp_path: Path, save: bool) -> None:
    """agent_prepare_context on the turn after a save and load: the fact, as without the save"""
    root = build_workspace(tmp_path / "ws")
    first = Thread(root, orchestrator_model=scripted_orchestrator(), super_context_enabled=True)
    assert first.send(MESSAGE).prepared
    if save:
        asking = _asks_for_context()
        thread = Thread.load(first.save(tmp_path / "thread.json"), orchestrator_model=asking)
    else:
        asking = _asks_for_context()
        first._orchestrator_model = asking
        thread = first
    result = thread.send("And what is the cap on it?")
    assert result.orchestrator_tool_calls == ["agent_prepare_context"]
    answer = _answer(asking)
    assert answer != ALREADY
    assert FACT in answer


def test_a_marker_of_the_same_turn_still_answers_already_prepared(tmp_path: Path) -> None:
    """Within one turn, after a preparation: still the synthetic envelope"""
    root = build_workspace(tmp_path / "ws")
    asking = _asks_for_context()
    thread = Thread(root, orchestrator_model=asking, super_context_enabled=True)
    assert thread.send(MESSAGE).prepared
    assert _answer(asking) == ALREADY


@pytest.mark.parametrize(
    "markers",
    [
        [{"turn": 1, "has_enough_context": True}],
        [{"turn": 7, "has_enough_context": True}],
        [{"turn": -1, "has_enough_context": True}],
    ],
)
def test_a_saved_marker_of_a_turn_never_had_is_refused(tmp_path: Path, markers: list) -> None:
    """A saved thread whose marker names a turn it has not had: one WorkspaceError"""
    saved = write(
        tmp_path / "thread.json",
        json.dumps(
            {
                "thread_id": "t",
                "goal": None,
                "workspace": None,
                "prepared_markers": markers,
                "transcript": [
                    {"role": "user", "content": MESSAGE},
                    {"role": "assistant", "content": "Answered."},
                ],
            }
        ),
    )
    with pytest.raises(WorkspaceError, match="prepared_markers"):
        Thread.load(saved)
