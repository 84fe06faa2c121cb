"""Passages: the sentences of a note that answer a request (SPEC §14).

A memory hit is a whole note, and notes can be long: minutes of a meeting, a
conversation written down turn by turn. Quoting a note's first lines answers only the
questions its first lines happen to answer. Every route therefore quotes a note by its
**passages**: the note is cut into units where every note is cut (the sentences, list
items, log lines, table rows with their header, code blocks, messages and turns of
:mod:`.document`, as :func:`~.facts.note_sections` gives them), each unit is scored
against the request, and the best ones are quoted with their neighbour where that
completes them.

A unit's score is the share of the request's term weight it holds, where a term weighs
more the fewer of the note's units hold it (a term in every unit does not tell them
apart), plus a bonus when it has the shape the request asks for
(:func:`~supercontext_lab.reading.relevance.sentence_shapes`: a date for "when", a number for
"how many", a name for "who"). Where a thread corrects itself, a turn or a message that
says it settles what came before ("OK, final: 90k instead"; not "No decision.") scores
:data:`SETTLE_BONUS` above the best unit on the request it follows in the thread's time.

A request term that only the headings above a unit hold (the note's title, its sections)
counts at :data:`HEADING_SHARE` of its weight: the items under "## Next steps" answer
"what are the next steps" though none of them says so. A heading lifts the units that
answer; it makes a unit that holds none of the request's terms an answer only when it
names what is asked: a short section heading (:data:`SECTION_WORDS` content words at most)
holding a request term, under headings holding two ("### Root cause" in "INC-2298:
checkout slowness" for "what caused the checkout slowness"). "Call log, March" is no
answer to every call below it, nor a heading stuffed with the words people ask.

A passage is one sentence, or two when one completes the other:

* the unit after is joined when it is a code block (the command the sentence explains),
  or when this one asks a question or ends in a colon (the answer, or the list, follows)
  and the next is not itself a question;
* else the sentence before is joined when this one is a code block, opens by referring
  back ("It was …", "They …", "That …", "Yes, …") or is too short to stand alone;
* and a sentence of a message or a turn without the shape asked for is joined by the
  nearest sentence of the same message with it: "Tuesday 17 February is confirmed.
  Denise can't join then but she'll sign off afterwards." for "when is the sign-off?".

The turns of a conversation follow the same rule one level up (:func:`turn_extent`): a
question or a short request is quoted with the answer after it, a "Yes, that one" with
what it answers.

Across notes (:func:`ranked_passages`), a passage is quoted only when it weighs at least
:data:`KEEP_SHARE` of the best one: a bullet earns its place by addressing the request. A
note found by following a reference a strong hit names ("RG-2304 … see to-do";
:mod:`.references`) weighs :data:`HOP_SHARE` of that hit and is quoted where it names it.

Linear in the note: every sentence is analysed once; scores are a pass over the terms.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

from .facts import NoteSentence, joined, note_sections
from .references import followed_notes, with_reference
from .relevance import RequestTerms, sentence_shapes
from .settling import SETTLE_BONUS, SETTLE_REACH, SHORT_TURN_WORDS, settled
from .words import keywords, stems, words

__all__ = [
    "FILE_WEIGHT",
    "HEADING_SHARE",
    "HOP_SHARE",
    "KEEP_SHARE",
    "PASSAGES_PER_FILE",
    "PASSAGES_PER_NOTE",
    "SECTION_WORDS",
    "SETTLE_BONUS",
    "SETTLE_REACH",
    "SHAPE_BONUS",
    "SHORT_NOTE_CHARS",
    "SHORT_TURN_CHARS",
    "SHORT_TURN_WORDS",
    "WEAK_HIT",
    "Passage",
    "Quotable",
    "passages",
    "ranked_passages",
    "turn_extent",
    "unit_passages",
]

_K = TypeVar("_K")

HEADING_SHARE = 0.5
"""How much a request term counts when only the heading of a sentence's section holds it:
the items under "## Next steps" answer "what are the next steps", at half weight."""

SHAPE_BONUS = 0.25
"""Added to a sentence's score when it holds the answer shape the request asks for."""

SHORT_NOTE_CHARS = 450
"""A memory note this short (its sentences joined) is quoted whole: about three sentences,
which is what most hand-written notes are."""

