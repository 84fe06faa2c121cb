"""docs/reliability.md shows the table of cases the suite really tries."""

from __future__ import annotations

from .count_cases import DOC, END, START, build_table


def test_the_documented_table_is_current() -> None:
    """The table in docs/reliability.md matches the tests (refresh it with --write)."""
    text = DOC.read_text(encoding="utf-8")
    shown = text.partition(START)[2].partition(END)[0].strip()
    assert shown == build_table().strip(), (
        "docs/reliability.md is stale: run python tests/reliability/count_cases.py --write"
    )
