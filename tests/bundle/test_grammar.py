"""The envelope's grammar: its keys, line breaks and line helpers."""

from __future__ import annotations

import os
import re
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supercontext_lab.bundle.grammar import (
    LINE_BLANK,
    SPACES,
    dedent_text,
    key_words,
    normalise_line_breaks,
    parse_bool,
    unquote,
)

BREAKS = "\n\r\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def test_spaces_are_what_str_strip_strips() -> None:
    every = (chr(code) for code in range(sys.maxunicode + 1))
    assert {ch for ch in every if ch.isspace()} == set(SPACES)


def test_line_blank_is_whitespace_that_breaks_no_line() -> None:
    pattern = re.compile(LINE_BLANK)
    for ch in SPACES:
        assert bool(pattern.fullmatch(ch)) is (ch not in BREAKS), repr(ch)


@given(st.lists(st.sampled_from([*BREAKS, "\r\n", "a", " ", "b"])).map("".join))
def test_normalised_breaks_split_like_splitlines(text: str) -> None:
    assert normalise_line_breaks(text).split("\n")[: len(text.splitlines())] == text.splitlines()


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("plain", "plain"),
        ("  `'\"x\"'`  ", "x"),
        ("` ' ` ' x ' ` ' `", "x"),
        ("'\"`", ""),
        ("\u3000'x'\u3000", "x"),
        ("a 'b' c", "a 'b' c"),
    ],
)
def test_unquote(value: str, expected: str) -> None:
    assert unquote(value) == expected


@given(st.text(alphabet=st.sampled_from(["`", "'", '"', " ", "\t", "\u3000", "x", "y"])))
def test_unquote_is_the_old_fixed_point(value: str) -> None:
    old = value
    while True:  # the quadratic loop the grammar replaced
        trimmed = old.strip().strip("`'\"")
        if trimmed == old:
            break
        old = trimmed
    assert unquote(value) == old


@pytest.mark.parametrize(
    ("value", "expected"),
    [("true", True), ("`FALSE`", False), (" 'True' ", True), ("yes", None), ("", None)],
)
def test_parse_bool(value: str, expected: bool | None) -> None:
    assert parse_bool(value) is expected


@given(
    st.lists(
        st.text(alphabet=st.sampled_from([" ", "\t", "\u3000", "a", "{", "}"]), max_size=8),
        max_size=8,
    )
)
def test_dedent_text_matches_a_line_by_line_dedent(lines: list[str]) -> None:
    # The reference: the common prefix of the margins of the non-blank lines, compared
    # character by character, cut from those lines; blank lines emptied.
    margins = [line[: len(line) - len(line.lstrip())] for line in lines if line.strip()]
    # Character by character on purpose: margins are whitespace, not paths.
    prefix = os.path.commonprefix(margins) if margins else ""  # noqa: RUF071
    expected = "\n".join(line[len(prefix) :] if line.strip() else "" for line in lines)
    assert dedent_text("\n".join(lines)) == expected


def test_key_words_find_keys_and_markers_in_order() -> None:
    text = "x\nSummary: a\n  - TOOL: t\nwhy:\n[...truncated]\nnot a key : y\nsummaryx: z"
    found = [text[start:end] for start, end in key_words(text)]
    assert found == ["Summary:", "TOOL:", "why:", "[...truncated]"]


def test_key_words_ignore_the_kelvin_sign() -> None:
    assert key_words("s\u212aill: x") == []
