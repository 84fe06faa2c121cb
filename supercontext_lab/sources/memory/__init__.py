"""The memory tree: documents in namespaces, in one SQLite FTS5 index, searched with BM25.

``tree`` is the public :class:`MemoryTree`; ``files`` finds and reads the
``memory/<namespace>/<key>.md`` files and ``sync`` brings the index up to date with them;
``records`` checks what the Python API is given; ``schema`` is the index's tables,
``index`` the SQLite file (opening, checking, rebuilding, transactions) and ``rows`` a
document as a row of it (its terms come from the package's one analyzer,
:mod:`supercontext_lab.reading.words`); ``search`` checks a search's hits before they
are returned; ``bm25`` the BM25 scoring and the pruning pieces; ``rank`` the BM25 ranker
over the index; ``seal`` binds an index to this lab and this folder. Semantic recall, off
unless the caller passes an embedder: ``embedder`` is the :class:`Embedder` protocol,
``semantic`` the ranking by meaning and its fusion with BM25's, ``vectors`` the stored
vectors (``.supercontext/vectors.sqlite3``).
"""

from __future__ import annotations

from .embedder import Embedder
from .files import DEFAULT_CATEGORY
from .index import INDEX_DIR
from .search import MAX_RECALL_LIMIT, MemoryHit
from .sync import SyncReport
from .tree import MemoryTree

__all__ = [
    "DEFAULT_CATEGORY",
    "INDEX_DIR",
    "MAX_RECALL_LIMIT",
    "Embedder",
    "MemoryHit",
    "MemoryTree",
    "SyncReport",
]
