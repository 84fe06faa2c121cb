"""The SQLite file behind the memory tree: opened, checked, rebuilt, and its write transactions.

The file is ``.supercontext/memory.sqlite3`` inside the tree's folder, the only place the
lab writes in a workspace; its tables are those of :mod:`.schema`. The connection runs in
autocommit mode; writers open explicit ``BEGIN IMMEDIATE`` transactions through
:func:`transaction`.

An existing index is used only when this lab built it for this folder (see
:mod:`.seal`): its schema version, its binding and its whole schema (every table, index
and trigger, compared with what :mod:`.schema` creates) must be this lab's, or it is
rebuilt from ``memory/`` with one warning saying why and what, if anything, is lost
(:func:`rebuild_warning`). Its rows are checked when read (:mod:`.tree`).
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path

from ..._erasure import SECURE_DELETE
from ..._text import visible
from ...errors import MemoryIndexError
from .kept import kept_namespaces
from .schema import SCHEMA_VERSION, expected_schema, schema_of, schema_statements
from .seal import Seal

__all__ = [
    "INDEX_DIR",
    "INDEX_FILE",
    "index_problem",
    "is_damage",
    "open_index",
    "rebuild_warning",
    "transaction",
]

INDEX_DIR = ".supercontext"
INDEX_FILE = "memory.sqlite3"

_log = logging.getLogger(__name__)
# Namespaces a rebuild's warning names at most.
_NAMES_SHOWN = 5
# SQLite's primary result codes for a damaged file and for a file that is not a database.
_SQLITE_CORRUPT = 11
_SQLITE_NOTADB = 26


def _connect(db_path: Path) -> sqlite3.Connection:
    # check_same_thread=False: the tree serialises access with its own lock, and the scout
    # calls recall from worker threads.
    conn = sqlite3.connect(db_path, timeout=10.0, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA journal_mode=WAL").fetchone()
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA cache_size=-16000")
        # Deleted documents are overwritten, not left in free space (forgetting erases).
        conn.execute(SECURE_DELETE)
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
        return (
            "it was not built by this lab for this folder (copied from another folder or "
            "user, or planted)"
        )
    if schema_of(conn) != expected_schema():
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


def _not_in_files(conn: sqlite3.Connection) -> dict[str, int] | None:
    """How many documents of each namespace no file holds (added through the API), or
    ``None`` when the file cannot say."""
    try:
        rows = conn.execute(
            "SELECT namespace, count(*) FROM docs WHERE path IS NULL GROUP BY namespace"
        ).fetchall()
    except sqlite3.Error:
        return None
    return {str(namespace): int(count) for namespace, count in rows}


def rebuild_warning(db_path: Path, reason: str, not_in_files: dict[str, int] | None) -> str:
    """The one line a rebuild logs: why, and what is lost. Notes come back from
    ``memory/`` and registered namespaces from their own source (:mod:`.kept`); only
    documents added through the API to other namespaces are lost, and usually there are
    none."""
    kept = kept_namespaces()
    back = ["the notes from memory/"] + [
        f"the {name} from {k.source}"
        for name, k in sorted(kept.items())
        if not_in_files is None or not_in_files.get(name)
    ]
    if not_in_files is None:
        lost = "documents added only through the Python API, if any, are lost"
    else:
        gone = {name: n for name, n in sorted(not_in_files.items()) if name not in kept}
        total = sum(gone.values())
        # The names come from the old index, which may be anybody's: escaped, and a few.
        names = [visible(name) for name in list(gone)[:_NAMES_SHOWN]]
        names += ["…"] if len(gone) > _NAMES_SHOWN else []
        lost = (
            "nothing is lost"
            if not total
            else f"{total} document{'' if total == 1 else 's'} added only through the Python API "
            f"({', '.join(names)}) {'is' if total == 1 else 'are'} in no file and lost"
        )
    returning = back[0] if len(back) == 1 else f"{', '.join(back[:-1])} and {back[-1]}"
    return (
        f"Rebuilding the memory index {visible(str(db_path))} because {reason}; {lost} "
        f"({returning} come back)."
    )


def is_damage(exc: sqlite3.Error) -> bool:
    """Whether ``exc`` says the index file is damaged (rather than busy or misused)."""
    if sys.version_info >= (3, 11):
        try:
            return exc.sqlite_errorcode & 0xFF in (_SQLITE_CORRUPT, _SQLITE_NOTADB)
        except AttributeError:  # raised by the sqlite3 module itself, not by SQLite
            pass
    message = str(exc).lower()  # Python 3.10 has no error codes on exceptions
    return "malformed" in message or "not a database" in message


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
        for statement in schema_statements():
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
    (``damaged``, the reason, forces this); the caller then refills it from ``memory/``
    and the registered namespaces (:mod:`.kept`). Documents that were added only through
    the Python API to other namespaces are lost in that case, since no file holds them,
    and the warning says how many (:func:`rebuild_warning`). Raises :class:`MemoryIndexError` naming
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
    not_in_files: dict[str, int] | None = None
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
            # Counted only, never kept: the rows of an index being rebuilt are not trusted.
            not_in_files = _not_in_files(conn)
            conn.close()
    if reason is not None:
        _log.warning("%s", rebuild_warning(db_path, reason, not_in_files))
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
