"""The vector cache ``.supercontext/vectors.sqlite3``: sealed rows, a cache started afresh
when it is unusable, and never a link out of the workspace."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import numpy as np
import pytest

from supercontext_lab.errors import MemoryIndexError
from supercontext_lab.sources.memory.vectors import MAX_UNITS, VECTORS_FILE, open_vectors

KEY = b"k" * 32


def _vectors(rows: int, dim: int = 4) -> np.ndarray:
    return np.arange(rows * dim, dtype=np.float32).reshape(rows, dim)


def test_vectors_round_trip_per_embedder(tmp_path: Path) -> None:
    store = open_vectors(tmp_path, KEY)
    store.put("e1", {"d1": _vectors(2), "d2": _vectors(1)})
    got = store.get("e1", ["d1", "d2", "d3"])
    assert sorted(got) == ["d1", "d2"]
    np.testing.assert_array_equal(got["d1"], _vectors(2))
    assert store.get("e2", ["d1"]) == {}
    assert store.count("e1") == 2
    assert (tmp_path / ".supercontext" / VECTORS_FILE).is_file()


def test_a_document_keeps_at_most_max_units(tmp_path: Path) -> None:
    store = open_vectors(tmp_path, KEY)
    store.put("e", {"d": _vectors(MAX_UNITS + 5)})
    assert store.get("e", ["d"])["d"].shape == (MAX_UNITS, 4)


def test_rows_of_another_key_or_edited_by_hand_are_missing(tmp_path: Path) -> None:
    open_vectors(tmp_path, KEY).put("e", {"d": _vectors(1), "f": _vectors(1)})
    assert open_vectors(tmp_path, b"x" * 32).get("e", ["d"]) == {}
    path = tmp_path / ".supercontext" / VECTORS_FILE
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE vectors SET data = ? WHERE digest = 'd'", (b"\0" * 16,))
    assert sorted(open_vectors(tmp_path, KEY).get("e", ["d", "f"])) == ["f"]


def test_prune_keeps_only_live_digests_of_that_embedder(tmp_path: Path) -> None:
    store = open_vectors(tmp_path, KEY)
    store.put("e", {"a": _vectors(1), "b": _vectors(1)})
    store.put("other", {"a": _vectors(1)})
    assert store.prune("e", {"a"}) == 1
    assert sorted(store.get("e", ["a", "b"])) == ["a"]
    assert store.count("other") == 1


@pytest.mark.parametrize("content", [b"not a database at all", b""])
def test_an_unusable_file_is_started_afresh(tmp_path: Path, content: bytes) -> None:
    folder = tmp_path / ".supercontext"
    folder.mkdir()
    (folder / VECTORS_FILE).write_bytes(content * 200)
    store = open_vectors(tmp_path, KEY)
    store.put("e", {"d": _vectors(1)})
    assert sorted(store.get("e", ["d"])) == ["d"]


def test_a_file_of_another_layout_is_started_afresh(tmp_path: Path) -> None:
    folder = tmp_path / ".supercontext"
    folder.mkdir()
    with sqlite3.connect(folder / VECTORS_FILE) as conn:
        conn.execute("CREATE TABLE vectors(x TEXT)")
    store = open_vectors(tmp_path, KEY)
    store.put("e", {"d": _vectors(1)})
    assert store.count("e") == 1


def test_links_are_refused(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    workspace = tmp_path / "ws"
    (workspace / ".supercontext").mkdir(parents=True)
    (workspace / ".supercontext" / VECTORS_FILE).symlink_to(elsewhere / "v.sqlite3")
    with pytest.raises(MemoryIndexError, match="symbolic link"):
        open_vectors(workspace, KEY)
    assert not (elsewhere / "v.sqlite3").exists()
