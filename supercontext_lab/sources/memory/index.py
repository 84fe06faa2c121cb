"""The SQLite file behind the memory tree: schema, opening, rebuilding and writes.

Layout (schema version :data:`SCHEMA_VERSION`)::

    meta        key/value: schema_version, binding (the seal's, see seal.py)
    docs        one row per document: namespace, key, category, content, created,
                path (the memory/ file it came from, NULL when added through the API),
                source_hash (the sha256 of that file's bytes, NULL for the API),
                digest (the seal's keyed digest of all of these),
                key_terms/body_terms (analysed terms, see terms.py),
                repeated_terms (terms occurring more than once), length (terms),
                ns_hash, term_lo/hi, repeat_lo/hi, frequent_lo/hi (bit signatures
                of its terms, of those occurring more than once and of those occurring
                at least FREQUENT times; see rank.py)
    files       what the last sync saw: path, mtime_ns, size, namespace, key
    namespaces  per namespace: number of documents and of terms (kept by triggers)
    fts         FTS5 index over docs.key_terms and docs.body_terms (external content)

Triggers keep ``fts`` and ``namespaces`` in step with ``docs``, so every write is a
single statement on ``docs``. The connection runs in autocommit mode; writers open
explicit ``BEGIN IMMEDIATE`` transactions through :func:`transaction`.

An existing index is used only when this lab built it for this folder (see
:mod:`.seal`): its schema version, its binding and its whole schema (every table, index
and trigger, compared with what :data:`_SCHEMA` creates) must be this lab's, or it is
rebuilt from ``memory/`` with one warning saying why. Its rows are checked when read
(:mod:`.tree`).
"""

from __future__ import annotations

import contextlib
import functools
import hmac
import logging
import sqlite3
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

from ..._text import visible
from ...errors import MemoryIndexError
from ...reading.words import ANALYZER_VERSION, analyze
from .bm25 import (
    BODY_WEIGHT,
    FREQUENT,
    KEY_WEIGHT,
    REPEAT_MARK,
    namespace_hash,
    signature,
)
from .seal import Seal

__all__ = [
    "INDEX_DIR",
    "INDEX_FILE",
    "SCHEMA_VERSION",
    "SEALED_COLUMNS",
    "DocRow",
    "delete_doc",
    "doc_row",
    "index_problem",
    "is_damage",
    "open_index",
    "optimize",
    "transaction",
    "upsert_doc",
    "upsert_docs",
]

#: Bumped on any change to the tables below or to the text analysis.
SCHEMA_VERSION = 500 + ANALYZER_VERSION
INDEX_DIR = ".supercontext"
INDEX_FILE = "memory.sqlite3"

_log = logging.getLogger(__name__)
# SQLite's primary result codes for a damaged file and for a file that is not a database.
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


class DocRow(NamedTuple):
    """One analysed document, in the column order of the upsert statement."""

    namespace: str
    key: str
    category: str
    content: str
    created: str | None
    path: str | None
    key_terms: str
    body_terms: str
    repeated_terms: str
    length: int
    ns_hash: int
    term_lo: int
    term_hi: int
    repeat_lo: int
    repeat_hi: int
    frequent_lo: int
    frequent_hi: int
    source_hash: str | None
    digest: str


SEALED_COLUMNS = "namespace, key, category, content, created, path, source_hash"
"""The columns a row's digest covers, in order (its terms are derived from these)."""

