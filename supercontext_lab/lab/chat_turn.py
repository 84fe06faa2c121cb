"""What the Jupyter AI persona says in a chat, without Jupyter: the bundle message, the
notes, the chat's history as a transcript and the ``/preflight`` command.

:mod:`supercontext_lab.lab.persona` is the only module that imports jupyter-ai; it hands
this one plain :class:`ChatLine` records and posts the Markdown it gets back, so every
word the persona writes is tested here without a server.

The chat renders Markdown (and HTML), and a bundle quotes the user's notes, memory and
a model's words: every such string goes through :func:`~supercontext_lab._markdown.md_inline`,
the one escaping helper of the lab's Markdown, so no note can open a link, an image, a
heading or raw HTML in the chat. Error texts are masked (:class:`~supercontext_lab.models.boundary.Secrets`)
before they are escaped, as everywhere a failure is shown.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from .._markdown import md_inline
from .._text import one_line
from ..bundle import ContextBundle
from ..gate import ColdStartReason
from ..harness.turn import TurnResult
from ..models.base import Message
from ..models.boundary import Secrets

__all__ = [
    "MAX_HISTORY_MESSAGES",
    "PREFLIGHT_COMMAND",
    "ChatHistory",
    "ChatLine",
    "Command",
    "bundle_markdown",
    "command_reply",
    "failure_markdown",
    "history_of",
    "parse_command",
    "plain_lines",
    "skip_note",
]

PREFLIGHT_COMMAND = "/preflight"
"""The slash command that turns the pre-flight off (``/preflight off``) or on again for
one chat, or says whether it is on (``/preflight``)."""

MAX_HISTORY_MESSAGES = 60
"""At most this many of the chat's latest messages reach the orchestrator: a long chat
must not outgrow a small local model's context window (the bundle of the first turn is
lost first, which is why it is also in the reply's own words)."""

Command = Literal["on", "off", "status", "unknown"]

_COMMAND_WORDS: dict[str, Command] = {
    "": "status",
    "status": "status",
    "on": "on",
    "off": "off",
    "enable": "on",
    "disable": "off",
}

# The gate's reasons a person sees as a note on the first message: the ones that belong
# to this message. The structural ones (the chat already has a conversation, the flag or
# the command turned it off) are said once, by the command, not on every turn.
_QUIET = frozenset(
    {
        ColdStartReason.PRIOR_CONVERSATION,
        ColdStartReason.NOT_FIRST_TURN,
        ColdStartReason.NOT_ORCHESTRATOR,
        ColdStartReason.SUPER_CONTEXT_DISABLED,
    }
)

_INSTALLED = {True: "installed", False: "not installed", None: "installed: unknown"}


@dataclass(frozen=True)
class ChatLine:
    """One message of the chat as the persona reads it."""

    role: Literal["user", "assistant"]
    """``assistant`` for any AI persona (this one or another), ``user`` for people."""
    text: str
    own: bool = False
    """Whether this persona wrote it."""


@dataclass
class ChatHistory:
    """The chat before the message being answered, as the orchestrator sees it."""

    transcript: list[Message] = field(default_factory=list)
    preflight: bool | None = None
    """The last ``/preflight on|off`` of the chat (``None``: never given)."""
    unreadable: str | None = None
    """Why the history could not be read (the turn then treats the chat as not new)."""


def parse_command(body: str) -> Command | None:
    """``"on"``, ``"off"``, ``"status"`` or ``"unknown"`` for a ``/preflight …``
    message, ``None`` for any other message."""
    words = body.strip().split(None, 1)
    if not words or words[0].lower() != PREFLIGHT_COMMAND:
        return None
    rest = words[1].strip().lower() if len(words) > 1 else ""
    return _COMMAND_WORDS.get(rest, "unknown")


def command_reply(command: Command, enabled: bool) -> str:
    """What the persona answers to ``/preflight …``; ``enabled`` is the state after it."""
    if command == "unknown":
        return (
            "Use `/preflight off` to answer without the pre-flight in this chat, "
            "`/preflight on` to run it again on a new chat's first message, or "
            "`/preflight` to see whether it is on."
        )
    state = "on" if enabled else "off"
    if command == "status":
        return f"The pre-flight is **{state}** for this chat."
    return f"The pre-flight is now **{state}** for this chat."