SHORT_TURN_CHARS = 700
"""A quoted turn of a past conversation this short (with the neighbour that completes it)
is quoted whole: a reply that lists ten venues answers "which was the last one" only as
a whole."""

_MAX_SENTENCES = 4_000
"""Sentences of one note scored at most (a note is bounded when read; this bounds the
work on a pathological one)."""
_SHORT_WORDS = 5
# A sentence this short that leads its message is what the next one is about.
_LEAD_WORDS = 8
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
    return unit_passages(
        note_sections(text)[:_MAX_SENTENCES],
        request,
        limit=limit,
        min_score=min_score,
        whole_below=whole_below,
    )


def unit_passages(
    units: Sequence[NoteSentence],
    request: RequestTerms,
    *,
    limit: int = 2,
    min_score: float = 0.0,
    whole_below: int = 0,
) -> list[Passage]:
    """:func:`passages` of a text already cut into ``units`` (:func:`~.facts.note_sections`;
    an excerpt of a megabyte note reads it in pieces and scores all their units as one
    text, so a term weighs the same wherever it is)."""
    if not units or not request.terms:
        return []
    terms = [stems(keywords(unit.text)) & request.terms for unit in units]
    # A request term the headings above a unit hold (the note's title and its sections)
    # counts for it at HEADING_SHARE.
    headings: dict[str, set[str]] = {}
    for unit in units:
        if unit.path not in headings:
            headings[unit.path] = stems(keywords(unit.path)) & request.terms
    named: dict[str, bool] = {}  # by heading path: each is judged once
    frequency: dict[str, int] = {}
    for found in terms:
        for term in found:
            frequency[term] = frequency.get(term, 0) + 1
    count = len(units)
    weight = {term: math.log(1.0 + count / frequency.get(term, count)) for term in request.terms}
    total = sum(weight.values()) or 1.0
    scored: list[tuple[float, int]] = []
    for index, found in enumerate(terms):
        titled = headings[units[index].path] - found
        if not found and not _names_section(units[index], request, named):
            # A heading lifts the units under it that answer; it makes a unit an answer by
            # itself only where it names what is asked (see _names_section): "Call log,
            # March" is no answer to every call below it, and a heading stuffed with the
            # words people ask would make anything one.
            continue
        score = (
            sum(weight[term] for term in found) + HEADING_SHARE * sum(weight[t] for t in titled)
        ) / total
        if request.shapes and request.shapes & _shapes(units[index]):
            score += SHAPE_BONUS
        if score > min_score:
            scored.append((score, index))
    scored = settled(units, scored)
    scored.sort(key=lambda item: (-item[0], item[1]))
    if scored and sum(len(unit.text) + 1 for unit in units) <= whole_below + 1:
        return [Passage(joined(units), scored[0][0], 0)]
    chosen: list[Passage] = []
    used: set[int] = set()
    for score, index in scored:
        if len(chosen) >= limit:
            break
        if index in used:
            continue
        start, end = _extent(units, index, used, request.shapes)
        used.update(range(start, end + 1))
        chosen.append(Passage(joined(units[start : end + 1]), score, start))
    return chosen


SECTION_WORDS = 3
"""The most content words a heading may have to name a section by itself."""


def _names_section(unit: NoteSentence, request: RequestTerms, known: dict[str, bool]) -> bool:
    """Whether the headings above ``unit`` say what the request asks, so that the unit
    answers it without repeating its words: "### Root cause" in a note titled "INC-2298:
    checkout slowness" for "What caused the checkout slowness?". The nearest heading is
    short (at most :data:`SECTION_WORDS` content words) and holds a request term, and the
    heading path holds two at least. ``known`` keeps the verdict of each heading path."""
    verdict = known.get(unit.path)
    if verdict is None:
        nearest = stems(keywords(unit.heading))
        verdict = known[unit.path] = (
            bool(unit.heading)
            and len(nearest) <= SECTION_WORDS
            and not nearest.isdisjoint(request.terms)
            and len(stems(keywords(unit.path)) & request.terms) >= 2
        )
    return verdict


