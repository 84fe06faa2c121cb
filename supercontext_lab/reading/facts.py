"""Facts cut from notes: the one place a note's Markdown becomes what a bundle quotes.

Every route that quotes a note cuts it here, so they all agree: the offline scout's
summary (a note as prose, MEMORY.md and PROFILE.md lines), the numbered facts of the
extractive emission and the grounding check's sources (:mod:`supercontext_lab.scout.sources`).

* A Markdown heading is the note's title, never (part of) a fact: "# Freezer inventory"
  says what the note is about, not something true about the user.
* List markers and ``**`` emphasis go, a Markdown link keeps its text; a line wrapped at
  the note's width joins the line above, so a sentence broken by the editor stays one
  sentence.
* A fenced code block is one unit, quoted line by line in backticks and never split:
  ``set -sg escape-time 0`` is the answer to "how do I remove the escape delay".
* Each sentence remembers the heading of its section (:func:`note_sections`): the items
  under "## Next steps" are the next steps, though none of them says so.
* A paragraph or list item breaks into sentences at
  :func:`supercontext_lab.reading.sentences.split_sentences`, which knows abbreviations, titles,
  initials, numbers and the full stops of other scripts: "Committee: Prof. Henrik Aalto
  (chair), Dr. Nkechi Obi." is one sentence, not three.
* A fact is a repeat of another when, compared as analysed terms (folded, stemmed, stop
  words left out), nearly everything it says is in the other: MEMORY.md's "Aim 1: fit
  dispersal kernels across 40 sites; Aim 2: …" beside the note that says the same at
  length is listed once.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

from .._text import one_line
from .sentences import split_sentences
from .words import content_terms

__all__ = [
    "MAX_FACT_CHARS",
    "NoteSentence",
    "distinct_facts",
    "note_blocks",
    "note_prose",
    "note_sections",
    "note_sentences",
]

_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
# A list item: "- ", "* ", "+ ", "• ", "1. " or "1) " at the start of a line.
_ITEM_RE = re.compile(r"^\s{0,8}(?:[-*+•]|\d{1,3}[.)])\s+")
MAX_FACT_CHARS = 500
"""The longest sentence quoted as a fact. A fact is never cut inside a sentence, so a
longer one (a pasted table row, a paragraph with no full stop) is not quoted at all."""
# A fact whose terms are at least this share of another's, all found there, is a repeat.
_REPEAT_SHARE = 0.8

# A Markdown link or image keeps its text: "[are faster](https://…)" reads "are faster".
# The bounds keep the search linear on a note full of unmatched brackets.
_LINK_RE = re.compile(r"!?\[([^\[\]\n]{0,300})\]\([^()\s]{0,2000}\)")
_FENCES = ("```", "~~~")

_T = TypeVar("_T")


@dataclass(frozen=True)
class NoteSentence:
    """One whole sentence of a note, with the heading of its section."""

    text: str
    heading: str = ""
    """The nearest heading above the sentence (``""`` when none): what its section is
    about, which a passage's score counts."""
    code: bool = False
    """Whether it is a code block, quoted as it stands (never split into sentences)."""


def _blocks(text: str) -> list[NoteSentence]:
    """The paragraphs, list items and code blocks of a note, each on one line, with the
    heading above them; headings themselves are left out."""
    blocks: list[NoteSentence] = []
    current: list[str] = []
    code: list[str] | None = None
    heading = ""

    def close() -> None:
        if current:
            joined = _LINK_RE.sub(r"\1", " ".join(current)).strip()
            if joined:
                blocks.append(NoteSentence(joined, heading))
            current.clear()

    for line in text.split("\n"):
        stripped = line.strip()
        if code is not None:
            # Inside a fence nothing is a heading or an item: "# comment" is code.
            if stripped.startswith(_FENCES):
                quoted = " ".join(f"`{part}`" for part in code)
                if quoted:
                    blocks.append(NoteSentence(quoted, heading, code=True))
                code = None
            elif stripped:
                code.append(stripped.replace("`", "'"))
            continue
        if stripped.startswith(_FENCES):
            close()
            code = []
            continue
        is_heading = _HEADING_RE.match(line) is not None
        item = _ITEM_RE.match(line) is not None
        if not stripped or is_heading or item:
            close()
            if is_heading:
                heading = one_line(stripped.lstrip("#").strip(), 200)
            if not stripped or is_heading:
                continue
            stripped = _ITEM_RE.sub("", line, count=1).strip()
        current.append(stripped.replace("**", ""))
    close()
    if code:
        # A fence left open runs to the end of the note, as Markdown renders it.
        blocks.append(NoteSentence(" ".join(f"`{part}`" for part in code), heading, code=True))
    return blocks


def note_blocks(text: str) -> list[str]:
    """The paragraphs, list items and code blocks of a note, each on one line, headings
    left out."""
    return [block.text for block in _blocks(text)]


def note_prose(text: str) -> str:
    """A whole note as one line of prose (its blocks, headings left out)."""
    return " ".join(note_blocks(text))


def note_sections(text: str) -> list[NoteSentence]:
    """The whole sentences of a note in order, each on one line and with its section's
    heading (linear in ``text``); a code block is one sentence; sentences longer than
    :data:`MAX_FACT_CHARS` are left out, never cut."""
    out: list[NoteSentence] = []
    for block in _blocks(text):
        parts = [block.text] if block.code else split_sentences(block.text)
        for part in parts:
            sentence = one_line(part)
            if 3 < len(sentence) <= MAX_FACT_CHARS:
                out.append(NoteSentence(sentence, block.heading, block.code))
    return out


def note_sentences(text: str) -> list[str]:
    """The whole sentences of a note, in order (:func:`note_sections` without headings)."""
    return [sentence.text for sentence in note_sections(text)]


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
