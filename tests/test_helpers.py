"""The private helpers every layer shares: text, keys and fingerprints, HTTP bodies."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from supercontext_lab._hashing import canonical_json, digest_files, fingerprint
from supercontext_lab._http import read_body
from supercontext_lab._text import (
    describe_validation_error,
    escape_undecodable,
    one_line,
    strip_userinfo,
    visible,
)

# --------------------------------------------------------------------------- one_line


@pytest.mark.parametrize(
    ("text", "limit", "expected"),
    [
        ("  a\n\tb   c \r\n", None, "a b c"),
        ("", None, ""),
        (OSError(2, "No such file"), None, "[Errno 2] No such file"),
        ("abcdef", 6, "abcdef"),
        ("abcdefg", 6, "abcde…"),
        ("ab   cd ef", 6, "ab cd…"),
        ("abcd   ef", 6, "abcd…"),
    ],
)
def test_one_line(text: object, limit: int | None, expected: str) -> None:
    assert one_line(text, limit) == expected
    if limit is not None:
        assert len(one_line(text, limit)) <= limit


# --------------------------------------------------------------------------- validation


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid")

    query: str
    limit: int = Field(default=5, ge=1)

    @field_validator("query")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value


def _error(data: dict[str, object]) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        _Args.model_validate(data)
    return info.value


def test_validation_errors_read_as_one_line() -> None:
    error = _error({"limit": 0, "mode": "write"})
    assert describe_validation_error(error) == (
        "query: Field required; limit: Input should be greater than or equal to 1; "
        "mode: Extra inputs are not permitted"
    )
    assert describe_validation_error(error, first_only=True) == "query: Field required"
    worded = describe_validation_error(error, wording={"extra_forbidden": "unexpected argument"})
    assert worded.endswith("mode: unexpected argument")


def test_validator_messages_lose_their_prefix_and_may_show_the_input() -> None:
    error = _error({"query": "", "limit": 0})
    assert describe_validation_error(error, first_only=True) == "query: must not be blank"
    shown = describe_validation_error(error, show_input=True)
    assert "query: must not be blank (got '')" in shown
    assert "(got 0)" in shown


def test_an_error_without_a_field_uses_the_location() -> None:
    with pytest.raises(ValidationError) as info:
        _Args.model_validate([1])
    assert describe_validation_error(info.value, location="agent.toml").startswith("agent.toml: ")


# --------------------------------------------------------------------------- credentials


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("https://user:secret@api.example.com/v1", "https://api.example.com/v1"),
        ("https://user:p@ss@host:8080/v1?x=1", "https://host:8080/v1?x=1"),
        ("http://host/v1?redirect=a@b", "http://host/v1?redirect=a@b"),
        ("http://host/path@x", "http://host/path@x"),
        ("go to http://me:pw@[::1 then http://a@b/", "go to http://[::1 then http://b/"),
        ("no url at all", "no url at all"),
    ],
)
def test_strip_userinfo(text: str, expected: str) -> None:
    assert strip_userinfo(text) == expected


# --------------------------------------------------------------------------- keys


def test_canonical_json_and_fingerprint_ignore_key_order() -> None:
    assert canonical_json({"b": 1, "a": [1, "é"]}) == '{"a":[1,"é"],"b":1}'
    assert fingerprint({"a": 1, "b": 2}) == fingerprint({"b": 2, "a": 1})
    assert fingerprint({"a": 1}) != fingerprint({"a": 2})
    assert len(fingerprint("\udcff")) == 64  # a file name that is not UTF-8


def test_digest_files_sees_names_and_contents(tmp_path: Path) -> None:
    (tmp_path / "a").write_text("12")
    (tmp_path / "b").write_text("3")
    files = [tmp_path / "b", tmp_path / "a"]
    first = digest_files(tmp_path, files)
    assert first == digest_files(tmp_path, reversed(files))
    (tmp_path / "a").write_text("1")
    (tmp_path / "b").write_text("23")
    assert digest_files(tmp_path, files) != first, "moving bytes between files changes it"
    (tmp_path / "c").write_text("x")
    assert digest_files(tmp_path, [tmp_path / "c"]) != digest_files(tmp_path, [tmp_path / "a"])


# --------------------------------------------------------------------------- bodies


class _Drip(httpx.SyncByteStream):
    def __init__(self, chunks: list[bytes], pause: float = 0.0) -> None:
        self.chunks = chunks
        self.pause = pause

    def __iter__(self) -> Iterator[bytes]:
        for chunk in self.chunks:
            time.sleep(self.pause)
            yield chunk


def _response(chunks: list[bytes], pause: float = 0.0) -> httpx.Response:
    return httpx.Response(200, stream=_Drip(chunks, pause))


class _Late(Exception):
    pass


def test_read_body_whole_and_capped() -> None:
    far = time.monotonic() + 60
    assert read_body(_response([b"ab", b"cd"]), deadline=far, on_deadline=_Late) == (
        b"abcd",
        False,
    )
    capped = read_body(
        _response([b"ab", b"cd", b"ef"]), deadline=far, on_deadline=_Late, max_bytes=3
    )
    assert capped == (b"abc", True)
    exact = read_body(_response([b"ab", b"c"]), deadline=far, on_deadline=_Late, max_bytes=3)
    assert exact == (b"abc", False)


def test_read_body_stops_at_the_deadline() -> None:
    started = time.monotonic()
    with pytest.raises(_Late):
        read_body(
            _response([b"x"] * 100, pause=0.02),
            deadline=started + 0.1,
            on_deadline=_Late,
        )
    assert time.monotonic() - started < 1.0


def test_one_line_can_cut_at_a_word() -> None:
    text = "the budget is tight"
    assert one_line(text, 13) == "the budget i…"
    assert one_line(text, 13, at_word=True) == "the budget…"
    # No word ends in the second half: the plain cut stands.
    assert one_line("averyveryverylongword and", 12, at_word=True) == "averyveryve…"


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("caf\udce9.md", "caf\\xe9.md"),
        ("lone \ud800", "lone \\ud800"),
        ("plain caf\u00e9", "plain caf\u00e9"),
        ("two\nlines", "two\nlines"),
    ],
)
def test_escape_undecodable(text: str, shown: str) -> None:
    assert escape_undecodable(text) == shown
    escape_undecodable(text).encode("utf-8")


def test_visible_keeps_a_name_on_one_line_with_nothing_hidden() -> None:
    name = "a\nusable (0 not read, 0 problems)\r\t\x1b[2J\u202e\u200b\u2028caf\udce9"
    shown = visible(name)
    assert shown == (
        "a\\nusable (0 not read, 0 problems)\\r\\t\\x1b[2J\\u202e\\u200b\\u2028caf\\xe9"
    )
    assert len(shown.splitlines()) == 1
    assert visible("Café – 2026") == "Café – 2026"
