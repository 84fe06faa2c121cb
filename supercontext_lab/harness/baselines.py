"""The two baselines a reviewer asks for beside the pre-flight designs (SPEC §16).

* ``full-context`` (:func:`full_context_envelope`): no scout and no ranking. Every note of
  the workspace, whole, in a stable order (PROFILE.md, MEMORY.md, then the memory notes
  by path), in one envelope given with the first message. What the orchestrator's declared
  window (:class:`~supercontext_lab.models.window.ContextBudget`) cannot hold is left out
  at note boundaries, never cut inside a note, and the envelope says what was left out.
  Every text is masked (:func:`~supercontext_lab.config.secrets.mask`) and made safe by the
  one envelope writer, as any untrusted text is.
* ``tool-only`` (:func:`recall_tools`): no pre-flight; the orchestrator is offered the
  read-only ``memory_recall`` of the scout's registry, and only it, to call itself.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ..bundle.render import write_envelope
from ..config.secrets import mask
from ..errors import MemoryIndexError
from ..models.base import ChatModel, Message
from ..models.window import ContextBudget, conversation_bytes
from ..sources.memory.files import read_memory_file, scan_memory_folder
from ..sources.memory.schema import SCHEMA_VERSION
from ..sources.memory.seal import Seal
from ..sources.workspace import Workspace
from ..tools import ToolRegistry, build_scout_registry

__all__ = [
    "FULL_CONTEXT_LABEL",
    "RECALL_TOOL",
    "FullContext",
    "full_context_envelope",
    "full_context_room",
    "recall_tools",
    "workspace_notes",
]

FULL_CONTEXT_LABEL = "full-context (every note, no model)"
RECALL_TOOL = "memory_recall"
"""The one tool the ``tool-only`` orchestrator may run: read-only, in the scout's registry."""

_WRAPPER_BYTES = 2_000
"""Room kept for what surrounds the notes: the status note, heading, intro, the envelope's
keys and the left-out line."""
_NAMED_LEFT_OUT = 20
"""Notes named in the left-out line; the rest are counted."""


class FullContext:
    """The full-context envelope and what it holds: the notes sent and those left out."""

    def __init__(self, envelope: str, sent: list[str], left_out: list[str]) -> None:
        self.envelope, self.sent, self.left_out = envelope, sent, left_out


def workspace_notes(workspace: Workspace) -> list[tuple[str, str]]:
    """``(source, text)`` of every note of ``workspace`` in the stable order (see the
    module docstring); the source is what a bundle cites: ``profile``, ``memory``,
    ``memory: <namespace>/<key>``. Empty texts are left out."""
    notes = [("profile", workspace.profile_md), ("memory", workspace.memory_md)]
    try:
        files, _, _ = scan_memory_folder(
            workspace.root, allow_outside_links=workspace.allow_outside_links
        )
    except MemoryIndexError:
        files = {}
    seal = Seal.for_folder(workspace.root, SCHEMA_VERSION)
    for rel in sorted(files):
        row = read_memory_file(files[rel], rel, seal)
        if row is not None:
            notes.append((f"memory: {row.namespace}/{row.key}", row.content))
    return [(source, text) for source, text in notes if text.strip()]


def full_context_room(
    model: ChatModel, messages: Sequence[Message], reply_tokens: int | None = None
) -> int:
    """Bytes the notes may take in a request to ``model`` that already holds ``messages``
    (its system prompt, the thread so far, the message): its window less the reply's room,
    less what is there, less the wrapper's room; at least 0."""
    budget = ContextBudget.of(model.info, reply_tokens)
    return max(budget.prompt_bytes - conversation_bytes(messages) - _WRAPPER_BYTES, 0)


def _cost(text: str) -> int:
    # As the request body carries it: JSON-escaped, UTF-8.
    return len(json.dumps(text, ensure_ascii=False).encode("utf-8")) - 2


def full_context_envelope(workspace: Workspace, room_bytes: int) -> FullContext:
    """Every note of ``workspace`` that fits ``room_bytes``, whole, in the stable order; a
    note that would not fit is left out whole and a shorter one after it may still fit."""
    parts: list[str] = []
    sent: list[str] = []
    left_out: list[str] = []
    used = 0
    for source, text in workspace_notes(workspace):
        part = f"Note ({source}):\n{mask(text).strip()}\n"
        cost = _cost(part)
        if used + cost <= room_bytes:
            parts.append(part)
            sent.append(source)
            used += cost
        else:
            left_out.append(source)
    if left_out:
        named = ", ".join(left_out[:_NAMED_LEFT_OUT])
        more = len(left_out) - _NAMED_LEFT_OUT
        parts.append(
            f"Left out to fit the orchestrator's context window: {len(left_out)} of "
            f"{len(left_out) + len(sent)} notes ({named}{f', and {more} more' if more > 0 else ''})."
        )
    envelope = write_envelope(has_enough_context=None, proposed_goal=None, summary="\n".join(parts))
    return FullContext(envelope, sent, left_out)


def recall_tools(workspace: Workspace, conversation_id: str) -> ToolRegistry:
    """The ``tool-only`` orchestrator's tools: the scout registry's ``memory_recall`` alone
    (read-only), never returning the running thread's own archived turns."""
    registry = build_scout_registry(workspace, exclude_conversations=[conversation_id])
    tool = registry.check_allowed(RECALL_TOOL, [RECALL_TOOL])
    return ToolRegistry([tool])
