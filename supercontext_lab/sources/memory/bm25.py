"""BM25 as FTS5 computes it, and the pieces the ranker prunes with.

The constants (k1, b, the column weights), the score of one document from its stored
terms (:func:`make_scorer`), the per-document Bloom signatures the index keeps
(:func:`signature`), and the FTS5 boolean expressions (:func:`threshold_clauses`) that
leave out documents whose terms cannot reach a threshold. The search is in ``rank.py``.
"""

from __future__ import annotations

import functools
import hashlib
import zlib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

__all__ = [
    "ANY_BOUND",
    "BODY_WEIGHT",
    "FREQUENT",
    "IDF_FLOOR",
    "K1",
    "KEY_WEIGHT",
    "REPEAT_MARK",
    "B",
    "Term",
    "all_of",
    "any_of",
    "clause_expr",
    "halves",
    "make_scorer",
    "namespace_hash",
    "quoted",
    "signature",
    "term_bits",
    "threshold_clauses",
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
IDF_FLOOR = 1e-6
# Upper bounds on BM25's saturation factor f*(k1+1) / (f + k1*(1 - b + b*D/avgdl)): it
# grows with the frequency f and shrinks with the length D, so with f <= 1 it is at most
# its value at f = 1, D = 0; with any f it stays below k1 + 1. A hair of slack keeps the
# bounds above scores whatever the rounding.
_ONCE_BOUND = _SATURATION / (1.0 + K1 * (1.0 - B)) * (1.0 + 1e-9)
ANY_BOUND = _SATURATION * (1.0 + 1e-9)

#: Queries with more terms than this use clauses without the repeated-term level.
_LEVELLED_TERMS = 6
#: More clauses than this and the search falls back to MaxScore's "any essential term".
_MAX_CLAUSES = 32
#: A conjunction of (term index, level) literals. Levels: _ONCE, "the term occurs", counted
#: as if at most once (documents where it repeats also match _REPEATED); _REPEATED, "the
#: term occurs more than once"; _PRESENT, "the term occurs", counted at any frequency.
_Clause = tuple[tuple[int, int], ...]
_ONCE, _REPEATED, _PRESENT = 1, 2, 3


_SIGNATURE_BITS = 128


# Bits of each term, cached: pure, and looked up for every term of every document indexed.
_BITS_CACHE_LIMIT = 200_000
_bits_cache: dict[str, int] = {}


def term_bits(term: str) -> int:
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


def halves(bits: int) -> tuple[int, int]:
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
        bits |= cache.get(term) or term_bits(term)
    return halves(bits)


@functools.lru_cache(maxsize=1024)
def namespace_hash(namespace: str) -> int:
    """A signed 64-bit hash of a namespace, kept in the narrow docs_bounds index."""
    digest = hashlib.blake2b(namespace.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


@dataclass(frozen=True)
class Term:
    text: str
    df: int
    idf: float

    def bound(self, level: int) -> float:
        """The most this term adds to a score at ``level`` (see _Clause)."""
        return self.idf * (_ONCE_BOUND if level == _ONCE else ANY_BOUND)


def quoted(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def any_of(terms: Sequence[Term]) -> str:
    return " OR ".join(quoted(t.text) for t in terms)


def all_of(terms: Sequence[Term]) -> str:
    return " AND ".join(quoted(t.text) for t in terms)


def clause_expr(ordered: Sequence[Term], clause: _Clause) -> str:
    return " AND ".join(
        quoted(REPEAT_MARK + ordered[i].text if level == _REPEATED else ordered[i].text)
        for i, level in clause
    )


def threshold_clauses(ordered: Sequence[Term], theta: float) -> list[_Clause]:
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


def make_scorer(terms: Sequence[Term], avgdl: float) -> Callable[[str, str, int], float]:
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
