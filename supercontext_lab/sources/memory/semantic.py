"""Semantic recall: the memory's documents and their units ranked by meaning.

Given an :class:`~.embedder.Embedder`, each document is embedded unit by unit: the units
of the document model (:func:`~supercontext_lab.reading.facts.note_sections`: a
sentence, a list item or log line whole, a table row with its header, a chat turn, an
e-mail message), each with the heading of its section, its first
:data:`~.vectors.MAX_UNITS` (the rest of a long note is left to BM25). Two searches
read those vectors:

- :meth:`SemanticIndex.search` ranks documents, each by its best unit, for
  :meth:`MemoryTree.recall <supercontext_lab.sources.memory.tree.MemoryTree.recall>` to
  merge with BM25's ranking by reciprocal rank fusion (:func:`fuse`, k = :data:`RRF_K`):
  a document's fused score is the sum of ``1 / (k + rank)`` over the lists it is in.
  Fusing ranks rather than scores needs no calibration between two scales.
- :meth:`SemanticIndex.search_units` ranks the units themselves, for
  :meth:`MemoryTree.recall_by_meaning
  <supercontext_lab.sources.memory.tree.MemoryTree.recall_by_meaning>`: the passages a
  request worded differently from the notes is answered by.

A unit is embedded with its heading because a row or an item is often readable only
under it ("Deadlines: 14 March"). Vectors are computed once and kept in
``.supercontext/vectors.sqlite3`` (:mod:`.vectors`), keyed by the embedder's identity and
the digest of the document's text and the cutting (:data:`UNITS_VERSION`), so only new
or changed documents are embedded: lazily, when a search finds them missing, at most
:data:`MAX_EMBED_PER_SEARCH` units per search, :data:`EMBED_BATCH` per call (a big
workspace is embedded ahead with :meth:`SemanticIndex.embed_all`). A document not
embedded yet is still found by BM25. The query is embedded once per search.

The vectors of the whole tree are held in memory as one matrix per embedder, shared by
every tree of the process on the same folder (a thread opens its workspace anew), and
made again only when the index changed: the owner's ``stamp`` says when to look, a
fingerprint of the rows' digests whether anything changed, and only the documents whose
row changed are read. So a search costs one query embedding and one matrix product.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from ...errors import ModelError
from ...reading.facts import NoteSentence, note_sections
from .embedder import MAX_QUERY_CHARS, Embedder, checked_vectors
from .search import MemoryHit
from .vectors import (
    MAX_UNITS,
    Matrix,
    Rows,
    VectorState,
    VectorStore,
    assemble,
    fingerprint,
    open_vectors,
)

__all__ = [
    "CANDIDATES",
    "EMBED_BATCH",
    "MAX_EMBED_PER_SEARCH",
    "RRF_K",
    "EmbedReport",
    "IndexReaders",
    "SemanticIndex",
    "embedded_texts",
    "fuse",
    "text_digest",
    "unit_hits",
    "units",
]

RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack, Clarke and Büttcher, 2009)."""
CANDIDATES = 30
"""How many of each ranking's best documents are fused."""
MAX_EMBEDDED_CHARS = 2000
"""A unit is embedded up to this many characters (MiniLM reads 256 word pieces)."""
EMBED_BATCH = 16
"""The most texts sent to the embedder in one call."""
MAX_EMBED_PER_SEARCH = 512
"""The most units one search embeds; documents beyond wait for the next search."""
UNITS_VERSION = "units-1"
"""Names how documents are cut into the units embedded: stored vectors are keyed by it,
so a change to the cutting (of :mod:`supercontext_lab.reading.document`) that moves unit
boundaries must change it, and every document is embedded again."""

Contents = Callable[[Sequence[int]], dict[int, str]]
"""Reads the content of the documents of these ids."""


@dataclass(frozen=True)
class IndexReaders:
    """How a semantic index reads its owner's index: ``stamp`` says what changes whenever
    that index does, ``rows`` lists its documents, ``contents`` reads some of them (only
    what changed is read)."""

    stamp: Callable[[], object]
    rows: Callable[[], Rows]
    contents: Contents


