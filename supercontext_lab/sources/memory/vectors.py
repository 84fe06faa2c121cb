"""The stored vectors of the memory's documents: ``.supercontext/vectors.sqlite3``.

A document is embedded once per embedder and its vectors kept here, keyed by the
embedder's identity and the digest of the text that was embedded
(:func:`~.semantic.text_digest`), so that a document is embedded again only when its
text changes, a document moved or renamed is not embedded again, and two embedders
never read each other's vectors. A document's row holds the vectors of its units, as
little-endian float32, L2-normalised.

This file is a cache: everything in it can be computed again. So a file this version
did not write, or one SQLite finds damaged, is deleted and started afresh, and a row
whose seal (an HMAC under the lab's key, :mod:`.seal`) does not verify is treated as
missing and embedded again: a workspace copied from another lab, a hand edit. A row is
keyed by what was embedded, so a row this lab wrote for another folder holding the same
text is as good here. Like the index, it is refused when it or its folder is a symbolic
link.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import sqlite3
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
import numpy.typing as npt

from ..._sqlite import SqliteStore
from ..._text import visible
from ...errors import CacheError, MemoryIndexError
from .embedder import MAX_DIMENSION
from .index import INDEX_DIR

__all__ = [
    "MAX_UNITS",
    "VECTORS_FILE",
    "Rows",
    "VectorState",
    "VectorStore",
    "assemble",
    "fingerprint",
    "open_vectors",
]

VECTORS_FILE = "vectors.sqlite3"
MAX_UNITS = 128
"""The most vectors one document keeps (its first units; the rest is left to BM25)."""

_SCHEMA_VERSION = "1"
# SQLite limits the parameters of one statement; 500 digests stay well below it.
_IN_CHUNK = 500

_log = logging.getLogger(__name__)

Matrix = npt.NDArray[np.float32]
Rows = list[tuple[int, str, str]]
"""The index's documents as ``(id, namespace, row digest)``, by id: the row digest (the
seal's) changes whenever the document does."""


