"""Abbreviations: the table's words and what their full stop means."""

from __future__ import annotations

import pytest

from supercontext_lab.reading.abbreviations import LONGEST, Kind, abbreviation_kind


@pytest.mark.parametrize(
    ("stem", "kind"),
    [
        ("Dr", Kind.TITLE),
        ("e.g", Kind.INLINE),
        ("E.g", Kind.INLINE),
        ("Fig", Kind.NUMBER),
        ("p", Kind.NUMBER),
        ("a.m", Kind.TIME),
        ("U.S", Kind.INITIALISM),
        ("J.R.R", Kind.INITIALISM),
        ("etc", Kind.ENDING),
        ("Sun", Kind.NUMBER),
        ("sun", None),
        ("P", None),
        ("report", None),
    ],
)
def test_the_kind_of_a_word(stem: str, kind: Kind | None) -> None:
    assert abbreviation_kind(stem) is kind


def test_a_word_longer_than_any_abbreviation_is_none() -> None:
    assert abbreviation_kind("a." * LONGEST) is None
