"""Units: what a bundle quotes as one fact, and the record of one note's units.

:class:`Unit` is one unit of a note with what makes it readable (its label, its heading
path, its lines, its date, whether it settles what came before); :class:`Document` the
ordered units of one note. :class:`UnitWriter` is how the reader of a note
(:mod:`.document`, with :mod:`.layouts`) adds them: whole when short, cut into whole
sentences when longer than :data:`MAX_UNIT_CHARS`, never cut inside one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

from .._text import one_line
from .sentences import split_sentences
from .words import words

__all__ = [
    "MAX_UNITS",
    "MAX_UNIT_CHARS",
    "SETTLING_WORDS",
    "Document",
    "Speaker",
    "Unit",
    "UnitKind",
    "UnitWriter",
]

UnitKind = Literal["sentence", "item", "row", "code", "quote", "message", "turn"]

MAX_UNIT_CHARS = 500
"""The longest unit kept whole: a longer list item, log line or turn is cut into its
sentences, and a longer sentence is not quoted at all (never cut inside)."""

_THREADED = frozenset({"turn", "message"})

MAX_UNITS = 10_000
"""The most units (and blocks) one note gives: far more than any passage search reads,
and a bound on the work a note of a hundred thousand short lines asks for."""

SETTLING_WORDS = frozenset(
    """
    final finally finalised finalized decided decision agreed settled confirmed confirm
    correction corrected correct instead actually update updated revised revision
    supersedes superseded replaces replaced rescheduled moved changed reset postponed
    rebooked locked
    """.split()
)
"""Words by which a unit says it settles or corrects what came before it."""

_NEGATIONS = frozenset("no not never nothing".split())


def _says_it_settles(text: str) -> bool:
    """Whether ``text`` says it settles what came before: a settling word
    (:data:`SETTLING_WORDS`) not negated by the word before it ("OK, final: …" does,
    "No decision." and "not confirmed yet" do not)."""
    said = words(text[:200])
    return any(
        word in SETTLING_WORDS and (index == 0 or said[index - 1] not in _NEGATIONS)
        for index, word in enumerate(said)
    )


_HEADING_JOIN = " › "

_MONTH = (
    "january|february|march|april|may|june|july|august|september|october|november|december"
    "|jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
# A date as notes write one: 2026-03-02, 03/02, 02.03.2026, 3 March 2026, Mar 3; a month
# name counts only beside a day ("may" alone is a verb).
_DATE_RE = re.compile(
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b|\b\d{1,2}\.\d{1,2}\.\d{2,4}\b"
    rf"|\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTH})\b\.?(?:,?\s+\d{{4}})?"
    rf"|\b(?:{_MONTH})\b\.?\s+\d{{1,2}}(?:st|nd|rd|th)?\b(?:,?\s+\d{{4}})?",
    re.I,
)


@dataclass(frozen=True)
class Unit:
    """One unit of a note: what a bundle quotes as one fact."""

    kind: UnitKind
    text: str
    """The unit on one line, as written (a row's cells with their headers)."""
    context: str = ""
    """What makes it readable: a row's label (its first cell), a message's sender and date,
    a turn's speaker and time; ``""`` for the others."""
    heading: str = ""
    """The path of headings above the unit, outermost first (``"Plan › Risks"``)."""
    lines: tuple[int, int] = (1, 1)
    """The first and last line of the note the unit comes from (1-based, both included)."""
    position: int = 0
    """Its index among the note's units."""
    date: str = ""
    """The first date its label or text gives (``""`` when none)."""
    settles: bool = False
    """Whether it says it settles or corrects what came before (:data:`SETTLING_WORDS`)."""
    depth: int = 0
    """How deep in block quotes it sits (a quoted e-mail's level)."""

    @property
    def quoted(self) -> str:
        """The unit as a bundle quotes it: its label, then the unit."""
        if not self.context:
            return self.text
        if self.kind == "row":
            return f"{self.context} — {self.text}" if self.text else self.context
        who = self.context.split(" (")[0]
        if self.kind == "turn" and self.text.startswith(f"{who}:"):
            # "Sam: …" says who spoke; the label adds when: "Sam (12:20): …".
            return f"{self.context}{self.text[len(who) :]}"
        return f"{self.context}: {self.text}"


@dataclass(frozen=True)
class Document:
    """The ordered units of one note, and its headings."""

    units: tuple[Unit, ...]
    blocks: tuple[str, ...] = ()
    """Every block (paragraph, list item, log or chat line, table row, code block) on one
    line, uncut and however long, as a unit's label and text read: what the grounding
    check compares a quoted fact with."""
    headings: tuple[str, ...] = ()
    """Every heading of the note, in order."""


@dataclass
class Speaker:
    """Who wrote or said what follows, and when: an e-mail's sender and date, a chat
    turn's speaker and time."""

    who: str = ""
    when: str = ""

    def label(self) -> str:
        """``"Sam (12:20)"``, ``"Sam"``, or ``""`` when nobody is known."""
        if not self.who:
            return ""
        return f"{self.who} ({self.when})" if self.when else self.who


@dataclass
class UnitWriter:
    """The state of one walk over a note's blocks, and the units it adds."""

    source: Sequence[str]
    """The note's lines (a speaker line is read from its source, emphasis marks and all)."""
    units: list[Unit] = field(default_factory=list)
    blocks: list[str] = field(default_factory=list)
    headings: list[str] = field(default_factory=list)
    path: list[tuple[int, str]] = field(default_factory=list)
    """The headings above the walk, as (level, text)."""
    depth: int = 0
    """How deep in block quotes the walk is."""
    senders: dict[int, Speaker] = field(default_factory=dict)
    """The sender of the e-mail message at each quote level."""
    speaker: Speaker = field(default_factory=Speaker)
    """The speaker a ``**Name**, 12:20`` line named, until the next heading or rule."""
    items: list[list[tuple[str, tuple[int, int]]]] = field(default_factory=list)
    """The open list items (innermost last), each its paragraphs and their lines."""
    leads: list[str] = field(default_factory=list)
    """What each open item says before its sub-items (``""`` when nothing): the label its
    sub-items are read with, as a row is read with its first cell."""
    header: list[str] | None = None
    """The header cells of the table being read."""
    row: list[str] | None = None
    row_lines: tuple[int, int] = (1, 1)
    subjects: set[str] = field(default_factory=set)
    """The e-mail subjects read so far (without "RE:", case folded): a reply's "RE: …"
    says nothing its thread's first message did not."""

    @property
    def full(self) -> bool:
        """Whether the walk holds :data:`MAX_UNITS` units and blocks: the rest of the
        note adds nothing, so it need not be read line by line."""
        return len(self.units) >= MAX_UNITS and len(self.blocks) >= MAX_UNITS

    def lead(self) -> str:
        """The label of the innermost open item's sub-items: the nearest lead of the
        items around it."""
        return next((lead for lead in reversed(self.leads[:-1]) if lead), "")

    def heading(self) -> str:
        """The heading path above the walk, outermost first."""
        return _HEADING_JOIN.join(text for _, text in self.path)

    def block(self, text: str, context: str = "") -> None:
        """Record a whole block, uncut, with its label (see :attr:`Document.blocks`)."""
        if len(self.blocks) >= MAX_UNITS:
            return
        flat = one_line(text)
        if flat:
            self.blocks.append(f"{one_line(context, 200)}: {flat}" if context else flat)

    def add(
        self,
        kind: UnitKind,
        text: str,
        lines: tuple[int, int],
        context: str = "",
        *,
        opening: str = "",
    ) -> None:
        """Add a unit: whole when it fits :data:`MAX_UNIT_CHARS`, else its sentences; a
        text of three characters or fewer only when it has a label (a row's "Yes").

        ``opening`` is the first sentence of the message or turn a sentence is cut from,
        when it is: a message that opens "Correction to the message below." settles with
        every sentence of it, the new date included, not with its first sentence alone."""
        if len(self.units) >= MAX_UNITS:
            return
        text = one_line(text)
        if len(text) <= 3 and not context:
            return
        pieces = [text]
        if len(text) > MAX_UNIT_CHARS and kind != "code":
            pieces = [one_line(s) for s in split_sentences(text)]
            opening = opening or pieces[0]
        for piece in pieces:
            if len(piece) > MAX_UNIT_CHARS or (len(piece) <= 3 and not context):
                continue
            dated = _DATE_RE.search(f"{context} {piece}")
            self.units.append(
                Unit(
                    kind,
                    piece,
                    one_line(context, 200),
                    self.heading(),
                    lines,
                    len(self.units),
                    dated.group(0) if dated else "",
                    # Only a thread settles: a turn, a message. In prose, minutes and logs
                    # "correction" or "instead" is one more word.
                    kind in _THREADED and (_says_it_settles(piece) or _says_it_settles(opening)),
                    self.depth,
                )
            )
