"""How a widget runs its callbacks: engine errors become a one-line status, bugs show.

ipywidgets swallows what a callback raises into the browser console, where nobody looks.
Every callback of a widget therefore runs through :func:`guarded`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ...errors import SupercontextError
from .html import note

__all__ = ["guarded"]


def guarded(
    handler: Callable[..., None], *, output: widgets.Output, status: widgets.HTML
) -> Callable[..., None]:
    """``handler`` run inside ``output`` (a bug shows its traceback there), with an engine
    error (:class:`~supercontext_lab.errors.SupercontextError`) shown as one line in
    ``status`` instead."""

    def run(*args: Any) -> None:
        with output:
            try:
                handler(*args)
            except SupercontextError as exc:
                status.value = note(str(exc), "error", strong="Error:")

    return run
