"""The chat formats the lab imports, each turned into :class:`~..records.Conversation`
items: one module a format, behind the one registry :data:`PARSERS`.

* ``chatgpt`` (:mod:`.chatgpt`): ChatGPT's data export, ``conversations.json``;
* ``jupyter-chat`` (:mod:`.jupyter_chat`): a jupyterlab-chat ``.chat`` document;
* ``openai-jsonl`` (:mod:`.openai_jsonl`): OpenAI chat messages as JSON or JSONL;
* ``longmemeval`` (:mod:`.longmemeval`): the LongMemEval benchmark's JSON;
* ``thread`` (:mod:`.saved_thread`): a thread the lab saved.

What every parser shares (the bounds of an import, the words of an error, a message's
text) is :mod:`.base`. Every parser is one pass over what it reads. Problems name where
they are (``conversation 3``, ``line 12``) and raise
:class:`~supercontext_lab.errors.ConversationImportError`.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...errors import ConversationImportError
from ..reading import (
    FORMATS,
    ParsedExport,
    decode_export,
    detect_format,
    import_error,
    json_values,
    load_json,
    looks_jsonl,
    read_bytes,
)
from .chatgpt import parse_chatgpt
from .jupyter_chat import parse_jupyter_chat
from .longmemeval import parse_longmemeval
from .openai_jsonl import parse_openai, parse_openai_values
from .saved_thread import parse_thread

__all__ = [
    "PARSERS",
    "parse_chatgpt",
    "parse_export",
    "parse_jupyter_chat",
    "parse_longmemeval",
    "parse_openai",
    "parse_openai_values",
    "parse_thread",
    "read_export",
]


PARSERS: dict[str, Callable[[Any, str, str], ParsedExport]] = {
    "chatgpt": parse_chatgpt,
    "jupyter-chat": parse_jupyter_chat,
    "openai-jsonl": parse_openai,
    "longmemeval": parse_longmemeval,
    "thread": parse_thread,
}
"""The parser of each format, for a parsed JSON document (OpenAI messages written as
several JSON values, JSONL among them, are read by :func:`parse_openai_values`)."""


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
    unmarked = text.lstrip("\ufeff")  # lines keep their numbers
    if not stripped:
        raise import_error(source, "is empty; there is nothing to import")
    if format == "openai-jsonl" or (format == "auto" and looks_jsonl(stripped)):
        return parse_openai_values(json_values(unmarked, source), source, name)
    try:
        data = load_json(stripped, source)
    except ConversationImportError as exc:
        if format != "auto":
            raise
        # Objects one after another (pretty-printed messages) are no one document, and
        # only the OpenAI format is written that way; a file whose first value does not
        # parse either keeps the error of the whole.
        values = json_values(unmarked, source)
        try:
            head = next(values)
        except ConversationImportError:
            raise exc from None
        second = next(values, None)
        if second is None:
            raise
        return parse_openai_values(itertools.chain((head, second), values), source, name)
    chosen = detect_format(data) if format == "auto" else format
    if chosen is None:
        raise import_error(
            source,
            "is not a format the lab can import (ChatGPT conversations.json, a "
            "jupyterlab-chat .chat file, OpenAI chat messages as JSON or JSONL, "
            "LongMemEval JSON, a saved thread); name one with --format",
        )
    return PARSERS[chosen](data, source, name)
