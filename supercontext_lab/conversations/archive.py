"""The thread archive: each completed turn of a thread kept as a past conversation.

A :class:`~supercontext_lab.Thread` archives every turn it completes (the user's message
as typed, without the prepared context in front of it, and the reply, each with the
time) into its workspace's conversations, under the thread's id, so a new thread on the
same workspace can recall what this one settled. ``[memory] archive_threads = false`` in
config.toml, or ``Thread(..., archive=False)``, turns it off; evaluations never archive.
A thread whose turns only repeat a stored conversation word for word is not stored again.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Sequence

from .._text import one_line
from ..config import get_setting
from ..sources.workspace import Workspace
from .recall import store_for
from .records import Turn, clean_text, conversation_id, iso_time
from .store import ConversationStore

__all__ = ["ARCHIVE_SETTING", "archive_enabled", "archive_turn"]

ARCHIVE_SETTING = "memory.archive_threads"
"""The config.toml key that turns the thread archive off (``[memory] archive_threads``)."""


def archive_enabled(explicit: bool | None = None) -> bool:
    """Whether a thread archives its turns: ``explicit`` when given, else the lab's
    ``memory.archive_threads`` setting (default true)."""
    if explicit is not None:
        return explicit
    return get_setting(ARCHIVE_SETTING, True)


def archive_turn(
    workspace: Workspace,
    thread_id: str,
    message: str,
    reply: str,
    *,
    at: _dt.datetime | None = None,
    before: Sequence[tuple[str, str]] = (),
) -> str | None:
    """Append one completed turn (``message`` and ``reply``), after the thread's earlier
    turns not stored yet (``before``, each a message and its reply), to the conversation
    of the thread ``thread_id`` in ``workspace``; returns the conversation id. The first
    turn names the conversation.

    A new conversation that would only repeat a stored one, word for word (a notebook run
    again sends the same first message), is not stored: ``None`` is returned, and the
    thread hands the turn back in ``before`` if it goes on. Raises the store's or the
    index's errors."""
    moment = at or _dt.datetime.now(_dt.timezone.utc)
    when = iso_time(moment.timestamp())
    turns: list[Turn] = []
    for said, answered in [*before, (message, reply)]:
        turns.append(Turn("user", clean_text(said), when))
        if answered.strip():
            turns.append(Turn("assistant", clean_text(answered), when))
    ident = conversation_id(thread_id)
    store = store_for(workspace, create=True)
    assert store is not None  # create=True always opens one
    # The title is the message as stored (masked), never as typed.
    title = one_line(turns[0].content, 80, at_word=True)
    if store.info(ident) is None and _stored_already(store, title, turns):
        return None
    store.append(ident, turns, workspace.memory, title=title)
    return ident


def _stored_already(store: ConversationStore, title: str, turns: Sequence[Turn]) -> bool:
    """Whether a stored conversation holds exactly ``turns`` (their words and roles)."""
    wanted = [(turn.role, turn.content) for turn in turns]
    for info in store.conversations():
        if info.title != title or info.turns != len(turns):
            continue
        stored = store.get(info.id)
        if stored is not None and [(t.role, t.content) for t in stored.turns] == wanted:
            return True
    return False
