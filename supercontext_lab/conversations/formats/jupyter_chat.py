"""A jupyterlab-chat ``.chat`` document (what jupyter-ai 3 writes):
``{"messages": [...], "users": {...}, "metadata": {"id": ...}}``.

A message's ``sender`` names a user, and a user marked ``"bot": true`` (an AI persona)
speaks as the assistant. Deleted messages are left out; with more than one person in the
chat each user turn starts with who wrote it, so a recalled turn says whose words it
quotes.

The title is the document's own (``metadata.title``), else the file's name, unless that
is the name the chat got when it was made and never renamed (``untitled.chat``,
``untitled1.chat``): every such chat would then read "untitled" on its chips, so its
first message (one line, bounded) names it instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..._text import one_line
from ..reading import ParsedExport
from ..records import Role, Turn, turn_from
from .base import Collector, as_list, kind_of

__all__ = ["parse_jupyter_chat"]

# The names jupyterlab-chat gives a new chat ("untitled", "untitled1", …).
_UNRENAMED = re.compile(r"untitled[-_ ]?\d*", re.IGNORECASE)


def _sender_name(sender: Any) -> str:
    if isinstance(sender, str):
        return sender
    if isinstance(sender, Mapping):
        for key in ("username", "id", "name"):
            if isinstance(sender.get(key), str):
                return str(sender[key])
    return ""


def parse_jupyter_chat(data: Any, source: str, name: str) -> ParsedExport:
    """A jupyterlab-chat ``.chat`` document (see the module docstring)."""
    collector = Collector(source, "jupyter-chat")
    if not isinstance(data, Mapping):
        raise collector.error("", f"a .chat document is an object, not {kind_of(data)}")
    messages = as_list(data.get("messages"), collector, "", "'messages'")
    users: Mapping[str, Any] = data["users"] if isinstance(data.get("users"), Mapping) else {}
    metadata: Mapping[str, Any] = (
        data["metadata"] if isinstance(data.get("metadata"), Mapping) else {}
    )

    def user(sender: str, raw: Any) -> Mapping[str, Any]:
        known = users.get(sender)
        if isinstance(known, Mapping):
            return known
        return raw if isinstance(raw, Mapping) else {}

    def is_bot(sender: str, raw: Any) -> bool:
        # jupyter-ai's personas are users marked as bots; older files name them only.
        found = user(sender, raw)
        return found.get("bot") is True or sender.startswith("jupyter-ai-personas")

    people = {
        _sender_name(m.get("sender"))
        for m in messages
        if isinstance(m, Mapping) and not is_bot(_sender_name(m.get("sender")), m.get("sender"))
    }
    turns: list[Turn] = []
    first = ""  # the first message's own words, before any "who: " prefix
    for index, message in enumerate(messages, start=1):
        if not isinstance(message, Mapping):
            raise collector.error(f"message {index}", f"must be an object, not {kind_of(message)}")
        if message.get("type", "msg") != "msg" or message.get("deleted") is True:
            continue
        body = message.get("body")
        if not isinstance(body, str):
            raise collector.error(
                f"message {index}", f"'body' must be a string, not {kind_of(body)}"
            )
        if not body.strip():
            continue
        first = first or body
        raw = message.get("sender")
        sender = _sender_name(raw)
        role: Role = "assistant" if is_bot(sender, raw) else "user"
        if role == "user" and len(people) > 1:
            found = user(sender, raw)
            shown = found.get("display_name") or found.get("name") or sender or "someone"
            body = f"{one_line(shown, 60)}: {body}"
        turns.append(turn_from(role, body, message.get("time")))
    raw_id = metadata.get("id")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raw_id = None  # named after what it is, not the file (see formats.base)
    named = name if not _UNRENAMED.fullmatch(name.strip()) else one_line(first, 80, at_word=True)
    title = metadata.get("title") or named
    collector.add(f"the chat {name!r}", raw_id, title or name, turns, None)
    return collector.result()
