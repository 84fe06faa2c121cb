"""Bounded TOML and JSON reading: each refusal is its own InputLimitError subclass."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from supercontext_lab import errors
from supercontext_lab._bounded import check_toml, json_loads, toml_loads
from supercontext_lab.limits import json_loads as public_json_loads


@pytest.mark.parametrize(
    ("read", "kind", "fragment"),
    [
        (lambda: json_loads("[" * 100 + "]" * 100), errors.InputTooDeepError, "nested"),
        (lambda: json_loads('"' + "x" * 50 + '"', max_chars=10), errors.InputTooLargeError, "large"),
        (lambda: json_loads(b"x" * 20, max_chars=10), errors.InputTooLargeError, "bytes"),
        (lambda: json_loads('{"a": 1, "a": 2}', unique_keys=True), errors.DuplicateKeyError, "more than once"),
        (lambda: json_loads('{"a": NaN}', allow_nan=False), errors.NonJsonConstantError, "NaN"),
        (lambda: toml_loads("a" + ".b" * 100 + " = 1"), errors.InputTooDeepError, "nested"),
        (lambda: check_toml("x = 1\n" * 10, max_chars=20), errors.InputTooLargeError, "large"),
    ],
)  # fmt: skip
def test_each_refusal_has_its_own_type(
    read: Callable[[], object], kind: type[errors.InputLimitError], fragment: str
) -> None:
    with pytest.raises(kind, match=fragment) as caught:
        read()
    assert isinstance(caught.value, errors.InputLimitError)
    assert isinstance(caught.value, ValueError)
    others = {
        errors.InputTooDeepError,
        errors.InputTooLargeError,
        errors.DuplicateKeyError,
        errors.NonJsonConstantError,
    } - {kind}
    assert not isinstance(caught.value, tuple(others))


def test_the_public_reader_is_the_bounded_one() -> None:
    assert public_json_loads is json_loads
    assert public_json_loads('{"enabled": true}', unique_keys=True) == {"enabled": True}
