"""Reading a chat export: bounded, any encoding, its format told from its content.

An export is a file from outside, so it is read like every such file: a regular file only
(a FIFO or a device is refused, never waited on), at most :data:`MAX_IMPORT_BYTES`, JSON
parsed with bounded nesting (:mod:`supercontext_lab._bounded`, so a file of nested
brackets cannot exhaust the recursion limit) and every parser linear in the file.

The text may come in any encoding: UTF-8 with or without a byte-order mark, UTF-16 and
UTF-32 (marked, or told by the NUL bytes around JSON's first ASCII character), and
otherwise a legacy single-byte encoding (Windows-1252, whose undefined bytes become
U+FFFD); a UTF-8 file with a few damaged bytes stays UTF-8 with U+FFFD in their place.
Lone surrogates written as JSON escapes become U+FFFD where the text is stored.

``auto`` tells the format from the content (see :func:`detect_format`); a file it cannot
place is refused with the formats it can read and the option that names one. The parsers
themselves, and :func:`~.formats.read_export`, are in :mod:`.formats`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from .._bounded import json_loads
from .._confine import read_limited
from .._text import one_line
from ..errors import ConversationImportError, InputLimitError, PathRefusedError
from .records import Conversation

__all__ = [
    "FORMATS",
    "MAX_CONVERSATIONS",
    "MAX_IMPORT_BYTES",
    "MAX_TOTAL_TURNS",
    "FormatName",
    "ParsedExport",
    "decode_export",
    "detect_format",
    "import_error",
    "json_values",
    "load_json",
    "looks_jsonl",
    "read_bytes",
]

FormatName = Literal["chatgpt", "jupyter-chat", "openai-jsonl", "longmemeval", "thread"]
FORMATS: tuple[FormatName, ...] = get_args(FormatName)
"""The formats ``memory import`` reads (``auto`` picks one of them)."""

MAX_IMPORT_BYTES = 256 << 20
"""The largest export read (a heavy ChatGPT user's ``conversations.json`` is tens of MB)."""
MAX_CONVERSATIONS = 100_000
"""Conversations in one import at most."""
MAX_TOTAL_TURNS = 2_000_000
"""Turns in one import at most."""

_UTF8_SEQUENCE = re.compile(rb"[\xc2-\xf4][\x80-\xbf]+")
_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\xef\xbb\xbf", "utf-8-sig"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\xfe\xff", "utf-16-be"),
)


@dataclass(frozen=True)
class ParsedExport:
    """What one file holds: its format, its conversations, and what was left out."""

    format: FormatName
    conversations: tuple[Conversation, ...]
    skipped: tuple[str, ...] = ()
    """One line for each conversation or message left out, and why (empty, a role that
    is not a turn, a repeat)."""


def import_error(source: str, problem: str) -> ConversationImportError:
    """The one-line error of an import: the file, then what is wrong with it."""
    return ConversationImportError(one_line(f"{source}: {problem}", 400))


def _bom_encoding(data: bytes) -> tuple[str, int] | None:
    for mark, encoding in _BOMS:
        if data.startswith(mark):
            return encoding, len(mark) if encoding != "utf-8-sig" else 0
    return None


def _unmarked_wide(data: bytes) -> str | None:
    """UTF-16/32 without a byte-order mark, told by the NULs around the first ASCII byte
    (JSON's first character, ``[`` or ``{``, is ASCII)."""
    head = data[:4]
    if len(head) < 4:
        return None
    if head[1:4] == b"\x00\x00\x00" and head[0]:
        return "utf-32-le"
    if head[:3] == b"\x00\x00\x00" and head[3]:
        return "utf-32-be"
    if head[1] == 0 and head[3] == 0 and head[0] and head[2]:
        return "utf-16-le"
    if head[0] == 0 and head[2] == 0 and head[1] and head[3]:
        return "utf-16-be"
    return None


