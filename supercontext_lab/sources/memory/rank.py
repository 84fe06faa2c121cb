"""BM25 search over the memory index: FTS5's scores, found without ``ORDER BY bm25()``.

The score of a document is exactly what SQLite's ``-bm25(fts, 0.5, 1.0)`` gives it for
the query ``"t1" OR "t2" OR …`` over the key and content columns (k1 = 1.2, b = 0.75, the
key weighted 0.5, the content 1.0, an idf that is not positive replaced by 1e-6), and the
hits are the same top ``limit`` (ties go to the older document). ``ORDER BY bm25()``
costs FTS5 a count of every query term's documents and a score for every matching row
on every query, tens of thousands of rows for a common word. Here:

* document frequencies are cached until the index changes;
* scores are computed in Python from the stored terms (" t1  t2 …", so that counting
  " t " counts occurrences), and only for *candidates*;
* terms found in few documents are read in full first; after that no unscored document
  holds them;
* every other term has an upper bound on what it can add to a score, which depends on
  whether it occurs once, repeats, or is frequent in a document, and on the document's
  length. Once ``limit`` documents are scored, the lowest of their scores is a threshold,
  and candidates are fetched by an FTS5 boolean query (an ``OR`` of ``AND`` clauses, see
  :func:`~.bm25.threshold_clauses`) that leaves out documents whose terms cannot reach
  it, then filtered in SQL on a narrow index of per-document bit signatures and lengths that gives each row
  its own bound (see :meth:`_PrunedSearch._bound_rows_on`);
* a few "seed" queries give a first threshold, then one sweep in rowid order reads the
  candidates in chunks while the threshold, and with it both filters, tightens.

Why not FTS5's own ranking: ``python -m benchmarks.ranker`` (50,000 docstring paragraphs,
200 three-word queries, 3 passes, top 8, the same analysed terms in a ``detail=full``
FTS5 table, which ``bm25()`` needs) measured this ranker at a median of 1.58 ms a query
(p95 3.98 ms) and ``ORDER BY bm25(fts, 0.5, 1.0) LIMIT 8`` at 2.53 ms (p95 7.52 ms): 1.6×
faster at the median, 1.9× at p95, with the same top 8 for every query. The p95 of plain
FTS5 misses the 5 ms recall target of ``docs/performance.md``; that is why this code stays.

The one exception to exactness: when a query scores more than :data:`MAX_SCORED_PER_QUERY`
documents (possible only for queries made of words found in most documents, which BM25
weighs at almost nothing), the best of those scored so far are returned.
"""

from __future__ import annotations

import heapq
import math
import sqlite3
from collections.abc import Iterable, Sequence

from .bm25 import (
    ANY_BOUND,
    FREQUENT,
    IDF_FLOOR,
    K1,
    B,
    Term,
    all_of,
    any_of,
    clause_expr,
    halves,
    make_scorer,
    namespace_hash,
    quoted,
    term_bits,
    threshold_clauses,
)

__all__ = ["MAX_SCORED_PER_QUERY", "Ranker"]

#: Below this many postings (or namespace documents) every candidate is scored directly.
_EXHAUSTIVE_LIMIT = 32
#: Rows read per seed query and per candidate chunk.
_SEED_ROWS = 32
_SEED_ROWS_UNSORTED = 128
#: Terms in at most this many documents are read in full before anything else.
_RARE_DF = 32
#: A seed sorts its documents by bound when it matches at most this many.
_SORTABLE_DF = 1500
_FIRST_CHUNK_ROWS = 64
_CHUNK_ROWS = 1024
_DF_CACHE_LIMIT = 100_000
#: Upper bound on the documents scored for one query (see the module docstring).
MAX_SCORED_PER_QUERY = 20_000

# Candidates are tested on the narrow docs_bounds index (alias s) before the wide row (d)
# is read; SQLite evaluates each condition as soon as the tables it names are at hand.
_SELECT = (
    "SELECT d.id, d.key_terms, d.body_terms, d.length "
    "FROM fts CROSS JOIN docs AS s INDEXED BY docs_bounds ON s.id = fts.rowid "
    "CROSS JOIN docs AS d ON d.id = s.id "
    "WHERE fts MATCH :expr AND fts.rowid > :after"
)
_IN_NAMESPACE = " AND s.ns_hash = :ns_hash AND d.namespace = :ns"
_IN_ORDER = " ORDER BY fts.rowid LIMIT :rows"
_SCAN_NS = "SELECT id, key_terms, body_terms, length FROM docs WHERE namespace = ?"

_Row = tuple[int, str, str, int]


