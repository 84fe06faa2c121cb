"""Where a TOML syntax error is: the line and a caret under the editor's validation line."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supercontext_lab.agents import default_agent_toml
from supercontext_lab.agents.definition import load_agent_definition
from supercontext_lab.errors import AgentDefinitionError
from supercontext_lab.lab.widgets import AgentEditor
from supercontext_lab.lab.widgets.html import escape
from supercontext_lab.lab.widgets.toml_errors import error_excerpt, unclosed_opener

SHIPPED = default_agent_toml()


def _message(text: str) -> str:
    with pytest.raises(AgentDefinitionError) as info:
        load_agent_definition(text)
    return str(info.value)


@pytest.mark.parametrize(
    ("text", "excerpt"),
    [
        (
            SHIPPED.replace("temperature = 0.3", "temperature = = 0.3"),
            "13 | temperature = = 0.3\n                   ^",
        ),
        # A closing bracket deleted with the last tool: tomllib only says "at end of
        # document"; the excerpt points at the bracket left open.
        (
            SHIPPED.replace('  "web_fetch",\n]', '  "web_fetch",\n'),
            "46 | named = [\n             ^ the array opened with [ here is never closed",
        ),
        (
            SHIPPED + '\nnote = """never closed',
            '56 | note = """never closed\n'
            '            ^ the string opened with """ here is never closed',
        ),
        (
            SHIPPED + "\nx = ",
            "56 | x = \n         ^ the document ends here, before the value is complete",
        ),
    ],
)
def test_the_excerpt_shows_the_line_and_a_caret(text: str, excerpt: str) -> None:
    assert error_excerpt(text, _message(text)) == excerpt


def test_a_value_error_has_no_excerpt() -> None:
    text = SHIPPED.replace("temperature = 0.3", "temperature = 3.5")
    assert error_excerpt(text, _message(text)) == ""


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("a = [1, [2, 3]\n", (1, 5, "array")),
        ("a = {b = [1]\n", (1, 5, "inline table")),
        ('a = "]" # [\nb = [\n', (2, 5, "array")),
        ("a = 'x [' \n[t]\n", None),
        ('a = "\\"[" \n', None),
        ("a = '''\n[\n'''\n", None),
    ],
)
def test_unclosed_opener_skips_strings_and_comments(
    text: str, found: tuple[int, int, str] | None
) -> None:
    got = unclosed_opener(text)
    if found is None:
        assert got is None
    else:
        assert got is not None and got[:2] == found[:2] and found[2] in got[2]


@given(st.text(alphabet="[]{}\"'#\n ab=", max_size=40))
def test_unclosed_opener_never_fails_and_points_inside_the_text(text: str) -> None:
    found = unclosed_opener(text)
    if found is not None:
        line, column, _ = found
        lines = text.split("\n")
        assert 1 <= line <= len(lines)
        assert 1 <= column <= len(lines[line - 1])


def test_the_editor_shows_where_the_syntax_error_is(tmp_path: Path) -> None:
    editor = AgentEditor(tmp_path / "agent.toml")
    editor.toml_text.value = SHIPPED.replace('  "web_fetch",\n]', '  "web_fetch",\n')
    assert "Invalid value (at end of document)" in editor.error
    assert escape("46 | named = [") in editor.validation.value
    assert "the array opened with [ here is never closed" in editor.validation.value
