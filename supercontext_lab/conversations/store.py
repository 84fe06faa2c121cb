"""The transcript store: a workspace's past conversations, kept under ``.supercontext/``.

Layout of ``.supercontext/conversations.sqlite3`` (schema :data:`SCHEMA_VERSION`)::

    meta            key/value: schema_version
    conversations   id, doc (the key prefix of its turns in the memory index), title,
                    date, source (the format it came from), digest, turns, updated
    turns           conversation, position (from 0), role, content, time

The store is the truth about past conversations; the memory tree only indexes them. Each
turn is one document of the memory tree's ``conversations`` namespace (:data:`NAMESPACE`)
with the category ``transcript``, keyed ``<doc>n<position>``, so a search finds the turn
that answers a request, not a whole conversation. What the index says is never taken on
its word: a hit is served only when the store holds that turn with that very text
(:mod:`.recall`), and the index is filled again from the store whenever it holds fewer
turns than the store (a rebuilt index loses every document that came from no file).

Writes are atomic: an import is one transaction of the store, committed only after the
index took the turns (one transaction of the memory tree); when indexing fails the store
is rolled back and nothing is imported. Re-importing a conversation whose content did not
change writes nothing; a changed one replaces the old, turn for turn.

A store this version did not write (another schema, extra tables or triggers, a damaged
file) is never used and never deleted: it may hold the user's only copy of a
conversation. The error names the file and the way out.
"""

from __future__ import annotations

import contextlib
import datetime as _dt
import hashlib
import sqlite3
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from ..errors import ConversationStoreError, MemoryIndexError
from ..reading.transcripts import speaker_label
from ..sources.memory import INDEX_DIR, MemoryTree
from .records import Conversation, Turn

__all__ = [
    "CATEGORY",
    "NAMESPACE",
    "SCHEMA_VERSION",
    "STORE_FILE",
    "ConversationInfo",
    "ConversationStore",
    "ImportReport",
    "StoredTurn",
]

NAMESPACE = "conversations"
"""The memory tree namespace that indexes the turns of past conversations."""
CATEGORY = "transcript"
"""The category of a turn's document in the memory tree."""
STORE_FILE = "conversations.sqlite3"
SCHEMA_VERSION = 1

_T = TypeVar("_T")

_SCHEMA: tuple[str, ...] = (
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE conversations(id TEXT PRIMARY KEY, doc TEXT NOT NULL UNIQUE, "
    "title TEXT NOT NULL, date TEXT, source TEXT NOT NULL, digest TEXT NOT NULL, "
    "turns INTEGER NOT NULL, updated TEXT NOT NULL) WITHOUT ROWID",
    "CREATE TABLE turns(conversation TEXT NOT NULL, position INTEGER NOT NULL, "
    "role TEXT NOT NULL, content TEXT NOT NULL, time TEXT, "
    "PRIMARY KEY(conversation, position)) WITHOUT ROWID",
)
# What sqlite_master must hold, exactly: anything else (a trigger, a view, a table of
# another shape) was not written by the lab.
_EXPECTED_OBJECTS = {
    *(("table", statement.split()[2].split("(")[0], statement) for statement in _SCHEMA),
    ("index", "sqlite_autoindex_conversations_2", None),
}


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


@dataclass(frozen=True)
class ImportReport:
    """What one import did, counted in conversations (and turns indexed)."""

    format: str
    added: tuple[str, ...] = ()
    updated: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    turns_indexed: int = 0
    skipped: tuple[str, ...] = ()

    @property
    def conversations(self) -> int:
        return len(self.added) + len(self.updated) + len(self.unchanged)

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": self.format,
            "added": list(self.added),
            "updated": list(self.updated),
            "unchanged": list(self.unchanged),
            "turns_indexed": self.turns_indexed,
            "skipped": list(self.skipped),
        }

    def summary(self) -> str:
        """One line: ``3 conversations (2 added, 1 unchanged), 40 turns indexed``."""
        parts = [
            f"{len(names)} {label}"
            for names, label in (
                (self.added, "added"),
                (self.updated, "updated"),
                (self.unchanged, "unchanged"),
            )
            if names
        ]
        noun = "conversation" if self.conversations == 1 else "conversations"
        return (
            f"{self.conversations} {noun} from {self.format} ({', '.join(parts)}), "
            f"{self.turns_indexed} turns indexed"
        )


