"""Any query text is safe, rankings are exactly SQLite's BM25, front matter never raises."""

from __future__ import annotations

import math
import random
import sqlite3
from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from supercontext_lab.reading.words import analyze, unique_terms
from supercontext_lab.sources.frontmatter import parse_front_matter, parse_list
from supercontext_lab.sources.memory import MAX_RECALL_LIMIT, MemoryHit, MemoryTree

# No example database: tests write nothing into the repository.
SETTINGS = settings(
    deadline=None,
    database=None,
    max_examples=150,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)

VOCABULARY = [f"v{i}" for i in range(400)] + ["deadline", "café", "kernel", "budget", "AND", "OR"]
NAMESPACES = ["global", "notes", "skill-a"]


def _documents() -> list[tuple[str, str, str]]:
    rng = random.Random(29)
    weights = [1.0 / (rank + 1) for rank in range(len(VOCABULARY))]
    docs = []
    for i in range(1200):
        words = rng.choices(VOCABULARY, weights, k=rng.randint(0, 30))
        docs.append((NAMESPACES[i % 7 % 3], f"doc {rng.choice(VOCABULARY)} {i}", " ".join(words)))
    return docs


DOCS = _documents()
ANALYSED = [(ns, key, analyze(key), analyze(content)) for ns, key, content in DOCS]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryTree]:
    with MemoryTree(tmp_path_factory.mktemp("props")) as opened:
        opened.add_many({"namespace": ns, "key": k, "content": c} for ns, k, c in DOCS)
        yield opened


def brute_force(namespace: str, query: str) -> dict[tuple[str, str], float]:
    """BM25 as SQLite FTS5 computes it (k1 1.2, b 0.75, key 0.5, content 1.0), for every doc."""
    analysed = ANALYSED
    n_docs = len(analysed)
    avgdl = sum(len(k) + len(b) for _, _, k, b in analysed) / n_docs
    terms = unique_terms(query)[:64]
    df = Counter(t for _, _, k, b in analysed for t in set(k) | set(b) if t in terms)
    scores = {}
    for ns, key, k, b in analysed:
        if namespace not in ("*", ns):
            continue
        norm = 1.2 * (1 - 0.75 + 0.75 * (len(k) + len(b)) / avgdl)
        score = 0.0
        for t in terms:
            freq = 1.0 * b.count(t) + 0.5 * k.count(t)
            if freq:
                idf = math.log((n_docs - df[t] + 0.5) / (df[t] + 0.5))
                score += (idf if idf > 0 else 1e-6) * freq * 2.2 / (freq + norm)
        if score:
            scores[(ns, key)] = score
    return scores


query_text = st.one_of(
    st.text(),
    st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=10).map(" ".join),
    st.lists(
        st.one_of(
            st.sampled_from(VOCABULARY), st.sampled_from(['"', "*", "(", ":", "-", "^", "🙂"])
        ),
        max_size=12,
    ).map("".join),
)


@SETTINGS
@given(
    namespace=st.sampled_from(["*", *NAMESPACES, "missing"]),
    query=query_text,
    limit=st.integers(min_value=1, max_value=20),
)
def test_recall_never_raises_and_is_sorted(
    tree: MemoryTree, namespace: str, query: str, limit: int
) -> None:
    hits = tree.recall(namespace, query, limit=limit)
    assert len(hits) <= min(limit, MAX_RECALL_LIMIT)
    scores = [hit.score for hit in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(score > 0 for score in scores)
    assert all(namespace in ("*", hit.namespace) for hit in hits)


@settings(SETTINGS, max_examples=60)
@given(
    namespace=st.sampled_from(["*", *NAMESPACES]),
    words=st.lists(st.sampled_from(VOCABULARY), min_size=1, max_size=9),
)
def test_recall_is_the_exact_bm25_top_k(tree: MemoryTree, namespace: str, words: list[str]) -> None:
    query = " ".join(words)
    expected = brute_force(namespace, query)
    hits = tree.recall(namespace, query, limit=8)
    best = sorted(expected.values(), reverse=True)[:8]
    assert [h.score for h in hits] == pytest.approx(best, rel=1e-9)
    for hit in hits:
        assert expected[(hit.namespace, hit.key)] == pytest.approx(hit.score, rel=1e-9)


@settings(SETTINGS, max_examples=300)
@given(st.text())
def test_front_matter_never_raises_on_any_text(text: str) -> None:
    parsed = parse_front_matter(text)
    assert isinstance(parsed.body, str)
    for key, value in parsed.fields.items():
        assert key == key.lower()
        assert isinstance(parse_list(value), list)
    if not parsed.present:
        assert parsed.body == text.removeprefix("\ufeff")


field_line = st.one_of(
    st.builds(
        "{}: {}".format,
        st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_.\-]{0,8}", fullmatch=True),
        st.text(alphabet=st.characters(blacklist_categories=["Cs"]), max_size=20),
    ),
    st.builds("  - {}".format, st.text(max_size=10)),
    st.text(max_size=30),
)


