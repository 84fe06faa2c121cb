"""ChatGPT's data export, ``conversations.json``: a list of conversations, each a
``mapping`` of message nodes linked by ``parent`` and ``children`` (every edit and
regeneration is a branch).

The conversation as the user last saw it is the path from ``current_node`` up to the
root, read in reverse; system, tool and hidden messages and messages addressed to a tool
are left out. The branch is walked once, with a guard against cycles, so a tree built to
loop or to be deep costs no more than its size.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..._text import one_line
from ..reading import ParsedExport
from ..records import Turn, role_of, turn_from
from .base import Collector, kind_of, text_of

__all__ = ["parse_chatgpt"]


def _chatgpt_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if not isinstance(content, Mapping):
        return ""
    kind = content.get("content_type")
    if kind in ("text", "multimodal_text"):
        return text_of(content.get("parts"))
    if kind == "code" and isinstance(content.get("text"), str):
        return f"```\n{content['text']}\n```"
    return ""  # tool output, browsing quotes, custom instructions, reasoning


def _chatgpt_path(mapping: Mapping[str, Any], item: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The message nodes from the root to ``current_node`` (or, without one, to the
    newest leaf), each node read once."""
    current = item.get("current_node")
    if not isinstance(current, str) or current not in mapping:
        leaves = [
            (node_id, node)
            for node_id, node in mapping.items()
            if isinstance(node, Mapping) and not node.get("children")
        ]

        def created(entry: tuple[str, Any]) -> float:
            message = entry[1].get("message")
            stamp = message.get("create_time") if isinstance(message, Mapping) else None
            return float(stamp) if isinstance(stamp, int | float) else 0.0

        current = max(leaves, key=created)[0] if leaves else None
    path: list[Mapping[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = current
    while isinstance(node_id, str) and node_id not in seen:
        node = mapping.get(node_id)
        if not isinstance(node, Mapping):
            break
        seen.add(node_id)
        path.append(node)
        node_id = node.get("parent")
    path.reverse()
    return path


def parse_chatgpt(data: Any, source: str, name: str) -> ParsedExport:
    """ChatGPT's ``conversations.json`` (see the module docstring)."""
    collector = Collector(source, "chatgpt")
    items = data if isinstance(data, list) else [data]
    for index, item in enumerate(items, start=1):
        where = f"conversation {index}"
        if not isinstance(item, Mapping):
            raise collector.error(where, f"must be an object, not {kind_of(item)}")
        mapping = item.get("mapping")
        if not isinstance(mapping, Mapping):
            raise collector.error(where, f"its 'mapping' must be an object, not {kind_of(mapping)}")
        turns: list[Turn] = []
        hidden = 0
        for node in _chatgpt_path(mapping, item):
            message = node.get("message")
            if not isinstance(message, Mapping):
                continue
            author = message.get("author")
            role = role_of(author.get("role") if isinstance(author, Mapping) else None)
            metadata = message.get("metadata")
            if isinstance(metadata, Mapping) and metadata.get(
                "is_visually_hidden_from_conversation"
            ):
                hidden += 1
                continue
            recipient = message.get("recipient")
            if role is None or (isinstance(recipient, str) and recipient != "all"):
                continue
            text = _chatgpt_text(message)
            if text.strip():
                turns.append(turn_from(role, text, message.get("create_time")))
        title = item.get("title")
        raw_id = item.get("conversation_id") or item.get("id")
        if not isinstance(raw_id, str) or not raw_id.strip():
            raw_id = None  # named after what it is (see formats.base)
        shown = f"{where} ({one_line(title, 60)})" if isinstance(title, str) and title else where
        collector.add(shown, raw_id, title, turns, item.get("create_time"))
    return collector.result()
