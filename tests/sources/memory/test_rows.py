"""A document as a row of the index: analysed, sealed, written, counted, read back."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from supercontext_lab.sources.memory.bm25 import REPEAT_MARK, namespace_hash
from supercontext_lab.sources.memory.index import open_index, transaction
from supercontext_lab.sources.memory.rows import (
    contents_of,
    count_docs,
    delete_doc,
    doc_row,
    erase_docs,
    namespace_names,
    optimize_after_bulk,
    sealed_rows,
    upsert_doc,
    upsert_docs,
)
from supercontext_lab.sources.memory.schema import SCHEMA_VERSION
from supercontext_lab.sources.memory.seal import Seal


@pytest.fixture
def seal(tmp_path: Path) -> Seal:
    return Seal.for_folder(tmp_path, SCHEMA_VERSION)


@pytest.fixture
def conn(tmp_path: Path, seal: Seal) -> Iterator[sqlite3.Connection]:
    opened, _, _ = open_index(tmp_path, seal)
    yield opened
    opened.close()


def test_a_row_carries_its_terms_and_a_digest_the_seal_verifies(seal: Seal) -> None:
    row = doc_row(
        "global", "grant", "fact", "Grant budget budget.", None, "global/grant.md", seal=seal
    )
    assert row.key_terms.split() == ["grant"]
    assert row.body_terms.startswith(" ") and row.body_terms.endswith(" ")
    assert row.body_terms.count(" budget ") == 2
    # "grant" weighs 0.5 in the key and 1 in the body, "budget" 2: both are repeated.
    assert sorted(row.repeated_terms.split()) == [REPEAT_MARK + "budget", REPEAT_MARK + "grant"]
    assert row.length == 4
    assert row.ns_hash == namespace_hash("global")
    sealed = (row.namespace, row.key, row.category, row.content, row.created, row.path)
    assert seal.verifies((*sealed, row.source_hash), row.digest)
    assert not seal.verifies((*sealed[:3], "changed", *sealed[4:], None), row.digest)


def test_an_empty_document_has_no_terms(seal: Seal) -> None:
    row = doc_row("global", "k", "note", "", None, None, seal=seal)
    assert (row.body_terms, row.repeated_terms) == ("", "")


def test_writes_keep_the_counts_and_namespaces_in_step(
    conn: sqlite3.Connection, seal: Seal
) -> None:
    with transaction(conn):
        upsert_docs(
            conn,
            [
                doc_row("global", "a", "note", "alpha", None, None, seal=seal),
                doc_row("notes", "b", "note", "beta gamma", None, None, seal=seal),
            ],
        )
        upsert_doc(conn, doc_row("global", "a", "note", "alpha again", None, None, seal=seal))
    assert (count_docs(conn, None), count_docs(conn, "global"), count_docs(conn, "gone")) == (
        2,
        1,
        0,
    )
    assert namespace_names(conn) == ["global", "notes"]
    with transaction(conn):
        assert delete_doc(conn, "notes", "b") is True
        assert delete_doc(conn, "notes", "b") is False
    assert namespace_names(conn) == ["global"]
    assert count_docs(conn, None) == 1


def test_sealed_rows_are_read_back_for_the_ids_that_exist(
    conn: sqlite3.Connection, seal: Seal
) -> None:
    with transaction(conn):
        upsert_doc(conn, doc_row("global", "a", "fact", "alpha", "2024-01-02", None, seal=seal))
    (doc_id,) = conn.execute("SELECT id FROM docs").fetchone()
    rows = sealed_rows(conn, [doc_id, doc_id + 1])
    assert len(rows) == 1
    _, *fields, digest = rows[0]
    assert fields == ["global", "a", "fact", "alpha", "2024-01-02", None, None]
    assert seal.verifies(fields, digest)


@pytest.mark.parametrize(
    ("written", "indexed", "merged"),
    [(999, 0, False), (1000, 4000, True), (1000, 4001, False), (5000, None, True)],
)
def test_only_a_large_bulk_write_merges_the_segments(
    conn: sqlite3.Connection, written: int, indexed: int | None, merged: bool
) -> None:
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    optimize_after_bulk(conn, written, indexed)
    conn.set_trace_callback(None)
    assert any("'optimize'" in statement for statement in statements) is merged


def test_erased_documents_leave_no_term_in_the_search_index(
    conn: sqlite3.Connection, seal: Seal, tmp_path: Path
) -> None:
    """An FTS5 delete only marks the terms gone; erasing merges them out of every page."""
    # Two transactions, two segments of the search index.
    for key, text in (("a", "Portal password Qx7kestrel."), ("b", "The freezer holds soil cores.")):
        with transaction(conn):
            upsert_doc(conn, doc_row("chat", key, "t", text, None, None, seal=seal))
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert b"qx7kestrel" in (tmp_path / ".supercontext" / "memory.sqlite3").read_bytes()
    with transaction(conn):
        assert erase_docs(conn, "chat", ["a", "missing"]) == 1
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = (tmp_path / ".supercontext" / "memory.sqlite3").read_bytes().lower()
    assert b"qx7kestrel" not in data
    assert b"freezer" in data
    assert count_docs(conn, "chat") == 1
    found = conn.execute("SELECT rowid FROM fts WHERE fts MATCH 'freezer'").fetchall()
    assert len(found) == 1


def test_contents_are_read_by_id_in_parts(conn: sqlite3.Connection, seal: Seal) -> None:
    with transaction(conn):
        upsert_docs(
            conn,
            [
                doc_row("n", f"k{i}", "note", f"text {i}", None, None, seal=seal)
                for i in range(1200)
            ],
        )
    ids = [int(row[0]) for row in conn.execute("SELECT id FROM docs ORDER BY id")]
    found = contents_of(conn, [*ids, 10**9])
    assert len(found) == 1200 and found[ids[-1]] == "text 1199"


def test_a_key_in_a_document_is_stored_masked_and_the_digest_covers_it(seal: Seal) -> None:
    row = doc_row(
        "global", "deploy", "note", "Deploy with AKIAIOSFODNN7EXAMPLE today.", None, None, seal=seal
    )
    assert row.content == "Deploy with [secret removed] today."
    assert "akiaiosfodnn7example" not in row.body_terms.lower()
    sealed = (row.namespace, row.key, row.category, row.content, row.created, row.path)
    assert seal.verifies((*sealed, row.source_hash), row.digest)
