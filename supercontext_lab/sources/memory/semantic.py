"""Semantic recall: the memory's documents ranked by meaning, fused with BM25's ranking.

Given an :class:`~.embedder.Embedder`, a search ranks the documents twice: by BM25 (the
words they share with the query, :mod:`.rank`) and by the cosine similarity of their
vectors to the query's, and merges the two top-:data:`CANDIDATES` lists by reciprocal
rank fusion (:func:`fuse`, k = :data:`RRF_K`): a document's fused score is the sum of
``1 / (k + rank)`` over the lists it is in. Fusing ranks rather than scores needs no
calibration between two scales, and a document both lists rank high beats one that
only one of them likes.

A document is cut into chunks of at most :data:`CHUNK_WORDS` words (its first
:data:`~.vectors.MAX_CHUNKS`; the rest of a long note is left to BM25) and scores by its
best chunk. Its vectors are computed once and kept in ``.supercontext/vectors.sqlite3``
(:mod:`.vectors`), keyed by the embedder's identity and the digest of the text, so only
new or changed documents are embedded: lazily, when a search finds them missing, at
most :data:`MAX_EMBED_PER_SEARCH` texts per search, :data:`EMBED_BATCH` texts per call
(a big workspace is embedded ahead with :meth:`SemanticIndex.embed_all`). A document not
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
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ...errors import ModelError
from .embedder import Embedder, checked_vectors
from .vectors import MAX_CHUNKS, Matrix, VectorStore, open_vectors

__all__ = [
    "CANDIDATES",
    "CHUNK_WORDS",
    "EMBED_BATCH",
    "MAX_EMBED_PER_SEARCH",
    "RRF_K",
    "EmbedReport",
    "SemanticIndex",
    "chunks",
    "fuse",
    "text_digest",
]

RRF_K = 60
"""Reciprocal rank fusion's constant (Cormack, Clarke and Büttcher, 2009)."""
CANDIDATES = 30
"""How many of each ranking's best documents are fused."""
CHUNK_WORDS = 128
"""Words per chunk: about 170 word pieces of English, under MiniLM's 256."""
MAX_CHUNK_CHARS = 2000
MAX_QUERY_CHARS = 2000
EMBED_BATCH = 16
"""The most texts sent to the embedder in one call."""
MAX_EMBED_PER_SEARCH = 256
"""The most texts one search embeds; documents beyond wait for the next search."""
_CHUNKING = "words-128-v1"

Rows = list[tuple[int, str, str]]
"""The index's documents as ``(id, namespace, row digest)``, by id: the row digest (the
seal's) changes whenever the document does."""
Contents = Callable[[Sequence[int]], dict[int, str]]
"""Reads the content of the documents of these ids."""

# The states of the folders searched lately, shared by every tree of the process on the
# same folder (a thread opens its workspace anew): (real folder, embedder) -> state.
_SHARED: OrderedDict[tuple[str, str], _State] = OrderedDict()
_SHARED_LOCK = threading.Lock()
_SHARED_MAX = 4


def chunks(text: str) -> list[str]:
    """The texts a document is embedded as: its words in runs of :data:`CHUNK_WORDS`,
    the first :data:`~.vectors.MAX_CHUNKS` of them; none for a text without words."""
    words = text.split()
    return [
        " ".join(words[start : start + CHUNK_WORDS])[:MAX_CHUNK_CHARS]
        for start in range(0, min(len(words), CHUNK_WORDS * MAX_CHUNKS), CHUNK_WORDS)
    ]


def text_digest(text: str) -> str:
    """What a document's stored vectors are keyed by: its text and the chunking."""
    data = f"{_CHUNKING}\0{text}".encode("utf-8", "surrogatepass")
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
    """Chunks embedded now."""
    pending: int
    """Documents still without vectors (a budget ran out)."""
    seconds: float


@dataclass(frozen=True)
class _State:
    """The vectors of a folder's documents under one embedder, as of one fingerprint of
    its index; never changed, replaced."""

    identity: str
    fingerprint: str
    rows: Rows
    """Every document, as the index said when this state was built."""
    texts: dict[int, str]
    """Doc id -> text digest, for the documents with words."""
    vectors: dict[str, Matrix]
    """Text digest -> its vectors, for the texts embedded."""
    pending: dict[str, list[str]]
    """Text digest -> its chunks, for the texts not embedded yet."""
    ids: npt.NDArray[np.int64]
    namespaces: npt.NDArray[np.str_]
    starts: npt.NDArray[np.int64]
    matrix: Matrix


def _fingerprint(rows: Rows) -> str:
    text = "\n".join(f"{doc_id} {namespace} {digest}" for doc_id, namespace, digest in rows)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _assemble(
    identity: str,
    fingerprint: str,
    rows: Rows,
    texts: dict[int, str],
    vectors: dict[str, Matrix],
    pending: dict[str, list[str]],
) -> _State:
    ids: list[int] = []
    namespaces: list[str] = []
    parts: list[Matrix] = []
    for doc_id, namespace, _ in rows:
        found = vectors.get(texts.get(doc_id, ""))
        if found is not None:
            ids.append(doc_id)
            namespaces.append(namespace)
            parts.append(found)
    counts = np.array([len(part) for part in parts], dtype=np.int64)
    dim = parts[0].shape[1] if parts else 1
    return _State(
        identity=identity,
        fingerprint=fingerprint,
        rows=rows,
        texts=texts,
        vectors=vectors,
        pending=pending,
        ids=np.array(ids, dtype=np.int64),
        namespaces=np.array(namespaces, dtype=np.str_),
        starts=np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64),
        matrix=np.vstack(parts) if parts else np.zeros((0, dim), np.float32),
    )