@settings(SETTINGS, max_examples=300)
@given(
    lines=st.lists(field_line, max_size=8),
    body=st.text(max_size=40),
    eol=st.sampled_from(["\n", "\r\n"]),
)
def test_front_matter_blocks_never_raise(lines: list[str], body: str, eol: str) -> None:
    text = eol.join(["---", *lines, "---", body])
    parsed = parse_front_matter(text)
    for value in parsed.fields.values():
        assert isinstance(parse_list(value), list)
    if parsed.present and not any(line.rstrip() in ("---", "...") for line in lines):
        assert parsed.body == body


# -- ranking is FTS5's BM25 ---------------------------------------------------------


def _corpus(seed: int, size: int) -> list[tuple[str, str, str]]:
    """Documents drawn from a Zipf-like vocabulary, so common terms have large postings."""
    rng = random.Random(seed)
    vocabulary = [f"w{i}" for i in range(1500)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    docs = []
    for i in range(size):
        ns = "global" if i % 10 < 7 else ("big" if i % 10 < 9 else f"small{i % 3}")
        words = rng.choices(vocabulary, weights, k=rng.randint(1, 40))
        docs.append((ns, f"{rng.choice(vocabulary)}-{i}", " ".join(words)))
    return docs


def _reference_index(docs: list[tuple[str, str, str]]) -> sqlite3.Connection:
    """The same analysed terms in a plain FTS5 table, for SQLite's own ``bm25()``."""
    conn = sqlite3.connect(":memory:")
    conn.execute(
        "CREATE VIRTUAL TABLE ref USING fts5(k, b, ns UNINDEXED, key UNINDEXED, tokenize='ascii')"
    )
    conn.executemany(
        "INSERT INTO ref(rowid, k, b, ns, key) VALUES (?, ?, ?, ?, ?)",
        [
            (i + 1, " ".join(analyze(key)), " ".join(analyze(content)), ns, key)
            for i, (ns, key, content) in enumerate(docs)
        ],
    )
    return conn


def _reference(
    conn: sqlite3.Connection, namespace: str, query: str
) -> list[tuple[str, str, float]]:
    """Every match ranked by ``bm25(ref, 0.5, 1.0)``: key weighted 0.5, content 1.0."""
    terms = unique_terms(query)
    if not terms:
        return []
    expr = " OR ".join(f'"{t}"' for t in terms)
    sql = "SELECT ns, key, -bm25(ref, 0.5, 1.0) FROM ref WHERE ref MATCH ?"
    params: list[str] = [expr]
    if namespace != "*":
        sql += " AND ns = ?"
        params.append(namespace)
    return conn.execute(sql + " ORDER BY bm25(ref, 0.5, 1.0), rowid", params).fetchall()


def assert_same_ranking(
    hits: list[MemoryHit], reference: list[tuple[str, str, float]], limit: int
) -> None:
    expected = reference[: min(limit, MAX_RECALL_LIMIT)]
    assert len(hits) == len(expected)
    by_doc = {(ns, key): score for ns, key, score in reference}
    for hit, (_, _, score) in zip(hits, expected, strict=True):
        # Same score at every rank, and each hit's score is its own BM25 score.
        assert hit.score == pytest.approx(score, rel=1e-9)
        assert hit.score == pytest.approx(by_doc[(hit.namespace, hit.key)], rel=1e-9)


@pytest.fixture(scope="module")
def big_corpus(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[tuple[MemoryTree, sqlite3.Connection]]:
    docs = _corpus(seed=11, size=3000)
    tree = MemoryTree(tmp_path_factory.mktemp("bm25"))
    tree.add_many({"namespace": ns, "key": key, "content": content} for ns, key, content in docs)
    reference = _reference_index(docs)
    yield tree, reference
    reference.close()
    tree.close()


_QUERY_RNG = random.Random(5)
_QUERIES = [
    " ".join(f"w{int(_QUERY_RNG.paretovariate(0.6)) % 1500}" for _ in range(n))
    for n in (1, 2, 3, 3, 3, 3, 3, 4, 5, 8, 12)
    for _ in range(3)
] + ["w0", "w0 w1", "w0 w1 w2", "w1499", "w0 w1499", "W3, w3! w3?", "nothing here", "w7 w7-0"]


@pytest.mark.parametrize("namespace", ["*", "global", "big", "small1", "absent"])
@pytest.mark.parametrize("query", _QUERIES)
def test_ranking_matches_sqlite_bm25(
    big_corpus: tuple[MemoryTree, sqlite3.Connection], namespace: str, query: str
) -> None:
    tree, reference = big_corpus
    hits = tree.recall(namespace, query, limit=8)
    assert_same_ranking(hits, _reference(reference, namespace, query), 8)
