"""The line that tells a notebook's user, once, that a thread's turns are archived.

A :class:`~supercontext_lab.harness.Thread` keeps every turn it completes among its
workspace's past conversations (SPEC §15), where a later thread's scout finds it. That is
the point of the archive, but a user who does not know it is surprised to find last
week's test messages quoted back. So the first turn a kernel archives, whichever front
end sent it (``%%chat`` or the composer), says where it went and how to turn it off; the
turns after it say nothing more, and a turn that was not archived says nothing at all.
"""

from __future__ import annotations

import threading

from ..conversations.store_file import STORE_FILE
from ..harness.turn import TurnResult
from ..sources.memory import INDEX_DIR
from ..sources.workspace import Workspace
from .shown import workspace_name

__all__ = ["ARCHIVE_OFF", "archive_notice", "reset_archive_notice"]

ARCHIVE_OFF = "%config SupercontextMagics.archive = False"
"""The switch that keeps this kernel's new threads out of the archive."""


class _Once:
    """A thing said once per session, whichever thread asks first."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._said = False

    def take(self) -> bool:
        """True the first time (and after a reset to not said), False after."""
        with self._lock:
            first, self._said = not self._said, True
        return first

    def reset(self, said: bool) -> None:
        with self._lock:
            self._said = said


_NOTICE = _Once()


def archive_notice(turn: TurnResult, workspace: Workspace) -> str | None:
    """The notice for ``turn`` of a thread on ``workspace``: the line the first archived
    turn of this Python session carries, ``None`` for every other turn."""
    if not turn.archived or not _NOTICE.take():
        return None
    store = f"{workspace_name(workspace)}/{INDEX_DIR}/{STORE_FILE}"
    return (
        f"This thread is saved to {store} as a conversation the scout can recall in later "
        f"threads; turn it off with {ARCHIVE_OFF} (or Thread(archive=False), or "
        "[memory] archive_threads = false in config.toml)."
    )


def reset_archive_notice(*, said: bool = False) -> None:
    """Start over as a new session would (the next archived turn carries the notice), or
    as one that has said it already (``said``)."""
    _NOTICE.reset(said)
