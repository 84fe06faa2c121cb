"""IPython magics: ``%supercontext``, ``%scout_thread``, ``%%chat``, ``%%scout``, ``%agent_toml``.

The magics are thin: they parse arguments (``IPython.core.magic_arguments``, so ``%name?``
shows the help), call the engine (:class:`~supercontext_lab.harness.Thread`, its
``run_scout``, ``load_agent_definition``, ``super_context_status``) and display the
results. User mistakes become :class:`~IPython.core.error.UsageError` with one line; any
other exception is a bug and keeps its traceback.

Options are traitlets with ``config=True``, settable with ``%config``::

    %config SupercontextMagics.workspace = "~/my-workspace"
    %config SupercontextMagics.model = "ollama:qwen2.5"

A magic given no ``--workspace`` uses the kernel's current workspace: the current thread's
(``%scout_thread new --workspace DIR`` makes it current), or the folder set with
``%config SupercontextMagics.workspace`` when that was set after the thread started, else
the shipped demo. Every panel names the workspace it searched.
"""

from __future__ import annotations

import keyword
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from IPython.core import magic
from IPython.core.error import UsageError
from traitlets import Unicode, observe

from ..agents.definition import AgentDefinition, default_agent_definition, load_agent_definition
from ..config import set_super_context_enabled, super_context_status
from ..errors import ConfigError, ScoutError
from ..harness import Thread, TurnResult
from ..harness.progress import RunProgress, starts_a_server
from ..models.base import ChatModel
from ..routes import parse_model_id
from ..scout import ScoutRun
from ..sources.demo import open_workspace
from ..sources.workspace import Workspace
from .display import ScoutDisplay, TurnDisplay, run_provenance, turn_provenance
from .magic_io import (
    argument,
    cell_magic,
    cell_text,
    display,
    line_cell_magic,
    line_magic,
    line_message,
    magic_arguments,
    parse_argstring,
    progress_in_cell,
    usage_errors,
)

__all__ = ["SupercontextMagics"]


def _state(enabled: bool) -> str:
    return "on" if enabled else "off"


