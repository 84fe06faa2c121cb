"""The memory tree's ranker against FTS5's own ``ORDER BY bm25(...) LIMIT k``.

Both rank the same documents, analysed by the same analyser (the memory tree's), for the
same queries: the memory tree's ranker reads the index it maintains, and FTS5's built-in
``bm25()`` reads a second FTS5 table over the same analysed columns (``detail=full``, which
``bm25()`` needs to count terms per column) with the same weights (key 0.5, content 1.0).
Reported: per-query latency of each, their ratio, and how many of the top ``k`` agree.

    python -m benchmarks.ranker [--docs 50000] [--queries 200]
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from . import corpus as corpus_mod
from .engines import TOP_K
from .runner import Options, isolated_lab_home
from .stats import summarize

__all__ = ["compare", "main"]

_FULL = """
CREATE VIRTUAL TABLE IF NOT EXISTS fts_full USING fts5(
    key_terms, body_terms, content='docs', content_rowid='id', tokenize='ascii'
);
INSERT INTO fts_full(fts_full) VALUES ('rebuild');
"""
_BM25 = (
    "SELECT rowid, -bm25(fts_full, 0.5, 1.0) FROM fts_full WHERE fts_full MATCH ? "
    "ORDER BY bm25(fts_full, 0.5, 1.0), rowid LIMIT ?"
)


def _time(
    search: Callable[[list[str]], list[int]], queries: Sequence[list[str]], passes: int
) -> tuple[list[float], list[list[int]]]:
    latencies: list[float] = []
    results: list[list[int]] = []
    for pass_index in range(passes):
        for terms in queries:
            started = time.perf_counter()
            found = search(terms)
            latencies.append(time.perf_counter() - started)
            if pass_index == 0:
                results.append(found)
    return latencies, results


def compare(
    docs: Sequence[str], queries: Sequence[str], work: Path, passes: int = 3
) -> dict[str, Any]:
    """Build a memory tree of ``docs`` and time both rankers on ``queries``."""
    from supercontext_lab.reading.words import unique_terms
    from supercontext_lab.sources.memory import MemoryTree

    tree = MemoryTree(work / "tree")
    tree.add_many(
        {"namespace": "bench", "key": f"d{i:07d}", "content": t} for i, t in enumerate(docs)
    )
    conn = sqlite3.connect(tree.index_path)
    started = time.perf_counter()
    conn.executescript(_FULL)
    full_build_s = time.perf_counter() - started
    analysed = [unique_terms(q)[:64] for q in queries]
    analysed = [terms for terms in analysed if terms]
    ranker = tree._ranker  # the object MemoryTree.recall ranks with

    def hand_written(terms: list[str]) -> list[int]:
        return [doc_id for doc_id, _ in ranker.search(None, terms, TOP_K)]

    def builtin(terms: list[str]) -> list[int]:
        expr = " OR ".join(f'"{t}"' for t in terms)
        return [row[0] for row in conn.execute(_BM25, (expr, TOP_K))]

    # One untimed query each, so neither pays for opening caches in the timings.
    hand_written(analysed[0])
    builtin(analysed[0])
    hand_lat, hand_res = _time(hand_written, analysed, passes)
    fts_lat, fts_res = _time(builtin, analysed, passes)
    agree = sum(len(set(a) & set(b)) for a, b in zip(hand_res, fts_res, strict=True))
    total = sum(len(b) for b in fts_res) or 1
    hand, fts = summarize(hand_lat).scaled(1000.0), summarize(fts_lat).scaled(1000.0)
    tree.close()
    conn.close()
    return {
        "documents": len(docs),
        "queries": len(analysed),
        "passes": passes,
        "hand_written_ms": hand.to_dict(),
        "fts5_bm25_ms": fts.to_dict(),
        "ratio_median": round(fts.median / hand.median, 2),
        "ratio_mean": round(fts.mean / hand.mean, 2),
        "top_k_agreement": round(agree / total, 4),
        "fts5_full_index_build_s": round(full_build_s, 2),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ranker", description=__doc__)
    parser.add_argument("--docs", type=int, default=50_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--passes", type=int, default=3)
    args = parser.parse_args(argv)
    options = Options()
    corpus = corpus_mod.load_corpus(
        options.cache_dir, options.corpus_docs, roots=options.corpus_roots
    )
    docs = corpus_mod.resize_docs(corpus.docs, args.docs)
    queries = corpus_mod.make_queries(docs, args.queries)
    with isolated_lab_home(), tempfile.TemporaryDirectory(prefix="scl-ranker-") as tmp:
        print(json.dumps(compare(docs, queries, Path(tmp), args.passes), indent=2))


if __name__ == "__main__":
    main()
