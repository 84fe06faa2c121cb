"""A first turn's preparation: what the gate and the pre-flight leave on the turn."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from supercontext_lab.agents.definition import default_agent_definition
from supercontext_lab.bundle import ContextBundle
from supercontext_lab.gate import ColdStartReason
from supercontext_lab.harness.cached import recall_counts
from supercontext_lab.harness.designs import PreflightSettings
from supercontext_lab.harness.first_turn import prepare_turn, record_turn_recalls
from supercontext_lab.harness.turn import PREPARED_CONTEXT_HEADER, Preparation, TurnResult
from supercontext_lab.scout import ScoutRun, TraceStep, run_scout
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, build_workspace, envelope

MESSAGE = "Help me write the quarterly report"


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    files = {"memory/global/code.md": "The quarterly report code is PELICAN-42.\n"}
    return Workspace(build_workspace(tmp_path / "ws", files))


def _result() -> TurnResult:
    return TurnResult(
        message=MESSAGE,
        sent_message=MESSAGE,
        reply="",
        preparation=Preparation.SKIPPED,
        reason=None,
        first_turn=True,
    )


def _scout(
    workspace: Workspace, model: ScriptedModel
) -> Callable[[float | None, Callable[[TraceStep], None] | None], ScoutRun]:
    def scout(timeout_s: float | None, on_step: Callable[[TraceStep], None] | None) -> ScoutRun:
        return run_scout(
            MESSAGE, workspace=workspace, model=model, timeout_s=timeout_s, on_step=on_step
        )

    return scout


def _prepare(
    workspace: Workspace,
    result: TurnResult,
    model: ScriptedModel,
    *,
    reason: ColdStartReason | None = None,
    design: str = "scout",
) -> ContextBundle | None:
    return prepare_turn(
        MESSAGE,
        result,
        reason=reason,
        settings=PreflightSettings().with_overrides(design=design),
        workspace=workspace,
        definition=default_agent_definition(),
        scout=_scout(workspace, model),
        scout_timeout_s=None,
        on_step=None,
    )


def test_a_prepared_turn_carries_the_envelope_before_the_message(workspace: Workspace) -> None:
    env = envelope(proposed_goal="Write the report", summary="Missing: the figures.")
    result = _result()
    bundle = _prepare(workspace, result, ScriptedModel([env]))
    assert bundle is not None and bundle is result.bundle
    assert result.preparation is Preparation.PREPARED
    assert result.prepared_by == "scout"
    assert result.envelope == env
    assert PREPARED_CONTEXT_HEADER in result.sent_message
    assert result.sent_message.endswith("\n---\n" + MESSAGE)
    assert (result.design, result.deadline_ms) == ("scout", None)


@pytest.mark.parametrize(
    "reason", [ColdStartReason.SUPER_CONTEXT_DISABLED, ColdStartReason.CONTEXT_FREE_GREETING]
)
def test_a_gate_reason_means_no_scout(workspace: Workspace, reason: ColdStartReason) -> None:
    scout = ScriptedModel([])
    result = _result()
    assert _prepare(workspace, result, scout, reason=reason) is None
    assert (result.preparation, result.reason) == (Preparation.SKIPPED, reason)
    assert result.sent_message == MESSAGE
    assert scout.calls == []


def test_the_cached_design_is_held_back_by_the_structural_gate_only(
    workspace: Workspace,
) -> None:
    greeted = _result()
    assert _prepare(
        workspace,
        greeted,
        ScriptedModel([]),
        reason=ColdStartReason.CONTEXT_FREE_GREETING,
        design="cached",
    )
    assert greeted.prepared_by == "cached"
    disabled = _result()
    reason = ColdStartReason.SUPER_CONTEXT_DISABLED
    assert _prepare(workspace, disabled, ScriptedModel([]), reason=reason, design="cached") is None
    assert disabled.reason is reason


def test_a_run_without_an_envelope_is_a_cold_start_with_its_detail(workspace: Workspace) -> None:
    result = _result()
    assert _prepare(workspace, result, ScriptedModel(["no envelope at all"])) is None
    assert result.preparation is Preparation.FAILED
    assert result.reason is ColdStartReason.NO_ENVELOPE
    assert "no valid envelope" in (result.reason_detail or "")
    assert result.sent_message == MESSAGE
    assert result.scout is not None


def test_the_cold_design_is_a_skip_not_a_failure(workspace: Workspace) -> None:
    result = _result()
    assert _prepare(workspace, result, ScriptedModel([]), design="cold") is None
    assert (result.preparation, result.reason) == (Preparation.SKIPPED, ColdStartReason.DESIGN_COLD)


def test_the_notes_a_pre_flight_read_are_counted(workspace: Workspace) -> None:
    result = _result()
    _prepare(workspace, result, ScriptedModel([]), design="pack")
    record_turn_recalls(workspace, result)
    assert recall_counts(workspace) == {"global/code": 1}
    record_turn_recalls(workspace, _result())
    assert recall_counts(workspace) == {"global/code": 1}


def test_recall_counts_that_cannot_be_saved_are_logged_not_raised(
    workspace: Workspace, caplog: pytest.LogCaptureFixture
) -> None:
    result = _result()
    _prepare(workspace, result, ScriptedModel([]), design="pack")
    (workspace.root / ".supercontext").mkdir(exist_ok=True)
    (workspace.root / ".supercontext" / "recalls.json").mkdir()
    with caplog.at_level(logging.INFO, logger="supercontext_lab.harness.first_turn"):
        record_turn_recalls(workspace, result)
    assert "Recall counts not saved" in caplog.text
