"""The memory tree (SPEC §8): documents in namespaces, searched with BM25.

A :class:`MemoryTree` wraps one folder. Its documents come from two places:

* files ``memory/<namespace>/<key>.md`` in the folder, with optional front matter
  (``category``, ``key``, ``created``; a front-matter ``key`` overrides the file name, the
  category defaults to ``"note"``) whose body is the content (:mod:`.files`);
* the Python API: :meth:`MemoryTree.add` and :meth:`MemoryTree.add_many` (their
  arguments are checked by :mod:`.records`).

Both land in one SQLite FTS5 index, ``.supercontext/memory.sqlite3`` inside the folder,
which is the only thing ever written there. Opening a tree syncs ``memory/`` into the
index incrementally (:mod:`.sync`). An index from another schema version, one this
user's labs did not build for this folder (:mod:`.seal`), one whose tables or triggers
changed, a damaged file or not SQLite at all is rebuilt from ``memory/`` and the
namespaces kept elsewhere (:mod:`.kept`), with one warning saying why and what is lost
(:attr:`MemoryTree.rebuilt_because`). Damage found later is rebuilt the same way, once.

A search returns only hits that were checked (:mod:`.search`); a hit whose row does not
verify makes the tree rebuild its index, and one whose file is gone or changed makes it
read that file again, before the search runs again.

Given an :class:`~.embedder.Embedder`, :meth:`MemoryTree.recall` fuses BM25's ranking with
a ranking by meaning (:mod:`.semantic`), and :meth:`MemoryTree.recall_by_meaning` finds
the units of notes closest in meaning to a request; their vectors are kept beside the
index in ``.supercontext/vectors.sqlite3``. Without one (the default) recall is BM25 alone.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar

from ..._erasure import truncate_log
from ...errors import MemoryIndexError
from ...reading.words import unique_terms
from .embedder import Embedder
from .files import DEFAULT_CATEGORY
from .index import INDEX_DIR, INDEX_FILE, is_damage, open_index, transaction
from .kept import restore_kept
from .rank import Ranker
from .records import api_row, checked_namespace, checked_text, recall_scope, record_rows
from .rows import (
    contents_of,
    count_docs,
    delete_doc,
    erase_docs,
    namespace_names,
    optimize_after_bulk,
    row_digests,
    upsert_doc,
    upsert_docs,
)
from .schema import SCHEMA_VERSION
from .seal import Seal
from .search import (
    MAX_QUERY_TERMS,
    MAX_RECALL_LIMIT,
    TAMPERED,
    MemoryHit,
    checked_documents,
    checked_ranking,
)
from .sync import SyncReport, forget_file, sync_folder

if TYPE_CHECKING:
    from .semantic import EmbedReport, SemanticIndex

__all__ = ["MemoryTree"]

# A search whose hits needed repairs (a file gone or changed) runs again at most this
# many times; what it returns is always checked.
_SEARCHES = 3

_T = TypeVar("_T")


class MemoryTree:
    """The memory documents of one folder, indexed for BM25 search.

    ``MemoryTree(path)`` accepts a workspace folder or any folder (created when absent)
    and opens, creating or rebuilding as needed, ``path/.supercontext/memory.sqlite3``;
    when ``path/memory/`` exists it is synced into the index. A context manager, safe to
    share between threads; ``(namespace, key)`` is unique (adding again replaces). Raises
    :class:`MemoryIndexError` naming the file when the index cannot be opened or rebuilt.
    """

    def __init__(self, path: str | os.PathLike[str], *, allow_outside_links: bool = False) -> None:
        root = Path(path)
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise MemoryIndexError(
                f"Cannot use {root} as a memory folder ({exc.strerror or exc}); "
                "pass a folder that exists or can be created."
            ) from exc
        self._root = root
        # Links under memory/ are followed only while they stay inside the folder: a
        # workspace may be somebody else's, and what is indexed is shown to a model.
        self._allow_outside_links = allow_outside_links
        self._lock = threading.RLock()
        self._closed = False
        self._rebuilding = False
        self._last_sync = SyncReport()
        # Counts this tree's writes and rebuilds: with SQLite's data_version (the other
        # connections' commits) it says when the index changed (see _semantic_index).
        self._writes = 0
        self._semantic: SemanticIndex | None = None
        self._seal = Seal.for_folder(root, SCHEMA_VERSION)
        fresh = not (root / INDEX_DIR / INDEX_FILE).is_file()
        self._conn, self._db_path, self._rebuilt_because = open_index(root, self._seal)
        self._ranker = Ranker(self._conn)
        try:
            self.sync()
            if fresh or self._rebuilt_because is not None:
                restore_kept(self)  # a new index gets back what is kept outside memory/
        except BaseException:
            self.close()
            raise

    # -- properties -----------------------------------------------------------------

    @property
    def path(self) -> Path:
        """The folder this tree belongs to."""
        return self._root

    @property
    def index_path(self) -> Path:
        """The SQLite index file, ``path/.supercontext/memory.sqlite3``."""
        return self._db_path

    @property
    def rebuilt(self) -> bool:
        """Whether an unusable index was found (on opening or later) and rebuilt."""
        return self._rebuilt_because is not None

    @property
    def rebuilt_because(self) -> str | None:
        """Why the index was rebuilt (the latest reason), or ``None`` when it was not."""
        return self._rebuilt_because

    @property
    def last_sync(self) -> SyncReport:
        """The report of the latest sync, including the one made when the tree opened."""
        return self._last_sync

    def __repr__(self) -> str:
        return f"MemoryTree({str(self._root)!r})"

    # -- lifecycle ------------------------------------------------------------------

    def close(self) -> None:
        """Close the index; further calls on this tree raise :class:`MemoryIndexError`."""
        with self._lock:
            semantic, self._semantic = self._semantic, None
            if not self._closed:
                self._closed = True
                self._conn.close()
        # Outside the tree's lock: a search holds the semantic index's lock while it
        # waits for the tree's (to read the rows), so the two are never taken the other way.
        if semantic is not None:
            semantic.close()

    def __enter__(self) -> MemoryTree:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(
        self, work: Callable[[sqlite3.Connection], _T], write: bool = False, syncs: bool = False
    ) -> _T:
        """Run ``work`` under the lock (in a transaction when writing).

        SQLite errors become :class:`MemoryIndexError`; an index found damaged on the way
        is rebuilt from ``memory/`` once and ``work`` runs again (``syncs``: ``work`` is a
        sync, which then fills the new index itself).
        """
        with self._lock:
            for attempt in (1, 2):
                if self._closed:
                    raise MemoryIndexError(
                        f"The memory index {self._db_path} is closed; open a new MemoryTree."
                    )
                try:
                    if not write:
                        return work(self._conn)
                    try:
                        with transaction(self._conn):
                            return work(self._conn)
                    finally:
                        self._ranker.invalidate()
                        self._writes += 1
                except sqlite3.Error as exc:
                    if attempt == 1 and not self._rebuilding and is_damage(exc):
                        self._rebuild(f"SQLite reports it damaged ({exc})", sync=not syncs)
                        continue
                    raise MemoryIndexError(
                        f"The memory index {self._db_path} failed ({exc}); if another "
                        "program holds it, retry; if it is damaged, delete it to rebuild it."
                    ) from exc
            raise AssertionError("unreachable")  # pragma: no cover

    def _rebuild(self, reason: str, sync: bool) -> None:
        """Replace a damaged index by a new one, filled from ``memory/`` if ``sync``."""
        self._closed = True
        self._conn.close()
        self._conn, self._db_path, _ = open_index(self._root, self._seal, damaged=reason)
        self._closed = False
        self._rebuilt_because = reason
        self._ranker = Ranker(self._conn)
        self._writes += 1
        self._rebuilding = True
        try:
            if sync:
                self.sync()
            restore_kept(self)
        finally:
            self._rebuilding = False

    # -- writing --------------------------------------------------------------------

    def add(self, namespace: str, key: str, content: str, category: str = DEFAULT_CATEGORY) -> None:
        """Add one document, replacing any document with the same namespace and key."""
        row = api_row(namespace, key, content, category, seal=self._seal)
        self._run(lambda conn: upsert_doc(conn, row), write=True)

    def add_many(
        self, records: Iterable[Mapping[str, Any]], *, remove: Sequence[tuple[str, str]] = ()
    ) -> int:
        """Add many documents in one transaction; return how many were written.

        Each record is a mapping with ``namespace``, ``key`` and ``content`` and optionally
        ``category`` (default ``"note"``) and ``created``. A bad record raises
        :class:`ValueError` naming its index and the problem, and nothing is written.
        The documents ``remove`` (``(namespace, key)`` pairs) go in the same transaction.
        """
        rows = record_rows(records, seal=self._seal)
        gone = [(checked_namespace(ns), checked_text(key, "key")) for ns, key in remove]
        if not rows and not gone:
            return 0

        def write(conn: sqlite3.Connection) -> None:
            before = count_docs(conn, None)
            for pair in gone:
                delete_doc(conn, *pair)
            upsert_docs(conn, rows)
            optimize_after_bulk(conn, len(rows), before)

        self._run(write, write=True)
        return len(rows)

    def delete(self, namespace: str, key: str) -> bool:
        """Delete one document; return whether it existed (one from a file comes back
        when that file changes)."""
        namespace, key = checked_namespace(namespace), checked_text(key, "key")
        return self._run(lambda conn: delete_doc(conn, namespace, key), write=True)

    def erase(self, namespace: str, keys: Sequence[str]) -> int:
        """Delete the documents ``keys`` of ``namespace`` leaving no byte of them in the
        index's files (see :func:`.rows.erase_docs`); return how many existed."""
        namespace, wanted = checked_namespace(namespace), [checked_text(k, "key") for k in keys]
        with self._lock:
            gone = self._run(lambda conn: erase_docs(conn, namespace, wanted), write=True)
            truncate_log(self._conn, self._db_path)
        return gone

    # -- reading --------------------------------------------------------------------

    def recall(
        self, namespace: str, query: str, limit: int = 5, *, embedder: Embedder | None = None
    ) -> list[MemoryHit]:
        """Search ``namespace`` (``"*"`` for every namespace) and return the best hits first.

        ``limit`` is capped at :data:`~.search.MAX_RECALL_LIMIT`; below 1 it is a
        :class:`ValueError`. Any query text is safe; one without words returns ``[]``.
        With ``embedder``, BM25's ranking is fused with the ranking by meaning
        (:mod:`.semantic`; a hit's score is then its fused score), documents without
        vectors are embedded first (a bounded number per search), and what the embedder
        raises propagates: the caller decides whether BM25 alone will do.
        """
        scope = recall_scope(namespace, query, limit)
        terms = unique_terms(query)[:MAX_QUERY_TERMS]
        if not terms:
            return []
        hits: list[MemoryHit] = []
        for _search in range(_SEARCHES):
            meaning = None if embedder is None else self._by_meaning(embedder, query, scope)
            hits, wrong = self._run(
                functools.partial(
                    self._ranked, namespace=scope, terms=terms, meaning=meaning, limit=limit
                )
            )
            if not wrong:
                break
            self._repair(wrong)
        return hits

    def recall_by_meaning(
        self,
        namespace: str,
        query: str,
        limit: int = 5,
        *,
        embedder: Embedder,
        floor: float = -1.0,
    ) -> list[MemoryHit]:
        """The units of ``namespace``'s documents (``"*"``: all) closest in meaning to
        ``query``, at most ``limit`` (capped as :meth:`recall`'s) with a cosine of at
        least ``floor``, best first: each its document's hit, checked as :meth:`recall`'s
        are, whose ``passage`` is the unit and whose score the cosine."""
        from .semantic import unit_hits

        scope = recall_scope(namespace, query, limit)
        if not unique_terms(query):
            return []
        index, cap = self._semantic_index(), min(limit, MAX_RECALL_LIMIT)
        found = index.search_units(embedder, query, scope, limit=cap, floor=floor)
        ids = list(dict.fromkeys(doc_id for doc_id, _, _ in found))
        docs, wrong = self._run(lambda conn: checked_documents(conn, ids, **self._checks()))
        if wrong:
            self._repair(wrong)
        return unit_hits(found, docs)

    def _checks(self) -> dict[str, Any]:
        """What a hit is checked against (:mod:`.search`)."""
        return {
            "seal": self._seal,
            "root": self._root,
            "allow_outside_links": self._allow_outside_links,
        }

    def _ranked(
        self,
        conn: sqlite3.Connection,
        namespace: str | None,
        terms: list[str],
        meaning: list[tuple[int, float]] | None,
        limit: int,
    ) -> tuple[list[MemoryHit], set[str]]:
        """The checked hits of BM25 alone, or fused with ``meaning`` when given."""
        cap = min(limit, MAX_RECALL_LIMIT)
        if meaning is None:
            return checked_ranking(
                conn, self._ranker.search(namespace, terms, cap), **self._checks()
            )
        from .semantic import CANDIDATES, fuse

        fused = fuse(self._ranker.search(namespace, terms, CANDIDATES), meaning)
        return checked_ranking(conn, fused[:cap], **self._checks())

    # -- semantic recall ------------------------------------------------------------

    def _semantic_index(self) -> SemanticIndex:
        from .semantic import IndexReaders, SemanticIndex

        with self._lock:
            if self._semantic is None:
                readers = IndexReaders(
                    # What changes whenever the index does: this tree's writes and
                    # rebuilds, and SQLite's count of other connections' commits.
                    stamp=lambda: self._run(
                        lambda conn: (
                            self._writes,
                            int(conn.execute("PRAGMA data_version").fetchone()[0]),
                        )
                    ),
                    rows=lambda: self._run(row_digests),
                    contents=lambda ids: self._run(lambda c: contents_of(c, ids)) if ids else {},
                )
                self._semantic = SemanticIndex(self._root, self._seal.key, readers)
            return self._semantic

    def _by_meaning(
        self, embedder: Embedder, query: str, namespace: str | None
    ) -> list[tuple[int, float]]:
        from .semantic import CANDIDATES

        return self._semantic_index().search(embedder, query, namespace, limit=CANDIDATES)

    def embed_all(self, embedder: Embedder, *, budget_s: float | None = None) -> EmbedReport:
        """Embed every document that has no stored vectors under ``embedder`` yet (within
        ``budget_s`` seconds when given), so that later searches embed only their query;
        raises what the embedder raises."""
        return self._semantic_index().embed_all(embedder, budget_s=budget_s)

    def _repair(self, wrong: set[str]) -> None:
        """Rebuild an index holding a row that does not verify; else read again the files gone or changed."""
        with self._lock:
            if TAMPERED in wrong:
                self._rebuild(
                    "a row in it was changed outside the lab (its digest does not verify)",
                    sync=True,
                )
                return

            def forget(conn: sqlite3.Connection) -> None:
                for rel in sorted(wrong):
                    forget_file(conn, rel)

            self._run(forget, write=True)
            self.sync()

    def namespaces(self) -> list[str]:
        """The namespaces holding at least one document, sorted."""
        return self._run(namespace_names)

    def count(self, namespace: str | None = None) -> int:
        """The number of documents in ``namespace``, or in the whole tree for ``None``."""
        if namespace is not None:
            namespace = checked_namespace(namespace)
        return self._run(lambda conn: count_docs(conn, namespace))

    # -- syncing memory/ --------------------------------------------------------------

    def sync(self) -> SyncReport:
        """Bring the index up to date with ``memory/`` and report what changed.

        Only files whose size or modification time changed since the last sync are read.
        Documents whose file disappeared are removed; documents added through the API
        are never removed by a sync. Files that are not valid UTF-8 are read with
        replacement characters.
        """
        self._last_sync = self._run(
            lambda conn: sync_folder(
                conn, self._root, self._seal, allow_outside_links=self._allow_outside_links
            ),
            write=True,
            syncs=True,
        )
        return self._last_sync
