"""A small SQLite store shared by threads and processes: the base of the package's caches.

A store owns the tables it names and nothing else, so the response cache and the
evaluation's result store can share one file without either touching the other's rows.
The file runs in WAL mode with a busy timeout, and each store serialises its connection
with a lock. Every SQLite failure becomes a :class:`CacheError` naming the file and the
way out.

An entry built from a past conversation's text (a reply to a request that quoted it, an
evaluation's result) is tagged with that conversation (:mod:`._erasure`) in the file's
``tags`` table, which every store shares; :func:`erase_tagged` deletes what carries a
tag, in whichever store's table it is, when the conversation is forgotten.
"""

from __future__ import annotations

import contextlib
import sqlite3
import threading
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, ClassVar, TypeVar

from ._erasure import SECURE_DELETE, truncate_log
from .errors import CacheError

__all__ = ["SqliteStore", "erase_tagged"]

BUSY_TIMEOUT_S = 30.0

_T = TypeVar("_T")
_StoreT = TypeVar("_StoreT", bound="SqliteStore")

_TAGS = (
    "CREATE TABLE IF NOT EXISTS tags(tag TEXT NOT NULL, tbl TEXT NOT NULL, key TEXT NOT NULL, "
    "PRIMARY KEY(tag, tbl, key)) WITHOUT ROWID"
)
_TAG_COLUMNS = ["tag", "tbl", "key"]


class SqliteStore:
    """One connection to ``path`` holding the tables in :attr:`TABLES` (name → (``CREATE``
    statement, column names)); :attr:`WHAT` names the store in messages."""

    WHAT: ClassVar[str] = "store"
    TABLES: ClassVar[Mapping[str, tuple[str, Sequence[str]]]] = {}

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CacheError(
                f"Cannot create the {self.WHAT} folder {self.path.parent} ({exc}); "
                "choose another path or turn the cache off."
            ) from exc
        with self._lock:
            self._conn = self._guard(self._open)

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(
            self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False
        )
        try:
            conn.execute("PRAGMA journal_mode=WAL").fetchone()
            conn.execute("PRAGMA synchronous=NORMAL")
            # An entry erased with its conversation leaves no bytes in free space.
            conn.execute(SECURE_DELETE)
            for table, (schema, expected) in {**self.TABLES, "tags": (_TAGS, _TAG_COLUMNS)}.items():
                conn.execute(schema)
                columns = [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]
                if columns != list(expected):
                    raise sqlite3.DatabaseError(f"the {table} table has an unexpected layout")
        except BaseException:
            conn.close()
            raise
        return conn

    def _guard(self, action: Callable[[], _T]) -> _T:
        try:
            return action()
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise CacheError(
                    f"The {self.WHAT} {self.path} stayed locked by another process for "
                    f"{BUSY_TIMEOUT_S:g} s ({exc}); retry, or turn the cache off."
                ) from exc
            raise self._corrupt(exc) from exc
        except sqlite3.DatabaseError as exc:
            raise self._corrupt(exc) from exc

    def _corrupt(self, exc: BaseException) -> CacheError:
        return CacheError(
            f"The {self.WHAT} {self.path} is unusable ({exc}); delete that file to start "
            "a fresh cache, or turn the cache off."
        )

    def _locked(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        with self._lock:
            if self._conn is None:
                raise CacheError(f"The {self.WHAT} {self.path} is closed; open a new one.")
            conn = self._conn
            return self._guard(lambda: work(conn))

    def fetch_one(self, sql: str, parameters: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        """The first row of a query, or ``None``; SQLite errors become CacheError."""
        row: tuple[Any, ...] | None = self._locked(
            lambda conn: conn.execute(sql, parameters).fetchone()
        )
        return row

    def write(self, sql: str, parameters: Sequence[Any] = ()) -> int:
        """Run one statement that changes rows; returns how many it changed."""
        return self._locked(lambda conn: conn.execute(sql, parameters).rowcount)

    def write_tagged(
        self, sql: str, parameters: Sequence[Any], *, table: str, key: str, tags: Iterable[str]
    ) -> None:
        """Run one statement that writes the entry ``key`` of ``table``, and tag that entry
        with ``tags`` (the conversations it was built from; its old tags go), in one
        transaction."""
        wanted = sorted(set(tags))

        def work(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(sql, parameters)
                conn.execute("DELETE FROM tags WHERE tbl = ? AND key = ?", (table, key))
                conn.executemany(
                    "INSERT INTO tags(tag, tbl, key) VALUES (?, ?, ?)",
                    [(tag, table, key) for tag in wanted],
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

        self._locked(work)

    def damaged(self, key: str, problem: BaseException) -> CacheError:
        """The error for an entry that cannot be read back (it names the file)."""
        return CacheError(
            f"The {self.WHAT} {self.path} holds a damaged entry {key} ({problem}); delete "
            "that file to start a fresh cache, or turn the cache off."
        )

    def close(self) -> None:
        """Close the connection (idempotent)."""
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def __enter__(self: _StoreT) -> _StoreT:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"


def erase_tagged(path: str | Path, tags: Collection[str]) -> int:
    """Delete every entry of the store file ``path`` tagged with one of ``tags``, from
    whichever table holds it, leaving no copy in the file or its log; returns how many
    entries went. A file without tags (none, or not a store) is left as it is."""
    target = Path(path)
    if not tags or not target.is_file() or target.is_symlink():
        return 0
    wanted = sorted(set(tags))
    marks = ",".join("?" * len(wanted))
    try:
        conn = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None)
    except sqlite3.Error as exc:
        raise CacheError(f"The cache {target} cannot be opened to erase from ({exc}).") from exc
    try:
        conn.execute(SECURE_DELETE)
        tables = {
            str(row[0])
            for row in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        }
        if "tags" not in tables:
            return 0
        erased = 0
        conn.execute("BEGIN IMMEDIATE")
        try:
            tagged = conn.execute(
                f"SELECT DISTINCT tbl, key FROM tags WHERE tag IN ({marks})", wanted
            ).fetchall()
            for table, key in tagged:
                # Only a table of this file, named as the file names it, is written to.
                if table in tables and table != "tags":
                    quoted = '"' + str(table).replace('"', '""') + '"'
                    erased += conn.execute(f"DELETE FROM {quoted} WHERE key = ?", (key,)).rowcount
                conn.execute("DELETE FROM tags WHERE tbl = ? AND key = ?", (table, key))
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        truncate_log(conn, target)
        return erased
    except sqlite3.Error as exc:
        raise CacheError(
            f"The cache {target} could not be erased from ({exc}); if another process "
            "holds it, retry the forget."
        ) from exc
    finally:
        with contextlib.suppress(sqlite3.Error):
            conn.close()
