"""A saved thread: the JSON file :meth:`Thread.save` writes and :meth:`Thread.load` reads.

The file's shape is written and checked here, in one place. A saved thread is a file a
user may edit, move or receive from someone else, so it is read to a bound, and a damaged
one fails with one :class:`~supercontext_lab.errors.WorkspaceError` naming the file and
the cause, instead of an ``AttributeError`` or a ``KeyError`` at the next turn.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .._atomic import write_atomic
from .._bounded import json_loads
from .._confine import read_limited
from .._text import one_line
from ..bundle.lookalikes import neutralise
from ..config.secrets import mask, mask_data
from ..errors import ModelError, PathRefusedError, WorkspaceError
from ..models.base import Message
from ..models.wire import messages_from_openai

__all__ = ["MAX_SAVED_THREAD_BYTES", "SavedThread", "read_saved_thread", "write_saved_thread"]

MAX_SAVED_THREAD_BYTES = 64 * 1024 * 1024
"""Largest saved thread :meth:`Thread.load` reads: a transcript of long tool results is a
few megabytes; anything past this is refused rather than read into memory."""


def write_saved_thread(
    path: str | os.PathLike[str],
    *,
    thread_id: str,
    goal: str | None,
    super_context_enabled: bool,
    workspace: Path,
    turns: int,
    prepared_markers: list[dict[str, Any]],
    transcript: Sequence[Message],
) -> Path:
    """Write a thread's goal, transcript and markers to ``path`` as JSON."""
    target = Path(path)
    # What was said is saved with secrets masked (a key the user typed, or one quoted from
    # a note); the workspace's path is kept as it is, so the thread loads.
    data = {
        "thread_id": thread_id,
        "goal": None if goal is None else mask(goal),
        "super_context_enabled": super_context_enabled,
        "workspace": str(workspace),
        "turns": turns,
        "prepared_markers": mask_data(prepared_markers),
        "transcript": mask_data([m.to_openai() for m in transcript]),
    }
    # A unique temporary file, fsynced, mode kept: two saves never collide and a crash
    # leaves the previous save whole.
    return write_atomic(target, json.dumps(data, indent=2, ensure_ascii=False))


@dataclass(frozen=True)
class SavedThread:
    """A saved thread as read and checked by :func:`read_saved_thread`."""

    source: Path
    options: dict[str, Any]
    """The thread's keyword arguments: ``workspace``, ``goal``, ``transcript``, ``thread_id``."""
    turns: int | None
    """How many turns the thread had when it was saved (``None`` in an older save)."""
    prepared_markers: list[dict[str, Any]]

    def markers_within(self, turns_before: int) -> list[dict[str, Any]]:
        """A copy of the saved markers, each naming one of the ``turns_before`` turns the
        resumed thread has had; a marker naming any other turn raises
        :class:`~supercontext_lab.errors.WorkspaceError`."""
        stale = [m["turn"] for m in self.prepared_markers]
        if any(not 0 <= turn < turns_before for turn in stale):
            raise WorkspaceError(
                f"{self.source}: cannot resume the saved thread: its 'prepared_markers' name a "
                f"turn it has not had (it had {turns_before}); save the thread again."
            )
        return [dict(m) for m in self.prepared_markers]


def read_saved_thread(path: str | os.PathLike[str]) -> SavedThread:
    """Read and check the saved thread at ``path``.

    ``path`` must be a regular file of at most :data:`MAX_SAVED_THREAD_BYTES`; a FIFO,
    a device, a folder, a larger file or one that is not UTF-8 JSON raises
    :class:`~supercontext_lab.errors.WorkspaceError` naming the file and the cause.
    """
    source = Path(path)
    try:
        # A regular file only, opened without blocking and read to a bound: a FIFO, a
        # device or a huge file given as a saved thread is refused, never waited on.
        raw, more = read_limited(source, MAX_SAVED_THREAD_BYTES)
        if more:
            raise WorkspaceError(
                f"{source}: cannot read the saved thread (it is larger than "
                f"{MAX_SAVED_THREAD_BYTES >> 20} MiB)."
            )
        data = json_loads(raw.decode("utf-8"))
    except (PathRefusedError, OSError, ValueError) as exc:
        raise WorkspaceError(one_line(f"{source}: cannot read the saved thread ({exc}).")) from None
    # A saved thread is a file a user may edit or receive: check its shape here, so a
    # damaged one fails with a message naming it instead of an AttributeError or a
    # KeyError at the next turn.
    problem = _saved_thread_problem(data)
    if problem is None:
        try:
            transcript = messages_from_openai(data.get("transcript", []))
        except ModelError as exc:
            problem = f"its transcript is invalid ({exc})"
    if problem is not None:
        raise WorkspaceError(
            f"{source}: cannot resume the saved thread: {problem}; save the thread again."
        )
    goal = data.get("goal")
    options: dict[str, Any] = {
        "workspace": data.get("workspace"),
        # The goal goes into every turn's system prompt: a saved one is read as one
        # line with nothing in it passing for the prepared block's structure.
        "goal": one_line(neutralise(goal)) or None if goal is not None else None,
        "transcript": transcript,
        "thread_id": data.get("thread_id"),
    }
    return SavedThread(source, options, data.get("turns"), data.get("prepared_markers", []))


def _saved_thread_problem(data: Any) -> str | None:
    """Why ``data`` (a decoded saved thread) cannot be resumed, or ``None``."""
    if not isinstance(data, dict):
        return f"it holds a JSON {type(data).__name__}, not an object"
    for key in ("workspace", "goal", "thread_id"):
        if not isinstance(data.get(key), str | None):
            return f"'{key}' must be a string"
    turns = data.get("turns")
    if turns is not None and (isinstance(turns, bool) or not isinstance(turns, int) or turns < 0):
        return "'turns' must be a whole number of turns"
    markers = data.get("prepared_markers", [])
    if not isinstance(markers, list) or not all(
        isinstance(m, dict)
        and isinstance(m.get("turn"), int)
        and "has_enough_context" in m
        and isinstance(m["has_enough_context"], bool | None)
        for m in markers
    ):
        return "'prepared_markers' must be a list of {turn, has_enough_context} objects"
    return None
