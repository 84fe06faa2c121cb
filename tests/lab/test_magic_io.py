"""How the magics read their input: shell-like arguments, messages, one-line errors."""

from __future__ import annotations

import pytest
from IPython.core.error import UsageError

from supercontext_lab.errors import WorkspaceError
from supercontext_lab.lab.magic_io import cell_text, line_message, usage_errors


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("What's left?", (False, "What's left?")),
        ('  say "hi" --new ', (False, 'say "hi" --new')),
        ("--new What's left", (True, "What's left")),
        ("--newer plans", (False, "--newer plans")),
    ],
)
def test_the_line_form_keeps_the_message_as_written(line: str, expected: tuple[bool, str]) -> None:
    assert line_message(line) == expected


def test_a_cell_magic_needs_a_body() -> None:
    assert cell_text("  hello \n", "scout") == "hello"
    with pytest.raises(UsageError, match=r"%%scout needs a message in the cell body"):
        cell_text("  \n", "scout")


def test_engine_errors_become_one_line_usage_errors_and_bugs_do_not() -> None:
    @usage_errors
    def refuses() -> None:
        raise WorkspaceError("workspace folder not found:\n/nowhere")

    @usage_errors
    def breaks() -> None:
        raise KeyError("a bug")

    with pytest.raises(UsageError) as info:
        refuses()
    assert "\n" not in str(info.value)
    with pytest.raises(KeyError):
        breaks()
