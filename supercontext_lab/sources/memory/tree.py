"""The memory tree (SPEC §8): documents in namespaces, searched with BM25.

A :class:`MemoryTree` wraps one folder. Its documents come from two places:

* files ``memory/<namespace>/<key>.md`` in the folder, with optional front matter
  (``category``, ``key``, ``created``; a front-matter ``key`` overrides the file name, the
  category defaults to ``"note"``) whose body is the content;
* the Python API: :meth:`MemoryTree.add` and :meth:`MemoryTree.add_many`.

Both land in one SQLite FTS5 index, ``.supercontext/memory.sqlite3`` inside the folder,
which is the only thing ever written there. Opening a tree syncs ``memory/`` into the
index incrementally (only new or changed files are read), so reopening an up-to-date
workspace costs one ``stat`` per file. An index from another schema version, one this lab
did not build for this folder (a copied workspace's, see :mod:`.seal`), one whose tables
or triggers were changed, a damaged file or something that is not SQLite at all is
rebuilt from ``memory/``; documents that were added only through the API are lost in
that case (they are in no file), and a warning is logged on the
``supercontext_lab.sources.memory.index`` logger (:attr:`MemoryTree.rebuilt_because` says
why).

What a search returns is checked first: each hit's row must carry this lab's digest (a
row changed by anything else makes the index rebuilt), and a row read from a file must
match that file's bytes now. A row whose file is gone is never returned, and a row whose
file changed without its time and size changing (a file restored by ``tar``) is read
again from the file, so a hit always says what the note on disk says.

Search is BM25 (see :mod:`supercontext_lab.sources.memory.rank` for how it stays fast at
tens of thousands of documents). Any text is a valid query: it is split into words and
nothing in it is read as FTS5 syntax.
"""

from __future__ import annotations

import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

from ..._text import visible
from ...errors import MemoryIndexError
from ...reading.words import unique_terms
from .files import (
    DEFAULT_CATEGORY,
    file_entry,
    keys_left_out,
    read_current,
    read_memory_file,
    scan_memory_folder,
    source_hash,
)
from .index import is_damage, open_index, transaction
from .rank import Ranker
from .rows import (
    SEALED_COLUMNS,
    DocRow,
    delete_doc,
    doc_row,
    optimize,
    upsert_doc,
    upsert_docs,
)
from .schema import SCHEMA_VERSION
from .seal import Seal

__all__ = [
    "DEFAULT_CATEGORY",
    "MAX_RECALL_LIMIT",
    "MemoryHit",
    "MemoryTree",
    "SyncReport",
]

#: :meth:`MemoryTree.recall` never returns more hits than this.
MAX_RECALL_LIMIT = 8
#: Only the first this-many distinct words of a query are searched.
MAX_QUERY_TERMS = 64
# A bulk write at least this large (and a quarter of the index) is followed by an FTS5
# 'optimize', which merges index segments so that later searches read fewer pages.
_OPTIMIZE_AFTER = 1000
# A search whose hits needed repairs (a file gone or changed) runs again at most this
# many times; what it returns is always checked.
_SEARCHES = 3
# What a search found wrong with a hit: a row the seal does not verify.
_TAMPERED = ""

_log = logging.getLogger(__name__)
_T = TypeVar("_T")


@dataclass(frozen=True)
class MemoryHit:
    """One search result; ``score`` is positive and higher is better."""

    namespace: str
    key: str
    content: str
    category: str
    score: float
    created: str | None = None


@dataclass(frozen=True)
class SyncReport:
    """What one sync of ``memory/`` did, counted in files."""

    added: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    refused: tuple[tuple[str, str], ...] = ()
    """``(path under memory/, reason)`` of every file or folder left out: links leading
    out of the tree's folder, special files."""


