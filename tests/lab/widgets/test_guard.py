"""The one rule every widget callback runs under: engine errors as a status line, bugs shown."""

from __future__ import annotations

import ipywidgets as widgets
import pytest

from supercontext_lab.errors import ConfigError
from supercontext_lab.lab.widgets.guard import guarded


def test_an_engine_error_becomes_one_escaped_status_line() -> None:
    output, status = widgets.Output(), widgets.HTML()
    calls: list[tuple[object, ...]] = []

    def handler(*args: object) -> None:
        calls.append(args)
        raise ConfigError("config.toml <b>broken</b>; fix it.")

    guarded(handler, output=output, status=status)("button", 2)
    assert calls == [("button", 2)]
    assert "Error:" in status.value
    assert "config.toml &lt;b&gt;broken&lt;/b&gt;; fix it." in status.value
    assert "<b>broken" not in status.value


def test_a_bug_is_not_turned_into_a_status() -> None:
    # Outside a kernel the Output widget hands the exception on; in one it shows the
    # traceback. Either way it is never worded as an engine error.
    output, status = widgets.Output(), widgets.HTML(value="before")

    def handler() -> None:
        raise KeyError("bug")

    with pytest.raises(KeyError):
        guarded(handler, output=output, status=status)()
    assert status.value == "before"


def test_a_handler_that_succeeds_leaves_the_status_alone() -> None:
    output, status = widgets.Output(), widgets.HTML(value="ready")
    seen: list[int] = []
    guarded(seen.append, output=output, status=status)(7)
    assert seen == [7]
    assert status.value == "ready"
