"""The memory tree: documents added, replaced and searched with BM25; repairs; threads."""

from __future__ import annotations

import hashlib
import random
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from supercontext_lab.errors import MemoryIndexError
from supercontext_lab.reading.words import unique_terms
from supercontext_lab.sources.memory import (
    MAX_RECALL_LIMIT,
    MemoryHit,
    MemoryTree,
    SyncReport,
)

from .support import INDEX, keys, write


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[MemoryTree]:
    with MemoryTree(tmp_path / "ws") as opened:
        yield opened


# -- adding, replacing, searching ------------------------------------------------------


def test_add_recall_and_replace(tree: MemoryTree) -> None:
    tree.add("global", "lunch", "The team eats lunch at noon near the harbour.")
    tree.add("global", "deadline", "The grant report is due on Friday.")
    hits = tree.recall("global", "when is the grant report due")
    assert keys(hits)[0] == "deadline"
    assert hits[0] == MemoryHit(
        namespace="global",
        key="deadline",
        content="The grant report is due on Friday.",
        category="note",
        score=hits[0].score,
        created=None,
    )
    tree.add("global", "deadline", "The grant report moved to Monday.", "decision")
    assert tree.count() == 2
    hits = tree.recall("global", "grant report")
    assert [(h.key, h.content, h.category) for h in hits] == [
        ("deadline", "The grant report moved to Monday.", "decision")
    ]
    assert tree.recall("global", "Friday") == []


def test_namespaces_and_star(tree: MemoryTree) -> None:
    tree.add("global", "a", "kernel density of seed dispersal")
    tree.add("skill-maps", "b", "dispersal kernel maps for the atlas")
    tree.add("zeta", "c", "nothing relevant here")
    assert tree.namespaces() == ["global", "skill-maps", "zeta"]
    assert [tree.count(ns) for ns in ("global", "skill-maps", "zeta", "absent")] == [1, 1, 1, 0]
    assert tree.count() == 3
    assert keys(tree.recall("global", "dispersal kernel")) == ["a"]
    assert keys(tree.recall("skill-maps", "dispersal kernel")) == ["b"]
    assert sorted(keys(tree.recall("*", "dispersal kernel"))) == ["a", "b"]
    assert tree.recall("absent", "dispersal") == []
    assert tree.delete("zeta", "c") is True
    assert tree.delete("zeta", "c") is False
    assert tree.namespaces() == ["global", "skill-maps"]


@pytest.mark.parametrize(
    ("category", "expected"),
    [("note", "note"), ("decision", "decision"), ("Profile Fact", "Profile Fact")],
)
def test_categories(tree: MemoryTree, category: str, expected: str) -> None:
    tree.add("global", "k", "the budget is forty thousand euros", category)
    assert [h.category for h in tree.recall("global", "budget")] == [expected]


def test_scores_are_positive_and_best_first(tree: MemoryTree) -> None:
    tree.add("global", "both", "grant budget renewal")
    tree.add("global", "budget-only", "budget planning for the lab retreat and the kitchen")
    tree.add("global", "twice", "budget budget")
    for i in range(6):
        tree.add("global", f"filler-{i}", f"unrelated note number {i} about field work")
    hits = tree.recall("global", "grant budget")
    assert keys(hits)[0] == "both"
    assert set(keys(hits)) == {"both", "budget-only", "twice"}
    scores = [h.score for h in hits]
    assert scores == sorted(scores, reverse=True)
    assert all(s > 0 for s in scores)
    # A repeated term in a short document outranks one mention in a long one.
    assert keys(hits).index("twice") < keys(hits).index("budget-only")


def test_limit_is_capped_and_validated(tree: MemoryTree) -> None:
    tree.add_many(
        {"namespace": "global", "key": f"k{i}", "content": "shared word"} for i in range(20)
    )
    assert len(tree.recall("global", "shared", limit=100)) == MAX_RECALL_LIMIT == 8
    assert len(tree.recall("global", "shared")) == 5
    assert len(tree.recall("global", "shared", limit=1)) == 1
    for bad in (0, -3):
        with pytest.raises(ValueError, match="limit must be at least 1"):
            tree.recall("global", "shared", limit=bad)
    for wrong in (True, 2.0, "3"):
        with pytest.raises(ValueError, match="limit must be an integer"):
            tree.recall("global", "shared", limit=wrong)  # type: ignore[arg-type]


def test_canary_fact_is_found_by_a_related_query(tree: MemoryTree) -> None:
    rng = random.Random(3)
    words = "data model field sample plot site season survey count team report".split()
    tree.add_many(
        {"namespace": "global", "key": f"filler-{i}", "content": " ".join(rng.choices(words, k=12))}
        for i in range(300)
    )
    tree.add("global", "canary", "Project Bluebird's launch code is 4471; keep it private.")
    hits = tree.recall("*", "What was the launch code for the bluebird project?")
    assert hits[0].key == "canary"
    assert "4471" in hits[0].content


