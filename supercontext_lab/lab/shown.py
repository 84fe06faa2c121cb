"""What the lab's display objects and its widgets both show the same way: the MIME type
under which Jupyter front ends find a widget view, and how a workspace and a path are
named on screen.

It sits below :mod:`supercontext_lab.lab.display` and :mod:`supercontext_lab.lab.widgets`
so that each can use these without importing the other: the display objects build the
widgets, and the widgets must not reach back into the display objects for a name.
"""

from __future__ import annotations

from pathlib import Path

from ..sources.workspace import Workspace

__all__ = ["WIDGET_VIEW_MIME", "shown_path", "workspace_name"]

WIDGET_VIEW_MIME = "application/vnd.jupyter.widget-view+json"
"""The MIME type under which Jupyter front ends look for a widget view."""


def workspace_name(workspace: Workspace) -> str:
    """The name a display gives a workspace: its folder's name (``demo-workspace`` for the
    shipped demo's copy). Stable from machine to machine, unlike its path."""
    return workspace.root.name or str(workspace.root)


def shown_path(path: Path) -> str:
    """``path`` with the home folder written ``~``, as a user would type it."""
    try:
        return "~/" + path.relative_to(Path.home()).as_posix()
    except (ValueError, RuntimeError):
        return str(path)
