"""Deterministic embeddings for tests: the test server's ``POST /v1/embeddings`` and an
in-process embedder.

:func:`hashed_vector` gives every word a fixed slot and sign (from its SHA-256) and adds
them up, L2-normalised: texts that share words get close vectors, the same text always
gets the same vector, and no model is needed. :func:`embeddings_answer` is the whole
answer of :class:`~.server.OpenAITestServer` to one request, in OpenAI's shape.
:class:`CountingEmbedder` is an :class:`~supercontext_lab.sources.memory.embedder.Embedder`
of hashed vectors whose words are first folded by a table of synonyms, so that meaning
can beat words ("automobile" is "car"), and which counts what it is asked.
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Mapping, Sequence
from typing import Any

__all__ = ["DEFAULT_DIMENSIONS", "CountingEmbedder", "embeddings_answer", "hashed_vector"]

DEFAULT_DIMENSIONS = 64
_MAX_DIMENSIONS = 4096
_WORD = re.compile(r"\w+")


def hashed_vector(text: str, dimensions: int = DEFAULT_DIMENSIONS) -> list[float]:
    """The hashed bag of words of ``text`` in ``dimensions`` numbers, L2-normalised
    (all zeros for a text without words)."""
    vector = [0.0] * dimensions
    for word in _WORD.findall(text.lower()):
        digest = hashlib.sha256(word.encode("utf-8")).digest()
        slot = int.from_bytes(digest[:4], "big") % dimensions
        vector[slot] += 1.0 if digest[4] & 1 else -1.0
    norm = math.sqrt(sum(value * value for value in vector))
    return [value / norm for value in vector] if norm else vector


class CountingEmbedder:
    """Hashed bags of words, each word first folded by ``same`` (a synonym to the word it
    means), counting the texts it is asked to embed (see the module docstring)."""

    def __init__(
        self, same: Mapping[str, str] | None = None, *, identity: str = "counting:1"
    ) -> None:
        self.identity = identity
        self.dimension = DEFAULT_DIMENSIONS
        self.same = dict(same or {})
        self.calls: list[list[str]] = []

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        self.calls.append(list(texts))
        folded = [" ".join(self.same.get(w, w) for w in _WORD.findall(t.lower())) for t in texts]
        return [hashed_vector(text, self.dimension) for text in folded]

    @property
    def texts(self) -> int:
        """How many texts it embedded."""
        return sum(len(call) for call in self.calls)


def _error(status: int, message: str) -> tuple[int, dict[str, Any]]:
    return status, {"error": {"message": message, "type": "invalid_request_error", "code": status}}


def embeddings_answer(body: Any, default_model: str) -> tuple[int, dict[str, Any]]:
    """The status and JSON answer to an embeddings request ``body`` (parsed JSON): one
    hashed vector per ``input`` text (a string or a list of strings), ``dimensions``
    numbers long when the request says so; 400 for anything else."""
    if not isinstance(body, dict):
        return _error(400, "The request body must be a JSON object.")
    texts = body.get("input")
    if isinstance(texts, str):
        texts = [texts]
    if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
        return _error(400, "'input' must be a string or a non-empty list of strings.")
    dimensions = body.get("dimensions", DEFAULT_DIMENSIONS)
    if isinstance(dimensions, bool) or not isinstance(dimensions, int):
        return _error(400, "'dimensions' must be an integer.")
    if not 1 <= dimensions <= _MAX_DIMENSIONS:
        return _error(400, f"'dimensions' must be between 1 and {_MAX_DIMENSIONS}.")
    model = body.get("model")
    words = sum(len(_WORD.findall(text)) for text in texts)
    return 200, {
        "object": "list",
        "data": [
            {"object": "embedding", "index": index, "embedding": hashed_vector(text, dimensions)}
            for index, text in enumerate(texts)
        ],
        "model": model if isinstance(model, str) and model else default_model,
        "usage": {"prompt_tokens": words, "total_tokens": words},
    }
