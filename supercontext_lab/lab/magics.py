"""IPython magics: ``%supercontext``, ``%scout_thread``, ``%%chat``, ``%%scout``, ``%agent_toml``.

The magics are thin: they parse arguments (``IPython.core.magic_arguments``, so ``%name?``
shows the help), call the engine (:class:`~supercontext_lab.harness.Thread`, its
``run_scout``, ``load_agent_definition``, ``super_context_status``) and display the
results. User mistakes become :class:`~IPython.core.error.UsageError` with one line; any
other exception is a bug and keeps its traceback.

Options are traitlets with ``config=True``, settable with ``%config``::

    %config SupercontextMagics.workspace = "~/my-workspace"
    %config SupercontextMagics.model = "ollama:qwen2.5"
"""

from __future__ import annotations

import functools
import keyword
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

from IPython.core import magic, magic_arguments
from IPython.core.error import UsageError
from IPython.display import display as _ipython_display
from IPython.utils.process import arg_split  # type: ignore[attr-defined]
from traitlets import Unicode

from .._text import one_line
from ..agents.definition import AgentDefinition, default_agent_definition, load_agent_definition
from ..config import set_super_context_enabled, super_context_status
from ..errors import ConfigError, ScoutError, SupercontextError
from ..harness import Thread, TurnResult
from ..models.base import ChatModel
from ..routes import parse_model_id
from ..scout import ScoutRun
from ..sources.demo import open_workspace
from ..sources.workspace import Workspace
from .display import ScoutDisplay, TurnDisplay, run_provenance, turn_provenance

__all__ = ["SupercontextMagics"]

_F = TypeVar("_F", bound=Callable[..., Any])
_Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]

# IPython's decorators and helpers carry no annotations; typed names keep the rest checked.
_magic_arguments: Callable[[], _Decorator] = magic_arguments.magic_arguments
argument: Callable[..., _Decorator] = magic_arguments.argument
_arg_split: Callable[..., list[str]] = arg_split
line_magic: _Decorator = magic.line_magic
cell_magic: _Decorator = magic.cell_magic
display: Callable[..., None] = _ipython_display


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
        help="Workspace folder used when a magic gets no --workspace; empty: the shipped demo.",
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

    # -- resolving options -----------------------------------------------------------------

    def _workspace(self, path: str | None) -> Workspace:
        """``--workspace``, else the configured workspace, else the shipped demo."""
        if path:
            return self._open_folder(path, "pass an existing folder with --workspace")
        if self.workspace:
            return self._open_folder(
                self.workspace, "fix it with %config SupercontextMagics.workspace = '<folder>'"
            )
        return open_workspace(None)

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

    def _scout_model(self) -> ChatModel | None:
        """The scout model from the ``model`` option; ``None`` lets the thread use its route."""
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
        return model_for_route(route, role="scout")

    def _make_thread(
        self,
        workspace: str | None,
        agent: str | None,
        design: str | None = None,
        deadline_ms: float | None = None,
    ) -> Thread:
        """A new thread with this kernel's defaults; the Super Context flag and the
        ``[preflight]`` settings are read now (``design`` and ``deadline_ms`` override
        them)."""
        return Thread(
            self._workspace(workspace),
            definition=self._definition(agent),
            scout_model=self._scout_model(),
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

    @staticmethod
    def _cell_text(cell: str | None, magic: str) -> str:
        text = (cell or "").strip()
        if not text:
            raise UsageError(f"%%{magic} needs a message in the cell body, below the magic line.")
        return text

    # -- %supercontext ---------------------------------------------------------------------

    @_magic_arguments()
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

    @_magic_arguments()
    @argument("action", help="new: start a new current thread and show the composer")
    @argument(
        "--workspace",
        default=None,
        help="workspace folder (default: SupercontextMagics.workspace, else the shipped demo)",
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

        The thread reads the workspace given with --workspace, else the folder set with
        ``%config SupercontextMagics.workspace = "~/my-workspace"``, else the shipped demo;
        its scout uses ``SupercontextMagics.model`` when set (``%config
        SupercontextMagics`` lists every option)."""
        from .widgets import Composer

        args = parse_argstring(self.scout_thread, line)
        if args.action != "new":
            raise UsageError(f"unknown subcommand {args.action!r}; use %scout_thread new.")
        workspace, agent = args.workspace, args.agent
        design, deadline_ms = args.design, args.deadline_ms

        def factory() -> Thread:
            # The composer makes a fresh thread when the flag flips on a new thread; that
            # thread becomes the one %%chat continues.
            self.thread = self._make_thread(workspace, agent, design, deadline_ms)
            return self.thread

        thread = factory()
        self.composer = Composer(factory, thread=thread, on_result=self._on_turn)
        display(self.composer)

    # -- %%chat ------------------------------------------------------------------------------

    @_magic_arguments()
    @cell_magic
    @usage_errors
    def chat(self, line: str, cell: str | None = None) -> None:
        """Send the cell as the next message of the current thread.

        Without a current thread one is started with this kernel's defaults (see
        ``%scout_thread new``). A first turn shows the bundle panel, then the reply; later
        turns show the reply only. With a streaming OpenAI-compatible route the reply is
        printed as it arrives, then shown once more as the final display.
        """
        parse_argstring(self.chat, line)
        message = self._cell_text(cell, "chat")
        thread = self.thread
        if thread is None:
            thread = self.thread = self._make_thread(None, None)
        on_text: Callable[[str], None] | None = None
        if thread.orchestrator_model.info.streams:

            def on_text(delta: str) -> None:
                sys.stdout.write(delta)
                sys.stdout.flush()

        turn = thread.send(message, on_text=on_text)
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

    @_magic_arguments()
    @argument(
        "--workspace",
        default=None,
        help="workspace folder (default: SupercontextMagics.workspace, else the shipped demo)",
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
        message = self._cell_text(cell, "scout")
        name = args.out
        if not name.isidentifier() or keyword.iskeyword(name):
            raise UsageError(f"--out needs a Python variable name, not {name!r}.")
        thread = self._make_thread(args.workspace, args.agent)
        run = thread.run_scout(message, focus=args.focus)
        self._remember(message, args.focus, run, thread.workspace)
        assert self.shell is not None, "magics are always registered with a shell"
        self.shell.user_ns[name] = run
        provenance = run_provenance(run, model=thread.scout_model)
        display(ScoutDisplay(run, workspace=thread.workspace, provenance=provenance))

    # -- %agent_toml -------------------------------------------------------------------------

    @_magic_arguments()
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
