"""The index's tables: the statements that create them and the schema an index must hold."""

from __future__ import annotations

import sqlite3

from supercontext_lab.reading.words import ANALYZER_VERSION
from supercontext_lab.sources.memory.schema import (
    SCHEMA_VERSION,
    expected_schema,
    schema_of,
    schema_statements,
)


def test_the_version_moves_with_the_text_analysis() -> None:
    assert SCHEMA_VERSION == 500 + ANALYZER_VERSION


def test_the_statements_create_exactly_the_expected_schema() -> None:
    conn = sqlite3.connect(":memory:")
    for statement in schema_statements():
        conn.execute(statement)
    assert schema_of(conn) == expected_schema()
    conn.close()


def test_triggers_stay_whole_and_comments_are_left_out() -> None:
    statements = schema_statements()
    assert all(sqlite3.complete_statement(statement) for statement in statements)
    assert not any(statement.lstrip().startswith("--") for statement in statements)
    triggers = [s for s in statements if s.startswith("CREATE TRIGGER")]
    assert len(triggers) == 3
    assert all(trigger.endswith("END;") for trigger in triggers)


def test_the_expected_schema_names_every_table_index_and_trigger() -> None:
    names = {(kind, name) for kind, name, _, _ in expected_schema()}
    for table in ("meta", "docs", "files", "namespaces", "fts"):
        assert ("table", table) in names
    for index in ("docs_by_path", "docs_bounds"):
        assert ("index", index) in names
    for trigger in ("docs_after_insert", "docs_after_delete", "docs_after_update"):
        assert ("trigger", trigger) in names
