"""Two scout runs compared: the field-by-field differences, then both bundle panels.

A :class:`BundleComparison` is built once per comparison and never changed afterwards.
The editor makes a new one on every *Run again*, so a notebook cell that displayed an
earlier comparison keeps showing the step it belongs to after *Run All*.
"""

from __future__ import annotations

from typing import Any

import ipywidgets as widgets

from ...scout import ScoutRun
from ...sources.workspace import Workspace
from .diff import bundle_diff_html, changed_fields
from .html import note
from .panel import BundlePanel

__all__ = ["BundleComparison"]


class BundleComparison(widgets.VBox):  # type: ignore[misc]
    """``previous`` (``None``: no earlier run) beside ``run``, differences marked above.

    ``changed`` holds the names of the fields that differ (see
    :func:`~supercontext_lab.lab.widgets.changed_fields`).
    """

    def __init__(
        self,
        previous: ScoutRun | None,
        run: ScoutRun,
        *,
        workspace: Workspace | None = None,
    ) -> None:
        self.previous, self.run = previous, run
        old = previous.bundle if previous is not None else None
        self.changed = changed_fields(old, run.bundle)
        self.diff_html = widgets.HTML(bundle_diff_html(old, run.bundle))
        self.after_panel = BundlePanel(
            run, workspace=workspace, title=f"After: definition {run.definition_hash}"
        )
        self.before_panel: BundlePanel | None = None
        before: Any
        if previous is None:
            before = widgets.HTML(note("No earlier run to compare with.", "neutral"))
        else:
            self.before_panel = BundlePanel(
                previous,
                workspace=workspace,
                title=f"Before: definition {previous.definition_hash}",
            )
            before = self.before_panel
        self.panels = widgets.HBox(
            [
                widgets.VBox([child], layout=widgets.Layout(width="50%", min_width="0"))
                for child in (before, self.after_panel)
            ],
            layout=widgets.Layout(width="100%"),
        )
        super().__init__(children=[self.diff_html, self.panels])
        self.add_class("scl-bundle-comparison")