def _text(value: object, what: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, not {type(value).__name__}.")
    if not allow_empty and not value.strip():
        raise ValueError(f"{what} must not be empty.")
    return value


def _namespace(value: object, what: str = "namespace") -> str:
    namespace = _text(value, what)
    if namespace == "*":
        raise ValueError(f"{what} '*' is reserved for searching every namespace.")
    return namespace


class MemoryTree:
    """The memory documents of one folder, indexed for BM25 search.

    ``MemoryTree(path)`` accepts a workspace folder or any folder (created when absent)
    and opens, creating or rebuilding as needed, ``path/.supercontext/memory.sqlite3``;
    when ``path/memory/`` exists it is synced into the index. The tree is a context
    manager and is safe to share between threads. ``(namespace, key)`` is unique: adding
    a document again replaces it. Raises :class:`MemoryIndexError` naming the file when
    the index can neither be opened nor rebuilt (for instance in a read-only folder).
    """

    def __init__(self, path: str | os.PathLike[str], *, allow_outside_links: bool = False) -> None:
        root = Path(path)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemoryIndexError(
                f"Cannot use {root} as a memory folder ({exc.strerror or exc}); "
                "pass a folder that exists or can be created."
            ) from exc
        self._root = root
        # Links under memory/ are followed only while they stay inside the folder: a
        # workspace may be somebody else's, and what is indexed is shown to a model.
        self._allow_outside_links = allow_outside_links
        self._lock = threading.RLock()
        self._closed = False
        self._rebuilding = False
        self._last_sync = SyncReport()
        self._seal = Seal.for_folder(root, SCHEMA_VERSION)
        self._conn, self._db_path, self._rebuilt_because = open_index(root, self._seal)
        self._ranker = Ranker(self._conn)
        try:
            self.sync()
        except BaseException:
            self.close()
            raise

    # -- properties -----------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The folder this tree belongs to."""
        return self._root

    @property
    def index_path(self) -> Path:
        """The SQLite index file, ``path/.supercontext/memory.sqlite3``."""
        return self._db_path

    @property
    def rebuilt(self) -> bool:
        """Whether an unusable index was found (on opening or later) and rebuilt."""
        return self._rebuilt_because is not None

    @property
    def rebuilt_because(self) -> str | None:
        """Why the index was rebuilt (the latest reason), or ``None`` when it was not."""
        return self._rebuilt_because

    @property
    def last_sync(self) -> SyncReport:
        """The report of the latest sync, including the one made when the tree opened."""
        return self._last_sync

    def __repr__(self) -> str:
        return f"MemoryTree({str(self._root)!r})"

    # -- lifecycle ------------------------------------------------------------------

    def close(self) -> None:
        """Close the index; further calls on this tree raise :class:`MemoryIndexError`."""
        with self._lock:
            if not self._closed:
                self._closed = True
                self._conn.close()

    def __enter__(self) -> MemoryTree:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(
        self, work: Callable[[sqlite3.Connection], _T], write: bool = False, syncs: bool = False
    ) -> _T:
        """Run ``work`` under the lock (in a transaction when writing).

        SQLite errors become :class:`MemoryIndexError`; an index found damaged on the way
        is rebuilt from ``memory/`` once and ``work`` runs again (``syncs``: ``work`` is a
        sync, which then fills the new index itself).
        """
        with self._lock:
            for attempt in (1, 2):
                if self._closed:
                    raise MemoryIndexError(
                        f"The memory index {self._db_path} is closed; open a new MemoryTree."
                    )
                try:
                    if not write:
                        return work(self._conn)
                    try:
                        with transaction(self._conn):
                            return work(self._conn)
                    finally:
                        self._ranker.invalidate()
                except sqlite3.Error as exc:
                    if attempt == 1 and not self._rebuilding and is_damage(exc):
                        self._rebuild(f"SQLite reports it damaged ({exc})", sync=not syncs)
                        continue
                    raise MemoryIndexError(
                        f"The memory index {self._db_path} failed ({exc}); if another "
                        "program holds it, retry; if it is damaged, delete it to rebuild it."
                    ) from exc
            raise AssertionError("unreachable")  # pragma: no cover

    def _rebuild(self, reason: str, sync: bool) -> None:
        """Replace a damaged index by a new one, filled from ``memory/`` if ``sync``."""
        self._closed = True
        self._conn.close()
        self._conn, self._db_path, _ = open_index(self._root, self._seal, damaged=reason)
        self._closed = False
        self._rebuilt_because = reason
        self._ranker = Ranker(self._conn)
        if sync:
            self._rebuilding = True
            try:
                self.sync()
            finally:
                self._rebuilding = False

    # -- writing --------------------------------------------------------------------

    def add(self, namespace: str, key: str, content: str, category: str = DEFAULT_CATEGORY) -> None:
        """Add one document, replacing any document with the same namespace and key."""
        row = doc_row(
            _namespace(namespace),
            _text(key, "key"),
            _text(category, "category"),
            _text(content, "content", allow_empty=True),
            None,
            None,
            seal=self._seal,
        )
        self._run(lambda conn: upsert_doc(conn, row), write=True)

    def add_many(self, records: Iterable[Mapping[str, Any]]) -> int:
        """Add many documents in one transaction; return how many were written.

        Each record is a mapping with ``namespace``, ``key`` and ``content`` and optionally
        ``category`` (default ``"note"``) and ``created``. A bad record raises
        :class:`ValueError` naming its index and the problem, and nothing is written.
        """
        rows: list[DocRow] = []
        for index, record in enumerate(records):
            if not isinstance(record, Mapping):
                raise ValueError(
                    f"Record {index} is a {type(record).__name__}, not a mapping with "
                    "'namespace', 'key' and 'content'."
                )
            for name in ("namespace", "key", "content"):
                if name not in record:
                    raise ValueError(
                        f"Record {index} has no '{name}'; every record needs 'namespace', "
                        "'key' and 'content'."
                    )
            created = record.get("created")
            if created is not None:
                created = _text(created, f"Record {index}: 'created'")
            rows.append(
                doc_row(
                    _namespace(record["namespace"], f"Record {index}: 'namespace'"),
                    _text(record["key"], f"Record {index}: 'key'"),
                    _text(record.get("category", DEFAULT_CATEGORY), f"Record {index}: 'category'"),
                    _text(record["content"], f"Record {index}: 'content'", allow_empty=True),
                    created,
                    None,
                    seal=self._seal,
                )
            )
        if not rows:
            return 0

        def write(conn: sqlite3.Connection) -> None:
            before = self._count(conn, None)
            upsert_docs(conn, rows)
            if len(rows) >= _OPTIMIZE_AFTER and len(rows) * 4 >= before:
                optimize(conn)

        self._run(write, write=True)
        return len(rows)

    def delete(self, namespace: str, key: str) -> bool:
        """Delete one document; return whether it existed.

        A document that came from a file comes back when that file changes.
        """
        namespace = _namespace(namespace)
        key = _text(key, "key")
        return self._run(lambda conn: delete_doc(conn, namespace, key), write=True)

    # -- reading --------------------------------------------------------------------

    def recall(self, namespace: str, query: str, limit: int = 5) -> list[MemoryHit]:
        """Search ``namespace`` (``"*"`` for every namespace) and return the best hits first.

        ``limit`` is capped at :data:`MAX_RECALL_LIMIT`; below 1 it is a
        :class:`ValueError`. Any query text is safe; one without words returns ``[]``.
        """
        if namespace != "*":
            namespace = _namespace(namespace)
        if not isinstance(query, str):
            raise ValueError(f"query must be a string, not {type(query).__name__}.")
        if isinstance(limit, bool) or not isinstance(limit, int):
            raise ValueError(f"limit must be an integer, not {type(limit).__name__}.")
        if limit < 1:
            raise ValueError(f"limit must be at least 1 (got {limit}).")
        terms = unique_terms(query)[:MAX_QUERY_TERMS]
        if not terms:
            return []
        hits: list[MemoryHit] = []
        for _search in range(_SEARCHES):
            hits, wrong = self._run(lambda conn: self._recall(conn, namespace, terms, limit))
            if not wrong:
                break
            self._repair(wrong)
        return hits

    def _recall(
        self, conn: sqlite3.Connection, namespace: str, terms: list[str], limit: int
    ) -> tuple[list[MemoryHit], set[str]]:
        """The checked hits of one search, and what was wrong with the others: the paths
        of rows whose file is gone or changed, :data:`_TAMPERED` for a row the seal does
        not verify."""
        ranked = self._ranker.search(
            None if namespace == "*" else namespace, terms, min(limit, MAX_RECALL_LIMIT)
        )
        if not ranked:
            return [], set()
        marks = ",".join("?" * len(ranked))
        rows = conn.execute(
            f"SELECT id, {SEALED_COLUMNS}, digest FROM docs WHERE id IN ({marks})",
            [doc_id for doc_id, _ in ranked],
        ).fetchall()
        by_id = {row[0]: row for row in rows}
        hits: list[MemoryHit] = []
        wrong: set[str] = set()
        for doc_id, score in ranked:
            row = by_id.get(doc_id)
            if row is None:
                continue
            _, ns, key, category, content, created, path, digest_of_file, digest = row
            if not self._seal.verifies(row[1:8], digest):
                wrong.add(_TAMPERED)
                continue
            if path is not None and not self._matches_file(path, digest_of_file):
                wrong.add(path)
                continue
            hits.append(MemoryHit(ns, key, content, category, score, created))
        return hits, wrong

    def _matches_file(self, rel: str, digest_of_file: str | None) -> bool:
        """Whether the memory file ``rel`` still holds the bytes its row was read from."""
        entry = file_entry(self._root, rel, allow_outside_links=self._allow_outside_links)
        data = None if entry is None else read_current(entry)
        return data is not None and source_hash(data) == digest_of_file

    def _repair(self, wrong: set[str]) -> None:
        """Rebuild an index holding a row the seal does not verify; otherwise forget the
        rows of the files found gone or changed and sync, which reads those files again."""
        with self._lock:
            if _TAMPERED in wrong:
                self._rebuild(
                    "a row in it was changed outside the lab (its digest does not verify)",
                    sync=True,
                )
                return

            def forget(conn: sqlite3.Connection) -> None:
                for rel in sorted(wrong):
                    conn.execute("DELETE FROM docs WHERE path = ?", (rel,))
                    conn.execute("DELETE FROM files WHERE path = ?", (rel,))

            self._run(forget, write=True)
            self.sync()

    def namespaces(self) -> list[str]:
        """The namespaces holding at least one document, sorted."""
        return self._run(
            lambda conn: [
                row[0] for row in conn.execute("SELECT name FROM namespaces ORDER BY name")
            ]
        )

    def count(self, namespace: str | None = None) -> int:
        """The number of documents in ``namespace``, or in the whole tree for ``None``."""
        if namespace is not None:
            namespace = _namespace(namespace)
        return self._run(lambda conn: self._count(conn, namespace))

    @staticmethod
    def _count(conn: sqlite3.Connection, namespace: str | None) -> int:
        if namespace is None:
            row = conn.execute("SELECT total(docs) FROM namespaces").fetchone()
        else:
            row = conn.execute(
                "SELECT docs FROM namespaces WHERE name = ?", (namespace,)
            ).fetchone()
        return int(row[0]) if row else 0

    # -- syncing memory/ --------------------------------------------------------------

    def sync(self) -> SyncReport:
        """Bring the index up to date with ``memory/`` and report what changed.

        Only files whose size or modification time changed since the last sync are read.
        Documents whose file disappeared are removed; documents added through the API
        are never removed by a sync. Files that are not valid UTF-8 are read with
        replacement characters.
        """

        def work(conn: sqlite3.Connection) -> SyncReport:
            files, unlisted, refused = scan_memory_folder(
                self._root, allow_outside_links=self._allow_outside_links
            )
            for rel, reason in refused:
                _log.warning("Not indexing %s: %s.", visible(f"memory/{rel}".rstrip("/")), reason)
            known = {
                row[0]: row[1:]
                for row in conn.execute("SELECT path, mtime_ns, size, namespace, key FROM files")
            }
            removed = 0
            for rel in sorted(set(known) - set(files)):
                if rel.split("/", 1)[0] in unlisted:
                    continue  # its folder could not be listed: keep what we had
                conn.execute("DELETE FROM docs WHERE path = ?", (rel,))
                conn.execute("DELETE FROM files WHERE path = ?", (rel,))
                removed += 1
            # The key of every file: an unchanged one keeps the key it was indexed under,
            # a new or changed one is read.
            keys: dict[str, tuple[str, str]] = {}
            rows: dict[str, DocRow] = {}
            for rel in sorted(files):
                entry = files[rel]
                old = known.get(rel)
                if old is not None and (old[0], old[1]) == (entry.mtime_ns, entry.size):
                    keys[rel] = (old[2], old[3])
                    continue
                row = read_memory_file(entry, rel, self._seal)
                if row is not None:
                    rows[rel] = row
                    keys[rel] = (row.namespace, row.key)
            # Two files of one key would replace each other, and a key holding a line
            # break or a hidden character could not be cited as it reads: the file left
            # out is not indexed (and taken out if it was), and reported.
            collisions = keys_left_out(keys)
            for rel, reason in collisions.items():
                refused.append((rel, reason))
                _log.warning("Not indexing %s: %s.", visible(f"memory/{rel}"), reason)
                if rel in known:
                    conn.execute("DELETE FROM docs WHERE path = ?", (rel,))
                    conn.execute("DELETE FROM files WHERE path = ?", (rel,))
            added = updated = unchanged = 0
            for rel in sorted(files):
                if rel in collisions:
                    continue
                row = rows.get(rel)
                if row is None:
                    unchanged += rel in keys
                    continue
                entry = files[rel]
                old = known.get(rel)
                if old is not None and (old[2], old[3]) != (row.namespace, row.key):
                    conn.execute("DELETE FROM docs WHERE path = ?", (rel,))
                upsert_doc(conn, row)
                conn.execute(
                    "INSERT OR REPLACE INTO files(path, mtime_ns, size, namespace, key) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (rel, entry.mtime_ns, entry.size, row.namespace, row.key),
                )
                if old is None:
                    added += 1
                else:
                    updated += 1
            changed = added + updated
            if changed >= _OPTIMIZE_AFTER and changed * 4 >= self._count(conn, None):
                optimize(conn)
            return SyncReport(added, updated, removed, unchanged, tuple(refused))

        self._last_sync = self._run(work, write=True, syncs=True)
        return self._last_sync
