"""The base of the caches: entries tagged with the conversations they were built from,
and erased by tag from whichever table holds them."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import ClassVar

from supercontext_lab._sqlite import SqliteStore, erase_tagged


class _Notes(SqliteStore):
    WHAT: ClassVar[str] = "notes"
    TABLES: ClassVar[Mapping[str, tuple[str, Sequence[str]]]] = {
        "notes": (
            "CREATE TABLE IF NOT EXISTS notes(key TEXT PRIMARY KEY, text TEXT NOT NULL)",
            ("key", "text"),
        )
    }

    def put(self, key: str, text: str, tags: Sequence[str]) -> None:
        self.write_tagged(
            "INSERT OR REPLACE INTO notes(key, text) VALUES (?, ?)",
            (key, text),
            table="notes",
            key=key,
            tags=tags,
        )


def _keys(path: Path) -> list[str]:
    with sqlite3.connect(path) as conn:
        return [row[0] for row in conn.execute("SELECT key FROM notes ORDER BY key")]


def test_tagged_entries_are_erased_and_no_byte_of_them_stays(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    with _Notes(path) as notes:
        notes.put("a", "the password is hunter2", ["c1"])
        notes.put("b", "the budget is 40k", ["c2"])
        notes.put("c", "hunter2 again", ["c1", "c2"])
        assert erase_tagged(path, ["c1"]) == 2
        assert _keys(path) == ["b"]
    for file in tmp_path.iterdir():
        assert b"hunter2" not in file.read_bytes(), file
    assert erase_tagged(path, ["c1"]) == 0


def test_a_rewritten_entry_keeps_only_its_new_tags(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite3"
    with _Notes(path) as notes:
        notes.put("a", "old", ["c1"])
        notes.put("a", "new", ["c2"])
    assert erase_tagged(path, ["c1"]) == 0
    assert _keys(path) == ["a"]
    assert erase_tagged(path, ["c2"]) == 1


def test_files_without_tags_are_left_alone(tmp_path: Path) -> None:
    assert erase_tagged(tmp_path / "none.sqlite3", ["c1"]) == 0
    assert not (tmp_path / "none.sqlite3").exists()
    other = tmp_path / "other.sqlite3"
    with sqlite3.connect(other) as conn:
        conn.execute("CREATE TABLE notes(key TEXT, text TEXT)")
        conn.execute("INSERT INTO notes VALUES ('a', 'kept')")
    conn.close()
    assert erase_tagged(other, ["c1"]) == 0
    assert _keys(other) == ["a"]
