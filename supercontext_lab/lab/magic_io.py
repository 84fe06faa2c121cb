"""How the lab's magics read what they are given and show what they are doing.

Arguments parse like a POSIX shell (:func:`parse_argstring`); the engine's deliberate
errors become one-line ``UsageError``s (:func:`usage_errors`); a message comes from the
cell body (:func:`cell_text`) or, for ``%chat``, the rest of the line
(:func:`line_message`); and a run shows a live status line in the cell while it lasts
(:func:`progress_in_cell`). IPython's decorators carry no annotations, so they are given
typed names here, for the rest of the lab to stay checked.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

from IPython.core import magic
from IPython.core import magic_arguments as _magic_arguments
from IPython.core.error import UsageError
from IPython.display import display as _ipython_display
from IPython.utils.process import arg_split  # type: ignore[attr-defined]

from .._text import one_line
from ..errors import SupercontextError
from ..harness.progress import RunProgress

__all__ = [
    "argument",
    "cell_magic",
    "cell_text",
    "display",
    "line_cell_magic",
    "line_magic",
    "line_message",
    "magic_arguments",
    "parse_argstring",
    "progress_in_cell",
    "usage_errors",
]

_F = TypeVar("_F", bound=Callable[..., Any])
_Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

magic_arguments: Callable[[], _Decorator] = _magic_arguments.magic_arguments
argument: Callable[..., _Decorator] = _magic_arguments.argument
line_magic: _Decorator = magic.line_magic
cell_magic: _Decorator = magic.cell_magic
line_cell_magic: _Decorator = magic.line_cell_magic
display: Callable[..., None] = _ipython_display
_arg_split: Callable[..., list[str]] = arg_split


def usage_errors(method: _F) -> _F:
    """Turn the engine's deliberate errors (bad workspace, invalid agent.toml, bad model
    route, corrupt config, bad dataset, replay miss) into one-line UsageErrors; anything
    else is a bug and keeps its traceback."""

    @functools.wraps(method)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return method(*args, **kwargs)
        except SupercontextError as exc:
            raise UsageError(one_line(exc)) from exc

    return cast(_F, wrapper)


def parse_argstring(magic_func: Any, line: str) -> Any:
    """Parse a magic's arguments like a POSIX shell, so quotes group words and go away
    (``--focus "the budget"``); IPython's own helper keeps the quotes."""
    try:
        argv = _arg_split(line, posix=True)
    except ValueError as exc:
        raise UsageError(f"cannot split the arguments ({exc}); check the quotes.") from None
    parser: Any = magic_func.parser
    return parser.parse_args(argv)


def cell_text(cell: str | None, magic_name: str) -> str:
    """The message in a cell magic's body, which must hold one."""
    text = (cell or "").strip()
    if not text:
        raise UsageError(f"%%{magic_name} needs a message in the cell body, below the magic line.")
    return text


def line_message(line: str) -> tuple[bool, str]:
    """``%chat [--new] MESSAGE``: whether ``--new`` leads, and the message (the rest of the
    line as written: quotes and apostrophes are part of it)."""
    text = line.strip()
    new = text == "--new" or text.startswith("--new ")
    if new:
        text = text.removeprefix("--new").strip()
    if not text:
        raise UsageError(
            "%chat needs a message: %chat MESSAGE on one line, or %%chat with the message "
            "in the cell body."
        )
    return new, text


@contextlib.contextmanager
def progress_in_cell(what: str) -> Iterator[RunProgress]:
    """A live status line in the cell's output for the block, hidden when it ends (the
    panel displayed after it takes its place)."""
    from .widgets import RunStatus

    status = RunStatus(what)
    display(status)
    try:
        with RunProgress(status.show) as progress:
            yield progress
    finally:
        status.finish()
