"""What the Python API accepts: arguments checked in order, records turned into rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab.sources.memory.records import (
    api_row,
    checked_namespace,
    checked_text,
    record_rows,
)
from supercontext_lab.sources.memory.schema import SCHEMA_VERSION
from supercontext_lab.sources.memory.seal import Seal


@pytest.fixture
def seal(tmp_path: Path) -> Seal:
    return Seal.for_folder(tmp_path, SCHEMA_VERSION)


def test_text_and_namespaces_are_checked() -> None:
    assert checked_text("", "content", allow_empty=True) == ""
    assert checked_text(" x ", "key") == " x "
    with pytest.raises(ValueError, match=r"^key must not be empty"):
        checked_text(" \n", "key")
    with pytest.raises(ValueError, match=r"^content must be a string, not bytes"):
        checked_text(b"x", "content")
    assert checked_namespace("global") == "global"
    with pytest.raises(ValueError, match=r"^Record 2: 'namespace' '\*' is reserved"):
        checked_namespace("*", "Record 2: 'namespace'")


def test_an_api_row_is_checked_namespace_key_category_then_content(seal: Seal) -> None:
    with pytest.raises(ValueError, match="namespace"):
        api_row("", "", 3, "", seal=seal)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="key"):
        api_row("g", "", 3, "", seal=seal)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="category"):
        api_row("g", "k", 3, "", seal=seal)  # type: ignore[arg-type]
    row = api_row("g", "k", "", "decision", seal=seal)
    assert (row.namespace, row.key, row.content, row.category) == ("g", "k", "", "decision")
    assert (row.created, row.path, row.source_hash) == (None, None, None)


def test_records_become_rows_with_the_default_category(seal: Seal) -> None:
    rows = record_rows(
        iter(
            [
                {"namespace": "g", "key": "a", "content": "alpha"},
                {
                    "namespace": "g",
                    "key": "b",
                    "content": "",
                    "category": "fact",
                    "created": "2024",
                },
            ]
        ),
        seal=seal,
    )
    assert [(r.key, r.category, r.created) for r in rows] == [
        ("a", "note", None),
        ("b", "fact", "2024"),
    ]
    assert record_rows([], seal=seal) == []


def test_a_bad_created_is_named_by_its_record(seal: Seal) -> None:
    with pytest.raises(ValueError, match=r"Record 1: 'created' must be a string, not int"):
        record_rows(
            [
                {"namespace": "g", "key": "a", "content": "alpha"},
                {"namespace": "g", "key": "b", "content": "beta", "created": 2024},
            ],
            seal=seal,
        )
