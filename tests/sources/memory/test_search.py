"""One search's hits, each checked against the seal and against its file before it is returned."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from supercontext_lab.reading.words import unique_terms
from supercontext_lab.sources.memory.index import open_index, transaction
from supercontext_lab.sources.memory.rank import Ranker
from supercontext_lab.sources.memory.rows import doc_row, upsert_docs
from supercontext_lab.sources.memory.schema import SCHEMA_VERSION
from supercontext_lab.sources.memory.seal import Seal
from supercontext_lab.sources.memory.search import (
    MAX_RECALL_LIMIT,
    TAMPERED,
    MemoryHit,
    checked_hits,
)
from supercontext_lab.sources.memory.sync import sync_folder

from .support import write


@pytest.fixture
def seal(tmp_path: Path) -> Seal:
    return Seal.for_folder(tmp_path, SCHEMA_VERSION)


@pytest.fixture
def conn(tmp_path: Path, seal: Seal) -> Iterator[sqlite3.Connection]:
    write(tmp_path, "global/kernel.md", "---\ncategory: decision\n---\nThe kernel is Gaussian.")
    opened, _, _ = open_index(tmp_path, seal)
    with transaction(opened):
        sync_folder(opened, tmp_path, seal, allow_outside_links=False)
        upsert_docs(
            opened,
            [doc_row("notes", "api", "note", "kernel bandwidth notes", None, None, seal=seal)],
        )
    yield opened
    opened.close()


def _search(
    conn: sqlite3.Connection,
    root: Path,
    seal: Seal,
    query: str,
    *,
    namespace: str | None = None,
    limit: int = 5,
) -> tuple[list[MemoryHit], set[str]]:
    return checked_hits(
        conn,
        Ranker(conn),
        namespace=namespace,
        terms=unique_terms(query),
        limit=limit,
        seal=seal,
        root=root,
        allow_outside_links=False,
    )


def test_hits_say_what_the_rows_and_files_say(
    conn: sqlite3.Connection, tmp_path: Path, seal: Seal
) -> None:
    hits, wrong = _search(conn, tmp_path, seal, "kernel")
    assert wrong == set()
    assert sorted((h.namespace, h.key, h.category) for h in hits) == [
        ("global", "kernel", "decision"),
        ("notes", "api", "note"),
    ]
    assert all(h.score > 0 for h in hits)
    only, _ = _search(conn, tmp_path, seal, "kernel", namespace="notes")
    assert [h.key for h in only] == ["api"]
    assert _search(conn, tmp_path, seal, "absent") == ([], set())


def test_a_changed_or_missing_file_is_reported_not_returned(
    conn: sqlite3.Connection, tmp_path: Path, seal: Seal
) -> None:
    note = tmp_path / "memory" / "global" / "kernel.md"
    note.write_text("The kernel is exponential now.", encoding="utf-8")
    hits, wrong = _search(conn, tmp_path, seal, "kernel")
    assert [h.key for h in hits] == ["api"]
    assert wrong == {"global/kernel.md"}
    note.unlink()
    assert _search(conn, tmp_path, seal, "kernel")[1] == {"global/kernel.md"}


def test_a_row_changed_outside_the_lab_is_reported_as_tampered(
    conn: sqlite3.Connection, tmp_path: Path, seal: Seal
) -> None:
    conn.execute("UPDATE docs SET content = 'forged kernel text' WHERE key = 'api'")
    hits, wrong = _search(conn, tmp_path, seal, "kernel")
    assert [h.key for h in hits] == ["kernel"]
    assert wrong == {TAMPERED}


def test_the_number_of_hits_is_capped(tmp_path: Path, seal: Seal) -> None:
    conn, _, _ = open_index(tmp_path / "many", seal)
    with transaction(conn):
        upsert_docs(
            conn,
            [doc_row("g", f"k{i}", "note", "shared", None, None, seal=seal) for i in range(20)],
        )
    hits, _ = _search(conn, tmp_path / "many", seal, "shared", limit=100)
    assert len(hits) == MAX_RECALL_LIMIT
    conn.close()
