"""LongMemEval's scores: an answer-bearing turn is quoted by one of its units, whole."""

from __future__ import annotations

from supercontext_lab.eval.longmemeval_scores import _quotes_a_turn


def test_a_turn_is_quoted_by_one_of_its_units_whole() -> None:
    turn = "We moved on a Sunday. It took five hours in all, with two trips.\n- Van hired"
    assert _quotes_a_turn([turn], "- user said: It took five hours in all, with two trips.")
    # Part of a unit, or a unit under four words, is no quote of the turn.
    assert not _quotes_a_turn([turn], "It took five hours (transcript: s-move)")
    assert not _quotes_a_turn([turn], "- Van hired (transcript: s-move)")
    assert _quotes_a_turn([], "anything") is None