class SemanticIndex:
    """The vectors of one folder's documents (see the module docstring); ``key`` seals
    the stored vectors. Safe to share between threads; what it holds in memory is shared
    with the other indexes of the same folder in the process."""

    def __init__(self, root: Path, key: bytes) -> None:
        self._root = root
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

    def _shared(self, identity: str, state: _State | None = None) -> _State | None:
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

    def _current(
        self, embedder: Embedder, stamp: object, rows: Callable[[], Rows], contents: Contents
    ) -> _State:
        """The state as of the index now: the shared one when ``stamp`` (this tree's) or
        the index's fingerprint says nothing changed; otherwise one built from it,
        reading only the documents that changed."""
        identity = embedder.identity
        state = self._shared(identity)
        if state is not None and self._checked == (identity, stamp, state.fingerprint):
            return state
        current = rows()
        fingerprint = _fingerprint(current)
        if state is None or state.fingerprint != fingerprint:
            state = self._shared(
                identity, self._build(embedder, current, fingerprint, contents, state)
            )
            assert state is not None
        self._checked = (identity, stamp, fingerprint)
        return state

    def _build(
        self,
        embedder: Embedder,
        rows: Rows,
        fingerprint: str,
        contents: Contents,
        previous: _State | None,
    ) -> _State:
        identity = embedder.identity
        known_rows = {i: digest for i, _, digest in previous.rows} if previous is not None else {}
        known_texts = previous.texts if previous is not None else {}
        known_chunks = previous.pending if previous is not None else {}
        changed = [i for i, _, digest in rows if known_rows.get(i) != digest]
        read = contents(changed) if changed else {}
        texts: dict[int, str] = {}
        pieces: dict[str, list[str]] = {}
        for doc_id, _, _ in rows:
            if doc_id in read:
                cut = chunks(read[doc_id])
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
        pending = {d: pieces.get(d) or known_chunks.get(d, []) for d in live - vectors.keys()}
        unread = [i for i, digest in texts.items() if digest in pending and not pending[digest]]
        for doc_id, content in (contents(unread) if unread else {}).items():
            pending[texts[doc_id]] = chunks(content)
        if previous is None and not pending:
            store.prune(identity, live)
        return _assemble(identity, fingerprint, rows, texts, vectors, pending)

    def _embed(self, embedder: Embedder, texts: list[str]) -> Matrix:
        vectors = checked_vectors(
            embedder.embed(texts), len(texts), embedder.dimension, "The embedder"
        )
        return _normalised(vectors)

    def _embed_pending(self, state: _State, embedder: Embedder, budget: int | None) -> _State:
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
                if size + len(texts) > EMBED_BATCH:
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
        new = _assemble(
            state.identity, state.fingerprint, state.rows, state.texts, vectors, pending
        )
        self._shared(state.identity, new)
        return new

    def _store_batch(
        self, identity: str, embedder: Embedder, batch: list[tuple[str, list[str]]]
    ) -> dict[str, Matrix]:
        matrix = self._embed(embedder, [text for _, texts in batch for text in texts])
        stored: dict[str, Matrix] = {}
        row = 0
        for digest, texts in batch:
            stored[digest] = matrix[row : row + len(texts)]
            row += len(texts)
        self._vectors().put(identity, stored)
        return stored

    def search(
        self,
        embedder: Embedder,
        query: str,
        namespace: str | None,
        *,
        stamp: object,
        rows: Callable[[], Rows],
        contents: Contents,
        limit: int = CANDIDATES,
    ) -> list[tuple[int, float]]:
        """The ``limit`` documents of ``namespace`` (``None``: all) whose vectors are
        closest to ``query``'s, as ``(doc id, cosine)``, best first. ``stamp`` changes
        whenever the owner's index does; ``rows`` and ``contents`` read it (only what
        changed is read). Raises what the embedder raises, or :class:`ModelError` for
        vectors of the wrong shape."""
        with self._lock:
            state = self._current(embedder, stamp, rows, contents)
            if state.pending:
                state = self._embed_pending(state, embedder, MAX_EMBED_PER_SEARCH)
            if not len(state.ids):
                return []
            vector = self._embed(embedder, [query[:MAX_QUERY_CHARS]])[0]
            if vector.shape[0] != state.matrix.shape[1]:
                raise ModelError(
                    f"The embedder's vectors changed length ({vector.shape[0]} numbers, "
                    f"{state.matrix.shape[1]} stored); its identity should change with it."
                )
            scores = np.maximum.reduceat(state.matrix @ vector, state.starts)
            if namespace is not None:
                scores = np.where(state.namespaces == namespace, scores, -np.inf)
            order = np.argsort(-scores, kind="stable")[:limit]
            return [(int(state.ids[i]), float(scores[i])) for i in order if scores[i] > -np.inf]

    def embed_all(
        self,
        embedder: Embedder,
        *,
        stamp: object,
        rows: Callable[[], Rows],
        contents: Contents,
        budget_s: float | None = None,
    ) -> EmbedReport:
        """Embed every document that has no vectors yet (within ``budget_s`` seconds,
        checked between rounds of :data:`MAX_EMBED_PER_SEARCH` texts)."""
        started = time.monotonic()
        documents = texts = 0
        with self._lock:
            state = self._current(embedder, stamp, rows, contents)
            while state.pending:
                if budget_s is not None and time.monotonic() - started > budget_s:
                    break
                before = state.pending
                state = self._embed_pending(state, embedder, MAX_EMBED_PER_SEARCH)
                done = [d for d in before if d not in state.pending]
                documents += sum(1 for d in state.texts.values() if d in done)
                texts += sum(len(before[d]) for d in done)
            return EmbedReport(documents, texts, len(state.pending), time.monotonic() - started)