class Ranker:
    """Answers top-k BM25 queries on one connection; not thread-safe on its own.

    Caches (document frequencies, corpus statistics) are dropped when the owner calls
    :meth:`invalidate` after a write, and when another connection commits a change
    (seen through ``PRAGMA data_version``).
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn
        self._data_version: int | None = None
        self._df: dict[str, int] = {}
        self._ns_docs: dict[str, int] = {}
        self._corpus: tuple[int, int] | None = None

    def invalidate(self) -> None:
        """Forget cached statistics; call after every write through this connection."""
        self._df.clear()
        self._ns_docs.clear()
        self._corpus = None

    def _refresh(self) -> None:
        version = self._conn.execute("PRAGMA data_version").fetchone()[0]
        if version != self._data_version:
            self.invalidate()
            self._data_version = int(version)

    def corpus(self) -> tuple[int, int]:
        """Number of documents and of terms in the whole index."""
        if self._corpus is None:
            row = self._conn.execute("SELECT total(docs), total(terms) FROM namespaces").fetchone()
            self._corpus = (int(row[0]), int(row[1]))
        return self._corpus

    def _namespace_docs(self, namespace: str) -> int:
        count = self._ns_docs.get(namespace)
        if count is None:
            row = self._conn.execute(
                "SELECT docs FROM namespaces WHERE name = ?", (namespace,)
            ).fetchone()
            count = int(row[0]) if row else 0
            self._ns_docs[namespace] = count
        return count

    def _document_frequency(self, text: str) -> int:
        df = self._df.get(text)
        if df is None:
            expr = '"' + text.replace('"', '""') + '"'
            df = int(
                self._conn.execute(
                    "SELECT count(*) FROM fts WHERE fts MATCH ?", (expr,)
                ).fetchone()[0]
            )
            if len(self._df) >= _DF_CACHE_LIMIT:
                self._df.clear()
            self._df[text] = df
        return df

    def search(
        self, namespace: str | None, terms: Iterable[str], limit: int
    ) -> list[tuple[int, float]]:
        """Return up to ``limit`` ``(doc id, score)`` pairs, best first.

        ``namespace`` ``None`` searches every namespace. ``terms`` are analysed terms
        (see terms.py), distinct. Scores are positive; higher is better.
        """
        self._refresh()
        n_docs, n_terms = self.corpus()
        if n_docs == 0 or n_terms == 0:
            return []
        scope = n_docs if namespace is None else self._namespace_docs(namespace)
        if scope == 0:
            return []
        query: list[Term] = []
        for text in terms:
            df = self._document_frequency(text)
            if df:
                idf = math.log((n_docs - df + 0.5) / (df + 0.5))
                query.append(Term(text, df, idf if idf > 0.0 else IDF_FLOOR))
        if not query:
            return []
        score = make_scorer(query, n_terms / n_docs)
        postings = sum(t.df for t in query)
        scored: dict[int, float] = {}
        if namespace is not None and scope <= min(postings, _EXHAUSTIVE_LIMIT):
            for doc_id, key_terms, body_terms, length in self._conn.execute(_SCAN_NS, (namespace,)):
                value = score(key_terms, body_terms, length)
                if value > 0.0:
                    scored[doc_id] = value
        elif postings <= _EXHAUSTIVE_LIMIT:
            for doc_id, key_terms, body_terms, length in self._fetch(namespace, any_of(query)):
                scored[doc_id] = score(key_terms, body_terms, length)
        else:
            search = _PrunedSearch(self._conn, namespace, query, limit, n_terms / n_docs)
            search.run()
            scored = search.scored
        return heapq.nsmallest(limit, scored.items(), key=lambda item: (-item[1], item[0]))

    def _fetch(self, namespace: str | None, expr: str) -> list[_Row]:
        params: dict[str, object] = {"expr": expr, "after": 0, "rows": -1}
        if namespace is None:
            return self._conn.execute(_SELECT + _IN_ORDER, params).fetchall()
        params["ns"] = namespace
        params["ns_hash"] = namespace_hash(namespace)
        return self._conn.execute(_SELECT + _IN_NAMESPACE + _IN_ORDER, params).fetchall()


class _PrunedSearch:
    """One top-k search that reads only the documents that could still make the top k.

    Rare terms (at most _RARE_DF documents) are read in full first: they carry most of
    the score, and once every document holding them is scored they can be left out of
    everything that follows. For the other terms two filters work together. FTS5
    evaluates a boolean query (see :func:`~.bm25.threshold_clauses`) that skips documents
    whose terms cannot add up to the threshold; SQLite then drops rows whose own upper bound,
    computed from the narrow docs_bounds index (which query terms the row may hold,
    whether they may repeat, its length) does not pass it. Only the remaining rows reach
    Python, which scores them exactly.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        namespace: str | None,
        query: Sequence[Term],
        limit: int,
        avgdl: float,
    ) -> None:
        self._conn = conn
        self._limit = limit
        self._avgdl = avgdl
        self._ordered = sorted(query, key=lambda t: (-t.idf, t.text))
        self._score = make_scorer(self._ordered, avgdl)
        self.scored: dict[int, float] = {}
        self._top: list[float] = []  # min-heap of the best `limit` scores so far
        self._params: dict[str, object] = {}
        self._select = _SELECT
        if namespace is not None:
            self._select += _IN_NAMESPACE
            self._params["ns"] = namespace
            self._params["ns_hash"] = namespace_hash(namespace)
        self._bound = ""

    def _theta(self) -> float:
        return self._top[0] if len(self._top) >= self._limit else 0.0

    def _bound_rows_on(self, terms: Sequence[Term]) -> None:
        """Make later fetches skip rows whose bound over ``terms`` does not pass theta.

        The bound of a row: for each of ``terms`` its signature may hold, idf times BM25's
        saturation factor g(f, length) = f * (k1 + 1) / (f + k1 * (1 - b + b * length /
        avgdl)) at the largest frequency f the signatures allow: 1 for a term that does
        not repeat, FREQUENT - 0.5 for one that is not frequent, else the limit k1 + 1.
        The slack is in "sat". Signature false positives only loosen the bound.
        """
        params = self._params
        params.update(
            sat=ANY_BOUND,
            mid=FREQUENT - 0.5,
            n0=K1 * (1.0 - B),
            n1=K1 * B / self._avgdl,
        )
        bounds = []
        for i, term in enumerate(terms):
            lo, hi = halves(term_bits(term.text))
            params[f"a{i}"], params[f"b{i}"], params[f"w{i}"] = lo, hi, term.idf
            a, b = f":a{i}", f":b{i}"
            bounds.append(
                f"((s.term_lo & {a}) = {a} AND (s.term_hi & {b}) = {b}) * :w{i} * (CASE "
                f"WHEN (s.frequent_lo & {a}) = {a} AND (s.frequent_hi & {b}) = {b} THEN :sat "
                f"WHEN (s.repeat_lo & {a}) = {a} AND (s.repeat_hi & {b}) = {b} "
                "THEN :sat * :mid / (:mid + :n0 + :n1 * s.length) "
                "ELSE :sat / (1.0 + :n0 + :n1 * s.length) END)"
            )
        self._bound = "(" + " + ".join(bounds) + ")"

    def _fetch(self, expr: str, after: int, rows: int, best_first: bool = False) -> list[_Row]:
        """Rows matching ``expr`` past rowid ``after`` whose bound passes the threshold.

        In rowid order, or with ``best_first`` highest bound first (which costs a sort
        of every match: only for queries known to match few documents).
        """
        params = dict(self._params, expr=expr, after=after, rows=rows)
        sql = self._select
        theta = self._theta()
        if self._bound and theta > 0.0:
            sql += f" AND {self._bound} > :theta"
            params["theta"] = theta
        if best_first and self._bound:
            return self._conn.execute(
                sql + f" ORDER BY {self._bound} DESC LIMIT :rows", params
            ).fetchall()
        return self._conn.execute(sql + _IN_ORDER, params).fetchall()

    def _take(self, rows: list[_Row]) -> None:
        scored, top, limit, score = self.scored, self._top, self._limit, self._score
        for doc_id, key_terms, body_terms, length in rows:
            if doc_id in scored:
                continue
            value = score(key_terms, body_terms, length)
            scored[doc_id] = value
            if len(top) < limit:
                heapq.heappush(top, value)
            elif value > top[0]:
                heapq.heapreplace(top, value)

    def run(self) -> None:
        """Score every document that can be in the top k (see the module docstring)."""
        # Every document holding a rare term gets scored, so no document left unscored
        # holds one: the rest of the search only deals with the other terms.
        rare = [t for t in self._ordered if t.df <= _RARE_DF]
        active = [t for t in self._ordered if t.df > _RARE_DF]
        if rare:
            self._take(self._fetch(any_of(rare), 0, -1))
        if not active:
            return
        self._bound_rows_on(active)
        # Seeds, for a first threshold: documents holding all (then the two rarest) of the
        # remaining terms, which usually score best, then documents holding any one of
        # them. A seed known to match few documents takes those with the highest bounds;
        # sorting a large one would cost more than it saves, so it takes the first ones.
        # Terms found in over half the documents weigh almost nothing (idf 1e-6) and only
        # make seeds slower, unless nothing else is left.
        useful = [t for t in active if t.idf > IDF_FLOOR] or active
        n = len(useful)
        seeds = [all_of(useful[:width]) for width in sorted({n, 2}, reverse=True) if width > 1]
        for i, expr in enumerate(seeds + [quoted(t.text) for t in useful]):
            if len(self._top) >= self._limit and i >= 1:
                break
            df = useful[0].df if i < len(seeds) else useful[i - len(seeds)].df
            if df <= _SORTABLE_DF:
                self._take(self._fetch(expr, 0, _SEED_ROWS, best_first=True))
            else:
                self._take(self._fetch(expr, 0, _SEED_ROWS_UNSORTED))
        # Then one sweep in rowid order over the documents that can pass the threshold;
        # the threshold rises as documents are scored and both filters tighten with it,
        # and the documents already passed were either scored or could not make it.
        # Chunks start small: the threshold rises fastest at the start.
        after = 0
        rows_wanted = _FIRST_CHUNK_ROWS
        while len(self.scored) < MAX_SCORED_PER_QUERY:
            clauses = threshold_clauses(active, self._theta())
            if not clauses:
                return
            expr = " OR ".join(f"({clause_expr(active, c)})" for c in clauses)
            rows = self._fetch(expr, after, rows_wanted)
            self._take(rows)
            if len(rows) < rows_wanted:
                return
            after = rows[-1][0]
            rows_wanted = min(rows_wanted * 2, _CHUNK_ROWS)
