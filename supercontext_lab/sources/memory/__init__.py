"""The memory tree: documents in namespaces, in one SQLite FTS5 index, searched with BM25.

``tree`` is the public :class:`MemoryTree`; ``files`` finds and reads the
``memory/<namespace>/<key>.md`` files; ``schema`` is the index's tables, ``index`` the
SQLite file (opening, checking, rebuilding, transactions) and ``rows`` a document as a
row of it (its terms come from the package's one analyzer,
:mod:`supercontext_lab.reading.words`); ``bm25`` the BM25 scoring and the pruning pieces;
``rank`` the BM25 ranker over the index; ``seal`` binds an index to this lab and this
folder.
"""

from __future__ import annotations

from .index import INDEX_DIR
from .tree import DEFAULT_CATEGORY, MAX_RECALL_LIMIT, MemoryHit, MemoryTree, SyncReport

__all__ = [
    "DEFAULT_CATEGORY",
    "INDEX_DIR",
    "MAX_RECALL_LIMIT",
    "MemoryHit",
    "MemoryTree",
    "SyncReport",
]
