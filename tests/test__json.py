"""How a JSON value's type reads in a message."""

from __future__ import annotations

import json

import pytest

from supercontext_lab._json import json_type_name


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("null", "null"),
        ("true", "a boolean"),  # bool is an int in Python; JSON calls it a boolean
        ("false", "a boolean"),
        ("0", "a number"),
        ("-1.5e3", "a number"),
        ('"x"', "a string"),
        ("[]", "an array"),
        ("{}", "an object"),
    ],
)
def test_every_json_type_reads_as_json_names_it(text: str, expected: str) -> None:
    assert json_type_name(json.loads(text)) == expected


def test_a_value_json_cannot_hold_is_named_by_its_python_type() -> None:
    assert json_type_name(b"bytes") == "bytes"
    assert json_type_name((1, 2)) == "tuple"
