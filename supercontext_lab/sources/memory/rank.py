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
  :func:`_clauses`) that leaves out documents whose terms cannot reach it, then filtered
  in SQL on a narrow index of per-document bit signatures and lengths that gives each row
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

import functools
import hashlib
import heapq
import math
import sqlite3
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "BODY_WEIGHT",
    "FREQUENT",
    "K1",
    "KEY_WEIGHT",
    "MAX_SCORED_PER_QUERY",
    "REPEAT_MARK",
    "B",
    "Ranker",
    "namespace_hash",
    "signature",
]

K1 = 1.2
B = 0.75
KEY_WEIGHT = 0.5
BODY_WEIGHT = 1.0
#: Prefix of the index-only terms marking a term that occurs more than once in a document
#: (weighted); analysed terms never contain it.
REPEAT_MARK = "\u00a7"
#: The weighted frequency from which a term counts as frequent in a document (a third
#: signature); below it a repeated term's frequency is at most FREQUENT - 0.5.
FREQUENT = 4.0
_SATURATION = K1 + 1.0
_IDF_FLOOR = 1e-6
# Upper bounds on BM25's saturation factor f*(k1+1) / (f + k1*(1 - b + b*D/avgdl)): it
# grows with the frequency f and shrinks with the length D, so with f <= 1 it is at most
# its value at f = 1, D = 0; with any f it stays below k1 + 1. A hair of slack keeps the
# bounds above scores whatever the rounding.
_ONCE_BOUND = _SATURATION / (1.0 + K1 * (1.0 - B)) * (1.0 + 1e-9)
_ANY_BOUND = _SATURATION * (1.0 + 1e-9)

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
#: Queries with more terms than this use clauses without the repeated-term level.
_LEVELLED_TERMS = 6
#: More clauses than this and the search falls back to MaxScore's "any essential term".
_MAX_CLAUSES = 32
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
#: A conjunction of (term index, level) literals. Levels: _ONCE, "the term occurs", counted
#: as if at most once (documents where it repeats also match _REPEATED); _REPEATED, "the
#: term occurs more than once"; _PRESENT, "the term occurs", counted at any frequency.
_Clause = tuple[tuple[int, int], ...]
_ONCE, _REPEATED, _PRESENT = 1, 2, 3


_SIGNATURE_BITS = 128


# Bits of each term, cached: pure, and looked up for every term of every document indexed.
_BITS_CACHE_LIMIT = 200_000
_bits_cache: dict[str, int] = {}


def _term_bits(term: str) -> int:
    """Two bits of a 128-bit Bloom signature (crc32 is stable across processes)."""
    bits = _bits_cache.get(term)
    if bits is None:
        h = zlib.crc32(term.encode("utf-8"))
        bits = (1 << (h % _SIGNATURE_BITS)) | (1 << ((h >> 7) % _SIGNATURE_BITS))
        if len(_bits_cache) >= _BITS_CACHE_LIMIT:
            _bits_cache.clear()
        _bits_cache[term] = bits
    return bits


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _halves(bits: int) -> tuple[int, int]:
    return _signed(bits & ((1 << 64) - 1)), _signed(bits >> 64)


def signature(terms: Iterable[str]) -> tuple[int, int]:
    """The Bloom signature of a set of terms, as two signed 64-bit integers.

    A document's signature of its terms (and of its repeated terms) lets SQLite test
    whether a query term may occur in it with two integer ANDs: false positives only make
    a bound looser, never wrong.
    """
    bits = 0
    cache = _bits_cache
    for term in terms:
        bits |= cache.get(term) or _term_bits(term)
    return _halves(bits)