_SCHEMA = """
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
CREATE TABLE docs(
    id INTEGER PRIMARY KEY,
    namespace TEXT NOT NULL,
    key TEXT NOT NULL,
    category TEXT NOT NULL,
    content TEXT NOT NULL,
    created TEXT,
    path TEXT,
    key_terms TEXT NOT NULL,
    body_terms TEXT NOT NULL,
    repeated_terms TEXT NOT NULL,
    length INTEGER NOT NULL,
    ns_hash INTEGER NOT NULL,
    term_lo INTEGER NOT NULL,
    term_hi INTEGER NOT NULL,
    repeat_lo INTEGER NOT NULL,
    repeat_hi INTEGER NOT NULL,
    frequent_lo INTEGER NOT NULL,
    frequent_hi INTEGER NOT NULL,
    source_hash TEXT,
    digest TEXT NOT NULL,
    UNIQUE(namespace, key)
);
CREATE INDEX docs_by_path ON docs(path) WHERE path IS NOT NULL;
-- A narrow copy of what searches test on every candidate (see rank.py): reading it
-- costs a fraction of reading the wide rows.
CREATE INDEX docs_bounds ON docs(
    id, ns_hash, length, term_lo, term_hi, repeat_lo, repeat_hi, frequent_lo, frequent_hi
);
CREATE TABLE files(
    path TEXT PRIMARY KEY,
    mtime_ns INTEGER NOT NULL,
    size INTEGER NOT NULL,
    namespace TEXT NOT NULL,
    key TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE namespaces(
    name TEXT PRIMARY KEY,
    docs INTEGER NOT NULL,
    terms INTEGER NOT NULL
) WITHOUT ROWID;
-- The analysed terms contain only letters, digits and marks and are stored as
-- " t1  t2  t3 " (each term wrapped in its own spaces, so that counting " t " in Python
-- counts every occurrence); the ascii tokenizer splits them exactly where the analyser
-- did. repeated_terms holds "§t" for every term t whose weighted frequency in the
-- document is above 1, so that searches can ask FTS5 for those documents only (see
-- rank.py). Scores are computed in Python, so FTS5 needs no positions:
-- detail='none' keeps the index small and its boolean queries fast.
CREATE VIRTUAL TABLE fts USING fts5(
    key_terms, body_terms, repeated_terms,
    content='docs', content_rowid='id', tokenize='ascii', detail='none'
);
CREATE TRIGGER docs_after_insert AFTER INSERT ON docs BEGIN
    INSERT INTO fts(rowid, key_terms, body_terms, repeated_terms)
        VALUES (new.id, new.key_terms, new.body_terms, new.repeated_terms);
    INSERT INTO namespaces(name, docs, terms) VALUES (new.namespace, 1, new.length)
        ON CONFLICT(name) DO UPDATE SET docs = docs + 1, terms = terms + excluded.terms;
END;
CREATE TRIGGER docs_after_delete AFTER DELETE ON docs BEGIN
    INSERT INTO fts(fts, rowid, key_terms, body_terms, repeated_terms)
        VALUES ('delete', old.id, old.key_terms, old.body_terms, old.repeated_terms);
    UPDATE namespaces SET docs = docs - 1, terms = terms - old.length
        WHERE name = old.namespace;
    DELETE FROM namespaces WHERE name = old.namespace AND docs <= 0;
END;
CREATE TRIGGER docs_after_update AFTER UPDATE ON docs BEGIN
    INSERT INTO fts(fts, rowid, key_terms, body_terms, repeated_terms)
        VALUES ('delete', old.id, old.key_terms, old.body_terms, old.repeated_terms);
    INSERT INTO fts(rowid, key_terms, body_terms, repeated_terms)
        VALUES (new.id, new.key_terms, new.body_terms, new.repeated_terms);
    UPDATE namespaces SET docs = docs - 1, terms = terms - old.length
        WHERE name = old.namespace;
    INSERT INTO namespaces(name, docs, terms) VALUES (new.namespace, 1, new.length)
        ON CONFLICT(name) DO UPDATE SET docs = docs + 1, terms = terms + excluded.terms;
    DELETE FROM namespaces WHERE name = old.namespace AND docs <= 0;
END;
"""

_UPSERT = """
INSERT INTO docs(
    namespace, key, category, content, created, path,
    key_terms, body_terms, repeated_terms, length,
    ns_hash, term_lo, term_hi, repeat_lo, repeat_hi, frequent_lo, frequent_hi,
    source_hash, digest
)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(namespace, key) DO UPDATE SET
    source_hash = excluded.source_hash, digest = excluded.digest,
    category = excluded.category, content = excluded.content, created = excluded.created,
    path = excluded.path, key_terms = excluded.key_terms, body_terms = excluded.body_terms,
    repeated_terms = excluded.repeated_terms, length = excluded.length,
    ns_hash = excluded.ns_hash, term_lo = excluded.term_lo, term_hi = excluded.term_hi,
    repeat_lo = excluded.repeat_lo, repeat_hi = excluded.repeat_hi,
    frequent_lo = excluded.frequent_lo, frequent_hi = excluded.frequent_hi
"""


