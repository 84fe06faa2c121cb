"""What an embedder's answer must be before the memory uses it."""

from __future__ import annotations

import pytest

from supercontext_lab.errors import ModelError
from supercontext_lab.sources.memory.embedder import MAX_DIMENSION, checked_vectors


def test_well_formed_vectors_pass() -> None:
    vectors = [[0.5, 1], [0.0, -2.5]]
    assert checked_vectors(vectors, 2, None, "E") is vectors
    assert checked_vectors(vectors, 2, 2, "E") is vectors


@pytest.mark.parametrize(
    ("vectors", "count", "dimension", "message"),
    [
        ([[1.0]], 2, None, "E returned 1 vectors for 2 texts"),
        ({"a": 1}, 1, None, "E returned dict vectors"),
        ([[]], 1, None, "not a list of numbers"),
        ([[1.0], "x"], 2, None, "not a list of numbers"),
        ([[1.0, 2.0]], 1, 3, "2 numbers where 3"),
        ([[1.0], [1.0, 2.0]], 2, None, "2 numbers where 1"),
        ([[True]], 1, None, "holding bool"),
        ([[float("inf")]], 1, None, "inf"),
        ([[0.0] * (MAX_DIMENSION + 1)], 1, None, f"at most {MAX_DIMENSION}"),
    ],
)
def test_malformed_vectors_are_refused(
    vectors: object, count: int, dimension: int | None, message: str
) -> None:
    with pytest.raises(ModelError, match=message):
        checked_vectors(vectors, count, dimension, "E")