@functools.lru_cache(maxsize=1024)
def namespace_hash(namespace: str) -> int:
    """A signed 64-bit hash of a namespace, kept in the narrow docs_bounds index."""
    digest = hashlib.blake2b(namespace.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass(frozen=True)
class _Term:
    text: str
    df: int
    idf: float

    def bound(self, level: int) -> float:
        """The most this term adds to a score at ``level`` (see _Clause)."""
        return self.idf * (_ONCE_BOUND if level == _ONCE else _ANY_BOUND)


def _quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def _any_of(terms: Sequence[_Term]) -> str:
    return " OR ".join(_quoted(t.text) for t in terms)


def _all_of(terms: Sequence[_Term]) -> str:
    return " AND ".join(_quoted(t.text) for t in terms)


def _clause_expr(ordered: Sequence[_Term], clause: _Clause) -> str:
    return " AND ".join(
        _quoted(REPEAT_MARK + ordered[i].text if level == _REPEATED else ordered[i].text)
        for i, level in clause
    )


def _clauses(ordered: Sequence[_Term], theta: float) -> list[_Clause]:
    """Minimal clauses matching every document whose score could pass ``theta``.

    A document's score is at most the sum, over the query terms it holds, of the term's
    bound at the level it holds it; the documents that could pass ``theta`` are exactly
    those satisfying a clause whose bounds add up to more than ``theta``. ``ordered`` is
    sorted by decreasing idf. Past _MAX_CLAUSES clauses this falls back to MaxScore: one
    clause per "essential" term, the trailing terms whose bounds add up to at most
    ``theta`` being unable to pass it on their own.
    """
    n = len(ordered)
    levels = (_ONCE, _REPEATED) if n <= _LEVELLED_TERMS else (_PRESENT,)
    top = [t.bound(_PRESENT) for t in ordered]
    suffix = [0.0] * (n + 1)
    for i in range(n - 1, -1, -1):
        suffix[i] = suffix[i + 1] + top[i]
    found: list[_Clause] = []

    def lower(i: int, level: int) -> float:
        # The bound left after weakening one literal: repeated to once, else to absent.
        return ordered[i].bound(_ONCE) if level == _REPEATED else 0.0

    def visit(i: int, chosen: list[tuple[int, int]], total: float) -> bool:
        if total > theta:
            if all(
                total - ordered[j].bound(level) + lower(j, level) <= theta for j, level in chosen
            ):
                found.append(tuple(chosen))
            return len(found) <= _MAX_CLAUSES
        if i == n or total + suffix[i] <= theta:
            return True
        for level in levels:
            chosen.append((i, level))
            ok = visit(i + 1, chosen, total + ordered[i].bound(level))
            chosen.pop()
            if not ok:
                return False
        return visit(i + 1, chosen, total)

    if visit(0, [], 0.0):
        return found
    essential = n
    rest = 0.0
    while essential > 1 and rest + top[essential - 1] <= theta:
        rest += top[essential - 1]
        essential -= 1
    return [((i, _PRESENT),) for i in range(essential)]


def _make_scorer(terms: Sequence[_Term], avgdl: float) -> Callable[[str, str, int], float]:
    pairs = [(f" {t.text} ", t.idf) for t in terms]

    def score(key_terms: str, body_terms: str, length: int) -> float:
        # Stored terms look like " t1  t2 ", so counting " t " counts every occurrence.
        # The arithmetic is FTS5's (fts5Bm25Function), in the same order.
        norm = K1 * (1.0 - B + B * length / avgdl)
        total = 0.0
        for pattern, idf in pairs:
            freq = BODY_WEIGHT * body_terms.count(pattern) + KEY_WEIGHT * key_terms.count(pattern)
            if freq:
                total += idf * ((freq * _SATURATION) / (freq + norm))
        return total

    return score


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
        query: list[_Term] = []
        for text in terms:
            df = self._document_frequency(text)
            if df:
                idf = math.log((n_docs - df + 0.5) / (df + 0.5))
                query.append(_Term(text, df, idf if idf > 0.0 else _IDF_FLOOR))
        if not query:
            return []
        score = _make_scorer(query, n_terms / n_docs)
        postings = sum(t.df for t in query)
        scored: dict[int, float] = {}
        if namespace is not None and scope <= min(postings, _EXHAUSTIVE_LIMIT):
            for doc_id, key_terms, body_terms, length in self._conn.execute(_SCAN_NS, (namespace,)):
                value = score(key_terms, body_terms, length)
                if value > 0.0:
                    scored[doc_id] = value
        elif postings <= _EXHAUSTIVE_LIMIT:
            for doc_id, key_terms, body_terms, length in self._fetch(namespace, _any_of(query)):
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
    evaluates a boolean query (see :func:`_clauses`) that skips documents whose terms
    cannot add up to the threshold; SQLite then drops rows whose own upper bound,
    computed from the narrow docs_bounds index (which query terms the row may hold,
    whether they may repeat, its length) does not pass it. Only the remaining rows reach
    Python, which scores them exactly.
    """

    def __init__(
        self,
        conn: sqlite3.Connection,
        namespace: str | None,
        query: Sequence[_Term],
        limit: int,
        avgdl: float,
    ) -> None:
        self._conn = conn
        self._limit = limit
        self._avgdl = avgdl
        self._ordered = sorted(query, key=lambda t: (-t.idf, t.text))
        self._score = _make_scorer(self._ordered, avgdl)
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

    def _bound_rows_on(self, terms: Sequence[_Term]) -> None:
        """Make later fetches skip rows whose bound over ``terms`` does not pass theta.

        The bound of a row: for each of ``terms`` its signature may hold, idf times BM25's
        saturation factor g(f, length) = f * (k1 + 1) / (f + k1 * (1 - b + b * length /
        avgdl)) at the largest frequency f the signatures allow: 1 for a term that does
        not repeat, FREQUENT - 0.5 for one that is not frequent, else the limit k1 + 1.
        The slack is in "sat". Signature false positives only loosen the bound.
        """
        params = self._params
        params.update(
            sat=_ANY_BOUND,
            mid=FREQUENT - 0.5,
            n0=K1 * (1.0 - B),
            n1=K1 * B / self._avgdl,
        )
        bounds = []
        for i, term in enumerate(terms):
            lo, hi = _halves(_term_bits(term.text))
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
            self._take(self._fetch(_any_of(rare), 0, -1))
        if not active:
            return
        self._bound_rows_on(active)
        # Seeds, for a first threshold: documents holding all (then the two rarest) of the
        # remaining terms, which usually score best, then documents holding any one of
        # them. A seed known to match few documents takes those with the highest bounds;
        # sorting a large one would cost more than it saves, so it takes the first ones.
        # Terms found in over half the documents weigh almost nothing (idf 1e-6) and only
        # make seeds slower, unless nothing else is left.
        useful = [t for t in active if t.idf > _IDF_FLOOR] or active
        n = len(useful)
        seeds = [_all_of(useful[:width]) for width in sorted({n, 2}, reverse=True) if width > 1]
        for i, expr in enumerate(seeds + [_quoted(t.text) for t in useful]):
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
            clauses = _clauses(active, self._theta())
            if not clauses:
                return
            expr = " OR ".join(f"({_clause_expr(active, c)})" for c in clauses)
            rows = self._fetch(expr, after, rows_wanted)
            self._take(rows)
            if len(rows) < rows_wanted:
                return
            after = rows[-1][0]
            rows_wanted = min(rows_wanted * 2, _CHUNK_ROWS)
