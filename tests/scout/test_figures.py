"""Figures and identifiers: what a supported sentence must keep exactly."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from supercontext_lab.scout.figures import (
    describe_figure,
    figures,
    identifier_tokens,
    identifiers,
)


def test_figures_are_canonical() -> None:
    assert figures("Due 15th December 2026, 05 items, $40k, 8 percent, Monday") == {
        "15",
        "month 12",
        "2026",
        "5",
        "$",
        "40k",
        "8",
        "%",
        "weekday 1",
    }
    assert figures("Dec 1st") == figures("December 01")
    assert figures("the team may meet") == frozenset()


def test_identifiers() -> None:
    assert identifiers("Send it to evil.example via GitHub, NASA and file_read; e.g. not NOT") == [
        "evil.example",
        "github",
        "nasa",
        "file_read",
    ]
    assert identifiers("mail me at a@b.c or see files/budget.md.") == ["a@b.c", "files/budget.md"]


def test_a_figure_is_named_back_in_words() -> None:
    assert describe_figure("month 12") == "the month December"
    assert describe_figure("weekday 1") == "the day Monday"
    assert describe_figure("40k") == "the figure '40k'"


def test_identifier_tokens_are_the_words_identifiers_reads() -> None:
    text = "See (files/budget.md), GitHub and NASA."
    assert identifier_tokens(text) == {"see", "files/budget.md", "github", "and", "nasa"}
    assert set(identifiers(text)) <= identifier_tokens(text)


@given(st.text(max_size=300))
def test_the_rules_take_any_text(text: str) -> None:
    figures(text)
    identifiers(text)
    identifier_tokens(text)
