"""Settling: where a thread corrects itself, its last word scores above its proposals.

A turn or a message that says it settles what came before ("OK, final: 90k instead",
"Correction to the message below.", see :mod:`.units`) scores :data:`SETTLE_BONUS` above
the best unit on the request it follows, in the thread's time (a quoted message is older
than the reply above it). Used by :func:`~.passages.passages`.
"""

from __future__ import annotations

from collections.abc import Sequence

from .facts import NoteSentence
from .relevance import names_in
from .words import words

__all__ = ["SETTLE_BONUS", "SETTLE_REACH", "SHORT_TURN_WORDS", "settled"]

SETTLE_BONUS = 0.3
"""Added to a unit that says it settles or corrects what came before, over the best unit
on the request it follows: the thread's last word beats its proposals."""

SETTLE_REACH = 4
"""How many units back a settling unit looks for what it settles."""

SHORT_TURN_WORDS = 12
"""A turn of at most this many words is terse: a settling one can only be about what it
follows, and a quoted one comes with a neighbour (see
:func:`~.passages.turn_extent`)."""


def settled(
    units: Sequence[NoteSentence], scored: list[tuple[float, int]]
) -> list[tuple[float, int]]:
    """The scores with a thread's corrections put first: a unit that says it settles what
    came before ("OK, final: 90k instead", "Correction: …") scores above the units on the
    request that precede it within :data:`SETTLE_REACH`.

    "Precede" is in the thread's time: a quoted message is older than the reply above it
    (a pasted thread often has the newest message on top). The settling unit must itself
    be on the request, or be a terse reply (at most :data:`SHORT_TURN_WORDS` words) that
    can only be about what it follows ("OK, final: 90k instead" after the budget's
    proposals), or name what a unit on the request before it names (a place, a firm, an
    identifier: :func:`~.relevance.names_in`), which it then settles alone. Only turns and messages settle (see :mod:`.units`): a log's "settled the
    bank deadline" settles nothing about the next entry's hearing."""
    if not any(unit.settles for unit in units):
        return scored
    best = {index: score for score, index in scored}
    timeline = sorted(range(len(units)), key=lambda i: (-units[i].depth, i))
    for at, index in enumerate(timeline):
        unit = units[index]
        if not unit.settles:
            continue
        # A terse turn can only be about what it follows; a short sentence of a longer
        # message ("Sorry for the back and forth.") is not the message's last word.
        terse = len(words(unit.text)) <= SHORT_TURN_WORDS and not _a_piece(units, index)
        # What it settles came before it in the thread, not earlier in its own message.
        earlier = [
            i
            for i in timeline[max(0, at - SETTLE_REACH - _own_sentences(units, index)) : at]
            if i in best and not units[i].beside(unit)
        ]
        if index not in best and not terse:
            # Not on the request in words, yet about it where it names what a unit on the
            # request proposed: "ok final: Ostro Kitchen, 7.30pm" after "Ostro Kitchen can
            # do their mezzanine" for "where is the speakers' dinner".
            named = names_in(unit.own)
            earlier = [i for i in earlier if not named.isdisjoint(names_in(units[i].own))]
            if not earlier:
                continue
        before = [best[i] for i in earlier]
        if before or index in best:
            own = best.get(index, 0.0)
            # Above what it settles; among the sentences of one settling message, each
            # keeps its own order (the one with the new date before "Sorry for the back
            # and forth").
            best[index] = max([*before, own]) + SETTLE_BONUS + SETTLE_BONUS * own
    return [(score, index) for index, score in best.items()]


def _own_sentences(units: Sequence[NoteSentence], index: int) -> int:
    """How many units before ``units[index]`` are sentences of its own message."""
    count = 0
    while index - count > 0 and units[index - count - 1].beside(units[index]):
        count += 1
    return count


def _a_piece(units: Sequence[NoteSentence], index: int) -> bool:
    """Whether ``units[index]`` is one sentence of a longer message or turn: a unit beside
    it comes from the same lines."""
    return any(
        0 <= other < len(units) and units[other].beside(units[index])
        for other in (index - 1, index + 1)
    )
