"""Settling a run's final reply: extracted, fitted, parsed and put through the check."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from supercontext_lab.agents import default_agent_definition
from supercontext_lab.scout.records import TraceStep
from supercontext_lab.scout.settle import Settled, settle_output
from supercontext_lab.scout.sources import RunSources
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import build_workspace, envelope


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(build_workspace(tmp_path / "ws", {"PROFILE.md": "I write reports.\n"}))


def _settle(workspace: Workspace, output: str) -> tuple[Settled, list[TraceStep]]:
    steps: list[TraceStep] = []
    started = time.perf_counter()
    settled = settle_output(
        output,
        definition=default_agent_definition(),
        workspace=workspace,
        sources=RunSources.for_run(workspace),
        request="Help me write the report",
        iteration=2,
        now_ms=lambda: (time.perf_counter() - started) * 1000.0,
        record=steps.append,
    )
    return settled, steps


def test_a_grounded_envelope_is_kept_as_written(workspace: Workspace) -> None:
    written = envelope(has_enough_context=True, summary="- I write reports. (profile)")
    settled, steps = _settle(workspace, f"Here it is:\n{written}\nDone.")
    assert settled.bundle is not None and settled.envelope == written
    assert settled.unchecked is None and settled.problems == []
    (step,) = steps
    assert (step.kind, step.iteration, step.ok) == ("check", 2, True)


def test_no_envelope_is_a_problem_and_no_check(workspace: Workspace) -> None:
    settled, steps = _settle(workspace, "I could not find anything useful.")
    assert settled.envelope is None and settled.bundle is None
    assert [p.split(":")[0] for p in settled.problems] == ["no valid envelope"]
    assert steps == []


def test_an_unsupported_bullet_is_dropped_and_the_written_bundle_kept(
    workspace: Workspace,
) -> None:
    written = envelope(
        has_enough_context=True,
        summary="- I write reports. (profile)\n- The budget is 9,000 EUR. (memory: global/budget)",
    )
    settled, steps = _settle(workspace, written)
    assert settled.bundle is not None and settled.unchecked is not None
    assert "9,000" not in (settled.envelope or "")
    assert "9,000" in settled.unchecked.envelope
    assert any(p.startswith("grounding:") for p in settled.problems)
    assert steps[0].kind == "check"


def test_an_oversized_envelope_is_fitted_and_says_so(workspace: Workspace) -> None:
    written = envelope(
        has_enough_context=False,
        summary="- I write reports. (profile)\n" + "word " * 20_000,
    )
    settled, _ = _settle(workspace, written)
    fitted, dropped = settled.problems
    assert fitted.startswith("bundle fitted from") and "(max_result_chars = 5000)" in fitted
    # The fitted bullet cites nothing, so the check drops it and keeps the profile's.
    assert (
        dropped.startswith("grounding: dropped bullet 'word word") and "cites no source" in dropped
    )
    assert settled.bundle is not None
    assert [line.text for line in settled.bundle.summary_lines] == ["I write reports. (profile)"]
