"""What every format's parser shares: the collector of one import and the reading of a
message's content.

The collector holds the bounds of an import (turns in a conversation, conversations and
turns in a file), keeps ids unique in a file and names where a problem is
(``conversation 3``, ``line 12``), so that every format refuses a file in the same words
and no parser can forget a bound.

A conversation without an id of its own is named after what it is, never after the file
it came in: its format, its date and its opening (the first two turns), which a
re-import of the same conversation, grown since, finds again, and which another
person's export of the same name does not (see :meth:`Collector.add`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from ..reading import (
    MAX_CONVERSATIONS,
    MAX_TOTAL_TURNS,
    FormatName,
    ParsedExport,
    import_error,
)
from ..records import (
    MAX_TURNS,
    Conversation,
    Turn,
    clean_title,
    conversation_id,
    iso_time,
)

__all__ = ["Collector", "as_list", "kind_of", "short_digest", "text_of"]


_ID_PREFIX: dict[FormatName, str] = {
    "chatgpt": "chatgpt",
    "jupyter-chat": "chat",
    "openai-jsonl": "openai",
    "longmemeval": "session",
    "thread": "thread",
}


class Collector:
    """Conversations of one import, with its bounds and what was left out."""

    def __init__(self, source: str, format: FormatName) -> None:
        self.source = source
        self.format = format
        self.conversations: list[Conversation] = []
        self.skipped: list[str] = []
        self.ids: dict[str, str] = {}
        self.turns = 0

    def error(self, where: str, problem: str) -> Exception:
        return import_error(self.source, f"{where}: {problem}" if where else problem)

    def add(
        self, where: str, raw_id: str | None, title: object, turns: list[Turn], date: object
    ) -> None:
        """Add one conversation; ``raw_id`` ``None`` when it carries no id of its own."""
        if not turns:
            self.skipped.append(f"{where}: no user or assistant message with text")
            return
        if len(turns) > MAX_TURNS:
            raise self.error(where, f"holds {len(turns):,} turns; at most {MAX_TURNS:,} are read")
        day = iso_time(date) or next((t.time for t in turns if t.time), None)
        if raw_id is None:
            ident = self._derived_id(turns, day)
        else:
            try:
                ident = conversation_id(raw_id)
            except ValueError:
                raise self.error(where, "has an empty id") from None
        if ident in self.ids:
            raise self.error(
                where, f"has the id {ident!r} of {self.ids[ident]}; ids must be unique in a file"
            )
        if len(self.conversations) >= MAX_CONVERSATIONS:
            raise self.error("", f"holds more than {MAX_CONVERSATIONS:,} conversations; split it")
        self.turns += len(turns)
        if self.turns > MAX_TOTAL_TURNS:
            raise self.error("", f"holds more than {MAX_TOTAL_TURNS:,} turns; split it")
        self.ids[ident] = where
        self.conversations.append(
            Conversation(ident, clean_title(title, turns), day, tuple(turns), self.format)
        )

    def _derived_id(self, turns: list[Turn], day: str | None) -> str:
        """The id of a conversation that has none: its format, date and opening (two
        conversations of one file with the same opening are told apart by their order)."""
        opening = [f"{turn.role}:{turn.content}" for turn in turns[:2]]
        base = f"{_ID_PREFIX[self.format]}-{short_digest(day or '', *opening)}"
        ident, count = base, 1
        while ident in self.ids:
            count += 1
            ident = f"{base}-{count}"
        return ident

    def result(self) -> ParsedExport:
        if not self.conversations:
            detail = f" ({self.skipped[0]})" if self.skipped else ""
            raise self.error("", f"holds no conversation with any text to import{detail}")
        return ParsedExport(self.format, tuple(self.conversations), tuple(self.skipped))


def short_digest(*parts: object) -> str:
    """12 hex digits of ``parts``: an id for what carries none, and a way to tell two
    copies of one session apart."""
    text = "\x1f".join(str(part) for part in parts)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of parts
    (``{"type": "text", "text": ...}``, plain strings); images and files are left out."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for part in content:
            if isinstance(part, str):
                parts.append(part)
            elif (
                isinstance(part, Mapping)
                and isinstance(part.get("text"), str)
                and part.get("type") in (None, "text", "input_text", "output_text")
            ):
                parts.append(part["text"])
        return "\n".join(p for p in parts if p)
    return ""


def as_list(value: Any, collector: Collector, where: str, what: str) -> list[Any]:
    """``value``, which must be a list; otherwise the import fails naming ``what``."""
    if not isinstance(value, list):
        raise collector.error(where, f"{what} must be a list, not {kind_of(value)}")
    return value


def kind_of(value: Any) -> str:
    """What a JSON value is, in words (``an object``, ``null``), for an error."""
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")
