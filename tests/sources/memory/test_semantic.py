"""Semantic recall: units, reciprocal rank fusion, the memory tree's fused search and its
search of units by meaning.

The embedder here is a counting stand-in (a hashed bag of words, plus a table of
synonyms so that meaning can beat words): what is checked is the lab's part, that only
new or changed documents are embedded, in bounded batches, that the query is embedded
once per search, that vectors live under ``.supercontext/`` and that the default recall
is BM25 alone and unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from supercontext_lab.errors import MemoryIndexError, ModelError
from supercontext_lab.sources.memory import MemoryTree, semantic
from supercontext_lab.sources.memory import tree as tree_module
from supercontext_lab.sources.memory.embedder import Embedder
from supercontext_lab.sources.memory.semantic import (
    EMBED_BATCH,
    MAX_EMBED_PER_SEARCH,
    RRF_K,
    embedded_texts,
    fuse,
    text_digest,
    units,
)
from supercontext_lab.sources.memory.vectors import MAX_UNITS, VECTORS_FILE
from supercontext_lab.testing import build_workspace, embeddings

from .support import keys

# Words the stand-in treats as one meaning, as an embedding model would.
_SAME = {"automobile": "car", "vehicle": "car", "physician": "doctor"}


class CountingEmbedder(embeddings.CountingEmbedder):
    """The shared stand-in, with this module's synonyms."""

    def __init__(self, identity: str = "counting:1") -> None:
        super().__init__(_SAME, identity=identity)


NOTES = {
    "memory/global/garage.md": "The car goes to the garage on Friday for new brakes.\n",
    "memory/global/clinic.md": "The doctor moved the check-up to 9 March at the clinic.\n",
    "memory/global/bread.md": "Sourdough: feed the starter at 8am and 8pm.\n",
    "memory/work/kernel.md": "We settled on the Matern kernel for the survey model.\n",
}


@pytest.fixture
def tree(tmp_path: Path) -> MemoryTree:
    return MemoryTree(build_workspace(tmp_path / "ws", NOTES))


def test_the_stand_in_is_an_embedder() -> None:
    assert isinstance(CountingEmbedder(), Embedder)


def test_the_embedded_texts_are_the_units_with_their_heading_and_bounded() -> None:
    assert embedded_texts("") == [] and embedded_texts("  \n ") == []
    note = (
        "# Lab\n\nThe freezer is at -80.\n\n## Orders\n\n- Pipette tips, 3 boxes\n"
        "- Gloves (M)\n\n| item | due |\n| --- | --- |\n| CO2 | Friday |\n"
    )
    # A row is read with its header, and every unit under its section's heading.
    assert embedded_texts(note) == [
        "Lab: The freezer is at -80.",
        "Orders: Pipette tips, 3 boxes",
        "Orders: Gloves (M)",
        "Orders: CO2 — due: Friday",
    ]
    assert len(embedded_texts(note)) == len(units(note)) == 4
    assert all(
        unit.text in text for unit, text in zip(units(note), embedded_texts(note), strict=True)
    )
    long = "\n\n".join(f"Paragraph number {i} says something." for i in range(MAX_UNITS + 3))
    assert len(embedded_texts(long)) == MAX_UNITS
    assert embedded_texts(long)[1] == "Paragraph number 1 says something."


def test_text_digest_is_stable_and_tells_texts_apart() -> None:
    assert text_digest("a note") == text_digest("a note")
    assert text_digest("a note") != text_digest("a note.")


def test_fuse_sums_reciprocal_ranks() -> None:
    words = [(1, 9.0), (2, 5.0), (3, 1.0)]
    meaning = [(3, 0.9), (1, 0.8), (4, 0.1)]
    fused = dict(fuse(words, meaning))
    assert fused[1] == pytest.approx(1 / (RRF_K + 1) + 1 / (RRF_K + 2))
    assert fused[3] == pytest.approx(1 / (RRF_K + 3) + 1 / (RRF_K + 1))
    assert fused[2] == pytest.approx(1 / (RRF_K + 2))
    assert [doc for doc, _ in fuse(words, meaning)] == [1, 3, 2, 4]