def decode_export(data: bytes) -> str:
    """The text of an export in whatever encoding it was written (see the module
    docstring); never raises."""
    marked = _bom_encoding(data)
    encoding = marked[0] if marked else _unmarked_wide(data)
    if encoding is not None:
        skip = marked[1] if marked else 0
        return data[skip:].decode(encoding, errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    # Mostly valid UTF-8 with a few damaged bytes, or a legacy single-byte encoding?
    valid = sum(len(m) for m in _UTF8_SEQUENCE.findall(data[: 1 << 20]))
    high = sum(1 for byte in data[: 1 << 20] if byte >= 0x80)
    if high and valid * 2 >= high:
        return data.decode("utf-8", errors="replace")
    return data.decode("cp1252", errors="replace")


def read_bytes(path: Path) -> bytes:
    """The bytes of the export ``path`` (a regular file of at most
    :data:`MAX_IMPORT_BYTES`); every problem is a :class:`ConversationImportError`."""
    shown = str(path)
    if path.is_dir():
        raise import_error(shown, "is a folder; pass the export file itself")
    try:
        data, more = read_limited(path, MAX_IMPORT_BYTES)
    except FileNotFoundError:
        raise import_error(shown, "no such file; check the path") from None
    except PathRefusedError as exc:
        raise import_error(shown, f"cannot be read: {exc}") from None
    except (OSError, ValueError) as exc:  # ValueError: a NUL in the path
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise import_error(shown, f"cannot be read ({reason})") from None
    if more:
        raise import_error(
            shown, f"is larger than {MAX_IMPORT_BYTES >> 20} MiB; split it and import the parts"
        )
    return data


def load_json(text: str, source: str, what: str = "the file") -> Any:
    """``text`` parsed as JSON with bounded nesting; a problem names ``source`` and
    ``what`` (``line 3``) and says what to do."""
    try:
        return json_loads(text, allow_nan=False)
    except InputLimitError as exc:
        raise import_error(source, f"{what} is refused: {exc}") from None
    except RecursionError:
        raise import_error(source, f"{what} is nested too deeply") from None
    except json.JSONDecodeError as exc:
        raise import_error(
            source, f"{what} is not valid JSON ({exc.msg} at line {exc.lineno}, column {exc.colno})"
        ) from None


def json_values(text: str, source: str) -> Iterator[tuple[str, Any]]:
    """Every JSON value of ``text`` in order, each with where it starts (``line 3``): one
    document, one object a line (JSON Lines), or objects written one after another over
    as many lines as they like (pretty-printed). Each is parsed bounded (:func:`load_json`)
    when it is reached, so a caller that refuses one reads no further.

    Values after the first must be objects (only the OpenAI format is written so, one
    object a message or a conversation); anything else is refused where it is. Parsed in
    one pass: each line when every line is one object, otherwise split where each
    top-level value closes (:func:`_spans`)."""
    lines = [(number, raw) for number, raw in enumerate(text.split("\n"), 1) if raw.strip()]
    if len(lines) > 1 and all(_one_object(raw) for _, raw in lines):
        spans: Iterable[tuple[str, str]] = ((f"line {n}", raw) for n, raw in lines)
    else:
        spans = _spans(text)
    first = ""  # where the first value is, while it is not an object
    for count, (where, part) in enumerate(spans, 1):
        value = load_json(part, source, where)
        if count == 1 and not isinstance(value, dict):
            first = where
        elif count > 1 and (first or not isinstance(value, dict)):
            shown = first or where
            raise import_error(source, f"{shown}: must be a JSON object, one of several")
        yield where, value


def _one_object(line: str) -> bool:
    stripped = line.strip()
    return stripped.startswith("{") and stripped.endswith("}")


# A string (its closing quote optional, so that an unclosed one never makes the pattern
# backtrack), a bracket, or a run of anything else (numbers, literals, commas, colons).
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?|[{}\[\]]|[^\s"{}\[\]]+')


def _spans(text: str) -> Iterator[tuple[str, str]]:
    """``(where, text)`` of each top-level value of ``text``: from where it starts to the
    bracket that closes it (to the end of the text when none does, which the JSON parser
    then names). Linear: each character is read by one token."""
    depth = 0
    start = 0
    line = 1
    counted = 0
    for token in _TOKEN.finditer(text):
        first = token.group()[0]
        if depth == 0:
            start = token.start()
            line += text.count("\n", counted, start)
            counted = start
        if first in "{[":
            depth += 1
        elif first in "}]":
            depth -= 1
        if depth <= 0:
            depth = 0
            yield f"line {line}", text[start : token.end()]
    if depth > 0:
        yield f"line {line}", text[start:]


def looks_jsonl(text: str) -> bool:
    """Whether ``text`` is one JSON object a line (two or more lines, each an object)."""
    lines = [line for line in text.split("\n")[:3] if line.strip()]
    return len(lines) >= 2 and all(line.lstrip().startswith("{") for line in lines)


def _first_dict(value: Any) -> dict[str, Any] | None:
    if isinstance(value, list):
        return next((item for item in value[:5] if isinstance(item, dict)), None)
    return value if isinstance(value, dict) else None


def detect_format(data: Any) -> FormatName | None:
    """The format of a parsed JSON document, from its shape; ``None`` when it is none
    the lab reads.

    A list of conversations with a ``mapping`` is ChatGPT's; a list of questions with
    ``haystack_sessions`` is LongMemEval's; an object with ``messages`` and ``users`` is a
    jupyterlab-chat document; one with a ``transcript`` and a ``thread_id`` is a saved
    thread of the lab; ``messages`` of ``{role, content}`` (or a list of such objects) is
    the OpenAI chat format.
    """
    first = _first_dict(data)
    if first is None:
        return None
    if "mapping" in first:
        return "chatgpt"
    if "haystack_sessions" in first:
        return "longmemeval"
    if isinstance(data, dict):
        if isinstance(data.get("messages"), list) and isinstance(data.get("users"), dict):
            return "jupyter-chat"
        if "transcript" in data and ("thread_id" in data or "prepared_markers" in data):
            return "thread"
    if isinstance(first.get("messages"), list) or ("role" in first and "content" in first):
        return "openai-jsonl"
    return None
