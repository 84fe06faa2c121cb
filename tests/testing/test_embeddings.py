"""The test server's embeddings: a deterministic hashed bag of words, and its answers."""

from __future__ import annotations

import math

import pytest

from supercontext_lab.testing.embeddings import (
    DEFAULT_DIMENSIONS,
    embeddings_answer,
    hashed_vector,
)


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


def test_vectors_are_normalised_deterministic_and_closer_for_shared_words() -> None:
    budget = hashed_vector("the grant budget is capped")
    assert hashed_vector("The grant budget is capped.") == budget
    assert math.isclose(math.fsum(x * x for x in budget), 1.0)
    assert len(budget) == DEFAULT_DIMENSIONS
    assert _cosine(budget, hashed_vector("grant budget")) > _cosine(
        budget, hashed_vector("feed the sourdough starter")
    )
    assert hashed_vector("...", 8) == [0.0] * 8


def test_an_answer_has_one_item_per_text_in_order() -> None:
    status, answer = embeddings_answer({"model": "m", "input": ["a b", "c"]}, "default")
    assert status == 200 and answer["model"] == "m"
    assert [item["index"] for item in answer["data"]] == [0, 1]
    assert answer["data"][1]["embedding"] == hashed_vector("c")
    assert answer["usage"] == {"prompt_tokens": 3, "total_tokens": 3}


@pytest.mark.parametrize(
    "body",
    [
        [1, 2],
        {"input": []},
        {"input": ["ok", 3]},
        {"input": "x", "dimensions": "8"},
        {"input": "x", "dimensions": 0},
        {"input": "x", "dimensions": True},
    ],
)
def test_a_malformed_request_is_a_400(body: object) -> None:
    status, answer = embeddings_answer(body, "default")
    assert status == 400 and answer["error"]["code"] == 400
