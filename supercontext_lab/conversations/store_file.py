"""The transcript store's layout and its one connection: the tables of the SQLite file,
the key of each turn's document in the memory index, opening the file, and the read and
write transactions every other part of the store goes through.

Layout of ``.supercontext/conversations.sqlite3`` (schema :data:`SCHEMA_VERSION`)::

    meta            key/value: schema_version
    conversations   id, doc (the key prefix of its turns in the memory index), title,
                    date, source (the format it came from), digest, turns, updated
    turns           conversation, position (from 0), role, content, time

Each turn is one document of the memory tree's ``conversations`` namespace
(:data:`NAMESPACE`) with the category ``transcript``, keyed ``<doc>n<position>``, so a
search finds the turn that answers a request, not a whole conversation.

A store this version did not write (another schema, extra tables or triggers, a damaged
file) is never used and never deleted: it may hold the user's only copy of a
conversation. The error names the file and the way out. Opening and the transactions
live here, apart from what is read and written, so that this refusal is made in one place
and no read or write can reach the file without the lock.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from .._erasure import SECURE_DELETE, conversation_tag
from ..errors import ConversationStoreError
from ..sources.memory import INDEX_DIR
from .records import Conversation

__all__ = [
    "CATEGORY",
    "NAMESPACE",
    "SCHEMA_VERSION",
    "STORE_FILE",
    "StoreFile",
    "doc_prefix",
    "split_key",
    "turn_documents",
    "turn_key",
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


# -- the turns' documents in the memory index ------------------------------------------


def doc_prefix(conversation_id: str) -> str:
    """The key prefix of a conversation's turns in the memory index: one opaque word
    (``c`` and 12 hex digits), so that no search word matches it."""
    # The tag by which forgetting finds what was built from the conversation (_erasure).
    return conversation_tag(conversation_id)


def turn_key(doc: str, position: int) -> str:
    """The memory-index key of one turn: ``<doc>n<position>``, one opaque word too."""
    return f"{doc}n{position}"


def split_key(key: str) -> tuple[str, int] | None:
    """``(doc, position)`` of a turn's key, or ``None`` for a key that is not one."""
    doc, sep, number = key.rpartition("n")
    if not sep or len(doc) != 13 or not doc.startswith("c") or not number.isdigit():
        return None
    return doc, int(number)


def turn_documents(doc: str, conversation: Conversation) -> list[dict[str, Any]]:
    """The memory-index documents of every turn of ``conversation``, keyed under ``doc``."""
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


# -- the file ----------------------------------------------------------------------------


class StoreFile:
    """The store's SQLite file in the workspace folder ``root``, open, with its lock.

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
            # Deleted turns are overwritten, not left in free space (forgetting erases).
            conn.execute(SECURE_DELETE)
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
