"""OpenAI chat messages, ``{"role", "content"}``, as JSON or JSONL.

One conversation an object (``{"messages": [...]}``, with an optional ``id`` and
``title``), or one message an object with a ``conversation_id`` (``thread_id``,
``session_id`` and ``conversation`` work too). The objects may be one a line (JSON
Lines), spread over several lines each (pretty-printed, one after another), or the items
of a JSON list; a list of messages none of which names a conversation is one
conversation. Mixing messages with and without a conversation id is refused: which
conversation such a message belongs to cannot be told. A conversation without an id is
named after what it is (:mod:`.base`), never after the file.

LongMemEval's sessions are lists of such messages, so its parser reads them with
:func:`messages_turns`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ..reading import ParsedExport
from ..records import Turn, role_of, turn_from
from .base import Collector, as_list, kind_of, text_of

__all__ = ["messages_turns", "parse_openai", "parse_openai_values"]

_CONVERSATION_KEYS = ("conversation_id", "thread_id", "session_id", "conversation")
_TIME_KEYS = ("created_at", "timestamp", "time", "created", "create_time")


def _message_turn(message: Mapping[str, Any]) -> Turn | None:
    role = role_of(message.get("role"))
    if role is None:
        return None
    text = text_of(message.get("content"))
    if not text.strip():
        return None
    when = next((message[k] for k in _TIME_KEYS if k in message), None)
    return turn_from(role, text, when)


def messages_turns(messages: Sequence[Any], collector: Collector, where: str) -> list[Turn]:
    turns: list[Turn] = []
    for index, message in enumerate(messages, start=1):
        if not isinstance(message, Mapping):
            raise collector.error(
                where, f"message {index} must be an object, not {kind_of(message)}"
            )
        turn = _message_turn(message)
        if turn is not None:
            turns.append(turn)
    return turns


def _conversation_key(item: Mapping[str, Any]) -> str | None:
    for key in _CONVERSATION_KEYS:
        value = item.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool) and str(value).strip():
            return str(value)
    return None


def _read_items(items: Iterable[tuple[str, Any]], collector: Collector, name: str) -> ParsedExport:
    """Conversation objects and message objects, in file order (see the module docstring)."""
    grouped: dict[str, tuple[str, list[Turn], Any, Any]] = {}
    ungrouped: list[Turn] = []
    order: list[tuple[str, str | None, Any, list[Turn], Any]] = []
    for where, item in items:
        if not isinstance(item, Mapping):
            raise collector.error(where, f"must be a JSON object, not {kind_of(item)}")
        if "messages" in item:
            messages = as_list(item.get("messages"), collector, where, "'messages'")
            # Without an id of its own a conversation is named after what it is, never
            # after the file: another file of the same name holds other conversations.
            raw_id = _conversation_key(item) or (
                str(item["id"]) if isinstance(item.get("id"), str | int) else None
            )
            turns = messages_turns(messages, collector, where)
            when = next((item[k] for k in _TIME_KEYS if k in item), None)
            order.append((where, raw_id, item.get("title"), turns, when))
            continue
        if "role" not in item:
            raise collector.error(
                where, "is neither a conversation ('messages') nor a message ('role', 'content')"
            )
        key = _conversation_key(item)
        turn = _message_turn(item)
        if key is None:
            if grouped:
                raise collector.error(where, "a message without a conversation id among ones with")
            if turn is not None:
                ungrouped.append(turn)
            continue
        if ungrouped:
            raise collector.error(where, "a message with a conversation id among ones without")
        if key not in grouped:
            grouped[key] = (where, [], item.get("title"), None)
            order.append((where, key, item.get("title"), grouped[key][1], None))
        if turn is not None:
            grouped[key][1].append(turn)
    if ungrouped:
        order.append((f"the file {name!r}", None, None, ungrouped, None))
    for where, raw_id, title, turns, when in order:
        collector.add(where, raw_id, title, turns, when)
    return collector.result()


def parse_openai(data: Any, source: str, name: str) -> ParsedExport:
    """OpenAI chat messages as one JSON document: a conversation or message object, or a
    list of them."""
    collector = Collector(source, "openai-jsonl")
    if isinstance(data, Mapping):
        return _read_items([("the conversation", data)], collector, name)
    items = as_list(data, collector, "", "the document")
    if items and all(
        isinstance(i, Mapping) and "messages" not in i and _conversation_key(i) is None
        for i in items
    ):
        return _read_items([("the conversation", {"messages": items})], collector, name)
    return _read_items(((f"item {i}", item) for i, item in enumerate(items, 1)), collector, name)


def parse_openai_values(values: Iterable[tuple[str, Any]], source: str, name: str) -> ParsedExport:
    """OpenAI chat messages as the JSON values of a file (:func:`~..reading.json_values`,
    read as they come): one document, read by :func:`parse_openai`, or objects one after
    another."""
    found = iter(values)
    head = next(found, None)
    second = next(found, None)
    if head is not None and second is None and not isinstance(head[1], Mapping):
        return parse_openai(head[1], source, name)
    items = itertools.chain([head] if head else [], [second] if second else [], found)
    return _read_items(items, Collector(source, "openai-jsonl"), name)
