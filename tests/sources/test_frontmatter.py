"""Table tests of the front-matter reader shared by memory documents and skills."""

from __future__ import annotations

import pytest

from supercontext_lab.sources.frontmatter import FrontMatter, parse_front_matter, parse_list


@pytest.mark.parametrize(
    ("text", "fields", "body"),
    [
        ("---\nkey: a\n---\nbody\n", {"key": "a"}, "body\n"),
        ("---\nKey: a\nCATEGORY: fact\n---\n", {"key": "a", "category": "fact"}, ""),
        ("---\r\nkey: a\r\n---\r\nbody\r\n", {"key": "a"}, "body\r\n"),
        ("\ufeff---\nkey: a\n---\nbody", {"key": "a"}, "body"),
        ("---   \nkey: a\n...\nbody", {"key": "a"}, "body"),
        ("---\n---\nbody", {}, "body"),
        ("---\nname: x\n---\n---\nstill body\n", {"name": "x"}, "---\nstill body\n"),
        ('---\nd: "quoted: value"\n---\n', {"d": "quoted: value"}, ""),
        ("---\nd: 'it''s'\n---\n", {"d": "it's"}, ""),
        ('---\nd: "say \\"hi\\"\\n"\n---\n', {"d": 'say "hi"\n'}, ""),
        ("---\nd: value # a comment\n---\n", {"d": "value"}, ""),
        ('---\nd: "x # y" # comment\n---\n', {"d": "x # y"}, ""),
        ("---\nurl: https://example.org/a#frag\n---\n", {"url": "https://example.org/a#frag"}, ""),
        ("---\n# comment line\nk: v\n\n---\n", {"k": "v"}, ""),
        ("---\nk: first\n  second\n  third\n---\n", {"k": "first second third"}, ""),
        ("---\nk: v\nk: w\n---\n", {"k": "w"}, ""),
        ("---\nk:\n---\n", {"k": ""}, ""),
        ("---\nk:v\n---\n", {}, ""),
        ("---\nnot a field\nk: v\n---\n", {"k": "v"}, ""),
        ("---\nsnake_case-key.x: 1\n---\n", {"snake_case-key.x": "1"}, ""),
        ("---\ntags:\n  - a\n  - 'b, c'\n---\n", {"tags": '["a", "b, c"]'}, ""),
        ("---\ntags:\n- a\n- b\n---\n", {"tags": '["a", "b"]'}, ""),
    ],
)
def test_front_matter_fields_and_body(text: str, fields: dict[str, str], body: str) -> None:
    parsed = parse_front_matter(text)
    assert parsed.present
    assert dict(parsed.fields) == fields
    assert parsed.body == body


@pytest.mark.parametrize(
    "text",
    [
        "",
        "plain body",
        "key: value\n",
        "---",
        "---\nkey: a\nno closing line\n",
        " ---\nkey: a\n---\n",
        "----\nkey: a\n----\n",
        "text\n---\nkey: a\n---\n",
    ],
)
def test_text_without_a_complete_block_is_all_body(text: str) -> None:
    parsed = parse_front_matter(text)
    assert parsed == FrontMatter(body=text.removeprefix("\ufeff"))
    assert not parsed.present
    assert dict(parsed.fields) == {}


@pytest.mark.parametrize(
    ("value", "items"),
    [
        ("[a, b]", ["a", "b"]),
        ("a, b", ["a", "b"]),
        ("a", ["a"]),
        ("[]", []),
        ("", []),
        ("[a, , b,]", ["a", "b"]),
        ('["a, b", c]', ["a, b", "c"]),
        ("['x', \"y\"]", ["x", "y"]),
        ('["say \\"hi\\"", z]', ['say "hi"', "z"]),
        ("[ spaced item , other ]", ["spaced item", "other"]),
        ('["unterminated, x]', ['"unterminated, x']),
        ("it's, fine", ["it's", "fine"]),
    ],
)
def test_parse_list(value: str, items: list[str]) -> None:
    assert parse_list(value) == items


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ("---\ntags: [a, b]\n---\n", "tags", ["a", "b"]),
        ("---\ntags: a, b\n---\n", "TAGS", ["a", "b"]),
        ("---\ntags:\n  - a\n  - b, c\n---\n", "tags", ["a", "b, c"]),
        ("---\nname: x\n---\n", "tags", []),
        ("no front matter", "tags", []),
    ],
)
def test_get_list(text: str, key: str, expected: list[str]) -> None:
    assert parse_front_matter(text).get_list(key) == expected


def test_get_is_case_insensitive_with_default() -> None:
    parsed = parse_front_matter("---\nName: Weekly\n---\n")
    assert parsed.get("NAME") == "Weekly"
    assert parsed.get("missing") is None
    assert parsed.get("missing", "fallback") == "fallback"


def test_fields_are_read_only() -> None:
    parsed = parse_front_matter("---\nk: v\n---\n")
    with pytest.raises(TypeError):
        parsed.fields["k"] = "w"  # type: ignore[index]


@pytest.mark.parametrize("value", [None, b"---\n", 3, ["---"]])
def test_non_string_input_is_a_type_error(value: object) -> None:
    with pytest.raises(TypeError, match="must be a str"):
        parse_front_matter(value)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a str"):
        parse_list(value)  # type: ignore[arg-type]
