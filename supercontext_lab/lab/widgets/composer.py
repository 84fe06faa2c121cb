"""The composer: a message box, Send, and the Super Context toggle of a new thread.

The toggle is shown only while the thread has no messages, because the flag is read when
a thread is constructed (SPEC §3): flipping it saves the flag for every *new* thread (a
thread that has begun keeps what it started with), and the composer's own thread, still
empty, is re-created so its first message uses it. The line beside the toggle says so
before it is clicked, and after a click says what this thread and new threads use; it is
the one place that states the flag (the status line never does, so the two cannot
disagree). Once the thread has messages, *New thread* starts a fresh one, and the toggle
is back. Messages
sent to the same thread another way (``%%chat``) count too: :meth:`Composer.refresh`
brings the composer up to date with its thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import ipywidgets as widgets

from ...config import set_super_context_enabled, super_context_status
from ...errors import SupercontextError
from ...harness import Thread, TurnResult
from ...harness.progress import Progress, RunProgress
from ..archive_notice import archive_notice
from .guard import guarded
from .html import escape, note
from .panel import BundlePanel, describe_cold_start
from .status import status_html

__all__ = ["Composer"]

_FONT = "font-family: var(--jp-ui-font-family, sans-serif); font-size:13px;"
_PLACEHOLDER_FIRST = "Message…  (the first message of a new thread is prepared by the scout)"
_PLACEHOLDER_OFF = "Message…  (Super Context is off for this thread: no message is prepared)"
_PLACEHOLDER_LATER = "Message…  (continues this thread; only its first message was prepared)"
_PLACEHOLDER_COLD = "Message…  (continues this thread; it started cold: {reason})"
_PLACEHOLDER_RESUMED = "Message…  (continues this thread)"
TOGGLE_CAPTION = (
    "Saved in the lab's config.toml for every new thread when clicked (a thread reads it "
    "when it starts); this thread has no messages yet, so its first one uses it too."
)
"""What the line beside the toggle says before it is clicked."""


def _placeholder(thread: Thread | None, flag: bool) -> str:
    """What the message box says the next message gets: prepared, or why not. ``flag`` is
    the effective flag, which a thread not built yet will read."""
    if thread is None or not (thread.transcript or thread.turns):
        enabled = flag if thread is None else thread.enabled
        return _PLACEHOLDER_FIRST if enabled else _PLACEHOLDER_OFF
    if not thread.turns:
        return _PLACEHOLDER_RESUMED
    first = thread.turns[0]
    if first.prepared:
        return _PLACEHOLDER_LATER
    return _PLACEHOLDER_COLD.format(reason=first.reason or "no context was prepared")


def _caption(text: str) -> str:
    return f'<span style="{_FONT} color:#616161;">{escape(text)}</span>'


def _bubble(who: str, text: str, *, colour: str) -> str:
    return (
        f'<div style="{_FONT} margin:4px 0;"><div style="font-weight:600; color:{colour};">'
        f'{escape(who)}</div><div class="scl-message" style="white-space:pre-wrap;">'
        f"{escape(text)}</div></div>"
    )


class Composer(widgets.VBox):  # type: ignore[misc]
    """Send messages to a :class:`~supercontext_lab.harness.Thread` from a notebook.

    ``thread_factory`` builds a new thread (it reads the flag when called); ``thread``
    starts from an existing one instead. ``on_result`` is called with every
    :class:`TurnResult`. Each sent message adds an entry to :attr:`history`: the message,
    then on a first turn the :class:`BundlePanel` (or the cold-start reason), then the
    reply. Engine errors are shown in :attr:`status`; anything unexpected shows its
    traceback in :attr:`output`.
    """

    def __init__(
        self,
        thread_factory: Callable[[], Thread],
        *,
        thread: Thread | None = None,
        on_result: Callable[[TurnResult], None] | None = None,
    ) -> None:
        self.thread_factory = thread_factory
        self.on_result = on_result
        self._thread = thread
        self._syncing = False
        self.last_turn: TurnResult | None = None
        self.last_panel: BundlePanel | None = None
        self.message = widgets.Textarea(
            placeholder=_PLACEHOLDER_FIRST,
            rows=3,
            layout=widgets.Layout(width="100%"),
        )
        self.send_button = widgets.Button(
            description="Send", button_style="primary", icon="paper-plane"
        )
        self.status = widgets.HTML()
        self.toggle = widgets.ToggleButton(
            description="Super Context",
            value=False,
            icon="toggle-off",
            tooltip="Run the context scout before the first turn of new threads",
            # Its own width, whatever the line beside it says: "Super Context: on" whole.
            layout=widgets.Layout(width="auto", flex="0 0 auto"),
        )
        self.toggle_note = widgets.HTML(_caption(TOGGLE_CAPTION))
        self.new_button = widgets.Button(
            description="New thread",
            icon="plus",
            tooltip="Start a fresh thread here (the Super Context flag is read then)",
        )
        self.history = widgets.VBox()
        self.output = widgets.Output()
        self.toggle_row = widgets.HBox(
            [self.toggle, self.toggle_note], layout=widgets.Layout(align_items="center")
        )
        super().__init__(
            children=[
                self.history,
                self.message,
                widgets.HBox(
                    [self.send_button, self.new_button, self.status],
                    layout=widgets.Layout(align_items="center"),
                ),
                self.toggle_row,
                self.output,
            ]
        )
        self.add_class("scl-composer")
        self.send_button.on_click(self._guarded(self._on_send))
        self.new_button.on_click(self._guarded(self._on_new))
        self.toggle.observe(self._guarded(self._on_toggle), names="value")
        self._guarded(self._sync_toggle)()

    # -- state -------------------------------------------------------------------------------

    @property
    def thread(self) -> Thread:
        """The current thread, built with ``thread_factory`` on first use."""
        if self._thread is None:
            self._thread = self.thread_factory()
        return self._thread

    def _has_messages(self) -> bool:
        thread = self._thread
        return thread is not None and bool(thread.transcript or thread.turns)

    def new_thread(self) -> Thread:
        """Start over with a fresh thread from the factory (the flag is read now)."""
        self._thread = self.thread_factory()
        self.history.children = ()
        self.last_turn = None
        self.last_panel = None
        self.status.value = ""
        self.toggle_note.value = _caption(TOGGLE_CAPTION)
        self._sync_toggle()
        return self._thread

    def _on_new(self, _button: Any = None) -> None:
        self.new_thread()
        # The flag is stated beside the toggle (its label and line), never here: a click on
        # the toggle would leave this line saying the opposite.
        self.status.value = note(
            "New thread started; the earlier one stays as it was.",
            "info",
        )

    def _guarded(self, handler: Callable[..., None]) -> Callable[..., None]:
        return guarded(handler, output=self.output, status=self.status)

    def _set_toggle(self, value: bool) -> None:
        self._syncing = True
        try:
            self.toggle.value = value
        finally:
            self._syncing = False
        # The state is in the words and the icon, and "on" is green: a pressed and an
        # unpressed grey button alone look almost the same.
        self.toggle.description = f"Super Context: {'on' if value else 'off'}"
        self.toggle.icon = "toggle-on" if value else "toggle-off"
        self.toggle.button_style = "success" if value else ""

    def _sync_toggle(self) -> None:
        """Show the effective flag, and the toggle only while the thread is empty; the
        message box says whether the next message is prepared, and after the first one
        whether it was (or why the thread started cold)."""
        flag = super_context_status().enabled
        self._set_toggle(flag)
        later = self._has_messages()
        self.toggle_row.layout.display = "none" if later else None
        self.new_button.layout.display = None if later else "none"
        self.message.placeholder = _placeholder(self._thread, flag)

    def refresh(self) -> None:
        """Catch up with turns sent to this composer's thread without it (``%%chat``):
        hide the toggle once the thread has messages and say how many turns it has."""
        self._sync_toggle()
        thread = self._thread
        if thread is None or len(thread.turns) == len(self.history.children):
            return
        count = len(thread.turns)
        state = "on" if thread.enabled else "off"
        self.status.value = note(
            f"This thread has {count} turn{'' if count == 1 else 's'} (sent with %%chat, shown "
            f"under those cells). Super Context was {state} when it started; New thread starts "
            "one that reads the flag again.",
            "info",
        )

    # -- callbacks ---------------------------------------------------------------------------

    def _on_toggle(self, change: dict[str, Any]) -> None:
        if self._syncing:
            return
        wanted = bool(change["new"])
        try:
            set_super_context_enabled(wanted)
        except SupercontextError:
            # Nothing was saved: put the toggle back before the error is shown.
            self._set_toggle(not wanted)
            raise
        status = super_context_status()
        self._set_toggle(status.enabled)
        if self._thread is not None and not self._has_messages():
            # The flag is read at construction: rebuild the empty thread so it applies.
            self._thread = self.thread_factory()
        # The message box says what the next message gets: it follows the thread.
        self.message.placeholder = _placeholder(self._thread, status.enabled)
        state = "on" if wanted else "off"
        thread = self._thread
        if thread is None or not self._has_messages():
            text = (
                f"Saved: Super Context {state}. It applies to new threads and to this one, "
                "which has no messages yet."
            )
        else:
            count = len(thread.turns)
            text = (
                f"Saved: Super Context {state} applies to new threads. This thread already has "
                f"{count} turn{'' if count == 1 else 's'} and keeps Super Context "
                f"{'on' if thread.enabled else 'off'}."
            )
        if status.enabled != wanted:
            self.toggle_note.value = note(
                f"{text} The environment overrides it ({status.detail}), so it stays "
                f"{'on' if status.enabled else 'off'} until that variable is removed.",
                "warn",
            )
        else:
            self.toggle_note.value = note(text, "info")

    def _on_send(self, _button: Any = None) -> None:
        text = self.message.value
        if not text.strip():
            self.status.value = note("Type a message first; nothing was sent.", "warn")
            return
        thread = self.thread
        user = widgets.HTML(_bubble("You", text, colour="#37474f"))
        live = widgets.HTML()
        entry = widgets.VBox([user, live])
        self.history.children = (*self.history.children, entry)
        streamed: list[str] = []

        def on_text(delta: str) -> None:
            streamed.append(delta)
            live.value = _bubble("Assistant (streaming)", "".join(streamed), colour="#1565c0")

        def show(progress: Progress) -> None:
            self.status.value = status_html(progress, what="Working")

        self.send_button.disabled = True
        try:
            with RunProgress(show) as progress:
                progress.turn_of(thread, text)
                turn = thread.send(text, on_text=on_text, on_step=progress.on_step)
        except BaseException:
            self.history.children = tuple(c for c in self.history.children if c is not entry)
            self.status.value = ""
            raise
        finally:
            self.send_button.disabled = False
        entry.children = self._turn_children(user, turn, thread)
        self.message.value = ""
        self.last_turn = turn
        self.status.value = self._turn_status(turn, len(thread.turns))
        self._sync_toggle()
        if self.on_result is not None:
            self.on_result(turn)

    # -- rendering ---------------------------------------------------------------------------

    def _turn_children(self, user: Any, turn: TurnResult, thread: Thread) -> list[Any]:
        children: list[Any] = [user]
        if turn.first_turn:
            if turn.scout is not None:
                # A prepared turn, or a failed scout run: the panel shows bundle or reason.
                self.last_panel = BundlePanel(
                    turn=turn, workspace=thread.workspace, title="Prepared context"
                )
                children.append(self.last_panel)
            else:
                children.append(
                    widgets.HTML(
                        note(
                            describe_cold_start(turn.reason, turn.reason_detail),
                            "warn",
                            strong="Cold start:",
                        )
                    )
                )
        if turn.orchestrator_error:
            children.append(
                widgets.HTML(note(turn.orchestrator_error, "error", strong="Orchestrator error:"))
            )
        else:
            children.append(widgets.HTML(_bubble("Assistant", turn.reply, colour="#1565c0")))
        notice = archive_notice(turn, thread.workspace)
        if notice is not None:
            children.append(widgets.HTML(note(notice, "info")))
        return children

    @staticmethod
    def _turn_status(turn: TurnResult, number: int) -> str:
        if not turn.first_turn:
            return note(f"Turn {number}: replied.", "info")
        if turn.prepared:
            return note(f"Turn {number}: context prepared by the scout, then replied.", "ok")
        return note(
            f"Turn {number}: cold start ({describe_cold_start(turn.reason, turn.reason_detail)}), then replied.",
            "warn",
        )