class VectorStore(SqliteStore):
    """The vectors of one folder's documents (see the module docstring); ``key`` seals
    its rows (the memory index's seal key)."""

    WHAT: ClassVar[str] = "vector cache"
    TABLES: ClassVar[Mapping[str, tuple[str, Sequence[str]]]] = {
        "meta": (
            "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL) "
            "WITHOUT ROWID",
            ("key", "value"),
        ),
        "vectors": (
            "CREATE TABLE IF NOT EXISTS vectors(embedder TEXT NOT NULL, digest TEXT NOT NULL, "
            "dim INTEGER NOT NULL, data BLOB NOT NULL, seal TEXT NOT NULL, "
            "PRIMARY KEY(embedder, digest)) WITHOUT ROWID",
            ("embedder", "digest", "dim", "data", "seal"),
        ),
    }

    def __init__(self, path: str | Path, key: bytes) -> None:
        super().__init__(path)
        self._key = key
        version = self.fetch_one("SELECT value FROM meta WHERE key = 'schema_version'")
        if version is None:
            self.write(
                "INSERT OR IGNORE INTO meta(key, value) VALUES ('schema_version', ?)",
                (_SCHEMA_VERSION,),
            )
        elif version[0] != _SCHEMA_VERSION:
            self.close()
            raise CacheError(f"{path} has schema version {version[0]!r}, not {_SCHEMA_VERSION}")

    def fetch_all(self, sql: str, parameters: Sequence[object] = ()) -> list[tuple[object, ...]]:
        """Every row of a query; SQLite errors become CacheError."""
        rows: list[tuple[object, ...]] = self._locked(
            lambda conn: conn.execute(sql, parameters).fetchall()
        )
        return rows

    def _seal(self, embedder: str, digest: str, dim: int, data: bytes) -> str:
        message = b"\0".join((embedder.encode(), digest.encode(), str(dim).encode(), data))
        return hmac.new(self._key, message, hashlib.sha256).hexdigest()

    def get(self, embedder: str, digests: Sequence[str]) -> dict[str, Matrix]:
        """The stored vectors of ``digests`` under ``embedder`` that verify, by digest."""
        found: dict[str, Matrix] = {}
        for start in range(0, len(digests), _IN_CHUNK):
            part = list(digests[start : start + _IN_CHUNK])
            query = (
                f"SELECT digest, dim, data, seal FROM vectors "
                f"WHERE embedder = ? AND digest IN ({','.join('?' * len(part))})"
            )
            rows = self.fetch_all(query, [embedder, *part])
            for digest, dim, data, seal in rows:
                vectors = self._readable(embedder, digest, dim, data, seal)
                if vectors is not None:
                    found[str(digest)] = vectors
        return found

    def _readable(
        self, embedder: str, digest: object, dim: object, data: object, seal: object
    ) -> Matrix | None:
        if not (isinstance(digest, str) and isinstance(data, bytes) and isinstance(seal, str)):
            return None
        if isinstance(dim, bool) or not isinstance(dim, int) or not 0 < dim <= MAX_DIMENSION:
            return None
        if not data or len(data) % (4 * dim) or len(data) > 4 * dim * MAX_UNITS:
            return None
        if not hmac.compare_digest(self._seal(embedder, digest, dim, data), seal):
            return None
        return np.frombuffer(data, dtype="<f4").reshape(-1, dim).astype(np.float32)

    def put(self, embedder: str, items: Mapping[str, Matrix]) -> None:
        """Store the vectors of each digest under ``embedder``, in one transaction."""
        rows = []
        for digest, vectors in items.items():
            dim = int(vectors.shape[1])
            data = np.ascontiguousarray(vectors[:MAX_UNITS], dtype="<f4").tobytes()
            rows.append((embedder, digest, dim, data, self._seal(embedder, digest, dim, data)))

        def work(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.executemany(
                    "INSERT OR REPLACE INTO vectors(embedder, digest, dim, data, seal) "
                    "VALUES (?, ?, ?, ?, ?)",
                    rows,
                )
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

        if rows:
            self._locked(work)

    def prune(self, embedder: str, live: set[str]) -> int:
        """Delete the rows of ``embedder`` whose digest is not in ``live``; how many."""
        rows = self.fetch_all("SELECT digest FROM vectors WHERE embedder = ?", (embedder,))
        stored = [row[0] for row in rows]
        stale = [digest for digest in stored if digest not in live]
        for start in range(0, len(stale), _IN_CHUNK):
            part = stale[start : start + _IN_CHUNK]
            self.write(
                f"DELETE FROM vectors WHERE embedder = ? AND digest IN ({','.join('?' * len(part))})",
                [embedder, *part],
            )
        return len(stale)

    def count(self, embedder: str) -> int:
        """How many documents' vectors are stored under ``embedder``."""
        row = self.fetch_one("SELECT count(*) FROM vectors WHERE embedder = ?", (embedder,))
        return int(row[0]) if row else 0


def open_vectors(root: Path, key: bytes) -> VectorStore:
    """The vector cache of the folder ``root``, created when absent and started afresh
    when unusable; :class:`MemoryIndexError` when it or its folder is a link, or when
    it can be neither opened nor created."""
    folder = root / INDEX_DIR
    path = folder / VECTORS_FILE
    for link in (folder, path):
        if link.is_symlink():
            raise MemoryIndexError(
                f"{link} is a symbolic link; the vector cache must live inside the folder. "
                "Remove the link."
            )
    try:
        return VectorStore(path, key)
    except CacheError as exc:
        _log.warning("Starting the vector cache %s afresh: %s", visible(str(path)), exc)
    for suffix in ("", "-wal", "-shm", "-journal"):
        try:
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        except OSError as exc:
            raise MemoryIndexError(
                f"The vector cache {path} is unusable and cannot be removed "
                f"({exc.strerror or exc}); remove it by hand."
            ) from exc
    try:
        return VectorStore(path, key)
    except CacheError as exc:
        raise MemoryIndexError(f"Cannot create the vector cache {path}: {exc}") from exc


@dataclass(frozen=True)
class VectorState:
    """The vectors of a folder's documents under one embedder, held in memory as one
    matrix, as of one fingerprint of its index; never changed, replaced."""

    identity: str
    fingerprint: str
    rows: Rows
    """Every document, as the index said when this state was built."""
    texts: dict[int, str]
    """Doc id -> text digest, for the documents with words."""
    vectors: dict[str, Matrix]
    """Text digest -> its vectors, for the texts embedded."""
    pending: dict[str, list[str]]
    """Text digest -> its texts to embed, for the texts not embedded yet."""
    ids: npt.NDArray[np.int64]
    namespaces: npt.NDArray[np.str_]
    starts: npt.NDArray[np.int64]
    """Where each document's rows begin in ``matrix``."""
    owners: npt.NDArray[np.int64]
    """Each row of ``matrix``: the index of its document in ``ids``."""
    matrix: Matrix


def fingerprint(rows: Rows) -> str:
    text = "\n".join(f"{doc_id} {namespace} {digest}" for doc_id, namespace, digest in rows)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def assemble(
    identity: str,
    fingerprint: str,
    rows: Rows,
    texts: dict[int, str],
    vectors: dict[str, Matrix],
    pending: dict[str, list[str]],
) -> VectorState:
    ids: list[int] = []
    namespaces: list[str] = []
    parts: list[Matrix] = []
    for doc_id, namespace, _ in rows:
        found = vectors.get(texts.get(doc_id, ""))
        if found is not None:
            ids.append(doc_id)
            namespaces.append(namespace)
            parts.append(found)
    counts = np.array([len(part) for part in parts], dtype=np.int64)
    dim = parts[0].shape[1] if parts else 1
    return VectorState(
        identity=identity,
        fingerprint=fingerprint,
        rows=rows,
        texts=texts,
        vectors=vectors,
        pending=pending,
        ids=np.array(ids, dtype=np.int64),
        namespaces=np.array(namespaces, dtype=np.str_),
        starts=np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64),
        owners=np.repeat(np.arange(len(ids), dtype=np.int64), counts),
        matrix=np.vstack(parts) if parts else np.zeros((0, dim), np.float32),
    )
