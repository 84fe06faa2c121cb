"""Where a shipped notebook works, and whether its threads archive: one rule for all nine.

The notebooks under ``notebooks/`` run on the shipped demo, and papermill's ``-p
workspace DIR`` runs them on a folder of the user's own. A thread archives its turns into
its workspace's past conversations, where later threads recall them, and a notebook run
sends the same handful of demo messages every time: stored in the user's own folder, they
would come back as past conversations of the user's (and as "facts" in later bundles). So
a shipped notebook never stores a conversation in a folder its user names:

- the shipped demo (no folder named) is copied into the notebook's private lab home, and
  its threads archive into that copy, as any thread does;
- a folder the user names is read where it is, and the notebook's threads run with
  ``archive=False``;
- a notebook that stores conversations itself (08 imports a chat export and forgets a
  conversation) asks for ``copy=True`` and works on a copy of the folder in its lab home
  (:func:`~supercontext_lab.sources.demo.copy_workspace`), where its threads archive too.

:func:`notebook_workspace` decides; the notebook passes what it says on
(``Thread(setup.workspace, archive=setup.archive)``, ``%config
SupercontextMagics.archive = setup.archive``) and prints :attr:`NotebookWorkspace.note`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from .._text import one_line
from ..sources.demo import copy_workspace, open_workspace
from ..sources.layout import Finding
from ..sources.workspace import Workspace
from .shown import workspace_name

__all__ = ["NotebookWorkspace", "notebook_workspace"]

_LEFT_OUT_SHOWN = 5
"""At most this many of the files left out of a copy are named in its note."""


@dataclass(frozen=True)
class NotebookWorkspace:
    """The workspace a shipped notebook works on, and whether its threads archive."""

    workspace: Workspace
    """The workspace to read (the demo's copy, the folder named, or its copy)."""
    archive: bool
    """Whether the notebook's threads archive their turns (into :attr:`workspace`)."""
    named: str | None
    """The name of the folder the user named (``None`` for the shipped demo)."""
    copied: bool = False
    """Whether :attr:`workspace` is the notebook's copy of the folder named."""
    left_out: list[Finding] = field(default_factory=list)
    """Files of the folder named that the copy does not hold, each with why."""

    @property
    def folder(self) -> str:
        """What ``%config SupercontextMagics.workspace`` takes: ``""`` for the demo."""
        return "" if self.named is None else str(self.workspace.root)

    @property
    def note(self) -> str:
        """One line for the notebook to print: where it works and what it archives."""
        if self.named is None:
            return (
                "Workspace: the shipped demo, copied into this notebook's lab home; threads "
                "archive their turns into that copy."
            )
        if not self.copied:
            return (
                f"Workspace: {self.named}, read where it is; this notebook's threads run "
                "with archive=False, so none of its messages is stored among its past "
                "conversations."
            )
        text = (
            f"Workspace: a copy of {self.named} in this notebook's lab home; what the "
            f"notebook archives, imports and forgets goes into the copy, never into "
            f"{self.named} itself."
        )
        if self.left_out:
            named = "; ".join(f"{path} ({why})" for path, why in self.left_out[:_LEFT_OUT_SHOWN])
            more = len(self.left_out) - _LEFT_OUT_SHOWN
            text += f" Not copied: {named}" + (f" and {more} more." if more > 0 else ".")
        return one_line(text, 2000)


def notebook_workspace(
    workspace: str | os.PathLike[str] | None = None, *, copy: bool = False
) -> NotebookWorkspace:
    """Where a shipped notebook works, given its ``workspace`` parameter (empty or
    ``None``: the shipped demo), and whether its threads archive: see the module's rule.

    ``copy`` (for a notebook that imports or forgets conversations) makes a copy of a
    named folder in the lab home and works there; the demo is a copy already. A folder
    that does not exist raises :class:`~supercontext_lab.errors.WorkspaceError`.
    """
    if not workspace:
        return NotebookWorkspace(open_workspace(None), archive=True, named=None)
    named = open_workspace(Path(workspace).expanduser())
    name = workspace_name(named)
    if not copy:
        return NotebookWorkspace(named, archive=False, named=name)
    target, left_out = copy_workspace(named)
    return NotebookWorkspace(
        open_workspace(target), archive=True, named=name, copied=True, left_out=left_out
    )
