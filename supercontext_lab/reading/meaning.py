"""Passages found by meaning, weighed against the passages found by words.

With semantic recall on, ``memory_recall`` hands the scout, beside its hits, the units of
notes closest in meaning to the request (``by_meaning``). Words and meaning miss
different facts: where a request is worded as its notes are, the lexical ranking
(:func:`~supercontext_lab.reading.passages.ranked_passages`) answers it and a ranking by
meaning only crowds it; where it is worded differently ("the wiring check" for an EICR),
no shared word finds the answer and only meaning does. So meaning is let in only where
the words leave the request uncovered: when the best :data:`MEANING_WINDOW` passages
by words do not cover it (:func:`~supercontext_lab.reading.relevance.coverage`, the rule
``has_enough_context`` is written by), the first :data:`MEANING_UNITS` units by meaning
are merged with the passages by words by reciprocal rank fusion, k = :data:`MEANING_K`;
otherwise the words' ranking stands as it is.

A unit already inside a passage found by words adds its rank to that passage; any other
is a passage of its own. A small k lets the first few of either ranking lead, which is
what a bundle of seven facts quotes; only a few units by meaning are fused, as each one
the words did not find is a bullet the request may not need (more of them added no fact
on the unseen, public and structures sets and lowered bullet precision,
docs/performance.md).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TypeVar

from .passages import Passage
from .relevance import RequestTerms, coverage

__all__ = ["MEANING_K", "MEANING_UNITS", "MEANING_WINDOW", "with_meaning"]

_K = TypeVar("_K")

MEANING_K = 4
"""Reciprocal rank fusion's constant here: small, so the first ranks of each list lead."""
MEANING_WINDOW = 7
"""How many of the best passages by words must cover the request for meaning to stay
out: a bundle's facts from memory."""
MEANING_UNITS = 3
"""How many of the units by meaning, best first, are fused."""


def with_meaning(
    ranked: Sequence[tuple[Passage, _K]],
    meaning: Sequence[tuple[str, _K]],
    request: RequestTerms,
) -> list[tuple[Passage, _K]]:
    """``ranked`` (passages by words, best first) unchanged when its best
    :data:`MEANING_WINDOW` cover ``request`` or ``meaning`` is empty; otherwise fused by
    rank with the first :data:`MEANING_UNITS` of ``meaning`` (units by meaning, best
    first, each with the key that cites it), best first (see the module docstring)."""
    if not meaning or coverage(request, [p.text for p, _ in ranked[:MEANING_WINDOW]]).enough:
        return list(ranked)
    items: list[tuple[Passage, _K]] = list(ranked)
    scores = [1.0 / (MEANING_K + rank) for rank in range(1, len(items) + 1)]
    for rank, (text, key) in enumerate(meaning[:MEANING_UNITS], start=1):
        at = next((i for i, (passage, _) in enumerate(items) if text in passage.text), None)
        if at is None:
            at = len(items)
            items.append((Passage(text, 0.0, 0), key))
            scores.append(0.0)
        scores[at] += 1.0 / (MEANING_K + rank)
    # Ties keep the earlier item: the words' ranking, then meaning's.
    order = sorted(range(len(items)), key=lambda i: -scores[i])
    return [items[i] for i in order]
