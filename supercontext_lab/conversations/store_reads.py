"""What the transcript store answers: the stored conversations and their turns, read
under the store's lock and never written.

Recall asks for many conversations and turns at once (every hit of a search), so the
reads that serve it take a whole list and make one query; the others read one
conversation or one span of turns.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..reading.transcripts import speaker_label
from .records import Conversation, Turn
from .store_file import StoreFile

__all__ = ["ConversationInfo", "StoreReads", "StoredTurn"]


@dataclass(frozen=True)
class ConversationInfo:
    """One stored conversation, without its turns."""

    id: str
    title: str
    date: str | None
    source: str
    turns: int
    updated: str
    doc: str = field(repr=False, default="")

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "title": self.title,
            "date": self.date,
            "source": self.source,
            "turns": self.turns,
            "updated": self.updated,
        }


@dataclass(frozen=True)
class StoredTurn:
    """One stored turn with its position in its conversation (from 0)."""

    position: int
    role: str
    content: str
    time: str | None = None

    @property
    def label(self) -> str:
        """``User`` or ``Assistant``."""
        return speaker_label(self.role)


class StoreReads(StoreFile):
    """The reads of the transcript store (see the module docstring)."""

    _INFO = "SELECT id, title, date, source, turns, updated, doc FROM conversations"

    def conversations(self) -> list[ConversationInfo]:
        """Every stored conversation, newest first (by date, then id)."""
        rows = self._read(
            lambda conn: conn.execute(
                self._INFO + " ORDER BY coalesce(date, '') DESC, id"
            ).fetchall()
        )
        return [ConversationInfo(*row) for row in rows]

    def info(self, conversation_id: str) -> ConversationInfo | None:
        """The conversation ``conversation_id``, without its turns; ``None`` when absent."""
        row = self._read(
            lambda conn: conn.execute(self._INFO + " WHERE id = ?", (conversation_id,)).fetchone()
        )
        return ConversationInfo(*row) if row else None

    def by_doc(self, doc: str) -> ConversationInfo | None:
        """The conversation whose turns are indexed under the key prefix ``doc``."""
        row = self._read(
            lambda conn: conn.execute(self._INFO + " WHERE doc = ?", (doc,)).fetchone()
        )
        return ConversationInfo(*row) if row else None

    def by_docs(self, docs: Sequence[str]) -> dict[str, ConversationInfo]:
        """The conversations indexed under the key prefixes ``docs``, by prefix (one query)."""
        wanted = sorted(set(docs))
        if not wanted:
            return {}
        marks = ",".join("?" * len(wanted))
        rows = self._read(
            lambda conn: conn.execute(self._INFO + f" WHERE doc IN ({marks})", wanted).fetchall()
        )
        return {row[6]: ConversationInfo(*row) for row in rows}

    def spans(self, spans: Sequence[tuple[str, int, int]]) -> dict[tuple[str, int], StoredTurn]:
        """The turns of every ``(conversation, start, end)`` span, by (conversation,
        position), in one query."""
        if not spans:
            return {}
        where = " OR ".join("(conversation = ? AND position BETWEEN ? AND ?)" for _ in spans)
        params = [value for span in spans for value in (span[0], max(span[1], 0), span[2])]
        rows = self._read(
            lambda conn: conn.execute(
                f"SELECT conversation, position, role, content, time FROM turns WHERE {where}",
                params,
            ).fetchall()
        )
        return {(row[0], row[1]): StoredTurn(*row[1:]) for row in rows}

    def turns(
        self, conversation_id: str, start: int = 0, end: int | None = None
    ) -> list[StoredTurn]:
        """The turns ``start`` to ``end`` (both included; to the last without ``end``)."""
        last = end if end is not None else 1 << 62
        rows = self._read(
            lambda conn: conn.execute(
                "SELECT position, role, content, time FROM turns WHERE conversation = ? "
                "AND position BETWEEN ? AND ? ORDER BY position",
                (conversation_id, max(start, 0), last),
            ).fetchall()
        )
        return [StoredTurn(*row) for row in rows]

    def get(self, conversation_id: str) -> Conversation | None:
        """The whole conversation ``conversation_id``; ``None`` when absent."""
        info = self.info(conversation_id)
        if info is None:
            return None
        turns = tuple(
            Turn("assistant" if t.role == "assistant" else "user", t.content, t.time)
            for t in self.turns(info.id)
        )
        return Conversation(info.id, info.title, info.date, turns, info.source)

    def count_turns(self) -> int:
        """Turns of every stored conversation."""
        return int(
            self._read(lambda c: c.execute("SELECT total(turns) FROM conversations").fetchone()[0])
        )

    def revision(self) -> str:
        """A digest of what the store holds (ids and content digests): equal revisions,
        equal conversations."""
        rows = self._read(
            lambda conn: conn.execute("SELECT id, digest FROM conversations ORDER BY id").fetchall()
        )
        digest = hashlib.sha256()
        for ident, content in rows:
            digest.update(f"{ident}\x1f{content}\x1e".encode())
        return digest.hexdigest()
