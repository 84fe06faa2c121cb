"""Passages found by meaning: let in only where the words leave the request uncovered."""

from __future__ import annotations

from supercontext_lab.reading.meaning import MEANING_UNITS, MEANING_WINDOW, with_meaning
from supercontext_lab.reading.passages import Passage
from supercontext_lab.reading.relevance import coverage, request_terms

REQUEST = request_terms("When is the wiring check due for Flat 3?")


def _ranked(*texts: str) -> list[tuple[Passage, str]]:
    return [(Passage(text, 1.0, 0), f"note{i}") for i, text in enumerate(texts)]


def _texts(ranked: list[tuple[Passage, str]]) -> list[str]:
    return [passage.text for passage, _ in ranked]


WORDS = _ranked(
    "Flat 3: the boiler service is booked for 4 June.",
    "Flat 3 tenants asked about the check-in inventory.",
    "The gas safety record for Flat 7 was renewed in May.",
)
EICR = "EICR certificates: Flat 3 — expires: 12 Aug 2026"


def test_the_words_here_leave_the_request_uncovered() -> None:
    # Flat 3 but no wiring, nothing due: two of four key terms.
    assert not coverage(REQUEST, _texts(WORDS)).enough


def test_an_uncovered_request_lets_the_unit_found_by_meaning_in_near_the_top() -> None:
    fused = with_meaning(WORDS, [(EICR, "certificates")], REQUEST)
    # Its first rank ties the words' first; the tie keeps the words' passage first.
    assert _texts(fused) == [WORDS[0][0].text, EICR, WORDS[1][0].text, WORDS[2][0].text]
    assert fused[1] == (Passage(EICR, 0.0, 0), "certificates")


def test_a_unit_inside_a_passage_found_by_words_lifts_that_passage() -> None:
    unit = "The gas safety record for Flat 7 was renewed in May."
    fused = with_meaning(WORDS, [(unit, "other")], REQUEST)
    assert _texts(fused)[0] == unit
    assert fused[0][1] == "note2"  # still cited as the words found it
    assert len(fused) == len(WORDS)


def test_a_covered_request_keeps_the_words_ranking_as_it_is() -> None:
    covered = _ranked("The wiring check for Flat 3 is due on 12 August.", *_texts(WORDS))
    assert with_meaning(covered, [(EICR, "certificates")], REQUEST) == covered


def test_no_units_by_meaning_change_nothing() -> None:
    assert with_meaning(WORDS, [], REQUEST) == WORDS
    assert with_meaning([], [], REQUEST) == []


def test_only_the_first_units_by_meaning_are_fused() -> None:
    units = [(f"Unit number {i} about something else.", f"u{i}") for i in range(12)]
    fused = with_meaning([], units, REQUEST)
    assert _texts(fused) == [text for text, _ in units[:MEANING_UNITS]]


def test_the_gate_reads_only_the_best_passages_by_words() -> None:
    # The answer by words ranked below the window does not keep meaning out.
    filler = _ranked(*(f"Flat 3 note number {i}." for i in range(MEANING_WINDOW)))
    late = [*filler, (Passage("The wiring check for Flat 3 is due on 12 Aug.", 1.0, 0), "late")]
    fused = with_meaning(late, [(EICR, "certificates")], REQUEST)
    assert EICR in _texts(fused)