@magic.magics_class
class SupercontextMagics(magic.Magics):
    """The supercontext_lab magics and the state they share in one kernel.

    State: the current thread (``%scout_thread new`` / ``%%chat``), the agent definition
    applied from the editor, and the last explicit message (``%%scout`` or the first
    ``%%chat`` message), which the editor's *Run again* re-runs.
    """

    workspace = Unicode(
        "",
        help=(
            "Workspace folder used when a magic gets no --workspace and no thread started "
            "since this was set; empty: the current thread's workspace, else the shipped demo."
        ),
    ).tag(config=True)
    model = Unicode(
        "",
        help=(
            "Model id for the scout of runs and threads made here, such as 'ollama:qwen2.5', "
            "'local:smollm2' (a llama.cpp server on this machine; the local extra) or "
            "'offline'; empty: the 'burst' route of the lab's config."
        ),
    ).tag(config=True)
    base_url = Unicode(
        "",
        help="OpenAI-compatible base URL (with /v1) for the model; empty: the provider default.",
    ).tag(config=True)
    api_key_env = Unicode(
        "",
        help="NAME of the environment variable holding the API key (never the key itself).",
    ).tag(config=True)

    # Per-kernel state; class-level defaults, replaced on the instance when set.
    thread: Thread | None = None
    applied_definition: AgentDefinition | None = None
    last_message: str | None = None
    last_focus: str | None = None
    last_run: ScoutRun | None = None
    last_workspace: Workspace | None = None
    composer: Any = None
    editor: Any = None
    # True while the current thread's workspace is the kernel's current workspace: from a
    # thread's start until the workspace option is set again.
    _follow_thread = False

    # -- resolving options -----------------------------------------------------------------

    @observe("workspace")
    def _workspace_set(self, _change: Any) -> None:
        # Set after the thread started: the option is the newer word on where to look.
        self._follow_thread = False

    def _set_thread(self, thread: Thread) -> Thread:
        """Make ``thread`` the current thread; its workspace becomes the kernel's."""
        self.thread = thread
        self._follow_thread = True
        return thread

    def _workspace(self, path: str | None) -> Workspace:
        """``--workspace``, else the current workspace: the current thread's (unless the
        workspace option was set after it started), else the configured folder, else the
        shipped demo."""
        if path:
            return self._open_folder(path, "pass an existing folder with --workspace")
        if self._follow_thread and self.thread is not None:
            return self.thread.workspace
        if self.workspace:
            return self._open_folder(
                self.workspace, "fix it with %config SupercontextMagics.workspace = '<folder>'"
            )
        return open_workspace(None)

    def current_workspace(self) -> Path | None:
        """The folder a magic given no ``--workspace`` reads (see :meth:`_workspace`);
        ``None`` for the shipped demo."""
        if self._follow_thread and self.thread is not None:
            return self.thread.workspace.root
        return Path(self.workspace).expanduser() if self.workspace else None

    @staticmethod
    def _open_folder(path: str, way_out: str) -> Workspace:
        folder = Path(path).expanduser()
        if not folder.is_dir():
            raise UsageError(f"workspace folder not found: {path}; {way_out}.")
        return open_workspace(folder)

    def _definition(self, path: str | None) -> AgentDefinition:
        """``--agent``, else the definition applied from the editor, else the shipped one."""
        if path is None:
            return self.applied_definition or default_agent_definition()
        file = Path(path).expanduser()
        if not file.is_file():
            raise UsageError(f"agent definition not found: {path}; pass the path of an agent.toml.")
        return load_agent_definition(file)

    def _scout_model(self, progress: RunProgress | None = None) -> ChatModel | None:
        """The scout model from the ``model`` option; ``None`` lets the thread use its route.
        A local model may start its server here, which ``progress`` is told first."""
        from ..models.routing import model_for_route

        if not self.model:
            if self.base_url or self.api_key_env:
                raise ConfigError(
                    "SupercontextMagics.base_url and .api_key_env need a model: set "
                    "%config SupercontextMagics.model = 'ollama:qwen2.5' (or another model id)."
                )
            return None
        route = parse_model_id(
            self.model, base_url=self.base_url or None, api_key_env=self.api_key_env or None
        )
        if progress is not None and starts_a_server(route):
            progress.starting_model(self.model.strip())
        return model_for_route(route, role="scout")

    def _make_thread(
        self,
        workspace: str | Workspace | None,
        agent: str | None,
        progress: RunProgress | None = None,
        design: str | None = None,
        deadline_ms: float | None = None,
    ) -> Thread:
        """A new thread with this kernel's defaults; the Super Context flag and the
        ``[preflight]`` settings are read now (``design`` and ``deadline_ms`` override
        them)."""
        return Thread(
            workspace if isinstance(workspace, Workspace) else self._workspace(workspace),
            definition=self._definition(agent),
            scout_model=self._scout_model(progress),
            design=design,
            deadline_ms=deadline_ms,
        )

    def _remember(
        self, message: str, focus: str | None, run: ScoutRun | None, ws: Workspace
    ) -> None:
        """Keep what *Run again* re-runs; ``run`` (None for a cold turn) is its baseline."""
        self.last_message, self.last_focus, self.last_workspace = message, focus, ws
        self.last_run = run

    def _on_turn(self, turn: TurnResult) -> None:
        """Composer callback: a first turn becomes the message *Run again* re-runs."""
        if turn.first_turn and self.thread is not None:
            self._remember(turn.message, None, turn.scout, self.thread.workspace)

    def _turn_display(self, thread: Thread, turn: TurnResult) -> TurnDisplay:
        provenance = turn_provenance(
            turn,
            orchestrator_model=thread.orchestrator_model,
            scout_model=thread.scout_model if turn.scout is not None else None,
            definition_hash=thread.definition.definition_hash(),
        )
        return TurnDisplay(turn, workspace=thread.workspace, provenance=provenance)

    # -- %supercontext ---------------------------------------------------------------------

    @magic_arguments()
    @argument(
        "action",
        nargs="?",
        default="status",
        help="status (default) shows the flag and its source; on/off save it in config.toml",
    )
    @line_magic
    @usage_errors
    def supercontext(self, line: str) -> None:
        """Show or set the Super Context flag (``context.super_context_enabled``).

        The effective value comes from the environment (OPENHUMAN_SUPER_CONTEXT, then
        OPENHUMAN_CONTEXT_SUPER_CONTEXT_ENABLED), else the lab's config file, else the
        default (on). The flag is read when a thread starts: changes apply to new threads.
        """
        args = parse_argstring(self.supercontext, line)
        action = args.action.strip().lower()
        if action not in ("status", "on", "off"):
            raise UsageError(
                f"unknown subcommand {args.action!r}; use %supercontext status, on or off."
            )
        if action == "status":
            status = super_context_status()
            print(f"Super Context: {status.describe()}")
            return
        wanted = action == "on"
        set_super_context_enabled(wanted)
        status = super_context_status()
        if status.enabled != wanted:
            print(
                f"Super Context: saved {action} in the config file, but the environment "
                f"overrides it ({status.detail}): it stays {_state(status.enabled)}."
            )
        else:
            print(f"Super Context: {action} (saved in the config file; applies to new threads).")

    # -- %scout_thread ---------------------------------------------------------------------

    @magic_arguments()
    @argument("action", help="new: start a new current thread and show the composer")
    @argument(
        "--workspace",
        default=None,
        help=(
            "workspace folder (default: the current thread's, else "
            "SupercontextMagics.workspace, else the shipped demo)"
        ),
    )
    @argument("--agent", default=None, help="an agent.toml to use for the thread's scout")
    @argument(
        "--design",
        default=None,
        choices=["scout", "pack", "cached", "cold"],
        help="the pre-flight design of the thread's first turn (default: [preflight] design)",
    )
    @argument(
        "--deadline-ms",
        type=float,
        default=None,
        help="abandon a scout not done by then; the pack prepares the turn instead",
    )
    @line_magic
    @usage_errors
    def scout_thread(self, line: str) -> None:
        """Start a new current thread (the Super Context flag is read now) and show the
        composer: a message box, Send, and the Super Context toggle while the thread is new.
        ``%%chat`` cells continue the same thread.

        The thread reads the workspace given with --workspace, else the current thread's,
        else the folder set with ``%config SupercontextMagics.workspace = "~/my-workspace"``,
        else the shipped demo; it becomes the workspace of the magics that follow. Its scout
        uses ``SupercontextMagics.model`` when set (``%config SupercontextMagics`` lists
        every option)."""
        from .widgets import Composer

        args = parse_argstring(self.scout_thread, line)
        if args.action != "new":
            raise UsageError(f"unknown subcommand {args.action!r}; use %scout_thread new.")
        workspace, agent = self._workspace(args.workspace), args.agent
        design, deadline_ms = args.design, args.deadline_ms

        def factory() -> Thread:
            # The composer makes a fresh thread when the flag flips on a new thread; that
            # thread, on the same workspace, becomes the one %%chat continues.
            return self._set_thread(
                self._make_thread(workspace, agent, design=design, deadline_ms=deadline_ms)
            )

        thread = factory()
        self.composer = Composer(factory, thread=thread, on_result=self._on_turn)
        display(self.composer)

    # -- %%chat ------------------------------------------------------------------------------

    @magic_arguments()
    @argument(
        "--new",
        action="store_true",
        help=(
            "start a new current thread for this message, on the current workspace (the "
            "Super Context flag is read now)"
        ),
    )
    @line_cell_magic
    @usage_errors
    def chat(self, line: str, cell: str | None = None) -> None:
        """Send the cell as the next message of the current thread.

        ``%%chat`` sends the cell body; the one-line form ``%chat MESSAGE`` sends the rest
        of the line, where ``$name`` puts in a Python string (``%chat $first_message``), and
        ``%chat --new MESSAGE`` starts a new thread for it. (IPython reads a line that ends
        in ``?`` as a request for help: such a message goes in the cell body or a variable.) Without a current thread one is
        started with this kernel's defaults (see ``%scout_thread new``). A first turn shows
        the bundle panel, then the reply; later turns show the reply only. With a streaming
        OpenAI-compatible route the reply is printed as it arrives, then shown once more
        as the final display.
        """
        if cell is None:
            new, message = line_message(line)
        else:
            new = parse_argstring(self.chat, line).new
            message = cell_text(cell, "chat")
        with progress_in_cell("Turn") as progress:
            thread = self.thread
            if thread is None or new:
                thread = self._set_thread(self._make_thread(None, None, progress))
            on_text: Callable[[str], None] | None = None
            if thread.orchestrator_model.info.streams:

                def on_text(delta: str) -> None:
                    sys.stdout.write(delta)
                    sys.stdout.flush()

            progress.turn_of(thread, message)
            turn = thread.send(message, on_text=on_text, on_step=progress.on_step)
        if on_text is not None:
            print()
        if turn.first_turn:
            self._remember(message, None, turn.scout, thread.workspace)
        if self.composer is not None:
            # The composer shown by %scout_thread may hold this thread: its toggle must
            # go now that the thread has messages.
            self.composer.refresh()
        display(self._turn_display(thread, turn))

    # -- %%scout -----------------------------------------------------------------------------

    @magic_arguments()
    @argument(
        "--workspace",
        default=None,
        help=(
            "workspace folder (default: the current thread's, else "
            "SupercontextMagics.workspace, else the shipped demo)"
        ),
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