def history_of(lines: Sequence[ChatLine]) -> ChatHistory:
    """The transcript of ``lines`` (the chat before the message being answered).

    ``/preflight`` commands and this persona's answers to them are left out, so a chat
    whose first words were ``/preflight off`` is still a new conversation for the gate;
    consecutive messages of one role are joined (a bundle and its reply are one
    assistant turn), because some chat templates refuse two in a row.
    """
    history = ChatHistory()
    answering_command = False
    for line in lines:
        if not line.text.strip():
            continue
        if line.role == "user":
            command = parse_command(line.text)
            answering_command = command is not None or line.text.lstrip().startswith("/")
            if command in ("on", "off"):
                history.preflight = command == "on"
            if answering_command:
                continue
        elif answering_command and line.own:
            continue
        transcript = history.transcript
        if transcript and transcript[-1].role == line.role:
            joined = f"{transcript[-1].content}\n\n{line.text}"
            transcript[-1] = Message(role=line.role, content=joined)
        else:
            transcript.append(Message(role=line.role, content=line.text))
    del history.transcript[:-MAX_HISTORY_MESSAGES]
    return history


def _fact_lines(bundle: ContextBundle, esc: Callable[[str], str]) -> tuple[list[str], str | None]:
    facts: list[str] = []
    missing: str | None = None
    for line in bundle.summary_lines:
        text = line.text.strip()
        if not line.bullet and text.lower().startswith("missing:"):
            missing = text.split(":", 1)[1].strip().rstrip(".") or None
        elif text:
            facts.append(f"- {esc(text)}")
    return facts, missing


def bundle_markdown(result: TurnResult, workspace: str) -> str | None:
    """The one message that shows the turn's bundle, or ``None`` when it has none.

    Goal, the cited facts as a list, the recommended tools and skills, and whether the
    pre-flight found enough, with what is missing. ``workspace`` names the folder read.
    A configured key quoted by a note is masked: the pack quotes notes without a model
    boundary in between.
    """
    bundle = result.bundle
    if bundle is None:
        return None
    secrets = Secrets.in_use()

    def esc(text: str) -> str:
        # Masked before it is escaped: escaping would hide the key from the mask.
        return md_inline(secrets.masked(text))

    design = result.prepared_by or result.design
    # The turn's timings are written after the reply; the run's own time is known now.
    took = result.scout.elapsed_ms if result.scout is not None else None
    header = f"**Pre-flight** ({esc(design)}"
    header += f", {took:.0f} ms)" if took is not None else ")"
    out = [f"{header} · workspace {esc(workspace)}", ""]
    goal = esc(bundle.proposed_goal) if bundle.proposed_goal else "*none*"
    out += [f"**Goal:** {goal}", ""]
    facts, missing = _fact_lines(bundle, esc)
    out += ["**Facts**", "", *(facts or ["*none*"]), ""]
    tools = [
        f"- **{esc(call.tool)}**" + (f" — {esc(call.why)}" if call.why else "")
        for call in bundle.recommended_tool_calls
    ]
    out += ["**Recommended tools**", "", *(tools or ["*none*"]), ""]
    skills = [
        f"- **{esc(skill.skill)}** ({_INSTALLED[skill.installed]})"
        + (f" — {esc(skill.why)}" if skill.why else "")
        for skill in bundle.recommended_skills
    ]
    out += ["**Recommended skills**", "", *(skills or ["*none*"]), ""]
    enough = {True: "yes", False: "no", None: "unknown"}[bundle.has_enough_context]
    line = f"**Enough context:** {enough}"
    if missing:
        line += f" — missing: {esc(missing)}"
    out.append(line)
    if result.preflight_note:
        out += ["", f"*{esc(result.preflight_note)}*"]
    return "\n".join(out)


def skip_note(result: TurnResult) -> str | None:
    """A line saying why the chat's first message went on without a bundle, or ``None``
    when there is nothing to say (a bundle, or a reason that is not this message's)."""
    reason = result.reason
    if result.bundle is not None or reason is None or reason in _QUIET:
        return None
    text = f"No pre-flight for this message ({reason.value}): {reason.explanation}"
    if result.reason_detail:
        text += f" {one_line(result.reason_detail, 300)}"
    return f"*{md_inline(Secrets.in_use().masked(text))}*"


def failure_markdown(what: str, problem: str) -> str:
    """A failure as a chat message: ``what`` failed, ``problem`` (masked, one line)."""
    text = one_line(Secrets.in_use().masked(problem), 600)
    return f"**{md_inline(what)}**: {md_inline(text)}"


def plain_lines(text: str) -> str:
    """Plain text (the offline stand-in's reply) with its line breaks kept in Markdown:
    each newline becomes a hard break. Works piece by piece on a stream."""
    return text.replace("\n", "  \n")
