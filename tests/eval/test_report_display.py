"""The report's tables: values as text, aligned columns, Markdown cells that hold a pipe."""

from __future__ import annotations

import pytest

from supercontext_lab.eval.report_display import format_value, markdown_table, text_table


@pytest.mark.parametrize(
    ("value", "text"),
    [(None, "\u2013"), (True, "yes"), (3, "3"), (0.5, "0.500"), (2 / 3, "0.667")],
)
def test_format_value(value: float | int | None, text: str) -> None:
    assert format_value(value) == text


def test_a_text_table_aligns_its_columns_under_a_rule() -> None:
    table = text_table([["metric", "a", "long name"], ["mention_rate", "0.500", "1"]])
    assert table.splitlines() == [
        "metric            a  long name",
        "------------  -----  ---------",
        "mention_rate  0.500          1",
    ]


def test_markdown_cells_escape_a_pipe_and_the_best_is_bold() -> None:
    rows = [["metric", "a|b", "c"], ["mention_rate", "0.500", "0.700"]]
    text = markdown_table("Title", rows, lambda name: {"c"}, "footer")
    assert text.splitlines() == [
        "**Title**",
        "",
        "| metric | a\\|b | c |",
        "|---|---|---|",
        "| mention_rate | 0.500 | **0.700** |",
        "",
        "footer",
    ]
