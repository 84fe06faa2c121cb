"""Passages: the sentences of a note that answer a request (SPEC §14).

A memory hit is a whole note, and notes can be long: minutes of a meeting, a
conversation written down turn by turn. Quoting a note's first lines answers only the
questions its first lines happen to answer. Every route therefore quotes a note by its
**passages**: the note is cut into whole sentences where every note is cut
(:func:`~supercontext_lab._facts.note_sentences`), each sentence is scored against the
request, and the best ones are quoted with their neighbour where that completes them.

A sentence's score is the share of the request's term weight it holds, where a term
weighs more the fewer of the note's sentences hold it (a term in every sentence does not
tell them apart), plus a bonus when it has the shape the request asks for
(:func:`~supercontext_lab._relevance.sentence_shapes`: a date for "when", a number for
"how many", a name for "who").

A request term that only the heading of a sentence's section holds counts at
:data:`HEADING_SHARE` of its weight: the items under "## Next steps" answer "what are the
next steps" though none of them says so.

A passage is one sentence, or two when one completes the other:

* the unit after is joined when it is a code block (the command the sentence explains),
  or when this one asks a question or ends in a colon (the answer, or the list, follows)
  and the next is not itself a question;
* else the sentence before is joined when this one is a code block, opens by referring
  back ("It was …", "They …", "That …", "Yes, …") or is too short to stand alone.

Linear in the note: every sentence is analysed once; scores are a pass over the terms.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ._facts import NoteSentence, note_sections
from ._relevance import RequestTerms, sentence_shapes
from ._words import keywords, stems, words

__all__ = ["HEADING_SHARE", "SHAPE_BONUS", "SHORT_NOTE_CHARS", "Passage", "passages"]

HEADING_SHARE = 0.5
"""How much a request term counts when only the heading of a sentence's section holds it:
the items under "## Next steps" answer "what are the next steps", at half weight."""

SHAPE_BONUS = 0.25
"""Added to a sentence's score when it holds the answer shape the request asks for."""

SHORT_NOTE_CHARS = 450
"""A memory note this short (its sentences joined) is quoted whole: about three sentences,
which is what most hand-written notes are."""

_MAX_SENTENCES = 4_000
"""Sentences of one note scored at most (a note is bounded when read; this bounds the
work on a pathological one)."""
_SHORT_WORDS = 5
_BACK_REFERENCES = frozenset(
    """
    it its it's they them their this that these those he she his her him there then also
    yes no yeah yep nope sure right exactly indeed both either which so but and or
    """.split()
)


@dataclass(frozen=True)
class Passage:
    """One passage of a note: its text (whole sentences), where it starts and its score."""

    text: str
    score: float
    """The request's weighted share it holds plus the shape bonus (0 when it holds none
    of the request's terms and only a neighbour made it)."""
    position: int
    """The index of its first sentence in the note."""


def _opens_back(sentence: str) -> bool:
    first = words(sentence[:40])
    return bool(first) and first[0] in _BACK_REFERENCES


def _asks_forward(sentence: str) -> bool:
    return sentence.rstrip().endswith(("?", ":"))


def passages(
    text: str,
    request: RequestTerms,
    *,
    limit: int = 2,
    min_score: float = 0.0,
    whole_below: int = 0,
) -> list[Passage]:
    """The best ``limit`` passages of ``text`` for ``request``, best first; a passage
    scores above ``min_score`` and holds at least one of the request's terms, in its
    sentences or its section's heading. A text whose sentences come to at most
    ``whole_below`` characters is one passage: a short note is quoted whole, as its
    sentences explain each other ("Fix: pin GDAL 3.8" after the sentence saying what
    failed)."""
    units = note_sections(text)[:_MAX_SENTENCES]
    if not units or not request.terms:
        return []
    terms = [stems(keywords(unit.text)) & request.terms for unit in units]
    headings: dict[str, set[str]] = {}
    for unit in units:
        if unit.heading not in headings:
            headings[unit.heading] = stems(keywords(unit.heading)) & request.terms
    frequency: dict[str, int] = {}
    for found in terms:
        for term in found:
            frequency[term] = frequency.get(term, 0) + 1
    count = len(units)
    weight = {term: math.log(1.0 + count / frequency.get(term, count)) for term in request.terms}
    total = sum(weight.values()) or 1.0
    scored: list[tuple[float, int]] = []
    for index, found in enumerate(terms):
        titled = headings[units[index].heading] - found
        if not found and not titled:
            continue
        score = (
            sum(weight[term] for term in found) + HEADING_SHARE * sum(weight[t] for t in titled)
        ) / total
        if request.shapes and request.shapes & sentence_shapes(units[index].text):
            score += SHAPE_BONUS
        if score > min_score:
            scored.append((score, index))
    scored.sort(key=lambda item: (-item[0], item[1]))
    if scored and sum(len(unit.text) + 1 for unit in units) <= whole_below + 1:
        return [Passage(" ".join(unit.text for unit in units), scored[0][0], 0)]
    chosen: list[Passage] = []
    used: set[int] = set()
    for score, index in scored:
        if len(chosen) >= limit:
            break
        if index in used:
            continue
        start, end = _extent(units, index, used)
        used.update(range(start, end + 1))
        chosen.append(Passage(" ".join(u.text for u in units[start : end + 1]), score, start))
    return chosen


def _extent(units: list[NoteSentence], index: int, used: set[int]) -> tuple[int, int]:
    """Where the passage around ``units[index]`` starts and ends (see the module
    docstring)."""
    unit = units[index]
    after = units[index + 1] if index + 1 < len(units) and index + 1 not in used else None
    before = units[index - 1] if index > 0 and index - 1 not in used else None
    if after is not None and (
        after.code or (_asks_forward(unit.text) and not _asks_forward(after.text))
    ):
        return index, index + 1
    if before is not None and (
        unit.code or _opens_back(unit.text) or len(words(unit.text)) <= _SHORT_WORDS
    ):
        return index - 1, index
    return index, index
