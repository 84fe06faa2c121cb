"""The scout and editor magics: ``%%scout`` (the context scout on the cell's text, now, with
no gate and no flag) and ``%agent_toml`` (the live agent.toml editor).

The editor's *Apply* makes later ``%%scout`` runs and new threads use the edited
definition; its *Run again* re-runs the last explicit message (kept in
:mod:`.magic_state`) with it.
"""

from __future__ import annotations

import keyword
from pathlib import Path
from typing import Any

from IPython.core import magic
from IPython.core.error import UsageError

from ..agents.definition import AgentDefinition
from ..errors import ScoutError
from ..harness import Thread
from ..scout import ScoutRun
from .display import ScoutDisplay, run_provenance
from .magic_io import (
    argument,
    cell_magic,
    cell_text,
    display,
    line_magic,
    magic_arguments,
    parse_argstring,
    progress_in_cell,
    usage_errors,
)
from .magic_state import WORKSPACE_HELP, MagicState

__all__ = ["ScoutMagics"]


@magic.magics_class
class ScoutMagics(MagicState):
    """``%%scout`` and ``%agent_toml``, with the editor's callbacks."""

    # -- %%scout -----------------------------------------------------------------------------

    @magic_arguments()
    @argument(
        "--workspace",
        default=None,
        help=WORKSPACE_HELP,
    )
    @argument("--focus", default=None, help="what the scout should focus on")
    @argument("--agent", default=None, help="an agent.toml to use instead of the current one")
    @argument(
        "--out", default="_scout", help="user variable that receives the ScoutRun (default _scout)"
    )
    @cell_magic
    @usage_errors
    def scout(self, line: str, cell: str | None = None) -> None:
        """Run the context scout on the cell's text now (the explicit path: no gate, no
        flag) and show the bundle panel. The ScoutRun is stored in the user variable
        named by --out."""
        args = parse_argstring(self.scout, line)
        message = cell_text(cell, "scout")
        name = args.out
        if not name.isidentifier() or keyword.iskeyword(name):
            raise UsageError(f"--out needs a Python variable name, not {name!r}.")
        workspace, definition = self._workspace(args.workspace), self._definition(args.agent)
        with progress_in_cell("Scout") as progress:
            thread = Thread(
                workspace, definition=definition, scout_model=self._scout_model(progress)
            )
            progress.scout_of(thread)
            run = thread.run_scout(message, focus=args.focus, on_step=progress.on_step)
        self._remember(message, args.focus, run, thread.workspace)
        assert self.shell is not None, "magics are always registered with a shell"
        self.shell.user_ns[name] = run
        provenance = run_provenance(run, model=thread.scout_model)
        display(ScoutDisplay(run, workspace=thread.workspace, provenance=provenance))

    # -- %agent_toml -------------------------------------------------------------------------

    @magic_arguments()
    @argument("path", nargs="?", default=None, help="an agent.toml (default: the shipped one)")
    @line_magic
    @usage_errors
    def agent_toml(self, line: str) -> Any:
        """Open the live agent.toml editor on the shipped definition or on PATH.

        PATH is an agent.toml, a folder holding one, or a new file name (Save creates it).
        The editor is returned, so IPython shows it as the cell's result;
        ``editor = %agent_toml PATH`` keeps it in a variable without showing it. Each call
        opens a new editor (the latest is also kept in this object's ``editor``).

        *Apply* makes later ``%%scout`` runs and new ``%%chat`` threads use the edited
        definition; *Run again* re-runs the last ``%%scout`` (or first ``%%chat``) message
        with it and shows the new bundle beside the previous one.
        """
        from .widgets import AgentEditor

        args = parse_argstring(self.agent_toml, line)
        path: Path | None = None
        if args.path is not None:
            # A file that does not exist yet is fine (Save creates it); its folder must.
            path = Path(args.path).expanduser()
            if not (path.exists() or path.parent.is_dir()):
                raise UsageError(
                    f"folder not found for {args.path}; pass an agent.toml, its folder, or a "
                    "new file name in an existing folder."
                )
        workspace = self.last_workspace or self._workspace(None)
        self.editor = AgentEditor(
            path, rerun=self._rerun, baseline=self.last_run, workspace=workspace
        )
        self.editor.on_apply(self._apply)
        return self.editor

    def _apply(self, definition: AgentDefinition) -> None:
        """Editor callback: later runs and new threads use ``definition``."""
        self.applied_definition = definition

    def _rerun(self, definition: AgentDefinition) -> ScoutRun:
        """Editor callback: the last explicit message again, with ``definition``."""
        if self.last_message is None:
            raise ScoutError(
                "There is no message to run again yet: run a %%scout or %%chat cell first."
            )
        workspace = self.last_workspace or self._workspace(None)
        thread = Thread(workspace, definition=definition, scout_model=self._scout_model())
        return thread.run_scout(self.last_message, focus=self.last_focus)
