"""The chat formats the lab imports, each turned into :class:`~.records.Conversation` items.

* ``chatgpt``: ChatGPT's data export, ``conversations.json``: a list of conversations,
  each a ``mapping`` of message nodes linked by ``parent`` and ``children`` (every edit
  and regeneration is a branch). The conversation as the user last saw it is the path
  from ``current_node`` up to the root, read in reverse; system, tool and hidden messages
  and messages addressed to a tool are left out.
* ``jupyter-chat``: a jupyterlab-chat ``.chat`` document (what jupyter-ai 3 writes):
  ``{"messages": [...], "users": {...}, "metadata": {"id": ...}}``; a message's ``sender``
  names a user, and a user marked ``"bot": true`` (an AI persona) speaks as the
  assistant. Deleted messages are left out; with more than one person in the chat each
  user turn starts with who wrote it.
* ``openai-jsonl``: OpenAI chat messages, ``{"role", "content"}``: one conversation a line
  (``{"messages": [...]}``, with an optional ``id`` and ``title``), or one message a line
  with a ``conversation_id`` (``thread_id``, ``session_id`` and ``conversation`` work too);
  a JSON list of conversations or one ``{"messages": [...]}`` object is read the same way.
* ``longmemeval``: the LongMemEval benchmark's JSON, a list of questions whose
  ``haystack_session_ids``, ``haystack_dates`` and ``haystack_sessions`` are the chat
  sessions; a session shared by several questions is imported once.
* ``thread``: a thread the lab saved (:meth:`supercontext_lab.Thread.save`); the prepared
  context the harness put in front of a first message is left out of the turn.

Every parser is one pass over what it reads; a branch of ChatGPT's tree is walked once,
with a guard against cycles. Problems name where they are (``conversation 3``,
``line 12``) and raise :class:`~supercontext_lab.errors.ConversationImportError`.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from .._text import one_line
from ..bundle.grammar import AGENT_CONTEXT_STATUS_HEADER, SEPARATOR
from .reading import (
    FORMATS,
    MAX_CONVERSATIONS,
    MAX_TOTAL_TURNS,
    FormatName,
    ParsedExport,
    decode_export,
    detect_format,
    import_error,
    load_json,
    looks_jsonl,
    read_bytes,
)
from .records import (
    MAX_TURNS,
    Conversation,
    Role,
    Turn,
    clean_text,
    clean_title,
    conversation_id,
    iso_time,
    role_of,
    turn_from,
)

__all__ = [
    "PARSERS",
    "parse_chatgpt",
    "parse_export",
    "parse_jsonl_lines",
    "parse_jupyter_chat",
    "parse_longmemeval",
    "parse_openai",
    "parse_thread",
    "read_export",
]

_CONVERSATION_KEYS = ("conversation_id", "thread_id", "session_id", "conversation")
_TIME_KEYS = ("created_at", "timestamp", "time", "created", "create_time")
_CLOSING_TAG = "[/context_bundle]"


class _Collector:
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

    def add(self, where: str, raw_id: str, title: object, turns: list[Turn], date: object) -> None:
        if not turns:
            self.skipped.append(f"{where}: no user or assistant message with text")
            return
        if len(turns) > MAX_TURNS:
            raise self.error(where, f"holds {len(turns):,} turns; at most {MAX_TURNS:,} are read")
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
        day = iso_time(date) or next((t.time for t in turns if t.time), None)
        self.conversations.append(
            Conversation(ident, clean_title(title, turns), day, tuple(turns), self.format)
        )

    def result(self) -> ParsedExport:
        if not self.conversations:
            detail = f" ({self.skipped[0]})" if self.skipped else ""
            raise self.error("", f"holds no conversation with any text to import{detail}")
        return ParsedExport(self.format, tuple(self.conversations), tuple(self.skipped))


def _short_digest(*parts: object) -> str:
    text = "\x1f".join(str(part) for part in parts)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]


def _text_of(content: Any) -> str:
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


def _list(value: Any, collector: _Collector, where: str, what: str) -> list[Any]:
    if not isinstance(value, list):
        raise collector.error(where, f"{what} must be a list, not {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    names = {dict: "an object", list: "a list", str: "a string", bool: "a boolean"}
    if value is None:
        return "null"
    return names.get(type(value), "a number" if isinstance(value, int | float) else "a value")


# -- ChatGPT ---------------------------------------------------------------------------


def _chatgpt_text(message: Mapping[str, Any]) -> str:
    content = message.get("content")
    if not isinstance(content, Mapping):
        return ""
    kind = content.get("content_type")
    if kind in ("text", "multimodal_text"):
        return _text_of(content.get("parts"))
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
    collector = _Collector(source, "chatgpt")
    items = data if isinstance(data, list) else [data]
    for index, item in enumerate(items, start=1):
        where = f"conversation {index}"
        if not isinstance(item, Mapping):
            raise collector.error(where, f"must be an object, not {_kind(item)}")
        mapping = item.get("mapping")
        if not isinstance(mapping, Mapping):
            raise collector.error(where, f"its 'mapping' must be an object, not {_kind(mapping)}")
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
            raw_id = f"chatgpt-{_short_digest(title, item.get('create_time'))}"
        shown = f"{where} ({one_line(title, 60)})" if isinstance(title, str) and title else where
        collector.add(shown, raw_id, title, turns, item.get("create_time"))
    return collector.result()


# -- jupyterlab-chat -------------------------------------------------------------------


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
    collector = _Collector(source, "jupyter-chat")
    if not isinstance(data, Mapping):
        raise collector.error("", f"a .chat document is an object, not {_kind(data)}")
    messages = _list(data.get("messages"), collector, "", "'messages'")
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
    for index, message in enumerate(messages, start=1):
        if not isinstance(message, Mapping):
            raise collector.error(f"message {index}", f"must be an object, not {_kind(message)}")
        if message.get("type", "msg") != "msg" or message.get("deleted") is True:
            continue
        body = message.get("body")
        if not isinstance(body, str):
            raise collector.error(f"message {index}", f"'body' must be a string, not {_kind(body)}")
        if not body.strip():
            continue
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
        raw_id = f"chat-{name}"
    collector.add(f"the chat {name!r}", raw_id, metadata.get("title") or name, turns, None)
    return collector.result()


# -- OpenAI chat messages --------------------------------------------------------------


def _message_turn(message: Mapping[str, Any]) -> Turn | None:
    role = role_of(message.get("role"))
    if role is None:
        return None
    text = _text_of(message.get("content"))
    if not text.strip():
        return None
    when = next((message[k] for k in _TIME_KEYS if k in message), None)
    return turn_from(role, text, when)


def _messages_turns(messages: Sequence[Any], collector: _Collector, where: str) -> list[Turn]:
    turns: list[Turn] = []
    for index, message in enumerate(messages, start=1):
        if not isinstance(message, Mapping):
            raise collector.error(where, f"message {index} must be an object, not {_kind(message)}")
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


def _read_items(items: Iterable[tuple[str, Any]], collector: _Collector, name: str) -> ParsedExport:
    """Conversation objects and message objects, in file order (see the module docstring)."""
    grouped: dict[str, tuple[str, list[Turn], Any, Any]] = {}
    ungrouped: list[Turn] = []
    order: list[tuple[str, str, Any, list[Turn], Any]] = []
    for where, item in items:
        if not isinstance(item, Mapping):
            raise collector.error(where, f"must be a JSON object, not {_kind(item)}")
        if "messages" in item:
            messages = _list(item.get("messages"), collector, where, "'messages'")
            # Without an id of its own a conversation is named after the file and where it
            # is in it ("chats-2" for the second line), which a re-import finds again.
            number = where.rpartition(" ")[2]
            fallback = f"{name}-{number}" if number.isdigit() else name
            raw_id = _conversation_key(item) or (
                str(item["id"]) if isinstance(item.get("id"), str | int) else fallback
            )
            turns = _messages_turns(messages, collector, where)
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
        order.append((f"the file {name!r}", name, None, ungrouped, None))
    for where, raw_id, title, turns, when in order:
        collector.add(where, raw_id, title, turns, when)
    return collector.result()


def parse_openai(data: Any, source: str, name: str) -> ParsedExport:
    """OpenAI chat messages as one JSON document: a conversation object, a list of them,
    or a list of messages."""
    collector = _Collector(source, "openai-jsonl")
    if isinstance(data, Mapping):
        return _read_items([("the conversation", data)], collector, name)
    items = _list(data, collector, "", "the document")
    if items and all(isinstance(i, Mapping) and "messages" not in i for i in items):
        wrapped = {"id": name, "messages": items}
        return _read_items([("the conversation", wrapped)], collector, name)
    return _read_items(((f"item {i}", item) for i, item in enumerate(items, 1)), collector, name)


def parse_jsonl_lines(text: str, *, source: str, name: str) -> ParsedExport:
    """OpenAI chat messages as JSONL: one conversation or one message a line."""
    collector = _Collector(source, "openai-jsonl")

    def lines() -> Iterable[tuple[str, Any]]:
        # Split on newlines only: JSON allows U+2028 inside strings.
        for number, raw in enumerate(text.split("\n"), start=1):
            if raw.strip():
                yield f"line {number}", load_json(raw, source, f"line {number}")

    return _read_items(lines(), collector, name)


# -- LongMemEval -----------------------------------------------------------------------


def parse_longmemeval(data: Any, source: str, name: str) -> ParsedExport:
    """LongMemEval's JSON: every question's haystack sessions, each session once."""
    collector = _Collector(source, "longmemeval")
    questions = _list(data, collector, "", "a LongMemEval file")
    seen: dict[str, str] = {}
    for index, question in enumerate(questions, start=1):
        where = f"question {index}"
        if not isinstance(question, Mapping):
            raise collector.error(where, f"must be an object, not {_kind(question)}")
        if isinstance(question.get("question_id"), str):
            where = f"question {question['question_id']!r}"
        ids = _list(question.get("haystack_session_ids"), collector, where, "haystack_session_ids")
        dates = _list(question.get("haystack_dates"), collector, where, "haystack_dates")
        sessions = _list(question.get("haystack_sessions"), collector, where, "haystack_sessions")
        if not len(ids) == len(dates) == len(sessions):
            raise collector.error(
                where,
                f"has {len(ids)} session ids, {len(dates)} dates and {len(sessions)} sessions; "
                "they must be as many",
            )
        for session_id, date, session in zip(ids, dates, sessions, strict=True):
            if not isinstance(session_id, str | int) or isinstance(session_id, bool):
                raise collector.error(
                    where, f"a session id must be a string, not {_kind(session_id)}"
                )
            key = str(session_id)
            at = f"{where}, session {key!r}"
            turns = _messages_turns(_list(session, collector, at, "a session"), collector, at)
            digest = _short_digest(*(f"{t.role}:{t.content}" for t in turns))
            if key in seen:
                if seen[key] != digest:
                    collector.skipped.append(
                        f"{at}: differs from its first copy; the first is kept"
                    )
                continue
            seen[key] = digest
            collector.add(at, key, None, turns, date)
    return collector.result()


# -- the lab's saved threads -----------------------------------------------------------


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
    collector = _Collector(source, "thread")
    if not isinstance(data, Mapping):
        raise collector.error("", f"a saved thread is an object, not {_kind(data)}")
    transcript = _list(data.get("transcript"), collector, "", "'transcript'")
    turns: list[Turn] = []
    for index, message in enumerate(transcript, start=1):
        if not isinstance(message, Mapping):
            raise collector.error(f"message {index}", f"must be an object, not {_kind(message)}")
        role = role_of(message.get("role"))
        text = _text_of(message.get("content"))
        if role is None or not text.strip():
            continue  # system and tool messages, tool calls without text
        if role == "user":
            text = _without_prepared_block(text)
        turns.append(Turn(role, clean_text(text)))
    raw_id = data.get("thread_id")
    if not isinstance(raw_id, str) or not raw_id.strip():
        raw_id = f"thread-{name}"
    goal = data.get("goal")
    collector.add(f"the thread {name!r}", raw_id, goal, turns, data.get("created"))
    return collector.result()


PARSERS: dict[str, Callable[[Any, str, str], ParsedExport]] = {
    "chatgpt": parse_chatgpt,
    "jupyter-chat": parse_jupyter_chat,
    "openai-jsonl": parse_openai,
    "longmemeval": parse_longmemeval,
    "thread": parse_thread,
}
"""The parser of each format, for a parsed JSON document (JSONL is read line by line by
:func:`parse_jsonl_lines`)."""


def read_export(path: str | os.PathLike[str], format: str = "auto") -> ParsedExport:
    """Read and parse the export ``path`` (``format`` one of :data:`FORMATS` or ``auto``).

    Raises :class:`ConversationImportError` with one line naming the file for anything
    it cannot read: nothing of a file is imported unless all of it parses.
    """
    file = Path(path).expanduser()
    text = decode_export(read_bytes(file))
    return parse_export(text, format, source=str(file), name=file.stem)


def parse_export(
    text: str, format: str = "auto", *, source: str = "<text>", name: str = "chat"
) -> ParsedExport:
    """Parse the export ``text`` (see :func:`read_export`); ``name`` (the file's stem)
    names conversations that carry no id of their own."""
    if format != "auto" and format not in FORMATS:
        raise import_error(
            source, f"unknown format {format!r}; use auto or one of {', '.join(FORMATS)}"
        )
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped:
        raise import_error(source, "is empty; there is nothing to import")
    lines = format == "openai-jsonl" or (format == "auto" and looks_jsonl(stripped))
    if lines and not stripped.startswith("["):
        return parse_jsonl_lines(text, source=source, name=name)
    data = load_json(stripped, source)
    chosen = detect_format(data) if format == "auto" else format
    if chosen is None:
        raise import_error(
            source,
            "is not a format the lab can import (ChatGPT conversations.json, a "
            "jupyterlab-chat .chat file, OpenAI chat messages as JSON or JSONL, "
            "LongMemEval JSON, a saved thread); name one with --format",
        )
    return PARSERS[chosen](data, source, name)