def _connect(db_path: Path) -> sqlite3.Connection:
    # check_same_thread=False: the tree serialises access with its own lock, and the scout
    # calls recall from worker threads.
    conn = sqlite3.connect(db_path, timeout=10.0, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL").fetchone()
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA cache_size=-16000")
    except BaseException:
        conn.close()
        raise
    return conn


def _schema_version(conn: sqlite3.Connection) -> int | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    except sqlite3.OperationalError:
        return None
    if row is None:
        return None
    try:
        return int(row[0])
    except (TypeError, ValueError):
        return None


@functools.cache
def _expected_schema() -> frozenset[tuple[str, str, str, str | None]]:
    """Every table, index and trigger :data:`_SCHEMA` creates, as SQLite records them."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(_SCHEMA)
        return _schema_of(conn)
    finally:
        conn.close()


def _schema_of(conn: sqlite3.Connection) -> frozenset[tuple[str, str, str, str | None]]:
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return frozenset((str(t), str(n), str(b), None if q is None else str(q)) for t, n, b, q in rows)


def _meta(conn: sqlite3.Connection, key: str) -> str | None:
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    except sqlite3.OperationalError:
        return None
    return None if row is None else str(row[0])


def _check_usable(conn: sqlite3.Connection, seal: Seal) -> str | None:
    """Return why an existing index cannot be used as it is, or ``None`` when it can.

    Only the header, the schema and two meta rows are read, so opening stays cheap
    whatever the index size; damage deeper in the file shows up later as an error that
    :func:`is_damage` recognises, and the tree rebuilds then.
    """
    version = _schema_version(conn)
    if version != SCHEMA_VERSION:
        return f"it has schema version {version}, this version uses {SCHEMA_VERSION}"
    binding = _meta(conn, "binding")
    if binding is None or not hmac.compare_digest(binding, seal.binding):
        return "it was not built by this lab for this folder (a copied or foreign index)"
    if _schema_of(conn) != _expected_schema():
        return "its tables, indexes or triggers are not the ones this lab creates"
    return None


def index_problem(root: Path, seal: Seal) -> str | None:
    """Why the index of ``root`` would be rebuilt on opening, read without writing
    anything (for ``workspace check``); ``None`` when there is none or it is usable."""
    db_path = root / INDEX_DIR / INDEX_FILE
    if db_path.is_symlink() or (root / INDEX_DIR).is_symlink():
        return "it is a symbolic link"
    if not db_path.is_file():
        return None
    try:
        conn = sqlite3.connect(f"{db_path.as_uri()}?mode=ro&immutable=1", uri=True)
    except sqlite3.Error as exc:
        return f"it is not a readable SQLite database ({exc})"
    try:
        return _check_usable(conn, seal)
    except sqlite3.DatabaseError as exc:
        return f"it is not a readable SQLite database ({exc})"
    finally:
        conn.close()


def is_damage(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` says the index file is damaged (rather than busy or misused)."""
    if sys.version_info >= (3, 11):
        try:
            return exc.sqlite_errorcode & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
        except AttributeError:  # raised by the sqlite3 module itself, not by SQLite
            pass
    message = str(exc).lower()  # Python 3.10 has no error codes on exceptions
    return "malformed" in message or "not a database" in message


def _statements(script: str) -> list[str]:
    """The statements of ``script``, one string each (triggers kept whole)."""
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        if line.lstrip().startswith("--"):
            continue
        pending += line
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip())
            pending = ""
    return statements


def _remove_index_files(db_path: Path) -> None:
    for suffix in ("", "-wal", "-shm", "-journal"):
        target = db_path.with_name(db_path.name + suffix)
        try:
            target.unlink(missing_ok=True)
        except OSError as exc:
            raise MemoryIndexError(
                f"The memory index {db_path} is unusable and cannot be rebuilt because "
                f"{target} cannot be removed ({exc.strerror or exc}); remove it by hand "
                "or make the folder writable."
            ) from exc


def _create(db_path: Path, seal: Seal) -> sqlite3.Connection:
    conn = _connect(db_path)
    try:
        # executescript commits any open transaction first, so it runs on its own.
        conn.execute("BEGIN IMMEDIATE")
        for statement in _statements(_SCHEMA):
            conn.execute(statement)
        conn.executemany(
            "INSERT INTO meta(key, value) VALUES (?, ?)",
            [("schema_version", str(SCHEMA_VERSION)), ("binding", seal.binding)],
        )
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        conn.close()
        raise
    return conn


