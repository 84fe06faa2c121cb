"""The orchestrator's part of a turn: its prompt, the tools it is offered, its rounds.

The orchestrator sees the thread's goal, the transcript and the message as sent (with the
prepared block when the turn was prepared). It is offered the workspace's orchestrator
tools, except ``agent_prepare_context`` on a turn prepared for its message (a bundle
from an earlier lookup, ``prefetch``, leaves it offered). The lab shows the tool calls
it makes but runs only ``agent_prepare_context``; every other call is answered with a line
saying it was not executed. It gets at most :data:`_MAX_ORCHESTRATOR_ROUNDS` replies, the
last offered no tools, so a turn always ends with a reply or an error.

With the ``tool-only`` design the orchestrator is also offered the read-only
``memory_recall`` (:func:`~.baselines.recall_tools`), which the lab does run: at most
:data:`_MAX_ORCHESTRATOR_ROUNDS` less one rounds of calls, each result masked and cut to
:data:`_MAX_RECALL_CHARS`. With the ``system-tail`` placement the prepared block
(``result.tail_context``) is a system message after the message, in this request only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .._bounded import json_loads
from ..config.secrets import mask
from ..errors import ModelError, WorkspaceError
from ..models.base import ChatModel, Message, ToolCall, ToolSpec
from ..sources.workspace import Workspace
from ..tools import ToolRegistry
from .baselines import RECALL_TOOL
from .turn import TurnResult

__all__ = ["PrepareContext", "answer_tool_call", "call_orchestrator", "orchestrator_specs"]

_ORCHESTRATOR_PROMPT = (
    "You are the orchestrator of a supercontext_lab thread. Answer the user's message. "
    "When a prepared context bundle is present, ground your reply in it."
)
_MAX_ORCHESTRATOR_ROUNDS = 4
_MAX_RECALL_CHARS = 6_000
"""A ``memory_recall`` result the orchestrator is sent, at most (the client's window check
cuts further when it must)."""
_FREE_ARGS: dict[str, Any] = {"type": "object", "additionalProperties": True}

PrepareContext = Callable[[str, str | None], str]
"""The thread's ``agent_prepare_context``: ``(question, focus) -> envelope or why none``."""


def orchestrator_specs(workspace: Workspace, prepared: bool) -> list[ToolSpec]:
    """The tools offered to the orchestrator: the workspace's, without
    ``agent_prepare_context`` when the turn is already prepared."""
    return [
        ToolSpec(tool.name, tool.description, _FREE_ARGS)
        for tool in workspace.orchestrator_tools
        if not (prepared and tool.name == "agent_prepare_context")
    ]


def answer_tool_call(
    call: ToolCall, prepare_context: PrepareContext, recall: ToolRegistry | None = None
) -> str:
    """What the orchestrator is told for its tool call ``call``; ``recall`` holds the
    read-only tools it may run (``tool-only``: ``memory_recall``)."""
    if recall is not None and call.name == RECALL_TOOL and call.name in recall:
        found = recall.call(call.name, call.arguments or "{}")
        text = mask(found.content)
        return text if len(text) <= _MAX_RECALL_CHARS else text[:_MAX_RECALL_CHARS] + " [cut]"
    if call.name == "agent_prepare_context":
        try:
            args = json_loads(call.arguments or "{}")
        except ValueError:
            return "error: agent_prepare_context got invalid JSON arguments."
        if not isinstance(args, dict) or not isinstance(args.get("question"), str):
            return "error: agent_prepare_context needs a 'question' string argument."
        focus = args.get("focus")
        return prepare_context(args["question"], focus if isinstance(focus, str) else None)
    return (
        f"'{call.name}' was not executed: supercontext_lab shows the orchestrator's "
        "tool calls but runs none of them except agent_prepare_context."
    )


def call_orchestrator(
    result: TurnResult,
    *,
    workspace: Workspace,
    model: Callable[[], ChatModel],
    goal: str | None,
    transcript: Sequence[Message],
    prepare_context: PrepareContext,
    on_text: Callable[[str], None] | None,
    recall: ToolRegistry | None = None,
) -> None:
    """Ask the orchestrator for the reply to ``result.sent_message`` and record on
    ``result`` what it was offered, what it called, what it said and what it cost.

    ``model`` is asked for the orchestrator's model once the tools are listed (building
    it may start a local server). A model error is the turn's ``orchestrator_error``,
    not an exception. ``recall``: the read-only tools the orchestrator may run itself
    (``tool-only``).
    """
    system = _ORCHESTRATOR_PROMPT + (f"\n\n## Thread goal\n{goal}" if goal else "")
    messages = [
        Message(role="system", content=system),
        *transcript,
        Message(role="user", content=result.sent_message),
    ]
    if result.tail_context is not None:
        messages.append(Message(role="system", content=result.tail_context))
    try:
        specs = orchestrator_specs(workspace, result.prepared_for_message)
    except WorkspaceError as exc:
        # A broken catalogue must not break the turn: the orchestrator goes on without
        # tools and the turn says why.
        specs = []
        result.notes.append(f"no orchestrator tools offered: {exc}")
    if recall is not None:
        # The runnable memory_recall, with its schema, stands where the catalogue's
        # shown-only entry of the same name was.
        specs = [*(s for s in specs if s.name != RECALL_TOOL), *recall.specs([RECALL_TOOL])]
    result.orchestrator_tools = [spec.name for spec in specs]
    chat = model()
    result.orchestrator_model = chat.name
    try:
        for round_ in range(_MAX_ORCHESTRATOR_ROUNDS):
            last = round_ == _MAX_ORCHESTRATOR_ROUNDS - 1
            reply = chat.complete(
                messages, tools=None if last else (specs or None), on_text=on_text
            )
            result.usage = result.usage + reply.usage
            messages.append(reply.message)
            if not reply.message.tool_calls or last:
                result.reply = reply.message.content or ""
                break
            for call in reply.message.tool_calls:
                result.orchestrator_tool_calls.append(call.name)
                messages.append(
                    Message(
                        role="tool",
                        content=answer_tool_call(call, prepare_context, recall),
                        tool_call_id=call.id,
                        name=call.name,
                    )
                )
    except ModelError as exc:
        result.orchestrator_error = str(exc)
    result.orchestrator_messages = messages
