"""The thread magics: ``%supercontext`` (the Super Context flag), ``%scout_thread new`` (a
new current thread and its composer) and ``%%chat`` (the next message of the current
thread).

A first turn shows the bundle panel, then the reply; later turns show the reply only. The
thread they start or continue is the kernel's current thread (:mod:`.magic_state`), whose
workspace the other magics follow.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from IPython.core import magic
from IPython.core.error import UsageError

from ..config import set_super_context_enabled, super_context_status
from ..harness import DESIGNS, Thread, TurnResult
from .archive_notice import archive_notice
from .display import TurnDisplay, turn_provenance
from .magic_io import (
    argument,
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
from .magic_state import WORKSPACE_HELP, MagicState

__all__ = ["ThreadMagics"]


def _state(enabled: bool) -> str:
    return "on" if enabled else "off"


@magic.magics_class
class ThreadMagics(MagicState):
    """``%supercontext``, ``%scout_thread`` and ``%%chat``."""

    # -- a turn's display, and the composer's callback --------------------------------------

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
        return TurnDisplay(
            turn,
            workspace=thread.workspace,
            provenance=provenance,
            notice=archive_notice(turn, thread.workspace),
        )

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
        help=WORKSPACE_HELP,
    )
    @argument("--agent", default=None, help="an agent.toml to use for the thread's scout")
    @argument(
        "--design",
        default=None,
        choices=list(DESIGNS),
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
        and its replies use ``SupercontextMagics.model`` when set (``scout_model`` and
        ``orchestrator_model`` set one role apart; ``%config SupercontextMagics`` lists
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
