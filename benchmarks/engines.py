"""The three BM25 engines under test, behind one small interface.

* ``memorytree``: :class:`supercontext_lab.MemoryTree` (SQLite FTS5), documents added with
  ``add_many`` into a temporary folder and searched with ``recall("*", query, limit=8)``;
* ``rank-bm25``: :class:`rank_bm25.BM25Okapi`, pure Python, top 8 by ``get_scores`` and
  ``numpy.argpartition`` (cheaper than its own ``get_top_n``, which sorts every score);
* ``bm25s``: :class:`bm25s.BM25`, sparse matrices, ``retrieve(..., k=8)`` one query at a
  time, as an interactive caller would; and, over the same index, ``bm25s-scores``:
  ``get_scores`` then the top 8 among the documents that match at all. ``retrieve`` picks
  its top k with ``numpy.argpartition`` over every document's score, which with numpy 2
  is many times slower on an array that is mostly zeros (as BM25 scores are) than on
  varied data; the second mode avoids that, so the comparison is with bm25s at its best.

The peers get the documents and queries tokenised by the memory tree's own analyser
(:func:`benchmarks.corpus.tokenize`), and tokenising is part of their build and query time
as it is part of the memory tree's. All three use BM25 with k1 = 1.2 and b = 0.75 (FTS5's
constants). Results are document indexes, best first, only documents that match a term.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

from .corpus import tokenize
from .stats import dir_size

__all__ = ["ENGINES", "TOP_K", "BM25sEngine", "Engine", "MemoryTreeEngine", "RankBM25Engine"]

TOP_K = 8
K1 = 1.2
B = 0.75


class Engine(Protocol):
    """What a benchmark needs from a search engine."""

    name: str
    label: str

    def build(self, docs: Sequence[str], workdir: Path) -> None: ...

    def search(self, query: str) -> list[int]: ...

    def disk(self) -> dict[str, int | None]: ...

    def alternates(self) -> dict[str, tuple[str, Callable[[str], list[int]]]]: ...

    def close(self) -> None: ...


class _NoAlternates:
    def alternates(self) -> dict[str, tuple[str, Callable[[str], list[int]]]]:
        """Other ways to search the same index: ``{name: (label, search)}``."""
        return {}


class MemoryTreeEngine(_NoAlternates):
    """The project's memory tree."""

    name = "memorytree"
    label = "MemoryTree (SQLite FTS5)"
    namespace = "bench"

    def __init__(self) -> None:
        self.folder: Path | None = None
        self.tree: Any = None

    @staticmethod
    def key(index: int) -> str:
        """Opaque keys (no words in them), so only the content is ranked."""
        return f"d{index:07d}"

    def build(self, docs: Sequence[str], workdir: Path) -> None:
        from supercontext_lab import MemoryTree

        self.folder = workdir / "memorytree"
        if self.folder.exists():
            shutil.rmtree(self.folder)
        self.tree = MemoryTree(self.folder)
        self.tree.add_many(
            {"namespace": self.namespace, "key": self.key(i), "content": text}
            for i, text in enumerate(docs)
        )

    def reopen(self) -> None:
        """Close and open the index again (the state a restarted kernel finds)."""
        from supercontext_lab import MemoryTree

        assert self.folder is not None
        self.tree.close()
        self.tree = MemoryTree(self.folder)

    def search(self, query: str) -> list[int]:
        return [int(hit.key[1:]) for hit in self.tree.recall("*", query, limit=TOP_K)]

    def index_folder(self) -> Path:
        assert self.folder is not None
        path = getattr(self.tree, "index_path", None)
        return Path(path).parent if path is not None else self.folder / ".supercontext"

    def disk(self) -> dict[str, int | None]:
        # The SQLite file holds the texts as well as the index.
        return {"index_with_texts": dir_size(self.index_folder()), "index_only": None}

    def close(self) -> None:
        if self.tree is not None:
            self.tree.close()
            self.tree = None


class RankBM25Engine(_NoAlternates):
    """rank-bm25's BM25Okapi: an in-memory, pure-Python index."""

    name = "rank-bm25"
    label = "rank-bm25 BM25Okapi"

    def __init__(self) -> None:
        self.index: Any = None

    def build(self, docs: Sequence[str], workdir: Path) -> None:
        from rank_bm25 import BM25Okapi  # type: ignore[import-untyped]

        self.index = BM25Okapi([tokenize(text) for text in docs], k1=K1, b=B)

    def search(self, query: str) -> list[int]:
        import numpy as np

        scores = self.index.get_scores(tokenize(query))
        k = min(TOP_K, len(scores))
        top = np.argpartition(-scores, k - 1)[:k]
        top = top[np.argsort(-scores[top], kind="stable")]
        return [int(i) for i in top if scores[i] > 0]

    def disk(self) -> dict[str, int | None]:
        return {"index_with_texts": None, "index_only": None}  # it has no on-disk form

    def close(self) -> None:
        self.index = None


class BM25sEngine:
    """bm25s with its default numpy backend."""

    name = "bm25s"
    label = "bm25s retrieve (numpy backend)"

    def __init__(self) -> None:
        self.index: Any = None
        self.docs: Sequence[str] = ()
        self.workdir: Path | None = None

    def build(self, docs: Sequence[str], workdir: Path) -> None:
        import bm25s  # type: ignore[import-untyped]

        self.docs = docs
        self.workdir = workdir
        self.index = bm25s.BM25(k1=K1, b=B)
        self.index.index([tokenize(text) for text in docs], show_progress=False)

    def search(self, query: str) -> list[int]:
        ids, scores = self.index.retrieve(
            [tokenize(query)], k=min(TOP_K, len(self.docs)), show_progress=False, n_threads=0
        )
        return [int(i) for i, s in zip(ids[0], scores[0], strict=True) if s > 0]

    def search_scores(self, query: str) -> list[int]:
        """``get_scores``, then the top 8 among the documents with a positive score."""
        import numpy as np

        scores = self.index.get_scores(tokenize(query))
        matches = np.flatnonzero(scores > 0)
        if len(matches) > TOP_K:
            matches = matches[np.argpartition(-scores[matches], TOP_K - 1)[:TOP_K]]
        matches = matches[np.argsort(-scores[matches], kind="stable")]
        return [int(i) for i in matches]

    def alternates(self) -> dict[str, tuple[str, Callable[[str], list[int]]]]:
        """The same index searched through ``get_scores`` (see the module docstring)."""
        return {"bm25s-scores": ("bm25s get_scores + top 8 of matches", self.search_scores)}

    def disk(self) -> dict[str, int | None]:
        assert self.workdir is not None
        folder = self.workdir / "bm25s-index"
        if folder.exists():
            shutil.rmtree(folder)
        self.index.save(str(folder), corpus=list(self.docs), show_progress=False)
        total = dir_size(folder)
        texts = sum(dir_size(p) for p in folder.glob("corpus.jsonl*"))
        return {"index_with_texts": total, "index_only": total - texts}

    def close(self) -> None:
        self.index = None
        self.docs = ()


ENGINES: dict[str, type[MemoryTreeEngine] | type[RankBM25Engine] | type[BM25sEngine]] = {
    MemoryTreeEngine.name: MemoryTreeEngine,
    RankBM25Engine.name: RankBM25Engine,
    BM25sEngine.name: BM25sEngine,
}
