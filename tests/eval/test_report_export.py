"""The report as files: CSV cells that are never formulas."""

from __future__ import annotations

import pytest

from supercontext_lab.eval.report_export import csv_cell, shown_case_row
from supercontext_lab.eval.scores import CaseScores


@pytest.mark.parametrize(
    ("value", "cell"),
    [
        ("=1+1", "'=1+1"),
        ("+cmd", "'+cmd"),
        ("-2", "'-2"),
        ("@SUM(A1)", "'@SUM(A1)"),
        ("\t=1", "'\t=1"),
        ("  =1", "'  =1"),
        ("\uff1d1", "'\uff1d1"),
        ("caf\udce9", "caf\\xe9"),
        ("plain text", "plain text"),
        (-2, -2),
        (0.5, 0.5),
        (None, None),
    ],
)
def test_csv_cells_are_text_never_formulas(value: object, cell: object) -> None:
    assert csv_cell(value) == cell


def test_a_case_row_as_read_marks_only_a_rate_of_nothing() -> None:
    # Tools set and none recommended (0 of 0), one of two mentions found, skills not set.
    scores = CaseScores(
        valid=True,
        tools_matched=0,
        tools_recommended=0,
        tools_expected=1,
        mentions_found=1,
        mentions_expected=2,
    )
    row = {name: value for name, value in scores.to_dict().items() if not isinstance(value, list)}
    assert row["tool_precision"] == 1.0  # SPEC §11's value, as data
    shown = shown_case_row(row, scores)
    assert shown["tool_precision"] == "\u2013"
    assert (shown["tool_recall"], shown["mention_rate"]) == (0.0, 0.5)
    # A rate the case does not set stays empty: not scored, which is not "not applicable".
    assert shown["skill_precision"] is None and shown["valid"] is True