# The states of the folders searched lately, shared by every tree of the process on the
# same folder (a thread opens its workspace anew): (real folder, embedder) -> state.
_SHARED: OrderedDict[tuple[str, str], VectorState] = OrderedDict()
_SHARED_LOCK = threading.Lock()
_SHARED_MAX = 4


def units(text: str) -> list[NoteSentence]:
    """The units of a document that are embedded, in order: the first
    :data:`~.vectors.MAX_UNITS` of its quotable units."""
    return note_sections(text)[:MAX_UNITS]


def embedded_texts(text: str) -> list[str]:
    """The texts a document is embedded as, one per unit of :func:`units`: the unit with
    its section's heading, at most :data:`MAX_EMBEDDED_CHARS`; none for a text without
    units."""
    return [
        (f"{unit.heading}: {unit.text}" if unit.heading else unit.text)[:MAX_EMBEDDED_CHARS]
        for unit in units(text)
    ]


def unit_hits(
    found: Sequence[tuple[int, int, float]], docs: Mapping[int, MemoryHit]
) -> list[MemoryHit]:
    """The hits of a unit search (:meth:`SemanticIndex.search_units`) on the documents
    ``docs`` holds (those that checked): each its document's hit with the unit as its
    ``passage`` and the cosine as its score."""
    hits = []
    for doc_id, index, score in found:
        hit = docs.get(doc_id)
        cut = units(hit.content) if hit is not None else []
        if hit is not None and index < len(cut):
            hits.append(replace(hit, score=score, passage=cut[index].text))
    return hits


def text_digest(text: str) -> str:
    """What a document's stored vectors are keyed by: its text and how it is cut into units."""
    data = f"{UNITS_VERSION}\0{text}".encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def fuse(*rankings: Sequence[tuple[int, float]], k: int = RRF_K) -> list[tuple[int, float]]:
    """Reciprocal rank fusion of rankings of ``(doc id, score)``, best first: each
    document scores ``sum(1 / (k + rank))`` over the rankings it is in (ranks from 1).
    Ties go to the better single rank, then to the earlier ranking."""
    scores: dict[int, float] = {}
    best: dict[int, tuple[int, int]] = {}
    for which, ranking in enumerate(rankings):
        for rank, (doc_id, _) in enumerate(ranking, start=1):
            scores[doc_id] = scores.get(doc_id, 0.0) + 1.0 / (k + rank)
            best[doc_id] = min(best.get(doc_id, (rank, which)), (rank, which))
    return sorted(scores.items(), key=lambda item: (-item[1], best[item[0]], item[0]))


def _normalised(vectors: list[list[float]]) -> Matrix:
    matrix = np.asarray(vectors, dtype=np.float32)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return np.asarray(matrix / np.maximum(norms, 1e-12), dtype=np.float32)


@dataclass(frozen=True)
class EmbedReport:
    """What :meth:`SemanticIndex.embed_all` did."""

    documents: int
    """Documents embedded now."""
    texts: int
    """Units embedded now."""
    pending: int
    """Documents still without vectors (a budget ran out)."""
    seconds: float


