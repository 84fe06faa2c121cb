"""What the memory tree's Python API accepts: each argument checked, each document a row.

A namespace, a key and a category are non-empty strings, a content any string, and the
namespace ``"*"`` is kept for searching every namespace. A bad argument is a
:class:`ValueError` naming it (a record of :meth:`MemoryTree.add_many` by its index)
before anything is written, so one bad record leaves the tree as it was.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from .files import DEFAULT_CATEGORY
from .rows import DocRow, doc_row
from .seal import Seal

__all__ = ["api_row", "checked_namespace", "checked_text", "recall_scope", "record_rows"]


def checked_text(value: object, what: str, *, allow_empty: bool = False) -> str:
    """``value``, which must be a string (not blank unless ``allow_empty``)."""
    if not isinstance(value, str):
        raise ValueError(f"{what} must be a string, not {type(value).__name__}.")
    if not allow_empty and not value.strip():
        raise ValueError(f"{what} must not be empty.")
    return value


def checked_namespace(value: object, what: str = "namespace") -> str:
    """``value``, which must name one namespace."""
    namespace = checked_text(value, what)
    if namespace == "*":
        raise ValueError(f"{what} '*' is reserved for searching every namespace.")
    return namespace


def api_row(namespace: str, key: str, content: str, category: str, *, seal: Seal) -> DocRow:
    """The row of one document given to :meth:`MemoryTree.add`, checked and sealed."""
    return doc_row(
        checked_namespace(namespace),
        checked_text(key, "key"),
        checked_text(category, "category"),
        checked_text(content, "content", allow_empty=True),
        None,
        None,
        seal=seal,
    )


def record_rows(records: Iterable[Mapping[str, Any]], *, seal: Seal) -> list[DocRow]:
    """The rows of the records given to :meth:`MemoryTree.add_many`, checked and sealed.

    Each record is a mapping with ``namespace``, ``key`` and ``content`` and optionally
    ``category`` (default ``"note"``) and ``created``.
    """
    rows: list[DocRow] = []
    for index, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise ValueError(
                f"Record {index} is a {type(record).__name__}, not a mapping with "
                "'namespace', 'key' and 'content'."
            )
        for name in ("namespace", "key", "content"):
            if name not in record:
                raise ValueError(
                    f"Record {index} has no '{name}'; every record needs 'namespace', "
                    "'key' and 'content'."
                )
        created = record.get("created")
        if created is not None:
            created = checked_text(created, f"Record {index}: 'created'")
        rows.append(
            doc_row(
                checked_namespace(record["namespace"], f"Record {index}: 'namespace'"),
                checked_text(record["key"], f"Record {index}: 'key'"),
                checked_text(
                    record.get("category", DEFAULT_CATEGORY), f"Record {index}: 'category'"
                ),
                checked_text(record["content"], f"Record {index}: 'content'", allow_empty=True),
                created,
                None,
                seal=seal,
            )
        )
    return rows


def recall_scope(namespace: str, query: str, limit: int) -> str | None:
    """The namespace a search of these arguments reads (``None``: every one); a
    :class:`ValueError` for arguments of the wrong type or range."""
    if namespace != "*":
        namespace = checked_namespace(namespace)
    if not isinstance(query, str):
        raise ValueError(f"query must be a string, not {type(query).__name__}.")
    if isinstance(limit, bool) or not isinstance(limit, int):
        raise ValueError(f"limit must be an integer, not {type(limit).__name__}.")
    if limit < 1:
        raise ValueError(f"limit must be at least 1 (got {limit}).")
    return None if namespace == "*" else namespace
