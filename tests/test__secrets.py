"""The one masking rule (_secrets.py): configured values and common key shapes."""

from __future__ import annotations

import pytest

from supercontext_lab._secrets import (
    SECRET_MARKER,
    held_back,
    mask_secrets,
    mask_values,
    masked_data,
    secret_values,
)

PEM = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n"
    "-----END OPENSSH PRIVATE KEY-----"
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("key sk-proj-Zx81Lq0P4eT7mN2vB6cR9 here", f"key {SECRET_MARKER} here"),
        ("sk-ant-api03-AbCdEf012345GhIjKl", SECRET_MARKER),
        (
            "Authorization: Bearer abc.DEF-123_456~789+xyz=",
            f"Authorization: Bearer {SECRET_MARKER}",
        ),
        ("bearer 0123456789abcdefXYZ", f"bearer {SECRET_MARKER}"),
        ("id AKIAIOSFODNN7EXAMPLE.", f"id {SECRET_MARKER}."),
        ("ASIAY34FZKBOKMUTVV7A", SECRET_MARKER),
        ("ghp_" + "a1" * 18, SECRET_MARKER),
        ("github_pat_" + "B2" * 20, SECRET_MARKER),
        ("xoxb-1234567890-abcdefghij", SECRET_MARKER),
        ("AIza" + "S" * 35, SECRET_MARKER),
        (f"before\n{PEM}\nafter", f"before\n{SECRET_MARKER}\nafter"),
        # A block cut before its end is removed to the end of the text.
        ("x -----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBg", f"x {SECRET_MARKER}"),
    ],
)
def test_every_common_key_shape_is_masked(text: str, expected: str) -> None:
    assert mask_secrets(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Use sk-learn-compatible-estimators for the fit.",  # no digit: a word, not a key
        "task-0123456789abcdefgh is a ticket",  # "sk-" inside a word
        "The bearer of the news",
        "AKIAIOSFODNN7EXAMPLEX is too long",
        "-----BEGIN PUBLIC KEY-----\nMIIBIjAN\n-----END PUBLIC KEY-----",
        "The budget is 40k.",
    ],
)
def test_ordinary_text_is_kept(text: str) -> None:
    assert mask_secrets(text) == text


def test_values_are_masked_longest_first_and_counted_with_the_shapes() -> None:
    values = secret_values(["plainsecretvalue", "plainsecretvalue-longer", "short", ""])
    assert values == ("plainsecretvalue-longer", "plainsecretvalue")
    text, count = mask_values(
        "plainsecretvalue-longer, plainsecretvalue, AKIAIOSFODNN7EXAMPLE", values
    )
    assert text == f"{SECRET_MARKER}, {SECRET_MARKER}, {SECRET_MARKER}"
    assert count == 3
    assert mask_values(text, values) == (text, 0)  # masking twice changes nothing


def test_masked_data_walks_dicts_lists_and_tuples_and_keeps_the_rest() -> None:
    data = {"a": ["AKIAIOSFODNN7EXAMPLE", 3, None], "b": ("x sk-proj-Zx81Lq0P4eT7mN2vB6cR9",)}
    assert masked_data(data, ()) == {
        "a": [SECRET_MARKER, 3, None],
        "b": (f"x {SECRET_MARKER}",),
    }


@pytest.mark.parametrize(
    ("text", "held"),
    [
        ("plain words ", 0),
        ("Look", 0),
        ("prefix sk-pr", 5),
        ("Authorization: Bearer ", 22 - len("Authorization: ")),
        ("Bearer abc", 10),
        ("x AKI", 3),
        ("x -----BEGIN RSA PRIVATE KEY-----\nMIIE", len("-----BEGIN RSA PRIVATE KEY-----\nMIIE")),
    ],
)
def test_a_stream_holds_back_what_may_still_grow_into_a_key(text: str, held: int) -> None:
    assert held_back(text, ()) == held


def test_a_stream_holds_back_the_start_of_a_configured_value() -> None:
    values = secret_values(["configured-value-1"])
    assert held_back("use configured-va", values) == len("configured-va")
