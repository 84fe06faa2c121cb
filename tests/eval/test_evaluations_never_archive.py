"""Evaluations never archive (SPEC §15): a case's turn must not become a past
conversation that the cases after it recall."""

from __future__ import annotations

from pathlib import Path

from supercontext_lab.conversations import open_store
from supercontext_lab.eval import EvalCase, evaluate
from supercontext_lab.eval.variants import design_variant


def test_an_end_to_end_evaluation_keeps_no_past_conversation(
    small_cases: list[EvalCase],
) -> None:
    report = evaluate(
        small_cases[:2], [design_variant("scout")], cache=False, progress=False, end_to_end=True
    )
    assert all(result.turn is not None for result in report.results)
    for folder in {result.workspace for result in report.results}:
        assert open_store(Path(folder), create=False) is None, folder


def test_an_evaluation_of_the_pre_flight_keeps_no_past_conversation(
    small_cases: list[EvalCase],
) -> None:
    report = evaluate(small_cases[:2], cache=False, progress=False)
    for folder in {result.workspace for result in report.results}:
        assert open_store(Path(folder), create=False) is None, folder
