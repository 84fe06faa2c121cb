"""Excerpts: a long text cut to the passages that answer a request, saying what was cut.

What a model is sent must fit its context window, and a memory hit can be a megabyte of
meeting minutes. Cutting such a text at a character count keeps its first lines, which
answer only the questions its first lines happen to answer, and ends in the middle of a
sentence. :func:`excerpt` cuts it where every route reads it instead: into the units of
:mod:`.document` (a long text read in pieces of :data:`PIECE_CHARS`, all their units
scored as one text), ranked for the request as :func:`~.passages.passages` ranks them; the
best passages that fit, each weighing at least :data:`~.passages.KEEP_SHARE` of the best,
are kept in the order the text has them, and the marker says what was left out
(:func:`cut_marker`: ``[cut: 1.0 MB text, 12 of 6,950 passages kept]``). A text holding
none of the request's terms keeps its opening units. No unit is ever cut inside: a
passage that does not fit is left out whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from .facts import note_sections
from .passages import KEEP_SHARE, unit_passages
from .relevance import RequestTerms

__all__ = [
    "MAX_EXCERPT_PASSAGES",
    "PASSAGE_GAP",
    "PIECE_CHARS",
    "Excerpt",
    "cut_marker",
    "excerpt",
    "size_text",
]

MAX_EXCERPT_PASSAGES = 400
"""The most passages one excerpt ranks and keeps: the work on a text of any length stays
bounded, and 400 passages are far more than any window a scout reads through."""

PASSAGE_GAP = "\n\n…\n\n"
"""What stands between two kept passages: a paragraph of its own, so that a reader of the
excerpt sees where text was left out and no passage runs into the next."""

PIECE_CHARS = 200_000
"""A longer text is read in pieces of about this size (:func:`_pieces`): a document
gives at most :data:`~.units.MAX_UNITS` units, and the answer may be in a megabyte note's
last page."""

_MARKER_ROOM = 80
"""Characters kept for the marker (it is about 50)."""


def size_text(chars: int) -> str:
    """``"1.6 MB"``, ``"12 KB"`` or ``"930 characters"``: a text's size as a person reads it
    (a kilobyte is 1,000 characters here; the figure only says how much was left out)."""
    if chars >= 1_000_000:
        return f"{chars / 1_000_000:.1f} MB"
    if chars >= 10_000:
        return f"{chars // 1_000} KB"
    return f"{chars:,} characters"


def cut_marker(total_chars: int, kept: int, units: int) -> str:
    """What an excerpt says was left out: how large the text was and how many of its
    passages were kept (``[cut: 1.0 MB text, 12 of 6,950 passages kept]``)."""
    return f"[cut: {size_text(total_chars)} text, {kept:,} of {units:,} passages kept]"


@dataclass(frozen=True)
class Excerpt:
    """What :func:`excerpt` keeps of a text: the passages, and the marker when it cut."""

    text: str
    """The text whole, or its kept passages in its order."""
    marker: str = ""
    """:func:`cut_marker` when the text was cut, else ``""``."""

    @property
    def joined(self) -> str:
        """The passages and the marker on a last line, as one text."""
        if not self.marker:
            return self.text
        return f"{self.text}\n{self.marker}" if self.text else self.marker


def _pieces(text: str) -> list[str]:
    """``text`` in pieces of about :data:`PIECE_CHARS`, each ending at a blank line (else
    a line's end, else a sentence's), so no unit is cut by the seam."""
    pieces: list[str] = []
    start = 0
    while len(text) - start > PIECE_CHARS:
        end = start + PIECE_CHARS
        for seam in ("\n\n", "\n", ". "):
            found = text.rfind(seam, start + PIECE_CHARS // 2, end)
            if found != -1:
                end = found + len(seam)
                break
        pieces.append(text[start:end])
        start = end
    pieces.append(text[start:])
    return pieces


def excerpt(text: str, request: RequestTerms, max_chars: int) -> Excerpt:
    """``text`` whole when it is at most ``max_chars`` characters; else the passages of it
    that answer ``request`` that fit, in the text's order, and the marker (see the module
    docstring). Its :attr:`~Excerpt.joined` text is at most ``max_chars`` characters
    unless even the marker does not fit, when it is the marker alone."""
    if len(text) <= max_chars:
        return Excerpt(text)
    # A document gives at most MAX_UNITS units: a long text is read in pieces, and all
    # their units are scored as one text, so a term weighs the same wherever it is.
    units = [unit for piece in _pieces(text) for unit in note_sections(piece)]
    room = max_chars - _MARKER_ROOM
    ranked = unit_passages(units, request, limit=MAX_EXCERPT_PASSAGES) if request.terms else []
    # As across notes: a passage earns its place by weighing at least KEEP_SHARE of the
    # best one, not by sharing one word with the request.
    floor = KEEP_SHARE * ranked[0].score if ranked else 0.0
    chosen: list[tuple[int, str]] = []  # (first unit, text)
    used = 0
    for passage in ranked:
        cost = len(passage.text) + len(PASSAGE_GAP)
        if passage.score >= floor and used + cost <= room:
            chosen.append((passage.position, passage.text))
            used += cost
    gap = PASSAGE_GAP
    if not chosen:
        # Nothing in the text is on the request: its opening units, whole, line by line.
        gap = "\n"
        for index, unit in enumerate(units[:MAX_EXCERPT_PASSAGES]):
            used += len(unit.text) + len(gap)
            if used > room:
                break
            chosen.append((index, unit.text))
    body = gap.join(passage for _, passage in sorted(chosen))
    return Excerpt(body, cut_marker(len(text), len(chosen), len(units)))
