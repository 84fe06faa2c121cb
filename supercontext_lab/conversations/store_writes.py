"""What changes the transcript store: importing conversations, appending a thread's turns,
forgetting a conversation, each with the turns' documents in the memory index.

Writes are atomic: an import is one transaction of the store, committed only after the
index took the turns (one transaction of the memory tree, which also takes out the turns
a shorter conversation no longer has); when indexing fails, or the process is killed, the
store is rolled back and nothing is imported. A kill between the two commits leaves the
index ahead of the store, which the next import writes again (the store still holds the
old digest) and recall never serves. Re-importing a conversation whose content did not
change writes nothing; a changed one replaces the old, turn for turn.

Forgetting erases: the turns leave the index with their search terms (see
:meth:`~supercontext_lab.sources.memory.MemoryTree.erase`) before the store lets them go,
the store's deleted rows are overwritten (``secure_delete``) and both files' write-ahead
logs are truncated, so no byte of the conversation stays in either file.
"""

from __future__ import annotations

import datetime as _dt
import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from .._erasure import truncate_log
from .._text import one_line, visible
from ..sources.memory import MemoryTree
from .records import Conversation, Turn
from .store_file import NAMESPACE, StoreFile, doc_prefix, turn_documents, turn_key

__all__ = ["ImportReport", "StoreWrites"]


@dataclass(frozen=True)
class ImportReport:
    """What one import did, counted in conversations (and turns indexed).

    ``updated`` conversations grew or changed after their opening; ``replaced`` ones
    took the place of a different conversation stored under the same id (another
    opening: another person's chat, or one whose first turn was edited), and
    ``replacements`` says so, one line each, naming what was there before."""

    format: str
    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    turns_indexed: int = 0
    skipped: tuple[str, ...] = ()
    replaced: tuple[str, ...] = ()
    replacements: tuple[str, ...] = ()

    @property
    def conversations(self) -> int:
        return len(self.added) + len(self.updated) + len(self.replaced) + len(self.unchanged)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "added": list(self.added),
            "updated": list(self.updated),
            "replaced": list(self.replaced),
            "unchanged": list(self.unchanged),
            "turns_indexed": self.turns_indexed,
            "skipped": list(self.skipped),
            "replacements": list(self.replacements),
        }

    def summary(self) -> str:
        """One line: ``3 conversations (2 added, 1 unchanged), 40 turns indexed``."""
        parts = [
            f"{len(names)} {label}"
            for names, label in (
                (self.added, "added"),
                (self.updated, "updated"),
                (self.replaced, "replaced"),
                (self.unchanged, "unchanged"),
            )
            if names
        ]
        noun = "conversation" if self.conversations == 1 else "conversations"
        return (
            f"{self.conversations} {noun} from {self.format} ({', '.join(parts)}), "
            f"{self.turns_indexed} turns indexed"
        )


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