def doc_prefix(conversation_id: str) -> str:
    """The key prefix of a conversation's turns in the memory index: one opaque word
    (``c`` and 12 hex digits), so that no search word matches it."""
    return "c" + hashlib.sha256(conversation_id.encode("utf-8")).hexdigest()[:12]


def turn_key(doc: str, position: int) -> str:
    """The memory-index key of one turn: ``<doc>n<position>``, one opaque word too."""
    return f"{doc}n{position}"


def split_key(key: str) -> tuple[str, int] | None:
    """``(doc, position)`` of a turn's key, or ``None`` for a key that is not one."""
    doc, sep, number = key.rpartition("n")
    if not sep or len(doc) != 13 or not doc.startswith("c") or not number.isdigit():
        return None
    return doc, int(number)


def _now() -> str:
    return _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()


def _documents(doc: str, conversation: Conversation) -> list[dict[str, Any]]:
    return [
        {
            "namespace": NAMESPACE,
            "key": turn_key(doc, position),
            "content": turn.content,
            "category": CATEGORY,
            "created": turn.time or conversation.date,
        }
        for position, turn in enumerate(conversation.turns)
    ]


class ConversationStore:
    """The past conversations of the workspace folder ``root`` (see the module docstring).

    Safe to share between threads. Raises :class:`ConversationStoreError` naming the file
    when the store cannot be opened or is not one this lab wrote.
    """

    def __init__(self, root: str | Path) -> None:
        self._root = Path(root)
        folder = self._root / INDEX_DIR
        self._path = folder / STORE_FILE
        for link in (folder, self._path):
            if link.is_symlink():
                raise ConversationStoreError(
                    f"{link} is a symbolic link; the lab keeps past conversations only inside "
                    "the workspace. Remove the link."
                )
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise ConversationStoreError(
                f"Cannot create {folder} ({exc.strerror or exc}); make the workspace writable."
            ) from exc
        self._lock = threading.RLock()
        self._closed = False
        # (PRAGMA data_version, turns): data_version changes when another connection
        # commits; this connection's own writes reset it.
        self._counted: tuple[int, int] | None = None
        self._conn = self._open()

    @property
    def path(self) -> Path:
        """The SQLite file, ``<workspace>/.supercontext/conversations.sqlite3``."""
        return self._path

    @property
    def root(self) -> Path:
        return self._root

    def __repr__(self) -> str:
        return f"ConversationStore({str(self._root)!r})"

    # -- opening -----------------------------------------------------------------------

    def _refuse(self, why: str) -> ConversationStoreError:
        return ConversationStoreError(
            f"The conversation store {self._path} cannot be used: {why}. It is left as it "
            "is (it may hold the only copy of a conversation); move it aside and import "
            "the conversations again."
        )

    def _open(self) -> sqlite3.Connection:
        fresh = not self._path.exists()
        try:
            conn = sqlite3.connect(
                self._path, timeout=10.0, isolation_level=None, check_same_thread=False
            )
        except sqlite3.Error as exc:
            raise self._refuse(str(exc)) from exc
        try:
            conn.execute("PRAGMA trusted_schema=OFF")
            conn.execute("PRAGMA journal_mode=WAL").fetchone()
            conn.execute("PRAGMA synchronous=NORMAL")
            if fresh or self._empty(conn):
                conn.execute("BEGIN IMMEDIATE")
                if self._empty(conn):
                    for statement in _SCHEMA:
                        conn.execute(statement)
                    conn.execute(
                        "INSERT INTO meta(key, value) VALUES ('schema_version', ?)",
                        (str(SCHEMA_VERSION),),
                    )
                conn.execute("COMMIT")
            problem = self._problem(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise self._refuse(f"it is not a readable SQLite database ({exc})") from exc
        if problem is not None:
            conn.close()
            raise self._refuse(problem)
        return conn

    @staticmethod
    def _empty(conn: sqlite3.Connection) -> bool:
        return int(conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0]) == 0

    @staticmethod
    def _problem(conn: sqlite3.Connection) -> str | None:
        found = {
            (row[0], row[1], row[2])
            for row in conn.execute("SELECT type, name, sql FROM sqlite_master")
        }
        if found != _EXPECTED_OBJECTS:
            return "its tables are not the ones the lab writes"
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
        if row is None or row[0] != str(SCHEMA_VERSION):
            version = row[0] if row else "none"
            return f"it has schema version {version}, this version reads {SCHEMA_VERSION}"
        return None

    # -- plumbing ----------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    def __enter__(self) -> ConversationStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _read(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            if self._closed:
                raise ConversationStoreError(f"The conversation store {self._path} is closed.")
            try:
                return work(self._conn)
            except sqlite3.Error as exc:
                raise ConversationStoreError(
                    f"The conversation store {self._path} failed ({exc}); if another program "
                    "holds it, retry."
                ) from exc

    @contextlib.contextmanager
    def _writing(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed when the block ends, rolled back when it
        raises (whatever it raises)."""
        with self._lock:
            if self._closed:
                raise ConversationStoreError(f"The conversation store {self._path} is closed.")
            conn = self._conn
            try:
                conn.execute("BEGIN IMMEDIATE")
            except sqlite3.Error as exc:
                raise ConversationStoreError(
                    f"The conversation store {self._path} cannot be written ({exc}); if "
                    "another program holds it, retry."
                ) from exc
            self._counted = None
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            try:
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise ConversationStoreError(
                    f"The conversation store {self._path} could not be written ({exc})."
                ) from exc

    # -- reading -------------------------------------------------------------------------

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

    # -- writing -------------------------------------------------------------------------

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
        unchanged: list[str] = []
        documents: list[dict[str, Any]] = []
        stale: list[str] = []
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
                self._write(conn, doc, conversation, stamp)
                documents.extend(_documents(doc, conversation))
                if old is not None:
                    updated.append(conversation.id)
                    stale.extend(turn_key(doc, p) for p in range(len(conversation.turns), old[2]))
                else:
                    added.append(conversation.id)
            if documents:
                memory.add_many(documents)
        self._delete_documents(memory, stale)
        return ImportReport(
            format=format,
            added=tuple(added),
            updated=tuple(updated),
            unchanged=tuple(unchanged),
            turns_indexed=len(documents),
            skipped=tuple(skipped),
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
            documents = _documents(doc, conversation)[start:]
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
        """Remove the conversation and its turns from the store and the index; whether
        it was there."""
        with self._writing() as conn:
            row = conn.execute(
                "SELECT doc, turns FROM conversations WHERE id = ?", (conversation_id,)
            ).fetchone()
            if row is None:
                return False
            conn.execute("DELETE FROM turns WHERE conversation = ?", (conversation_id,))
            conn.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))
        self._delete_documents(memory, [turn_key(row[0], p) for p in range(row[1])])
        return True

    @staticmethod
    def _delete_documents(memory: MemoryTree, keys: Sequence[str]) -> None:
        # Best effort: a document left behind is never served (recall checks every hit
        # against the store) and is removed when a search meets it.
        for key in keys:
            with contextlib.suppress(MemoryIndexError):
                memory.delete(NAMESPACE, key)

    # -- the index -------------------------------------------------------------------------

    def ensure_indexed(self, memory: MemoryTree) -> int:
        """Index every stored turn again when ``memory`` holds fewer turn documents than
        the store holds turns (an index rebuilt from ``memory/`` lost them); returns how
        many documents were written."""
        expected = self.count_turns()
        if expected == 0 or memory.count(NAMESPACE) >= expected:
            return 0
        return self.reindex(memory)

    def reindex(self, memory: MemoryTree, conversation_ids: Sequence[str] | None = None) -> int:
        """Write the turns of ``conversation_ids`` (every conversation for ``None``) into
        ``memory`` again; returns how many documents were written."""
        infos = self.conversations()
        wanted = set(conversation_ids) if conversation_ids is not None else None
        documents: list[dict[str, Any]] = []
        for info in infos:
            if wanted is not None and info.id not in wanted:
                continue
            conversation = self.get(info.id)
            if conversation is not None:
                documents.extend(_documents(info.doc, conversation))
        if documents:
            memory.add_many(documents)
        return len(documents)
