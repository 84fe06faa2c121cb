"""The memory index's tables, and the schema version that names them.

Layout (schema version :data:`SCHEMA_VERSION`)::

    meta        key/value: schema_version, binding (the seal's, see seal.py)
    docs        one row per document: namespace, key, category, content, created,
                path (the memory/ file it came from, NULL when added through the API),
                source_hash (the sha256 of that file's bytes, NULL for the API),
                digest (the seal's keyed digest of all of these),
                key_terms/body_terms (analysed terms, see reading/words.py),
                repeated_terms (terms occurring more than once), length (terms),
                ns_hash, term_lo/hi, repeat_lo/hi, frequent_lo/hi (bit signatures
                of its terms, of those occurring more than once and of those occurring
                at least FREQUENT times; see rank.py)
    files       what the last sync saw: path, mtime_ns, size, namespace, key
    namespaces  per namespace: number of documents and of terms (kept by triggers)
    fts         FTS5 index over docs.key_terms and docs.body_terms (external content)

Triggers keep ``fts`` and ``namespaces`` in step with ``docs``, so every write is a
single statement on ``docs``. :func:`expected_schema` is what an index must hold to be
used as it is (see :mod:`.index`): a table, index or trigger changed by anything else
makes it rebuilt.
"""

from __future__ import annotations

import functools
import sqlite3

from ...reading.words import ANALYZER_VERSION

__all__ = ["SCHEMA_VERSION", "expected_schema", "schema_of", "schema_statements"]

#: Bumped on any change to the tables below or to the text analysis.
SCHEMA_VERSION = 500 + ANALYZER_VERSION

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


@functools.cache
def expected_schema() -> frozenset[tuple[str, str, str, str | None]]:
    """Every table, index and trigger :data:`_SCHEMA` creates, as SQLite records them."""
    conn = sqlite3.connect(":memory:")
    try:
        conn.executescript(_SCHEMA)
        return schema_of(conn)
    finally:
        conn.close()


def schema_of(conn: sqlite3.Connection) -> frozenset[tuple[str, str, str, str | None]]:
    """Every table, index and trigger of ``conn``'s database, as SQLite records them."""
    rows = conn.execute("SELECT type, name, tbl_name, sql FROM sqlite_master").fetchall()
    return frozenset((str(t), str(n), str(b), None if q is None else str(q)) for t, n, b, q in rows)


def schema_statements() -> list[str]:
    """The statements that create the tables, one string each (triggers kept whole):
    run one by one, they can share a transaction with what follows them."""
    return _statements(_SCHEMA)


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