class StoreWrites(StoreFile):
    """The writes of the transcript store (see the module docstring)."""

    def import_conversations(
        self,
        conversations: Sequence[Conversation],
        memory: MemoryTree,
        *,
        format: str = "",
        skipped: Sequence[str] = (),
    ) -> ImportReport:
        """Store ``conversations`` and index their turns in ``memory``, all or nothing.

        A conversation already stored with the same content is left as it is; one whose
        content changed is replaced. Raises :class:`ConversationStoreError` (or the
        memory tree's :class:`~supercontext_lab.errors.MemoryIndexError`) with nothing
        imported when either write fails.
        """
        added: list[str] = []
        updated: list[str] = []
        replaced: list[str] = []
        replacements: list[str] = []
        unchanged: list[str] = []
        documents: list[dict[str, Any]] = []
        stale: list[tuple[str, str]] = []
        with self._writing() as conn:
            known = {
                row[0]: (row[1], row[2], row[3])
                for row in conn.execute("SELECT id, doc, digest, turns FROM conversations")
            }
            stamp = _now()
            for conversation in conversations:
                old = known.get(conversation.id)
                if old is not None and old[1] == conversation.digest:
                    unchanged.append(conversation.id)
                    continue
                doc = old[0] if old is not None else doc_prefix(conversation.id)
                other = None if old is None else self._other(conn, conversation)
                self._write(conn, doc, conversation, stamp)
                documents.extend(turn_documents(doc, conversation))
                if other is not None:
                    replacements.append(other)
                if old is not None:
                    (updated if other is None else replaced).append(conversation.id)
                    stale.extend(
                        (NAMESPACE, turn_key(doc, p))
                        for p in range(len(conversation.turns), old[2])
                    )
                else:
                    added.append(conversation.id)
            # The turns a shorter conversation no longer has leave the index in the same
            # transaction as the new ones come in: a kill cannot leave them behind.
            memory.add_many(documents, remove=stale)
        return ImportReport(
            format=format,
            added=tuple(added),
            updated=tuple(updated),
            unchanged=tuple(unchanged),
            turns_indexed=len(documents),
            skipped=tuple(skipped),
            replaced=tuple(replaced),
            replacements=tuple(replacements),
        )

    @staticmethod
    def _other(conn: sqlite3.Connection, conversation: Conversation) -> str | None:
        """Why the stored conversation under ``conversation``'s id is another one (its
        opening turn differs), in one line; ``None`` when the new one continues it."""
        row = conn.execute(
            "SELECT c.title, c.source, t.role, t.content FROM conversations c LEFT JOIN turns t "
            "ON t.conversation = c.id AND t.position = 0 WHERE c.id = ?",
            (conversation.id,),
        ).fetchone()
        first = conversation.turns[0] if conversation.turns else None
        if row is None or (first is not None and (row[2], row[3]) == (first.role, first.content)):
            return None
        return (
            f"{conversation.id} took the place of a different conversation stored under the "
            f"same id ({row[1]}, {visible(one_line(str(row[0]), 60))!r}, which began "
            "otherwise); that one is gone from this workspace"
        )

    @staticmethod
    def _write(conn: sqlite3.Connection, doc: str, conversation: Conversation, stamp: str) -> None:
        conn.execute("DELETE FROM turns WHERE conversation = ?", (conversation.id,))
        conn.execute(
            "INSERT INTO conversations(id, doc, title, date, source, digest, turns, updated) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET title = "
            "excluded.title, date = excluded.date, source = excluded.source, digest = "
            "excluded.digest, turns = excluded.turns, updated = excluded.updated",
            (
                conversation.id,
                doc,
                conversation.title,
                conversation.date,
                conversation.source,
                conversation.digest,
                len(conversation.turns),
                stamp,
            ),
        )
        conn.executemany(
            "INSERT INTO turns(conversation, position, role, content, time) VALUES (?, ?, ?, ?, ?)",
            [
                (conversation.id, position, turn.role, turn.content, turn.time)
                for position, turn in enumerate(conversation.turns)
            ],
        )

    def append(
        self,
        conversation_id: str,
        turns: Sequence[Turn],
        memory: MemoryTree,
        *,
        title: str,
        source: str = "thread",
    ) -> int:
        """Add ``turns`` at the end of the conversation ``conversation_id`` (created with
        ``title`` when absent) and index them; returns the position of the first one."""
        with self._writing() as conn:
            row = conn.execute(
                "SELECT doc, title, date, source, turns FROM conversations WHERE id = ?",
                (conversation_id,),
            ).fetchone()
            old = list(self._rows(conn, conversation_id)) if row else []
            start = len(old)
            every = tuple(old) + tuple(turns)
            date = row[2] if row else next((t.time for t in turns if t.time), None)
            conversation = Conversation(
                conversation_id, row[1] if row else title, date, every, row[3] if row else source
            )
            doc = row[0] if row else doc_prefix(conversation_id)
            conn.execute(
                "INSERT INTO conversations(id, doc, title, date, source, digest, turns, updated) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(id) DO UPDATE SET digest = "
                "excluded.digest, turns = excluded.turns, updated = excluded.updated",
                (
                    conversation_id,
                    doc,
                    conversation.title,
                    date,
                    conversation.source,
                    conversation.digest,
                    len(every),
                    _now(),
                ),
            )
            conn.executemany(
                "INSERT INTO turns(conversation, position, role, content, time) "
                "VALUES (?, ?, ?, ?, ?)",
                [
                    (conversation_id, start + offset, turn.role, turn.content, turn.time)
                    for offset, turn in enumerate(turns)
                ],
            )
            documents = turn_documents(doc, conversation)[start:]
            if documents:
                memory.add_many(documents)
        return start

    @staticmethod
    def _rows(conn: sqlite3.Connection, conversation_id: str) -> Iterator[Turn]:
        for role, content, time in conn.execute(
            "SELECT role, content, time FROM turns WHERE conversation = ? ORDER BY position",
            (conversation_id,),
        ):
            yield Turn(role, content, time)

    def forget(self, conversation_id: str, memory: MemoryTree) -> bool:
        """Remove the conversation and its turns from the store and the index, leaving no
        byte of them in either file; whether it was there."""
        with self._writing() as conn:
            row = conn.execute(
                "SELECT doc, turns FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
            if row is None:
                return False
            conn.execute("DELETE FROM turns WHERE conversation = ?", (conversation_id,))
            conn.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
            # Inside the store's transaction: when erasing from the index fails (or the
            # process is killed), the store keeps the conversation and forget can run again.
            memory.erase(NAMESPACE, [turn_key(row[0], p) for p in range(row[1])])
        with self._lock:
            truncate_log(self._conn, self._path)
        return True
