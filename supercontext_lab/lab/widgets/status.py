"""A live status line in a cell's output while a scout run or a turn is under way.

``%%scout`` and ``%%chat`` show a :class:`RunStatus` first, feed it the run's
:class:`~supercontext_lab.harness.progress.Progress` (the phase, the model call, the
seconds so far; updated from the run's ticker thread through the widget's comm), and hide
it when the panel is shown below it. It is a widget view only, with no text form: a saved
notebook, a terminal and nbval see nothing of it, so a cell's recorded output is the
same however long the run took.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as widgets
from IPython.display import display as _ipython_display

from ...harness.progress import Progress
from ..shown import WIDGET_VIEW_MIME
from .html import escape

__all__ = ["RunStatus", "status_html"]

_display: Callable[..., None] = _ipython_display


def status_html(progress: Progress, *, what: str = "Scout") -> str:
    """One status line: ``what``, the phase and its detail, the seconds so far."""
    return (
        '<div class="scl-live-status-line" style="font-family: var(--jp-ui-font-family, '
        "sans-serif); font-size:13px; color:#0d47a1; background:#e3f0fd; "
        'border-left:4px solid #0d47a1; padding:4px 10px; margin:2px 0;">'
        f"<b>{escape(what)}:</b> {escape(progress.describe())} "
        f'<span style="color:#424242;">· {progress.elapsed_s:.0f} s</span></div>'
    )


class RunStatus(widgets.HTML):  # type: ignore[misc]
    """The status line; :meth:`show` each :class:`Progress`, :meth:`finish` at the end."""

    def __init__(self, what: str = "Scout") -> None:
        super().__init__(value="")
        self.what = what
        self.add_class("scl-live-status")

    def show(self, progress: Progress) -> None:
        """Show ``progress`` (callable from any thread: the widget sends its new value)."""
        self.value = status_html(progress, what=self.what)

    def finish(self) -> None:
        """The run is over: the status goes, and the result shown after it takes its place."""
        self.value = ""
        self.layout.display = "none"

    def _ipython_display_(self, **kwargs: Any) -> None:
        # The view only: IPython would add a text form ("RunStatus(value=…)") to anything
        # displayed through its formatters, and that text would differ from run to run.
        bundle: dict[str, Any] = super()._repr_mimebundle_() or {}
        view = bundle.get(WIDGET_VIEW_MIME)
        if view is not None:
            _display({WIDGET_VIEW_MIME: view}, raw=True)