def test_fuse_breaks_ties_by_the_better_rank_then_the_first_ranking() -> None:
    assert [doc for doc, _ in fuse([(7, 1.0)], [(8, 1.0)])] == [7, 8]
    assert [doc for doc, _ in fuse([(5, 1.0), (7, 0.5)], [(8, 1.0)])] == [5, 8, 7]
    assert fuse() == [] and fuse([], []) == []


def test_default_recall_is_bm25_alone_and_writes_no_vectors(tree: MemoryTree) -> None:
    hits = tree.recall("*", "automobile brakes")
    assert keys(hits) == ["garage"]
    assert not (tree.path / ".supercontext" / VECTORS_FILE).exists()


def test_fused_recall_finds_by_meaning_what_words_rank_lower(tree: MemoryTree) -> None:
    embedder = CountingEmbedder()
    words_only = tree.recall("global", "physician appointment")
    assert "clinic" not in keys(words_only)
    fused = tree.recall("global", "physician appointment", embedder=embedder)
    assert keys(fused)[0] == "clinic"
    assert all(hit.score > 0 for hit in fused)
    assert (tree.path / ".supercontext" / VECTORS_FILE).is_file()


def test_a_namespace_search_returns_only_that_namespace(tree: MemoryTree) -> None:
    hits = tree.recall("work", "car kernel", embedder=CountingEmbedder())
    assert {hit.namespace for hit in hits} == {"work"}


def test_documents_are_embedded_once_and_the_query_once_per_search(tree: MemoryTree) -> None:
    embedder = CountingEmbedder()
    tree.recall("*", "car", embedder=embedder)
    assert embedder.texts == len(NOTES) + 1
    tree.recall("*", "doctor", embedder=embedder)
    tree.recall("global", "starter", embedder=embedder)
    assert embedder.texts == len(NOTES) + 3
    assert embedder.calls[-1] == ["starter"]


@pytest.mark.parametrize("new_process", [False, True])
def test_vectors_survive_the_tree_and_a_new_one_reuses_them(
    tree: MemoryTree, new_process: bool
) -> None:
    tree.recall("*", "car", embedder=CountingEmbedder())
    tree.close()
    if new_process:  # nothing in memory: the vectors come from vectors.sqlite3
        semantic._SHARED.clear()
    again = CountingEmbedder()
    with MemoryTree(tree.path) as reopened:
        reopened.recall("*", "car", embedder=again)
    assert again.calls == [["car"]]


def test_only_the_documents_that_changed_are_read_again(
    tree: MemoryTree, monkeypatch: pytest.MonkeyPatch
) -> None:
    embedder = CountingEmbedder()
    tree.recall("*", "car", embedder=embedder)
    read: list[list[int]] = []
    contents = tree_module.contents_of
    monkeypatch.setattr(
        tree_module, "contents_of", lambda conn, ids: read.append(list(ids)) or contents(conn, ids)
    )
    tree.recall("*", "doctor", embedder=embedder)
    assert read == []  # nothing changed: not even the rows' fingerprint is read
    tree.add("global", "clinic", "The physician is away in April.")
    tree.recall("*", "doctor", embedder=embedder)
    assert [len(ids) for ids in read] == [1]


def test_only_a_changed_or_new_document_is_embedded_again(tree: MemoryTree) -> None:
    embedder = CountingEmbedder()
    tree.recall("*", "car", embedder=embedder)
    (tree.path / "memory/global/bread.md").write_text("Rye bread: bake at 230 degrees.\n")
    tree.add("global", "api-note", "The physician prefers mornings.")
    tree.sync()
    embedder.calls.clear()
    tree.recall("*", "car", embedder=embedder)
    embedded = sorted(text for call in embedder.calls[:-1] for text in call)
    assert embedded == ["Rye bread: bake at 230 degrees.", "The physician prefers mornings."]


