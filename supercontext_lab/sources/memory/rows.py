"""One document as a row of the memory index: analysed, sealed, written, read back.

:func:`doc_row` turns a document into the row stored in ``docs`` (its analysed terms,
their signatures for the ranker, the seal's digest); the writes here are single
statements on ``docs``, which the triggers of :mod:`.schema` keep the search index and
the per-namespace counts in step with. The reads are the small ones a tree needs beside
the ranker (:mod:`.rank`): counts, namespaces, and the sealed columns of the rows a
search found, which the tree checks before it returns them.
"""

from __future__ import annotations

import sqlite3
from collections import Counter
from collections.abc import Sequence
from typing import Any, NamedTuple

from ...config.secrets import mask
from ...reading.words import analyze
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
    "SEALED_COLUMNS",
    "DocRow",
    "contents_of",
    "count_docs",
    "delete_doc",
    "doc_row",
    "erase_docs",
    "namespace_names",
    "optimize_after_bulk",
    "row_digests",
    "sealed_rows",
    "upsert_doc",
    "upsert_docs",
]

# A bulk write at least this large (and a quarter of the index) is followed by an FTS5
# 'optimize', which merges index segments so that later searches read fewer pages.
_OPTIMIZE_AFTER = 1000


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
    ``seal``; ``source_hash`` is the sha256 of the bytes of the file it was read from.

    The content is stored with secrets masked (:func:`~supercontext_lab.config.secrets.mask`):
    a key pasted into a note, an imported chat or an archived turn is neither indexed
    nor recalled, and the row's digest covers what is stored."""
    content = mask(content)
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


def erase_docs(conn: sqlite3.Connection, namespace: str, keys: Sequence[str]) -> int:
    """Delete the documents ``keys`` of ``namespace`` and merge the search index's segments
    (call inside a transaction); return how many existed.

    An FTS5 delete only marks a document's terms gone, in a segment of its own; the old
    segments keep them until merged, so the merge is what takes them out of the file (the
    connection's ``secure_delete`` then zeroes the pages they were on)."""
    gone = sum(delete_doc(conn, namespace, key) for key in keys)
    conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")
    return gone


def optimize_after_bulk(conn: sqlite3.Connection, written: int, indexed: int | None = None) -> None:
    """After a bulk write of ``written`` documents, merge the FTS5 segments into one, which
    makes later searches faster: when the write was large and at least a quarter of the
    ``indexed`` documents (the index's count now when ``None``)."""
    if written >= _OPTIMIZE_AFTER and written * 4 >= (
        count_docs(conn, None) if indexed is None else indexed
    ):
        conn.execute("INSERT INTO fts(fts) VALUES ('optimize')")


def count_docs(conn: sqlite3.Connection, namespace: str | None) -> int:
    """The number of documents in ``namespace``, or in the whole index for ``None``."""
    if namespace is None:
        row = conn.execute("SELECT total(docs) FROM namespaces").fetchone()
    else:
        row = conn.execute("SELECT docs FROM namespaces WHERE name = ?", (namespace,)).fetchone()
    return int(row[0]) if row else 0


def namespace_names(conn: sqlite3.Connection) -> list[str]:
    """The namespaces holding at least one document, sorted."""
    return [row[0] for row in conn.execute("SELECT name FROM namespaces ORDER BY name")]


def sealed_rows(conn: sqlite3.Connection, ids: Sequence[int]) -> list[Any]:
    """The rows ``ids`` that exist, each as ``(id, *SEALED_COLUMNS, digest)``."""
    marks = ",".join("?" * len(ids))
    return conn.execute(
        f"SELECT id, {SEALED_COLUMNS}, digest FROM docs WHERE id IN ({marks})", list(ids)
    ).fetchall()


def contents_of(conn: sqlite3.Connection, ids: Sequence[int]) -> dict[int, str]:
    """The content of each row of ``ids`` that exists, by id (read 500 ids a query)."""
    found: dict[int, str] = {}
    for start in range(0, len(ids), 500):
        part = list(ids[start : start + 500])
        marks = ",".join("?" * len(part))
        query = f"SELECT id, content FROM docs WHERE id IN ({marks})"
        found.update((int(i), str(c)) for i, c in conn.execute(query, part))
    return found


def row_digests(conn: sqlite3.Connection) -> list[tuple[int, str, str]]:
    """Every document as ``(id, namespace, row digest)``, by id."""
    return [
        (int(doc_id), str(ns), str(digest))
        for doc_id, ns, digest in conn.execute("SELECT id, namespace, digest FROM docs ORDER BY id")
    ]
