"""What semantic recall needs of an embedding model: the :class:`Embedder` protocol.

The memory tree ranks documents by meaning as well as by words when it is given an
embedder (see :mod:`.semantic`). An embedder is anything with these three members; the
lab's own are in :mod:`supercontext_lab.models.embeddings` (an OpenAI-compatible
``/v1/embeddings`` endpoint) and :mod:`supercontext_lab.models.minilm` (all-MiniLM-L6-v2
run on this machine). The protocol lives here, with the reader that uses it, so that the
memory tree depends on no model and a model on no memory tree: they meet in the tools.

What an embedder returns is not trusted: :func:`checked_vectors` holds every answer to
the shape the caller asked for (one finite vector per text, all of one dimension, within
:data:`MAX_DIMENSION`) before anything is stored or ranked.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

from ...errors import ModelError

__all__ = ["MAX_DIMENSION", "MAX_QUERY_CHARS", "MEANING_FLOOR", "Embedder", "checked_vectors"]

MAX_DIMENSION = 8192
"""The longest vector the lab accepts (OpenAI's largest model gives 3,072 numbers)."""
MAX_QUERY_CHARS = 2000
"""A query is embedded up to this many characters (MiniLM reads 256 word pieces)."""
MEANING_FLOOR = 0.3
"""The least cosine at which a unit found by meaning is handed to the scout: under it,
all-MiniLM-L6-v2 finds a note's unit unrelated to a request (measured on the unseen
workspaces, docs/performance.md)."""


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors whose dot products (once normalised) say how alike the
    texts are in meaning."""

    @property
    def identity(self) -> str:
        """A stable string naming everything that decides the vectors (the model, its
        weights, its settings): stored vectors are reused only under the same identity."""
        ...

    @property
    def dimension(self) -> int | None:
        """The length of every vector, or ``None`` while it is not known yet (an endpoint
        whose model says it with its first answer)."""
        ...

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        """One vector per text, in order. Raises a
        :class:`~supercontext_lab.errors.SupercontextError` when it cannot."""
        ...


def checked_vectors(
    vectors: object, count: int, dimension: int | None, who: str
) -> list[list[float]]:
    """``vectors`` when it is ``count`` vectors of finite numbers, all of one length
    (``dimension`` when known) no longer than :data:`MAX_DIMENSION`; otherwise a
    :class:`~supercontext_lab.errors.ModelError` naming ``who`` answered."""
    if not isinstance(vectors, list) or len(vectors) != count:
        got = len(vectors) if isinstance(vectors, list) else type(vectors).__name__
        raise ModelError(f"{who} returned {got} vectors for {count} texts.")
    size = dimension
    for vector in vectors:
        if not isinstance(vector, list) or not vector:
            raise ModelError(f"{who} returned a vector that is not a list of numbers.")
        if size is None:
            size = len(vector)
        if len(vector) != size or size > MAX_DIMENSION:
            raise ModelError(
                f"{who} returned a vector of {len(vector)} numbers where {size} were "
                f"expected (at most {MAX_DIMENSION})."
            )
        for value in vector:
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise ModelError(f"{who} returned a vector holding {type(value).__name__}.")
            if not math.isfinite(value):
                raise ModelError(f"{who} returned a vector holding {value!r}.")
    return vectors
