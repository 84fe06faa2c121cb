"""The report as files: CSV cells that are never formulas."""

from __future__ import annotations

import pytest

from supercontext_lab.eval.report_export import csv_cell


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
