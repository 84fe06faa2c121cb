"""One search of the memory index, and its hits, each checked before it is returned.

Search is BM25 (see :mod:`.rank` for how it stays fast at tens of thousands of
documents), fused with a ranking by meaning when the tree is given an embedder
(:mod:`.semantic`); either ranking's hits are checked here. Any text is a valid query: it is split into words and nothing in it is read
as FTS5 syntax.

What a search returns is checked first: each hit's row must carry this lab's digest (a
row changed by anything else makes the tree rebuild its index), and a row read from a
file must match that file's bytes now. A row whose file is gone is never returned, and a
row whose file changed without its time and size changing (a file restored by ``tar``)
is reported, so that the tree reads it again from the file: a hit always says what the
note on disk says.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass, replace
from pathlib import Path

from .files import file_entry, read_current, source_hash
from .rank import Ranker
from .rows import sealed_rows
from .seal import Seal

__all__ = [
    "MAX_QUERY_TERMS",
    "MAX_RECALL_LIMIT",
    "TAMPERED",
    "MemoryHit",
    "checked_documents",
    "checked_hits",
    "checked_ranking",
]

#: :meth:`MemoryTree.recall` never returns more hits than this.
MAX_RECALL_LIMIT = 8
#: Only the first this-many distinct words of a query are searched.
MAX_QUERY_TERMS = 64
TAMPERED = ""
"""What a search found wrong with a hit: a row the seal does not verify."""


@dataclass(frozen=True)
class MemoryHit:
    """One search result; ``score`` is positive and higher is better."""

    namespace: str
    key: str
    content: str
    category: str
    score: float
    created: str | None = None
    passage: str = ""
    """For a hit found by meaning (:meth:`MemoryTree.recall_by_meaning
    <supercontext_lab.sources.memory.tree.MemoryTree.recall_by_meaning>`), the unit of
    ``content`` that was found; ``""`` otherwise."""


def checked_hits(
    conn: sqlite3.Connection,
    ranker: Ranker,
    *,
    namespace: str | None,
    terms: list[str],
    limit: int,
    seal: Seal,
    root: Path,
    allow_outside_links: bool,
) -> tuple[list[MemoryHit], set[str]]:
    """The checked hits of one search of ``namespace`` (``None``: every namespace), best
    first and at most ``limit`` (capped at :data:`MAX_RECALL_LIMIT`), and what was wrong
    with the others: the paths under ``root/memory/`` of rows whose file is gone or
    changed, :data:`TAMPERED` for a row the seal does not verify."""
    ranked = ranker.search(namespace, terms, min(limit, MAX_RECALL_LIMIT))
    return checked_ranking(
        conn, ranked, seal=seal, root=root, allow_outside_links=allow_outside_links
    )


def checked_ranking(
    conn: sqlite3.Connection,
    ranked: list[tuple[int, float]],
    *,
    seal: Seal,
    root: Path,
    allow_outside_links: bool,
) -> tuple[list[MemoryHit], set[str]]:
    """The checked hits of a ranking of ``(doc id, score)`` (BM25's, or a fused one),
    in its order, and what was wrong with the others (as :func:`checked_hits`)."""
    found, wrong = checked_documents(
        conn,
        [doc_id for doc_id, _ in ranked],
        seal=seal,
        root=root,
        allow_outside_links=allow_outside_links,
    )
    hits = [replace(found[doc_id], score=score) for doc_id, score in ranked if doc_id in found]
    return hits, wrong


def checked_documents(
    conn: sqlite3.Connection,
    ids: list[int],
    *,
    seal: Seal,
    root: Path,
    allow_outside_links: bool,
) -> tuple[dict[int, MemoryHit], set[str]]:
    """The documents of ``ids`` that check, as hits of score 0 by id, and what was wrong
    with the others (as :func:`checked_hits`)."""
    if not ids:
        return {}, set()
    found: dict[int, MemoryHit] = {}
    wrong: set[str] = set()
    for row in sealed_rows(conn, ids):
        doc_id, ns, key, category, content, created, path, digest_of_file, digest = row
        if not seal.verifies(row[1:8], digest):
            wrong.add(TAMPERED)
        elif path is not None and not _matches_file(
            root, path, digest_of_file, allow_outside_links
        ):
            wrong.add(path)
        else:
            found[doc_id] = MemoryHit(ns, key, content, category, 0.0, created)
    return found, wrong


def _matches_file(
    root: Path, rel: str, digest_of_file: str | None, allow_outside_links: bool
) -> bool:
    """Whether the memory file ``rel`` still holds the bytes its row was read from."""
    entry = file_entry(root, rel, allow_outside_links=allow_outside_links)
    data = None if entry is None else read_current(entry)
    return data is not None and source_hash(data) == digest_of_file
