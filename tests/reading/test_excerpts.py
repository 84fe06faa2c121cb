"""Excerpts: a long text cut to the passages that answer a request, never mid-sentence."""

from __future__ import annotations

from supercontext_lab.reading.excerpts import (
    PASSAGE_GAP,
    Excerpt,
    cut_marker,
    excerpt,
    size_text,
)
from supercontext_lab.reading.facts import note_sentences
from supercontext_lab.reading.relevance import request_terms

ANSWER = "The grant renewal budget is capped at 250k EUR; travel stays under 8 percent of it."
FILLER = (
    "The weekly lab meeting covered freezer inventory and pipette calibration. "
    "Everyone agreed to keep the shared calendar for the microscope up to date. "
)


def _minutes(paragraphs: int, answer_at: int) -> str:
    parts = [f"Meeting {i}: {FILLER}" for i in range(paragraphs)]
    parts.insert(answer_at, ANSWER)
    return "\n\n".join(parts)


REQUEST = request_terms("What is the grant renewal budget cap?")


def test_a_text_that_fits_is_whole_and_unmarked() -> None:
    kept = excerpt("A short note.", REQUEST, 100)
    assert kept == Excerpt("A short note.")
    assert kept.joined == "A short note."


def test_the_answer_deep_in_a_long_text_is_kept_and_the_cut_said() -> None:
    text = _minutes(3_000, 2_000)  # the answer about 300 KB in
    kept = excerpt(text, REQUEST, 2_000)
    assert ANSWER in kept.text
    assert len(kept.joined) <= 2_000
    assert kept.marker.startswith("[cut: ")
    assert kept.marker.endswith(" passages kept]")
    assert kept.joined.endswith(kept.marker)
    assert text.index(ANSWER) > 2_000  # cutting at the limit would have lost it


def test_no_passage_is_cut_inside_a_sentence() -> None:
    text = _minutes(500, 250)
    kept = excerpt(text, request_terms("When was the pipette calibration meeting?"), 3_000)
    sentences = set(note_sentences(text))
    pieces = [p for p in kept.text.split(PASSAGE_GAP) if p]
    assert pieces
    for piece in pieces:
        for sentence in note_sentences(piece):
            assert sentence in sentences, sentence


def test_the_kept_passages_keep_the_texts_order() -> None:
    text = "\n\n".join(
        [
            "The budget cap for the grant renewal was first set at 200k EUR.",
            *(f"Meeting {i}: {FILLER}" for i in range(200)),
            ANSWER,
        ]
    )
    kept = excerpt(text, REQUEST, 600)
    assert kept.text.index("200k EUR") < kept.text.index("250k EUR")


def test_a_text_on_nothing_asked_keeps_its_opening_units() -> None:
    text = _minutes(400, 0).replace(ANSWER, "The first line of the minutes.")
    kept = excerpt(text, request_terms("Which sourdough starter do I feed?"), 800)
    assert kept.text.startswith("The first line of the minutes.")
    assert kept.marker
    assert len(kept.joined) <= 800


def test_a_room_smaller_than_the_marker_keeps_the_marker_alone() -> None:
    kept = excerpt(_minutes(50, 10), REQUEST, 10)
    assert kept.text == ""
    assert kept.joined == kept.marker


def test_the_marker_says_the_size_and_the_count() -> None:
    assert cut_marker(1_600_000, 12, 4_000) == "[cut: 1.6 MB text, 12 of 4,000 passages kept]"
    assert size_text(930) == "930 characters"
    assert size_text(12_345) == "12 KB"
    assert size_text(2_000_000) == "2.0 MB"
