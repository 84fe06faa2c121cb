"""Erasure: finding what was built from a past conversation, and making deleted text go.

Forgetting a conversation must take its text out of every file the lab writes, and two
things stand in the way:

* a conversation's text travels: its turns are quoted to models, whose replies are cached
  in the lab home, and into the results of an evaluation. Each such entry is tagged with
  the conversations it was built from (:func:`tags_in` finds them in the text itself: the
  key of a turn's memory document, ``c<12 hex>n<position>``, in a tool result, and a
  citation ``(transcript: <id>)`` in an envelope), so that forgetting finds it by
  :func:`conversation_tag`;
* SQLite keeps deleted bytes: in the free space of a page, on free pages and in the
  write-ahead log. Every file holding such text is opened with :data:`SECURE_DELETE`
  (deleted content is overwritten with zeros), and after an erasure its log is checkpointed
  and truncated (:func:`truncate_log`).
"""

from __future__ import annotations

import hashlib
import logging
import re
import sqlite3
from collections.abc import Iterable

__all__ = ["SECURE_DELETE", "conversation_tag", "tags_in", "truncate_log"]

SECURE_DELETE = "PRAGMA secure_delete=ON"
"""Run on every connection to a file that may hold a conversation's text."""

_log = logging.getLogger(__name__)

# A turn's document key (see conversations/store_file.py) and a transcript citation, as a
# tool result or an envelope writes them. Conversation ids are made of these characters
# (conversations/records.py), at most 96 of them.
_TURN_KEY = re.compile(r"\b(c[0-9a-f]{12})n[0-9]{1,9}\b")
_CITATION = re.compile(r"transcript(?:\\*\")?\s*:\s*(?:\\*\")?([A-Za-z0-9][A-Za-z0-9._:@+-]{0,95})")


def conversation_tag(conversation_id: str) -> str:
    """The tag of what was built from the conversation ``conversation_id``: ``c`` and 12
    hex digits, which is also the key prefix of its turns in the memory index."""
    return "c" + hashlib.sha256(conversation_id.encode("utf-8")).hexdigest()[:12]


def tags_in(texts: Iterable[str | None]) -> frozenset[str]:
    """The tags of the conversations ``texts`` quote (by a turn's key or a citation).

    A tag too many only makes forgetting drop one cached entry more; so an id read from a
    citation is taken as it is, even when no such conversation exists."""
    found: set[str] = set()
    for text in texts:
        if not text:
            continue
        found.update(match.group(1) for match in _TURN_KEY.finditer(text))
        found.update(conversation_tag(match.group(1)) for match in _CITATION.finditer(text))
    return frozenset(found)


def truncate_log(conn: sqlite3.Connection, what: object) -> bool:
    """Copy the write-ahead log of ``conn``'s file into the file and truncate it to zero
    bytes, so that no old page version (deleted text among them) stays in it; whether it
    was done. Another connection in the middle of a read keeps the log; that is logged,
    and the next erasure or the last connection to close finishes the work."""
    try:
        busy = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
    except sqlite3.Error as exc:
        _log.warning("The write-ahead log of %s was not truncated (%s).", what, exc)
        return False
    if busy:
        _log.warning(
            "The write-ahead log of %s is in use by another connection and was not "
            "truncated; it is when that connection closes.",
            what,
        )
    return not busy