def _extent(
    units: Sequence[NoteSentence], index: int, used: set[int], shapes: frozenset[str]
) -> tuple[int, int]:
    """Where the passage around ``units[index]`` starts and ends (see the module
    docstring); ``shapes``, the answer shapes the request asks for."""
    start, end = _neighbours(units, index, used)
    unit = units[index]
    if not shapes or unit.kind not in ("message", "turn"):
        return start, end
    if any(shapes & _shapes(units[i]) for i in range(start, end + 1)):
        return start, end
    for step in _SHAPE_STEPS:
        near = index + step
        if (
            0 <= near < len(units)
            and near not in used
            and units[near].beside(unit)
            and shapes & _shapes(units[near])
        ):
            return min(start, near), max(end, near)
    return start, end


def _shapes(unit: NoteSentence) -> frozenset[str]:
    """The answer shapes of what a unit says (a message's sender and date are not)."""
    return sentence_shapes(unit.own)


# The sentences of the same message looked at for the shape asked, nearest first.
_SHAPE_STEPS = (-1, 1, -2, 2)


def _neighbours(units: Sequence[NoteSentence], index: int, used: set[int]) -> tuple[int, int]:
    """The sentence and the neighbour that completes it (see the module docstring)."""
    unit = units[index]
    after = units[index + 1] if index + 1 < len(units) and index + 1 not in used else None
    before = units[index - 1] if index > 0 and index - 1 not in used else None
    if after is not None and (
        after.code or (_asks_forward(unit.text) and not _asks_forward(after.text))
    ):
        return index, index + 1
    if before is not None and (
        unit.code
        or _opens_back(unit.own)
        or len(words(unit.own)) <= _SHORT_WORDS
        # A short sentence that leads the same message or turn says what the next one is
        # about:
        # "Friday 13 March it is. The van will be with you between 8:00 and 10:00."
        or (
            before.kind in ("message", "turn")
            and before.beside(unit)
            and len(words(before.own)) <= _LEAD_WORDS
        )
    ):
        return index - 1, index
    return index, index


@dataclass(frozen=True)
class Quotable(Generic[_K]):
    """A text a bundle may quote: a memory hit (with its recall score) or a user file or
    facet read for every request (``score`` ``None``). ``key`` is what cites it."""

    text: str
    key: _K
    score: float | None = None
    name: str = ""
    """A memory hit's key (its file name), which the search matched too."""
    boost: float = 1.0
    """A weight a caller gives the hit (the offline scout's category of the request)."""
    whole_below: int = SHORT_NOTE_CHARS
    """A hit whose sentences come to at most this many characters is quoted whole
    (:data:`SHORT_TURN_CHARS` for the turns of a past conversation)."""
    via: str = ""
    """The reference a memory hit was found by following (:mod:`.references`), ``""`` for
    a hit of the request's own search: it is weighed as the hit that named it."""


WEAK_HIT = 0.35
"""A memory hit scoring under this share of the best hit's score is a side match and is
not quoted: its sentences would only push the strong notes' later passages out."""
FILE_WEIGHT = 0.55
"""How much a passage of a user file or facet weighs against a memory hit's (0.5–1.0 by
its recall score): those are read for every request, so a word they share with it says
less than a note the search found."""
KEEP_SHARE = 0.35
"""A passage is quoted only when it weighs at least this share of the best passage's
weight: a bullet earns its place by addressing the request."""
PASSAGES_PER_NOTE = 4
HOP_SHARE = 0.75
"""What a note found by following a reference weighs against the hit that named it: one
step further from the request."""
PASSAGES_PER_FILE = 2