def open_index(
    root: Path, seal: Seal, damaged: str | None = None
) -> tuple[sqlite3.Connection, Path, str | None]:
    """Open (creating or rebuilding as needed) the index of the folder ``root``.

    Returns the connection, the index file and why an existing index had to be
    discarded (``None`` when none was): a file from another schema version, one this lab
    did not build for this folder (``seal``), one whose tables or triggers were changed,
    a damaged file or a file that is not SQLite at all is deleted and recreated empty
    (``damaged``, the reason, forces this); the caller then refills it from ``memory/``.
    Documents that were added only through the Python API are lost in that case, since
    no file holds them, and a warning says so. Raises :class:`MemoryIndexError` naming
    the file when the index can neither be opened nor recreated.
    """
    folder = root / INDEX_DIR
    db_path = folder / INDEX_FILE
    # The index folder is the only place the lab writes (and deletes damaged files) in
    # a workspace, so it must not lead anywhere else through a link.
    for link in (folder, db_path):
        if link.is_symlink():
            raise MemoryIndexError(
                f"{link} is a symbolic link; the memory index must live inside the folder. "
                "Remove the link and the index is rebuilt from memory/."
            )
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise MemoryIndexError(
            f"Cannot create the memory index folder {folder} ({exc.strerror or exc}); "
            "make the workspace writable."
        ) from exc
    reason = damaged
    if reason is None and (db_path.exists() or db_path.is_symlink()):
        conn: sqlite3.Connection | None = None
        try:
            conn = _connect(db_path)
            reason = _check_usable(conn, seal)
        except sqlite3.DatabaseError as exc:
            reason = f"it is not a readable SQLite database ({exc})"
        if reason is None and conn is not None:
            return conn, db_path, None
        if conn is not None:
            conn.close()
    if reason is not None:
        _log.warning(
            "Rebuilding the memory index %s from memory/ because %s; documents added only "
            "through the Python API are not in any file and are lost.",
            visible(str(db_path)),
            reason,
        )
        _remove_index_files(db_path)
    try:
        return _create(db_path, seal), db_path, reason
    except sqlite3.Error as exc:
        raise MemoryIndexError(
            f"Cannot create the memory index {db_path} ({exc}); make the folder writable "
            "or remove the file."
        ) from exc


@contextlib.contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[None]:
    """Run the block in one write transaction: committed on success, rolled back on error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def doc_row(
    namespace: str,
    key: str,
    category: str,
    content: str,
    created: str | None,
    path: str | None,
    *,
    seal: Seal,
    source_hash: str | None = None,
) -> DocRow:
    """Analyse one document into the parameters of the upsert statement, sealed with
    ``seal``; ``source_hash`` is the sha256 of the bytes of the file it was read from."""
    key_terms = analyze(key)
    body_terms = analyze(content)
    weighted: dict[str, float] = dict.fromkeys(key_terms, 0.0)
    for term in key_terms:
        weighted[term] += KEY_WEIGHT
    for term, n in Counter(body_terms).items():
        weighted[term] = weighted.get(term, 0.0) + BODY_WEIGHT * n
    repeated = [term for term, freq in weighted.items() if freq > 1.0]
    term_lo, term_hi = signature(weighted)
    repeat_lo, repeat_hi = signature(repeated)
    frequent_lo, frequent_hi = signature([t for t in repeated if weighted[t] >= FREQUENT])
    return DocRow(
        namespace,
        key,
        category,
        content,
        created,
        path,
        _wrap(key_terms),
        _wrap(body_terms),
        _wrap([REPEAT_MARK + term for term in repeated]),
        len(key_terms) + len(body_terms),
        namespace_hash(namespace),
        term_lo,
        term_hi,
        repeat_lo,
        repeat_hi,
        frequent_lo,
        frequent_hi,
        source_hash,
        seal.digest((namespace, key, category, content, created, path, source_hash)),
    )


def _wrap(terms: list[str]) -> str:
    return " " + "  ".join(terms) + " " if terms else ""


def upsert_doc(
    conn: sqlite3.Connection,
    row: DocRow,
) -> None:
    """Insert a document built by :func:`doc_row`, replacing one with the same key."""
    conn.execute(_UPSERT, row)


def upsert_docs(
    conn: sqlite3.Connection,
    rows: list[DocRow],
) -> None:
    """Insert many documents built by :func:`doc_row` (call inside a transaction)."""
    conn.executemany(_UPSERT, rows)


def delete_doc(conn: sqlite3.Connection, namespace: str, key: str) -> bool:
    """Delete one document; return whether it existed."""
    cursor = conn.execute("DELETE FROM docs WHERE namespace = ? AND key = ?", (namespace, key))
    return cursor.rowcount > 0


def optimize(conn: sqlite3.Connection) -> None:
    """Merge the FTS5 segments into one, which makes later searches faster."""
    conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