def test_another_embedder_gets_its_own_vectors(tree: MemoryTree) -> None:
    tree.recall("*", "car", embedder=CountingEmbedder("counting:1"))
    other = CountingEmbedder("counting:2")
    tree.recall("*", "car", embedder=other)
    assert other.texts == len(NOTES) + 1


def test_batches_and_each_search_are_bounded(tmp_path: Path) -> None:
    count = MAX_EMBED_PER_SEARCH + 88
    notes = {f"memory/global/n{i}.md": f"note number {i} about item {i}\n" for i in range(count)}
    tree = MemoryTree(build_workspace(tmp_path / "big", notes))
    embedder = CountingEmbedder()
    tree.recall("*", "item", embedder=embedder)
    *documents, query = embedder.calls
    assert query == ["item"]
    assert all(len(call) <= EMBED_BATCH for call in documents)
    assert sum(len(call) for call in documents) == MAX_EMBED_PER_SEARCH
    report = tree.embed_all(embedder)
    assert (report.documents, report.texts, report.pending) == (88, 88, 0)
    assert tree.embed_all(embedder).documents == 0


def test_a_note_of_more_units_than_a_batch_is_sent_over_several_calls(tmp_path: Path) -> None:
    long = "\n\n".join(f"Item {i} of the long list." for i in range(EMBED_BATCH * 2 + 3))
    notes = {"memory/global/long.md": long, "memory/global/short.md": "A car is red.\n"}
    tree = MemoryTree(build_workspace(tmp_path / "ws", notes))
    embedder = CountingEmbedder()
    assert keys(tree.recall("*", "automobile", embedder=embedder))[0] == "short"
    *documents, query = embedder.calls
    assert query == ["automobile"]
    # The notes in their order; the long note's 35 units over three calls.
    assert [len(call) for call in documents] == [EMBED_BATCH, EMBED_BATCH, 3, 1]
    # The last unit of the 35, from the last call, is found where it is.
    hit = tree.recall_by_meaning("*", "item 34", limit=1, embedder=embedder)[0]
    assert hit.passage == "Item 34 of the long list."


def test_a_long_note_scores_by_its_best_unit(tmp_path: Path) -> None:
    filler = " ".join(f"Filler sentence {i}." for i in range(3))
    notes = {
        "memory/global/long.md": f"{filler} The automobile inspection is due in May.\n",
        "memory/global/other.md": "Inspection of the hives is due in May.\n",
    }
    tree = MemoryTree(build_workspace(tmp_path / "ws", notes))
    embedder = CountingEmbedder()
    tree.recall("*", "car inspection", embedder=embedder)
    assert len(embedder.calls[0]) == 5  # the long note's four units and the other note
    # No note holds the word "car": only the long note's last unit means it.
    assert tree.recall("*", "car") == []
    assert keys(tree.recall("*", "car", embedder=embedder))[0] == "long"


def test_embedder_failures_propagate_and_stored_batches_stay(tree: MemoryTree) -> None:
    class Failing(CountingEmbedder):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            if len(self.calls) == 1:
                raise ModelError("the embeddings server is down")
            return super().embed(texts)

    with pytest.raises(ModelError, match="down"):
        tree.recall("*", "car", embedder=Failing())
    working = CountingEmbedder()  # the same identity: the documents' vectors were kept
    assert keys(tree.recall("*", "car", embedder=working))[0] == "garage"
    assert working.calls == [["car"]]


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        ([[0.1, 0.2]], "1 vectors for"),
        ([[0.1], [0.2, 0.3]] * 2, "2 numbers where 1"),
        ([[float("nan")]] * 4, "nan"),
        ([["x"]] * 4, "str"),
        ("not a list", "str vectors"),
    ],
)
def test_vectors_of_the_wrong_shape_are_refused(
    tree: MemoryTree, answer: object, message: str
) -> None:
    class Wrong(CountingEmbedder):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            return answer  # type: ignore[return-value]

    wrong = Wrong()
    wrong.dimension = None  # type: ignore[assignment]
    with pytest.raises(ModelError, match=message):
        tree.recall("*", "car", embedder=wrong)


