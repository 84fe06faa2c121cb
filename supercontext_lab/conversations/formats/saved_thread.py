"""A thread the lab saved (:meth:`supercontext_lab.Thread.save`).

The prepared context the harness put in front of a first message (status note, header,
envelope, separator) is left out of the turn: the turn kept is the message as the user
typed it, not what the lab prepared around it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ...bundle.grammar import AGENT_CONTEXT_STATUS_HEADER, SEPARATOR
from ..reading import ParsedExport
from ..records import Turn, clean_text, role_of
from .base import Collector, as_list, kind_of, text_of

__all__ = ["parse_thread"]

_CLOSING_TAG = "[/context_bundle]"


def _without_prepared_block(text: str) -> str:
    """A first message as the user typed it: the prepared context the harness put in
    front of it (status note, header, envelope, separator) left out."""
    if not text.startswith(AGENT_CONTEXT_STATUS_HEADER):
        return text
    closing = text.find(_CLOSING_TAG)
    marker = f"\n{SEPARATOR}\n"
    cut = text.find(marker, closing if closing >= 0 else 0)
    return text[cut + len(marker) :] if cut >= 0 else text


def parse_thread(data: Any, source: str, name: str) -> ParsedExport:
    """A thread saved by the lab (``Thread.save``)."""
    collector = Collector(source, "thread")
    if not isinstance(data, Mapping):
        raise collector.error("", f"a saved thread is an object, not {kind_of(data)}")
    transcript = as_list(data.get("transcript"), collector, "", "'transcript'")
    turns: list[Turn] = []
    for index, message in enumerate(transcript, start=1):
        if not isinstance(message, Mapping):
            raise collector.error(f"message {index}", f"must be an object, not {kind_of(message)}")
        role = role_of(message.get("role"))
        text = text_of(message.get("content"))
        if role is None or not text.strip():
            continue  # system and tool messages, tool calls without text
        if role == "user":
            text = _without_prepared_block(text)
        turns.append(Turn(role, clean_text(text)))
    raw_id = data.get("thread_id")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raw_id = None  # named after what it is, not the file (see formats.base)
    goal = data.get("goal")
    collector.add(f"the thread {name!r}", raw_id, goal, turns, data.get("created"))
    return collector.result()