@pytest.mark.parametrize(
    ("stored", "query"),
    [
        ("The deadline is Friday.", "deadlines"),
        ("Two deadlines this week.", "deadline"),
        ("Database queries are slow.", "query"),
        ("Café opening hours", "cafe"),
        ("naïve résumé parser", "NAIVE resume"),
        ("ÉCOLE normale", "école"),
        ("ﬁle formats", "file"),
        ("ZÜRICH office", "zurich"),
        ("snake_case_name variable", "case"),
        ("हिन्दी notes", "हिन्दी"),
    ],
)
def test_stemming_case_and_diacritics(tree: MemoryTree, stored: str, query: str) -> None:
    tree.add("global", "doc", stored)
    tree.add("global", "other", "something else entirely")
    assert keys(tree.recall("global", query)) == ["doc"]


@pytest.mark.parametrize(
    "query",
    [
        '"',
        "*",
        "-x",
        "a:b",
        "NEAR(a b)",
        "a AND",
        "OR",
        "^x",
        "((",
        "",
        "🙂",
        "   ",
        "\x00",
        "key:deadline",
        '"unbalanced',
        "x*",
        "NOT",
        "AND OR NOT",
        "col:",
        "{a b}",
        "a + b",
    ],
)
def test_hostile_queries_never_raise(tree: MemoryTree, query: str) -> None:
    tree.add("global", "a", "a x b OR AND NOT near deadline col")
    hits = tree.recall("*", query)
    assert all(isinstance(h, MemoryHit) for h in hits)
    if not unique_terms(query):
        assert hits == []


