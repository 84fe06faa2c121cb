"""Erasure's helpers: the tags of what a conversation's text went into, and the log
truncated after an erasure."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from supercontext_lab._erasure import SECURE_DELETE, conversation_tag, tags_in, truncate_log
from supercontext_lab.conversations.store_file import doc_prefix, turn_key

VAULT = conversation_tag("vault-chat")


def test_a_tag_is_the_key_prefix_of_the_conversations_turns() -> None:
    assert doc_prefix("vault-chat") == VAULT
    assert len(VAULT) == 13 and VAULT.startswith("c")
    assert conversation_tag("other") != VAULT


@pytest.mark.parametrize(
    "text",
    [
        f'{{"key": "{turn_key(VAULT, 7)}", "content": "The password is hunter2."}}',
        "- The portal password is hunter2. (transcript: vault-chat)",
        '{"transcript":"vault-chat","content":"hunter2"}',
        '{"gathered": "{\\"transcript\\": \\"vault-chat\\"}"}',
    ],
    ids=["turn key", "citation", "tool result", "escaped twice"],
)
def test_the_conversation_a_text_quotes_is_found(text: str) -> None:
    assert tags_in([text]) == {VAULT}


def test_a_text_quoting_none_has_no_tag() -> None:
    assert tags_in(["The budget is 40k. (memory: global/budget)", None, ""]) == frozenset()
    assert tags_in(["a word like c0123456789abcdef is not a turn key"]) == frozenset()


def test_truncating_the_log_leaves_it_empty(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute(SECURE_DELETE)
    conn.execute("CREATE TABLE t(x TEXT)")
    conn.execute("INSERT INTO t VALUES ('hunter2')")
    conn.execute("DELETE FROM t")
    assert (tmp_path / "db.sqlite3-wal").stat().st_size > 0
    assert truncate_log(conn, path) is True
    assert (tmp_path / "db.sqlite3-wal").stat().st_size == 0
    assert b"hunter2" not in path.read_bytes()
    conn.close()


def test_a_reader_in_the_middle_of_a_read_keeps_the_log(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "db.sqlite3"
    conn = sqlite3.connect(path, isolation_level=None, timeout=0.1)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE t(x TEXT)")
    conn.execute("INSERT INTO t VALUES ('a')")
    reader = sqlite3.connect(path, isolation_level=None, timeout=0.1)
    reader.execute("BEGIN")
    reader.execute("SELECT * FROM t").fetchall()
    conn.execute("INSERT INTO t VALUES ('b')")
    assert truncate_log(conn, path) is False
    assert "in use by another connection" in caplog.text
    reader.execute("COMMIT")
    assert truncate_log(conn, path) is True
    reader.close()
    conn.close()
