"""The evaluation's result store: whole case results, by the keys of :mod:`.keys`.

It owns the ``case_results`` table of the cache file (the response cache owns the
``responses`` table of the same file), so an unchanged case is not even run again.
Results are JSON objects, stored as canonical JSON text.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, ClassVar

from .._hashing import canonical_json
from .._sqlite import SqliteStore

__all__ = ["ResultStore"]

_CASE_RESULTS = """
    CREATE TABLE IF NOT EXISTS case_results(
        key TEXT PRIMARY KEY,
        label TEXT NOT NULL,
        result TEXT NOT NULL,
        created REAL NOT NULL
    ) WITHOUT ROWID
"""


class ResultStore(SqliteStore):
    """Case results by key, in the SQLite file at ``path`` (the response cache's file)."""

    WHAT: ClassVar[str] = "result store"
    TABLES: ClassVar[Mapping[str, tuple[str, Sequence[str]]]] = {
        "case_results": (_CASE_RESULTS, ("key", "label", "result", "created"))
    }

    def __init__(self, path: str | Path) -> None:
        super().__init__(path)

    def get(self, key: str) -> dict[str, Any] | None:
        """The stored case result (a JSON object) for ``key``, or ``None``."""
        row = self.fetch_one("SELECT result FROM case_results WHERE key = ?", (key,))
        if row is None:
            return None
        try:
            record = json.loads(str(row[0]))
        except ValueError as exc:
            raise self.damaged(key, exc) from exc
        if not isinstance(record, dict):
            raise self.damaged(key, ValueError("not a JSON object"))
        return record

    def put(self, key: str, record: Mapping[str, Any], *, label: str = "") -> None:
        """Store a case result (JSON-ready) under ``key``; ``label`` says what it is, for
        anyone reading the file."""
        self.write(
            "INSERT OR REPLACE INTO case_results(key, label, result, created) VALUES (?, ?, ?, ?)",
            (key, label, canonical_json(dict(record)), time.time()),
        )

    def __len__(self) -> int:
        row = self.fetch_one("SELECT count(*) FROM case_results")
        return int(row[0]) if row is not None else 0

    def clear(self) -> int:
        """Delete every stored case result; returns how many there were."""
        return self.write("DELETE FROM case_results")
