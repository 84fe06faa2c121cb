"""The panel, the trace and the display objects say which pre-flight design prepared a
turn, and show a missed deadline with its figure."""

from __future__ import annotations

from pathlib import Path

from supercontext_lab import Thread
from supercontext_lab.lab.display import TurnDisplay, turn_provenance
from supercontext_lab.lab.widgets import BundlePanel
from supercontext_lab.lab.widgets.trace import render_trace_html
from supercontext_lab.scout import TraceStep
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, build_workspace

MESSAGE = "What did we decide about the dispersal kernel?"


def _workspace(tmp_path: Path) -> Workspace:
    files = {"memory/global/kernel.md": "Decision: the 2Dt kernel is the primary kernel.\n"}
    return Workspace(build_workspace(tmp_path / "ws", files))


def test_a_pack_turn_says_the_pack_prepared_it(tmp_path: Path) -> None:
    orchestrator = ScriptedModel(["ok"])
    thread = Thread(
        _workspace(tmp_path),
        design="pack",
        orchestrator_model=orchestrator,
        super_context_enabled=True,
    )
    turn = thread.send(MESSAGE)
    display = TurnDisplay(turn, workspace=thread.workspace, provenance={})
    assert "  design: pack\n  prepared by: pack" in display.text()
    assert "**Pre-flight:** design\\: pack\\; prepared by\\: pack" in display.markdown()
    panel = BundlePanel(turn=turn, workspace=thread.workspace)
    assert "prepared by pack" in panel.outcome_html.value
    provenance = turn_provenance(turn, orchestrator_model=orchestrator)
    assert (provenance["design"], provenance["prepared_by"]) == ("pack", "pack")


def test_the_default_scout_turn_text_is_unchanged(tmp_path: Path) -> None:
    thread = Thread(
        _workspace(tmp_path), orchestrator_model=ScriptedModel(["ok"]), super_context_enabled=True
    )
    turn = thread.send(MESSAGE)
    text = TurnDisplay(turn, workspace=thread.workspace, provenance={}).text()
    assert "design:" not in text
    assert "prepared by scout" in BundlePanel(turn=turn).outcome_html.value


def test_a_deadline_step_is_shown_in_the_trace() -> None:
    step = TraceStep(
        kind="deadline",
        iteration=0,
        started_ms=300.0,
        duration_ms=0.0,
        ok=False,
        result_preview="deadline_missed: the scout was not done by its 300 ms deadline",
    )
    html = render_trace_html([step])
    assert "<b>deadline</b>" in html and "300 ms deadline" in html
    assert step.to_dict()["result_preview"].endswith("300 ms deadline")


def test_the_panel_shows_a_missed_deadline_with_the_time_it_took(tmp_path: Path) -> None:
    thread = Thread(
        _workspace(tmp_path),
        scout_model=ScriptedModel([], delay_s=5.0),
        orchestrator_model=ScriptedModel(["ok"]),
        super_context_enabled=True,
        deadline_ms=100,
    )
    turn = thread.send(MESSAGE)
    assert turn.deadline_missed and turn.preflight_ms is not None
    html = BundlePanel(turn=turn, workspace=thread.workspace).outcome_html.value
    assert f"pre-flight missed its 100 ms deadline ({turn.preflight_ms:.0f} ms)" in html
    assert ("pack cut short at the deadline" in html) is turn.fallback_cut
