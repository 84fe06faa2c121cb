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

The vectors of the whole tree are held in memory as one matrix per embedder and built
again only when the index changed (the owner's ``stamp``), so a search costs one query
embedding and one matrix product.
"""

from __future__ import annotations

import hashlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
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

Docs = list[tuple[int, str, str]]
"""The documents of the index as ``(id, namespace, content)``, by id."""


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


@dataclass
class _State:
    """The tree's vectors under one embedder, as of one ``stamp`` of the index."""

    identity: str
    stamp: object
    ids: npt.NDArray[np.int64]
    namespaces: npt.NDArray[np.str_]
    starts: npt.NDArray[np.int64]
    matrix: Matrix
    pending: dict[str, list[str]] = field(default_factory=dict)
    docs: Docs = field(default_factory=list)


class SemanticIndex:
    """The vectors of one folder's documents (see the module docstring); ``key`` seals
    the stored vectors. Safe to share between threads."""

    def __init__(self, root: Path, key: bytes) -> None:
        self._root = root
        self._key = key
        self._lock = threading.Lock()
        self._store: VectorStore | None = None
        self._state: _State | None = None

    def close(self) -> None:
        with self._lock:
            self._state = None
            if self._store is not None:
                self._store.close()
                self._store = None

    def _vectors(self) -> VectorStore:
        if self._store is None:
            self._store = open_vectors(self._root, self._key)
        return self._store

    def _current(self, embedder: Embedder, stamp: object, read_docs: Callable[[], Docs]) -> _State:
        state = self._state
        if state is None or state.identity != embedder.identity or state.stamp != stamp:
            state = self._build(embedder, stamp, read_docs())
        return state

    def _build(self, embedder: Embedder, stamp: object, docs: Docs) -> _State:
        identity = embedder.identity
        digests = [text_digest(content) for _, _, content in docs]
        store = self._vectors()
        stored = store.get(identity, sorted(set(digests)))
        dim = embedder.dimension or next((m.shape[1] for m in stored.values()), 0)
        ids: list[int] = []
        namespaces: list[str] = []
        parts: list[Matrix] = []
        pending: dict[str, list[str]] = {}
        for (doc_id, namespace, content), digest in zip(docs, digests, strict=True):
            vectors = stored.get(digest)
            if vectors is not None and vectors.shape[1] == dim:
                ids.append(doc_id)
                namespaces.append(namespace)
                parts.append(vectors)
            elif digest not in pending:
                texts = chunks(content)
                if texts:
                    pending[digest] = texts
        if len(stored) > len(set(digests)) // 2 and not pending:
            store.prune(identity, set(digests))
        counts = np.array([len(part) for part in parts], dtype=np.int64)
        state = _State(
            identity=identity,
            stamp=stamp,
            ids=np.array(ids, dtype=np.int64),
            namespaces=np.array(namespaces, dtype=np.str_),
            starts=np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64),
            matrix=np.vstack(parts) if parts else np.zeros((0, max(dim, 1)), np.float32),
            pending=pending,
            docs=docs,
        )
        self._state = state
        return state

    def _embed(self, embedder: Embedder, texts: list[str]) -> Matrix:
        vectors = checked_vectors(
            embedder.embed(texts), len(texts), embedder.dimension, "The embedder"
        )
        return _normalised(vectors)

    def _embed_pending(self, state: _State, embedder: Embedder, budget: int | None) -> int:
        """Embed pending documents, at most :data:`EMBED_BATCH` texts a call, until
        ``budget`` texts are spent (``None``: all); returns how many were embedded. Each
        call's vectors are stored at once, so a failure loses only the call that failed."""
        spent = size = 0
        batch: list[tuple[str, list[str]]] = []
        try:
            for digest, texts in state.pending.items():
                if budget is not None and spent + len(texts) > budget:
                    break
                if size + len(texts) > EMBED_BATCH:
                    self._store_batch(state.identity, embedder, batch)
                    batch, size = [], 0
                batch.append((digest, texts))
                size += len(texts)
                spent += len(texts)
            if batch:
                self._store_batch(state.identity, embedder, batch)
        except BaseException:
            self._state = None  # some were stored: read them again next time
            raise
        return spent

    def _store_batch(
        self, identity: str, embedder: Embedder, batch: list[tuple[str, list[str]]]
    ) -> None:
        matrix = self._embed(embedder, [text for _, texts in batch for text in texts])
        stored: dict[str, Matrix] = {}
        row = 0
        for digest, texts in batch:
            stored[digest] = matrix[row : row + len(texts)]
            row += len(texts)
        self._vectors().put(identity, stored)

    def search(
        self,
        embedder: Embedder,
        query: str,
        namespace: str | None,
        *,
        stamp: object,
        read_docs: Callable[[], Docs],
        limit: int = CANDIDATES,
    ) -> list[tuple[int, float]]:
        """The ``limit`` documents of ``namespace`` (``None``: all) whose vectors are
        closest to ``query``'s, as ``(doc id, cosine)``, best first. ``stamp`` changes
        whenever the index does; ``read_docs`` reads it (called only then). Raises what
        the embedder raises, or :class:`ModelError` for vectors of the wrong shape."""
        with self._lock:
            state = self._current(embedder, stamp, read_docs)
            if state.pending:
                self._embed_pending(state, embedder, MAX_EMBED_PER_SEARCH)
                state = self._build(embedder, stamp, state.docs)
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
        read_docs: Callable[[], Docs],
        budget_s: float | None = None,
    ) -> EmbedReport:
        """Embed every document that has no vectors yet (within ``budget_s`` seconds,
        checked between batches of :data:`MAX_EMBED_PER_SEARCH` texts)."""
        started = time.monotonic()
        documents = texts = 0
        with self._lock:
            state = self._current(embedder, stamp, read_docs)
            while state.pending:
                if budget_s is not None and time.monotonic() - started > budget_s:
                    break
                before = len(state.pending)
                texts += self._embed_pending(state, embedder, MAX_EMBED_PER_SEARCH)
                state = self._build(embedder, stamp, state.docs)
                documents += before - len(state.pending)
            return EmbedReport(documents, texts, len(state.pending), time.monotonic() - started)