def ranked_passages(
    texts: Sequence[Quotable[_K]], request: RequestTerms
) -> list[tuple[Passage, _K]]:
    """The passages of ``texts`` that answer ``request``, best first: the one ranking
    every route quotes by (the offline scout's memory facts, the facts a model picks
    from, the no-model baselines).

    A memory hit is quoted when it scores at least :data:`WEAK_HIT` of the best hit and
    shares at least one of a short request's terms (two of a longer one's) in its text or
    name; its passages weigh 0.5–1.0 by its score against the best (times its ``boost``),
    up to :data:`PASSAGES_PER_NOTE` of them; a hit the search found by its name alone
    gives its first sentence. A user file or facet gives up to :data:`PASSAGES_PER_FILE`
    at :data:`FILE_WEIGHT`. The same text twice is quoted once. A hit found by following
    a reference (``via``) that is too weak a match on its own weighs :data:`HOP_SHARE` of
    the hit that named the reference, and gives the passages that name it.
    """
    # A followed reference's search has a scale of its own: it sets no scale, and its hits
    # weigh what the best hit that named the reference weighs.
    top = max(
        (t.score for t in texts if t.score is not None and t.score > 0 and not t.via),
        default=0.0,
    )
    # What names each followed reference: the best hit of the request's own search that
    # names it (never the note found by it).
    followed = followed_notes([(t.text, t.via, t.score) for t in texts])
    needed = 1 if len(request.terms) <= 3 else 2
    ranked: list[tuple[float, int, Passage, _K]] = []
    seen: set[str] = set()
    for order, quotable in enumerate(texts):
        if quotable.text in seen:
            continue
        seen.add(quotable.text)
        found: list[Passage] = []
        if quotable.score is None:
            weight = FILE_WEIGHT * quotable.boost
            found = passages(quotable.text, request, limit=PASSAGES_PER_FILE)
        else:
            shared = stems(keywords(f"{quotable.name} {quotable.text}")) & request.terms
            # A name the request gives ("Deel", "B-12") is sign enough on its own.
            named = not shared.isdisjoint(request.names)
            if not quotable.via and not (
                (top > 0 and quotable.score < WEAK_HIT * top)
                or (len(shared) < needed and not named)
            ):
                weight = (0.5 + 0.5 * quotable.score / top if top > 0 else 1.0) * quotable.boost
                found = passages(
                    quotable.text,
                    request,
                    limit=PASSAGES_PER_NOTE,
                    whole_below=quotable.whole_below,
                )
                if not found:
                    # The search matched the note's name, not a sentence: its first one
                    # says what the note is.
                    found = [Passage(u.text, 0.0, 0) for u in note_sections(quotable.text)[:1]]
            elif quotable.text in followed:
                # Too weak a match for the request, but found by a reference a strong hit
                # names: weighed as that hit, quoted where it speaks of the reference.
                vias, named_by = followed[quotable.text]
                weight = (0.5 + 0.5 * named_by / top if top > 0 else 1.0) * quotable.boost
                weight *= HOP_SHARE
                if named_by >= WEAK_HIT * top:
                    found = _on_references(quotable, vias, request)
        for passage in found:
            # A small floor keeps a name-only hit above nothing, in its hit's order.
            ranked.append((-(passage.score + 0.01) * weight, order, passage, quotable.key))
    ranked.sort(key=lambda row: row[:2])
    # A passage far below the best one does not address the request: it shares a word or
    # two with it (a dentist "appointment" for a "review appointment") and would only
    # push the answer down the bundle.
    floor = KEEP_SHARE * -ranked[0][0] if ranked else 0.0
    return [(passage, key) for score, _, passage, key in ranked if -score >= floor]


def _on_references(quotable: Quotable[_K], vias: list[str], request: RequestTerms) -> list[Passage]:
    """The passages of a note found by following ``vias`` that speak of one of them, each
    read for the request and its reference; never the note whole (a short log is many
    references, and this one is about one of them)."""
    found: dict[int, Passage] = {}
    for via in vias:
        asked = with_reference(request, via)
        for passage in passages(quotable.text, asked, limit=PASSAGES_PER_NOTE):
            if via in passage.text.lower():
                found.setdefault(passage.position, passage)
    return sorted(found.values(), key=lambda passage: -passage.score)


def turn_extent(turns: Sequence[str], index: int) -> tuple[int, int]:
    """Where the quote of ``turns[index]`` (the texts of a conversation's turns, in order)
    starts and ends, both included.

    The turn after is joined when this one asks a question (or ends in a colon) that the
    next one answers; the turn before when this one refers back ("Yes, that one"). A short
    turn (:data:`SHORT_TURN_WORDS` words at most) rarely stands alone: it is a request
    the next turn answers ("Brainstorm jobs for seniors"), or, at the end, a reply to the
    turn before. Otherwise the turn is quoted alone.
    """
    text = turns[index]
    answered = index + 1 < len(turns) and not _asks_forward(turns[index + 1])
    if answered and _asks_forward(text):
        return index, index + 1
    if index > 0 and _opens_back(text):
        return index - 1, index
    if len(words(text[:400])) <= SHORT_TURN_WORDS:
        if answered:
            return index, index + 1
        if index > 0:
            return index - 1, index
    return index, index