def test_a_query_without_words_embeds_nothing(tree: MemoryTree) -> None:
    embedder = CountingEmbedder()
    assert tree.recall("*", "?! ...", embedder=embedder) == []
    assert embedder.calls == []


def test_closing_the_tree_while_another_thread_searches(tree: MemoryTree) -> None:
    class Slow(CountingEmbedder):
        def embed(self, texts: Sequence[str]) -> list[list[float]]:
            started.set()
            release.wait(5)
            return super().embed(texts)

    started, release = threading.Event(), threading.Event()
    errors: list[BaseException] = []

    def search() -> None:
        try:
            tree.recall("*", "car", embedder=Slow())
        except (MemoryIndexError, ModelError) as exc:
            errors.append(exc)

    worker = threading.Thread(target=search)
    worker.start()
    assert started.wait(5)
    closer = threading.Thread(target=tree.close)
    closer.start()
    release.set()
    closer.join(5)
    worker.join(5)
    assert not closer.is_alive() and not worker.is_alive()
    assert all(isinstance(error, MemoryIndexError) for error in errors)


# -- units by meaning ----------------------------------------------------------------

GARAGE = (
    "# Garage\n\nThe tyres are fine.\n\n"
    "The automobile goes in on Friday for new brakes.\n\n"
    "| part | price |\n| --- | --- |\n| brake pads | £80 |\n"
)


def test_recall_by_meaning_returns_the_units_closest_in_meaning(tmp_path: Path) -> None:
    notes = {**NOTES, "memory/global/garage.md": GARAGE}
    tree = MemoryTree(build_workspace(tmp_path / "ws", notes))
    embedder = CountingEmbedder()
    hits = tree.recall_by_meaning("*", "when does the car go in", limit=3, embedder=embedder)
    # "car" is in no note: the unit that means it comes first, quoted as the unit alone,
    # on its document (checked, whole), scored by its cosine.
    assert hits[0].key == "garage"
    assert hits[0].passage == "The automobile goes in on Friday for new brakes."
    assert hits[0].content == GARAGE.strip()
    assert len(hits) == 3
    assert [hit.score for hit in hits] == sorted((hit.score for hit in hits), reverse=True)
    assert all(hit.passage in hit.content for hit in hits)


def test_recall_by_meaning_keeps_to_its_namespace_limit_and_floor(tree: MemoryTree) -> None:
    embedder = CountingEmbedder()
    hits = tree.recall_by_meaning("work", "the kernel of the model", embedder=embedder)
    assert [hit.namespace for hit in hits] == ["work"]
    assert len(tree.recall_by_meaning("*", "the car", limit=50, embedder=embedder)) == 4
    best = tree.recall_by_meaning("*", "the car", limit=1, embedder=embedder)[0]
    above = tree.recall_by_meaning("*", "the car", floor=best.score, embedder=embedder)
    assert [hit.passage for hit in above] == [best.passage]
    assert tree.recall_by_meaning("*", "the car", floor=1.01, embedder=embedder) == []
    assert tree.recall_by_meaning("*", "?!", embedder=embedder) == []
    with pytest.raises(ValueError, match="limit must be at least 1"):
        tree.recall_by_meaning("*", "car", limit=0, embedder=embedder)


def test_recall_by_meaning_leaves_out_a_note_changed_on_disk(tmp_path: Path) -> None:
    tree = MemoryTree(build_workspace(tmp_path / "ws", {"memory/global/garage.md": GARAGE}))
    embedder = CountingEmbedder()
    assert tree.recall_by_meaning("*", "car", embedder=embedder)
    (tree.path / "memory/global/garage.md").write_text("The bicycle needs a bell.\n")
    # The row no longer says what the file says: never quoted, and read again.
    assert all(
        "automobile" not in hit.passage
        for hit in tree.recall_by_meaning("*", "car", embedder=embedder)
    )
    assert [hit.passage for hit in tree.recall_by_meaning("*", "bicycle", embedder=embedder)] == [
        "The bicycle needs a bell."
    ]
