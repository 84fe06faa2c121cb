"""Facts cut from notes: what a bundle quotes, read off a note's document.

Every route that quotes a note takes its facts here, so they all agree: the offline scout's
summary (a note as prose, MEMORY.md and PROFILE.md lines), the numbered facts of the
extractive emission and the grounding check's sources (:mod:`supercontext_lab.scout.sources`).
The note is cut in one place, :func:`~.document.read_document`; this module gives its
units the shape the passages and the bundle use:

* a fact is a unit as a bundle quotes it (:attr:`~.units.Unit.quoted`): a sentence of a
  paragraph, a list item or log line whole, a table row with its header, a code block, a
  message with its sender, a turn with its speaker; headings are titles, never facts;
* each fact remembers the heading of its section (:func:`note_sections`): the items under
  "## Next steps" are the next steps, though none of them says so;
* a fact is a repeat of another when, compared as analysed terms (folded, stemmed, stop
  words left out), nearly everything it says is in the other: MEMORY.md's "Aim 1: fit
  dispersal kernels across 40 sites; Aim 2: …" beside the note that says the same at
  length is listed once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from .document import read_document
from .units import MAX_UNIT_CHARS, UnitKind
from .words import content_terms

__all__ = [
    "MAX_FACT_CHARS",
    "NoteSentence",
    "distinct_facts",
    "is_label",
    "joined",
    "note_blocks",
    "note_prose",
    "note_sections",
    "note_sentences",
]

MAX_FACT_CHARS = MAX_UNIT_CHARS
"""The longest sentence quoted as a fact. A fact is never cut inside a sentence, so a
longer one (a pasted table row, a paragraph with no full stop) is not quoted at all."""
# A fact whose terms are at least this share of another's, all found there, is a repeat.
_REPEAT_SHARE = 0.8

_T = TypeVar("_T")


@dataclass(frozen=True)
class NoteSentence:
    """One unit of a note as a fact, with the heading of its section."""

    text: str
    """The unit as a bundle quotes it (its label, then the unit)."""
    heading: str = ""
    """The nearest heading above it (``""`` when none): what its section is about, which
    a passage's score counts."""
    code: bool = False
    """Whether it is a code block, quoted as it stands (never split into sentences)."""
    kind: UnitKind = "sentence"
    settles: bool = False
    """Whether it says it settles or corrects what came before."""
    lines: tuple[int, int] = (1, 1)
    """Where it is in the note (1-based lines, both included)."""
    depth: int = 0
    """How deep in quotes it is: in a pasted e-mail thread, an older message."""
    path: str = ""
    """Every heading above it, outermost first (the note's title, then its sections)."""
    label: str = ""
    """What its text opens with to be readable (a sender, a speaker, the item above it),
    ``""`` for none: two units of one message are quoted with it once."""

    def beside(self, other: NoteSentence) -> bool:
        """Whether ``other`` was cut from the same lines: another sentence of the same
        message, turn or paragraph."""
        return self.lines == other.lines

    @property
    def own(self) -> str:
        """The unit without its label."""
        if self.label and self.text.startswith(f"{self.label}: "):
            return self.text[len(self.label) + 2 :]
        return self.text


def _nearest(path: str) -> str:
    return path.rpartition(" › ")[2]


def joined(units: Sequence[NoteSentence]) -> str:
    """Units next to each other as one passage, a label said once while it stays the same
    ("Sam (09:12): Friday it is. The van comes at 8.") and a sub-item's not at all after
    the item that gives it."""
    parts: list[str] = []
    for index, unit in enumerate(units):
        before = units[index - 1] if index else None
        said = (
            before is not None
            and bool(unit.label)
            and (
                # The same sender or speaker, or the item above a sub-item (its label).
                unit.label == before.label or before.own.startswith(unit.label.rstrip(" …"))
            )
        )
        parts.append(unit.own if said else unit.text)
    return " ".join(parts)


def note_blocks(text: str) -> list[str]:
    """The blocks of a note (paragraphs, list items, log and chat lines, table rows with
    their headers, code blocks), each on one line and uncut, headings left out."""
    return list(read_document(text).blocks)


def note_prose(text: str) -> str:
    """A whole note as one line of prose (its blocks, headings left out)."""
    return " ".join(note_blocks(text))


def note_sections(text: str) -> list[NoteSentence]:
    """The units of a note in order, as facts with their section's heading (linear in
    ``text``); units longer than :data:`MAX_FACT_CHARS` are left out, never cut."""
    return [
        NoteSentence(
            unit.quoted,
            _nearest(unit.heading),
            unit.kind == "code",
            unit.kind,
            unit.settles,
            unit.lines,
            unit.depth,
            unit.heading,
            unit.context if unit.kind != "row" else "",
        )
        for unit in read_document(text).units
        if len(unit.quoted) <= MAX_FACT_CHARS or unit.kind == "row"
    ]


_LABEL_WORDS = 4


def is_label(text: str) -> bool:
    """Whether ``text`` only introduces what follows ("Deadlines:", "Next steps:"): a few
    words ending in a colon, no fact on its own. A passage joins it to what it introduces;
    alone it is never quoted."""
    return text.rstrip().endswith(":") and len(text.split()) <= _LABEL_WORDS


def note_sentences(text: str) -> list[str]:
    """The facts of a note, in order (:func:`note_sections` without headings), labels
    left out (:func:`is_label`)."""
    return [s.text for s in note_sections(text) if not is_label(s.text)]


def _covers(wider: set[str], narrower: set[str]) -> bool:
    """Whether ``wider`` says nearly everything ``narrower`` says."""
    if not narrower:
        return False
    return len(narrower & wider) >= _REPEAT_SHARE * len(narrower)


def distinct_facts(
    items: Iterable[_T], text: Callable[[_T], str], limit: int | None = None
) -> list[_T]:
    """``items`` with repeats left out, in order: a fact another one already listed says
    nearly all of is dropped, and one that says nearly all of an earlier fact and more
    takes that fact's place. ``text`` gives an item's fact, without its citation. With
    ``limit``, the first ``limit`` distinct facts (the items after them are not read, so
    a note of a million sentences costs ``limit`` comparisons a sentence at most)."""
    kept: list[tuple[_T, set[str]]] = []
    for item in items:
        if limit is not None and len(kept) >= limit:
            break
        terms = content_terms(text(item))
        if not terms or any(_covers(other, terms) for _, other in kept):
            continue
        covered = [i for i, (_, other) in enumerate(kept) if _covers(terms, other)]
        if not covered:
            kept.append((item, terms))
            continue
        kept[covered[0]] = (item, terms)
        for index in reversed(covered[1:]):
            del kept[index]
    return [item for item, _ in kept]