class SemanticIndex:
    """The vectors of one folder's documents (see the module docstring); ``key`` seals
    the stored vectors. Safe to share between threads; what it holds in memory is shared
    with the other indexes of the same folder in the process."""

    def __init__(self, root: Path, key: bytes, readers: IndexReaders) -> None:
        self._root = root
        self._readers = readers
        self._real = str(root.resolve())
        self._key = key
        self._lock = threading.Lock()
        self._store: VectorStore | None = None
        self._checked: tuple[str, object, str] | None = None

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None

    def _vectors(self) -> VectorStore:
        if self._store is None:
            self._store = open_vectors(self._root, self._key)
        return self._store

    def _shared(self, identity: str, state: VectorState | None = None) -> VectorState | None:
        """The shared state of this folder under ``identity``; with ``state``, replace it."""
        key = (self._real, identity)
        with _SHARED_LOCK:
            if state is not None:
                _SHARED[key] = state
                while len(_SHARED) > _SHARED_MAX:
                    _SHARED.popitem(last=False)
            elif key in _SHARED:
                _SHARED.move_to_end(key)
            return _SHARED.get(key)

    def _forget(self, identity: str) -> None:
        with _SHARED_LOCK:
            _SHARED.pop((self._real, identity), None)
        self._checked = None

    def _current(self, embedder: Embedder) -> VectorState:
        """The state as of the index now: the shared one when the owner's stamp or the
        index's fingerprint says nothing changed; otherwise one built from it, reading
        only the documents that changed."""
        identity = embedder.identity
        stamp = self._readers.stamp()
        state = self._shared(identity)
        if state is not None and self._checked == (identity, stamp, state.fingerprint):
            return state
        current = self._readers.rows()
        printed = fingerprint(current)
        if state is None or state.fingerprint != printed:
            state = self._shared(identity, self._build(embedder, current, printed, state))
            assert state is not None
        self._checked = (identity, stamp, printed)
        return state

    def _build(
        self, embedder: Embedder, rows: Rows, printed: str, previous: VectorState | None
    ) -> VectorState:
        identity = embedder.identity
        known_rows = {i: digest for i, _, digest in previous.rows} if previous is not None else {}
        known_texts = previous.texts if previous is not None else {}
        known_texts_of = previous.pending if previous is not None else {}
        changed = [i for i, _, digest in rows if known_rows.get(i) != digest]
        contents = self._readers.contents
        read = contents(changed) if changed else {}
        texts: dict[int, str] = {}
        pieces: dict[str, list[str]] = {}
        for doc_id, _, _ in rows:
            if doc_id in read:
                cut = embedded_texts(read[doc_id])
                if cut:
                    texts[doc_id] = text_digest(read[doc_id])
                    pieces[texts[doc_id]] = cut
            elif doc_id in known_texts:
                texts[doc_id] = known_texts[doc_id]
        live = set(texts.values())
        vectors = {
            digest: found
            for digest, found in (previous.vectors.items() if previous is not None else ())
            if digest in live
        }
        store = self._vectors()
        vectors.update(store.get(identity, sorted(live - vectors.keys())))
        dim = embedder.dimension or next((m.shape[1] for m in vectors.values()), 0)
        vectors = {digest: found for digest, found in vectors.items() if found.shape[1] == dim}
        # In the order of the documents, so that which ones a search's budget reaches
        # does not depend on the order of a set.
        waiting = dict.fromkeys(d for d in texts.values() if d not in vectors)
        pending = {d: pieces.get(d) or known_texts_of.get(d, []) for d in waiting}
        unread = [i for i, digest in texts.items() if digest in pending and not pending[digest]]
        for doc_id, content in (contents(unread) if unread else {}).items():
            pending[texts[doc_id]] = embedded_texts(content)
        if previous is None and not pending:
            store.prune(identity, live)
        return assemble(identity, printed, rows, texts, vectors, pending)

    def _embed(self, embedder: Embedder, texts: list[str]) -> Matrix:
        vectors = checked_vectors(
            embedder.embed(texts), len(texts), embedder.dimension, "The embedder"
        )
        return _normalised(vectors)

    def _embed_pending(
        self, state: VectorState, embedder: Embedder, budget: int | None
    ) -> VectorState:
        """``state`` with pending texts embedded, at most :data:`EMBED_BATCH` a call, until
        ``budget`` texts are spent (``None``: all). Each call's vectors are stored at
        once, so a failure loses only the call that failed."""
        spent = size = 0
        batch: list[tuple[str, list[str]]] = []
        vectors = dict(state.vectors)
        try:
            for digest, texts in state.pending.items():
                if budget is not None and spent + len(texts) > budget:
                    break
                if batch and size + len(texts) > EMBED_BATCH:
                    vectors.update(self._store_batch(state.identity, embedder, batch))
                    batch, size = [], 0
                batch.append((digest, texts))
                size += len(texts)
                spent += len(texts)
            if batch:
                vectors.update(self._store_batch(state.identity, embedder, batch))
        except BaseException:
            self._forget(state.identity)  # some were stored: read them again next time
            raise
        pending = {d: texts for d, texts in state.pending.items() if d not in vectors}
        new = assemble(state.identity, state.fingerprint, state.rows, state.texts, vectors, pending)
        self._shared(state.identity, new)
        return new

    def _store_batch(
        self, identity: str, embedder: Embedder, batch: list[tuple[str, list[str]]]
    ) -> dict[str, Matrix]:
        texts = [text for _, some in batch for text in some]
        # A document of more units than a batch is sent over several calls.
        matrix = np.vstack(
            [
                self._embed(embedder, texts[start : start + EMBED_BATCH])
                for start in range(0, len(texts), EMBED_BATCH)
            ]
        )
        stored: dict[str, Matrix] = {}
        row = 0
        for digest, some in batch:
            stored[digest] = matrix[row : row + len(some)]
            row += len(some)
        self._vectors().put(identity, stored)
        return stored

    def _scores(
        self, embedder: Embedder, query: str, namespace: str | None
    ) -> tuple[VectorState, Matrix]:
        """The state, and the cosine of each of its units to ``query`` (``-inf`` outside
        ``namespace``). Call with the lock held."""
        state = self._current(embedder)
        if state.pending:
            state = self._embed_pending(state, embedder, MAX_EMBED_PER_SEARCH)
        if not len(state.ids):
            return state, np.zeros(0, np.float32)
        vector = self._embed(embedder, [query[:MAX_QUERY_CHARS]])[0]
        if vector.shape[0] != state.matrix.shape[1]:
            raise ModelError(
                f"The embedder's vectors changed length ({vector.shape[0]} numbers, "
                f"{state.matrix.shape[1]} stored); its identity should change with it."
            )
        scores = state.matrix @ vector
        if namespace is not None:
            inside = state.namespaces[state.owners] == namespace
            scores = np.where(inside, scores, -np.inf).astype(np.float32)
        return state, scores

    def search(
        self, embedder: Embedder, query: str, namespace: str | None, *, limit: int = CANDIDATES
    ) -> list[tuple[int, float]]:
        """The ``limit`` documents of ``namespace`` (``None``: all) whose best unit is
        closest to ``query``, as ``(doc id, cosine)``, best first. Raises what the
        embedder raises, or :class:`ModelError` for vectors of the wrong shape."""
        with self._lock:
            state, scores = self._scores(embedder, query, namespace)
            if not len(scores):
                return []
            best = np.maximum.reduceat(scores, state.starts)
            order = np.argsort(-best, kind="stable")[:limit]
            return [(int(state.ids[i]), float(best[i])) for i in order if best[i] > -np.inf]

    def search_units(
        self,
        embedder: Embedder,
        query: str,
        namespace: str | None,
        *,
        limit: int,
        floor: float = -1.0,
    ) -> list[tuple[int, int, float]]:
        """The ``limit`` units of ``namespace`` (``None``: all) closest to ``query`` with
        a cosine of at least ``floor``, as ``(doc id, unit index in :func:`units`,
        cosine)``, best first; raises as :meth:`search` does."""
        with self._lock:
            state, scores = self._scores(embedder, query, namespace)
            order = np.argsort(-scores, kind="stable")[:limit]
            found = []
            for row in order:
                if not scores[row] >= floor or scores[row] == -np.inf:
                    break
                owner = int(state.owners[row])
                found.append(
                    (int(state.ids[owner]), int(row - state.starts[owner]), float(scores[row]))
                )
            return found

    def embed_all(self, embedder: Embedder, *, budget_s: float | None = None) -> EmbedReport:
        """Embed every document that has no vectors yet (within ``budget_s`` seconds,
        checked between rounds of :data:`MAX_EMBED_PER_SEARCH` texts)."""
        started = time.monotonic()
        documents = texts = 0
        with self._lock:
            state = self._current(embedder)
            while state.pending:
                if budget_s is not None and time.monotonic() - started > budget_s:
                    break
                before = state.pending
                state = self._embed_pending(state, embedder, MAX_EMBED_PER_SEARCH)
                done = [d for d in before if d not in state.pending]
                documents += sum(1 for d in state.texts.values() if d in done)
                texts += sum(len(before[d]) for d in done)
            return EmbedReport(documents, texts, len(state.pending), time.monotonic() - started)
