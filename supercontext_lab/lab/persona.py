"""The pre-flight in Jupyter AI: a persona for jupyterlab-chat (the ``jupyter-ai`` extra).

Address *SuperContext* in a chat (jupyter-ai 3.2's persona picker under the input stamps
``metadata.to_persona`` on the message) and the chat's first message is prepared the way
:meth:`Thread.send <supercontext_lab.harness.Thread.send>` prepares a first turn (the
same gate, designs, deadline and fallbacks; this module runs a :class:`Thread`, it writes
no pre-flight of its own). The bundle is posted as one message, then the orchestrator's
reply is streamed through the lab's configured route (offline unless config.toml names
another). Later messages go to the orchestrator with the chat's history, and the gate
sees it: a chat with an answer in it is no new chat.

The workspace read is, in this order: the persona's ``workspace`` setting
(``c.SupercontextPersona.workspace``), config.toml's ``[persona] workspace``, the chat's
Jupyter AI workspace (``get_workspace_dir()``) when it holds a workspace, else the
shipped demo. ``/preflight off`` turns the pre-flight off for one chat (the command is
read back from the chat, so it outlives a server restart); ``c.SupercontextPersona.preflight
= False`` or ``[persona] preflight = false`` turn it off for every chat.

The chat file is the archive (``supercontext-lab memory import x.chat`` reads it), so the
thread's own archive is off for persona turns: nothing is stored twice.

The harness is synchronous, so each turn runs in a worker thread; what it reports (its
phase, the bundle, the reply's pieces) comes back to the server's event loop through a
queue, the only place the chat is touched. Every failure ends in a chat message.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from jupyter_ai_persona_manager import BasePersona, CommandOption, PersonaDefaults
from jupyterlab_chat.models import Message as ChatMessage
from traitlets import Bool, Unicode

from ..config import get_setting
from ..conversations.formats.jupyter_chat import parse_jupyter_chat
from ..conversations.reading import decode_export, load_json, read_bytes
from ..errors import SupercontextError
from ..harness import Thread
from ..harness.progress import Progress, RunProgress
from ..harness.turn import TurnResult
from ..models.offline import OfflineOrchestratorModel
from ..sources.demo import open_workspace
from ..sources.workspace import Workspace
from .chat_turn import (
    PREFLIGHT_COMMAND,
    ChatHistory,
    ChatLine,
    bundle_markdown,
    command_reply,
    failure_markdown,
    history_of,
    parse_command,
    plain_lines,
    skip_note,
)
from .shown import workspace_name

__all__ = ["PERSONA_NAME", "SupercontextPersona", "holds_workspace"]

PERSONA_NAME = "SuperContext"
_AVATAR = Path(__file__).with_name("persona_avatar.svg")
_PERSONA_PREFIX = "jupyter-ai-personas::"
# What a workspace holds at its top (SPEC §8); README.md and files/ are in many folders
# that are no workspace, so they do not count.
_WORKSPACE_MARKS = (
    "PROFILE.md",
    "MEMORY.md",
    "memory",
    "flavour",
    "skills",
    "registry.json",
    "integrations.toml",
    "orchestrator_tools.toml",
)

Event = tuple[str, Any]


def holds_workspace(folder: str | os.PathLike[str]) -> bool:
    """Whether ``folder`` holds a workspace (any of the parts SPEC §8 names)."""
    root = Path(folder)
    return any((root / name).exists() for name in _WORKSPACE_MARKS)


class SupercontextPersona(BasePersona):  # type: ignore[misc]
    """The SuperContext pre-flight as a Jupyter AI persona (see the module docstring)."""

    workspace = Unicode(
        "",
        config=True,
        help="Workspace folder the pre-flight reads (empty: config.toml's [persona] "
        "workspace, else the chat's Jupyter AI workspace when it holds one, else the demo).",
    )
    preflight = Bool(
        True,
        config=True,
        help="Run the pre-flight on a chat's first message (a chat's /preflight overrides).",
    )

    _stop: asyncio.Event | None = None

    @property
    def defaults(self) -> PersonaDefaults:
        return PersonaDefaults(
            name=PERSONA_NAME,
            description=(
                "Prepares a new chat's first message from your workspace (memory, profile, "
                "skills) before answering: the SuperContext pre-flight."
            ),
            avatar_path=str(_AVATAR),
            system_prompt="unused: the lab's orchestrator prompt is used",
        )

    async def cancel_response(self) -> None:
        """The chat's stop button: the reply stops streaming at once. The model call
        already under way ends in its worker, unread (a synchronous call cannot be
        interrupted), so the persona is free for the next message."""
        if self._stop is not None:
            self._stop.set()

    async def prepare(self) -> None:
        self.report_slash_commands(
            [
                CommandOption(
                    name=PREFLIGHT_COMMAND,
                    description="on | off: the pre-flight on a new chat's first message",
                )
            ]
        )

    # -- reading the chat ------------------------------------------------------------------

    def _line(self, message: ChatMessage, users: dict[str, Any]) -> ChatLine | None:
        if message.deleted or message.type != "msg" or not isinstance(message.body, str):
            return None
        sender = str(message.sender)
        user = users.get(sender)
        bot = sender.startswith(_PERSONA_PREFIX) or bool(user is not None and user.bot)
        return ChatLine("assistant" if bot else "user", message.body, own=sender == self.id)

    def _lines_from_model(self, current: ChatMessage) -> list[ChatLine]:
        users = dict(self.chat.get_users())
        lines = []
        for message in self.chat.get_messages():
            if message.id == current.id:
                break
            line = self._line(message, users)
            if line is not None:
                lines.append(line)
        return lines

    def _lines_from_file(self, current: ChatMessage) -> list[ChatLine]:
        """The chat file read by the ``.chat`` import (lenient where the live model is
        strict); the current message is its last user turn."""
        path = Path(self.get_chat_path())
        data = load_json(decode_export(read_bytes(path)), str(path))
        parsed = parse_jupyter_chat(data, str(path), path.stem)
        turns = [turn for c in parsed.conversations for turn in c.turns]
        lines = [ChatLine(t.role, t.content) for t in turns if t.role in ("user", "assistant")]
        if lines and lines[-1].role == "user" and lines[-1].text.strip() == current.body.strip():
            lines.pop()
        return lines

    def read_history(self, current: ChatMessage) -> ChatHistory:
        """The chat before ``current``. A chat another tool wrote may not read as
        jupyterlab-chat's messages: the file is then read as the import reads it, and if
        that fails too the history is empty and marked unreadable."""
        try:
            return history_of(self._lines_from_model(current))
        except Exception as exc:
            self.log.warning("Chat history unreadable from the chat model: %s", exc)
            first = exc
        try:
            return history_of(self._lines_from_file(current))
        except Exception as exc:
            self.log.warning("Chat history unreadable from the chat file: %s", exc)
            return ChatHistory(unreadable=f"{type(first).__name__}: {first}")

    # -- settings --------------------------------------------------------------------------

    def resolve_workspace(self) -> Workspace:
        """The workspace the pre-flight reads (see the module docstring)."""
        configured = self.workspace or get_setting("persona.workspace", "")
        if configured:
            return Workspace(Path(configured).expanduser())
        try:
            folder = self.get_workspace_dir()
        except Exception:
            folder = None
        if folder and holds_workspace(folder):
            return Workspace(folder)
        return open_workspace(None)

    def preflight_enabled(self, history: ChatHistory) -> bool | None:
        """``False`` when off for this chat, ``True`` when a chat turned it on, ``None``
        when the lab's Super Context flag decides (the Thread reads it)."""
        if history.preflight is not None:
            return history.preflight
        if not self.preflight or not get_setting("persona.preflight", True):
            return False
        return None

    # -- a message -------------------------------------------------------------------------

    async def process_message(self, message: ChatMessage) -> None:
        try:
            history = self.read_history(message)
            command = parse_command(message.body)
            if command is not None:
                enabled = command == "on" if command in ("on", "off") else None
                if enabled is None:
                    state = self.preflight_enabled(history)
                    enabled = state is not False
                self.send_message(command_reply(command, enabled))
                return
            if history.unreadable:
                self.send_message(
                    failure_markdown(
                        "The chat's history could not be read; answering without it",
                        history.unreadable,
                    )
                )
            await self._answer(message.body, history)
        except Exception as exc:
            # A failure is a message in the chat, never a persona stuck on "typing".
            self.log.exception("SuperContext persona failed")
            self.send_message(failure_markdown("The turn failed", f"{type(exc).__name__}: {exc}"))
        finally:
            self.clear_status()

    def _run_turn(
        self,
        body: str,
        history: ChatHistory,
        workspace: Workspace,
        put: Callable[[str, Any], None],
    ) -> None:
        """The worker: one Thread turn, reported to the event loop through ``put``."""
        try:
            enabled = self.preflight_enabled(history)
            if history.unreadable:
                enabled = False  # no history: whether the chat is new is unknown
            thread = Thread(
                workspace,
                transcript=history.transcript,
                super_context_enabled=enabled,
                archive=False,
            )
            with RunProgress(lambda progress: put("status", progress)) as progress:
                progress.turn_of(thread, body)
                try:
                    # The offline stand-in writes plain lines; a model writes Markdown.
                    plain = isinstance(thread.orchestrator_model, OfflineOrchestratorModel)
                except SupercontextError:
                    plain = False  # the turn reports the broken route itself
                shown = plain_lines if plain else str
                result = thread.send(
                    body,
                    on_text=lambda text: put("text", shown(text)),
                    on_step=progress.on_step,
                    on_prepared=lambda prepared: put("prepared", prepared),
                )
            put("done", result)
        except Exception as exc:
            put("error", exc)

    async def _answer(self, body: str, history: ChatHistory) -> None:
        loop = asyncio.get_running_loop()
        events: asyncio.Queue[Event] = asyncio.Queue()
        streaming = False
        stop = self._stop = asyncio.Event()

        def put(kind: str, value: Any) -> None:
            # A closed loop: a stopped turn's worker has no one left to tell.
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(events.put_nowait, (kind, value))

        async def next_event() -> Event:
            # Status updates come until the reply streams; stream_message owns the
            # indicator from then on.
            while True:
                if stop.is_set():
                    return "stopped", None
                try:
                    kind, value = await asyncio.wait_for(events.get(), 0.2)
                except asyncio.TimeoutError:
                    continue
                if kind != "status":
                    return kind, value
                if not streaming and isinstance(value, Progress):
                    self.set_status(f"is {value.describe()}…")

        self.set_status("is reading the workspace…")
        workspace = await loop.run_in_executor(None, self.resolve_workspace)
        worker = loop.run_in_executor(None, self._run_turn, body, history, workspace, put)
        kind, value = await next_event()
        if kind == "prepared" and isinstance(value, TurnResult):
            shown = bundle_markdown(value, workspace_name(workspace)) or skip_note(value)
            if shown:
                self.send_message(shown)
        outcome: list[Event] = [] if kind == "prepared" else [(kind, value)]

        async def reply() -> AsyncIterator[str]:
            if outcome:
                return
            streamed = False
            while True:
                kind, value = await next_event()
                if kind == "text":
                    streamed = True
                    yield str(value)
                    continue
                outcome.append((kind, value))
                done = value if kind == "done" and isinstance(value, TurnResult) else None
                if done is not None and not streamed and done.orchestrator_error is None:
                    # A model that does not stream hands the reply whole.
                    yield done.reply
                return

        streaming = True
        await self.stream_message(reply())
        kind, value = outcome[-1] if outcome else ("error", RuntimeError("no outcome"))
        if kind == "stopped":
            self.send_message("*Stopped.*")
            return
        await worker
        if kind == "error":
            what = (
                "The lab's configuration stopped the turn"
                if isinstance(value, SupercontextError)
                else "The turn failed"
            )
            self.send_message(failure_markdown(what, f"{type(value).__name__}: {value}"))
        elif isinstance(value, TurnResult) and value.orchestrator_error is not None:
            self.send_message(
                failure_markdown(
                    f"The model route ({value.orchestrator_model or 'orchestrator'}) failed",
                    value.orchestrator_error,
                )
            )