@pytest.mark.parametrize(
    ("query", "expected"),
    [("NEAR(a b)", ["a"]), ("a AND", ["a"]), ("key:deadline", ["a"]), ("-x", ["a"])],
)
def test_operators_are_plain_words(tree: MemoryTree, query: str, expected: list[str]) -> None:
    tree.add("global", "a", "a x b near deadline key")
    tree.add("global", "z", "nothing")
    assert keys(tree.recall("global", query)) == expected


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda t: t.add("", "k", "c"), "namespace must not be empty"),
        (lambda t: t.add("*", "k", "c"), "reserved"),
        (lambda t: t.add("ns", " ", "c"), "key must not be empty"),
        (lambda t: t.add("ns", "k", 3), "content must be a string"),
        (lambda t: t.add("ns", "k", "c", ""), "category must not be empty"),
        (lambda t: t.recall("", "q"), "namespace must not be empty"),
        (lambda t: t.recall("ns", None), "query must be a string"),
        (lambda t: t.delete("*", "k"), "reserved"),
        (lambda t: t.count("*"), "reserved"),
    ],
)
def test_bad_arguments(tree: MemoryTree, call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call(tree)  # type: ignore[operator]


def test_add_many_is_one_transaction(tree: MemoryTree) -> None:
    records = [
        {"namespace": "global", "key": "a", "content": "alpha", "category": "fact"},
        {"namespace": "global", "key": "b", "content": "beta", "created": "2024-05-01"},
        {"namespace": "global", "key": "a", "content": "alpha replaced"},
    ]
    assert tree.add_many(iter(records)) == 3
    assert tree.count() == 2
    assert [(h.content, h.category) for h in tree.recall("global", "alpha")] == [
        ("alpha replaced", "note")
    ]
    assert [h.created for h in tree.recall("global", "beta")] == ["2024-05-01"]
    assert tree.add_many([]) == 0


@pytest.mark.parametrize(
    ("records", "message"),
    [
        ([{"namespace": "g", "key": "k"}], r"Record 0 has no 'content'"),
        (
            [{"namespace": "g", "key": "k", "content": "c"}, {"key": "k", "content": "c"}],
            r"Record 1 has no 'namespace'",
        ),
        ([{"namespace": "g", "content": "c"}], r"Record 0 has no 'key'"),
        ([["g", "k", "c"]], r"Record 0 is a list, not a mapping"),
        (
            [{"namespace": "g", "key": "k", "content": None}],
            r"Record 0: 'content' must be a string",
        ),
        (
            [{"namespace": "*", "key": "k", "content": "c"}],
            r"Record 0: 'namespace' '\*' is reserved",
        ),
        (
            [{"namespace": "g", "key": "k", "content": "c", "category": 1}],
            r"Record 0: 'category' must be a string",
        ),
    ],
)
def test_add_many_rejects_bad_records_and_writes_nothing(
    tree: MemoryTree, records: list[object], message: str
) -> None:
    with pytest.raises(ValueError, match=message):
        tree.add_many(records)  # type: ignore[arg-type]
    assert tree.count() == 0


# -- recovery ------------------------------------------------------------------------


def test_damage_past_the_header_is_repaired_when_found(tmp_path: Path) -> None:
    write(tmp_path, "global/kept.md", "the kernel is Gaussian")
    with MemoryTree(tmp_path) as tree:
        tree.add_many(
            {"namespace": "global", "key": f"api-{i}", "content": f"kernel filler {i}"}
            for i in range(300)
        )
    index = tmp_path / INDEX
    data = bytearray(index.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    # Page 1 (the schema) and page 2 (meta) stay intact, so opening sees a good version.
    data[2 * page :] = b"\xa5" * (len(data) - 2 * page)
    index.write_bytes(bytes(data))
    with MemoryTree(tmp_path) as tree:
        assert tree.rebuilt
        assert tree.last_sync == SyncReport(added=1)
        assert keys(tree.recall("*", "kernel")) == ["kept"]
        assert tree.count() == 1


def test_closed_tree_raises(tmp_path: Path) -> None:
    tree = MemoryTree(tmp_path)
    tree.close()
    tree.close()
    with pytest.raises(MemoryIndexError, match="closed"):
        tree.recall("*", "x")


def test_folder_is_created_and_only_the_index_is_written(tmp_path: Path) -> None:
    root = tmp_path / "new" / "workspace"
    write(root, "global/a.md", "alpha")
    (root / "PROFILE.md").write_text("profile")

    def snapshot() -> dict[str, str]:
        found = {}
        for path in sorted(root.rglob("*")):
            rel = path.relative_to(root)
            if rel.parts[0] == ".supercontext":
                continue
            stat = path.stat()
            digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "dir"
            found[str(rel)] = f"{digest}:{stat.st_mtime_ns}"
        return found

    before = snapshot()
    with MemoryTree(root) as tree:
        tree.add("global", "b", "beta")
        tree.sync()
        tree.recall("*", "alpha beta")
        tree.delete("global", "b")
    assert snapshot() == before
    assert {p.name for p in (root / ".supercontext").iterdir()} <= {
        "memory.sqlite3",
        "memory.sqlite3-wal",
        "memory.sqlite3-shm",
    }
    with MemoryTree(tmp_path / "fresh" / "folder") as fresh:
        assert fresh.count() == 0
    assert (tmp_path / "fresh" / "folder" / INDEX).is_file()


# -- concurrency ------------------------------------------------------------------------


def test_recall_from_worker_threads(tree: MemoryTree) -> None:
    tree.add_many(
        {"namespace": "global", "key": f"k{i}", "content": f"topic{i % 7} shared words"}
        for i in range(200)
    )
    expected = {q: keys(tree.recall("*", q, 8)) for q in ("topic1", "topic2 shared", "words")}
    errors: list[BaseException] = []

    def work() -> None:
        try:
            for _ in range(20):
                for q, want in expected.items():
                    assert keys(tree.recall("*", q, 8)) == want
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_second_tree_sees_writes_of_the_first(tmp_path: Path) -> None:
    with MemoryTree(tmp_path) as first, MemoryTree(tmp_path) as second:
        first.add("global", "a", "alpha")
        assert keys(second.recall("*", "alpha")) == ["a"]
        second.add("global", "b", "alpha beta")
        assert sorted(keys(first.recall("*", "alpha"))) == ["a", "b"]
        first.delete("global", "a")
        assert keys(second.recall("*", "alpha")) == ["b"]


# -- erasing --------------------------------------------------------------------------


def test_erase_leaves_no_byte_of_the_documents_in_the_files(tmp_path: Path) -> None:
    """Erased documents' text is in neither the index file nor its log, even with another
    connection holding the index open."""
    root = tmp_path / "ws"
    with MemoryTree(root) as tree, MemoryTree(root) as other:
        tree.add_many(
            [
                {"namespace": "chat", "key": "a", "content": "The password is Qx7kestrel."},
                {"namespace": "chat", "key": "b", "content": "The freezer holds soil cores."},
            ]
        )
        assert keys(other.recall("chat", "password")) == ["a"]
        assert tree.erase("chat", ["a", "gone"]) == 1
        assert other.recall("chat", "password") == []
        files = [p for p in (root / ".supercontext").iterdir() if p.is_file()]
        assert any(p.name.endswith("-wal") for p in files)
        for path in files:
            assert b"qx7kestrel" not in path.read_bytes().lower(), path
        assert keys(other.recall("chat", "freezer")) == ["b"]


def test_add_many_removes_documents_in_the_same_transaction(tree: MemoryTree) -> None:
    tree.add_many([{"namespace": "chat", "key": f"k{i}", "content": f"turn {i}"} for i in range(3)])
    written = tree.add_many(
        [{"namespace": "chat", "key": "k0", "content": "turn zero again"}],
        remove=[("chat", "k1"), ("chat", "k2")],
    )
    assert written == 1 and tree.count("chat") == 1
    assert tree.add_many([], remove=[("chat", "k0")]) == 0
    assert tree.count("chat") == 0


def test_a_failed_add_many_removes_nothing(tree: MemoryTree) -> None:
    tree.add("chat", "k1", "turn one")
    with pytest.raises(ValueError, match="key"):
        tree.add_many([{"namespace": "chat", "key": "", "content": "x"}], remove=[("chat", "k1")])
    assert tree.count("chat") == 1
