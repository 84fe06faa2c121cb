"""Facts cut from notes: the one place a note's Markdown becomes what a bundle quotes.

Every route that quotes a note cuts it here, so they all agree: the offline scout's
summary (a note as prose, MEMORY.md and PROFILE.md lines), the numbered facts of the
extractive emission and the grounding check's sources (:mod:`supercontext_lab.scout.sources`).

* A Markdown heading is the note's title, never (part of) a fact: "# Freezer inventory"
  says what the note is about, not something true about the user.
* List markers and ``**`` emphasis go; a line wrapped at the note's width joins the line
  above, so a sentence broken by the editor stays one sentence.
* A paragraph or list item breaks into sentences at
  :func:`supercontext_lab._sentences.split_sentences`, which knows abbreviations, titles,
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
from typing import TypeVar

from ._sentences import split_sentences
from ._text import one_line
from ._words import content_terms

__all__ = ["distinct_facts", "note_blocks", "note_prose", "note_sentences"]

_HEADING_RE = re.compile(r"^\s{0,3}#{1,6}(?:\s|$)")
# A list item: "- ", "* ", "+ ", "• ", "1. " or "1) " at the start of a line.
_ITEM_RE = re.compile(r"^\s{0,8}(?:[-*+•]|\d{1,3}[.)])\s+")
# A fact whose terms are at least this share of another's, all found there, is a repeat.
_REPEAT_SHARE = 0.8

_T = TypeVar("_T")


def note_blocks(text: str) -> list[str]:
    """The paragraphs and list items of a note, each on one line, headings left out."""
    blocks: list[list[str]] = []
    current: list[str] = []
    for line in text.split("\n"):
        stripped = line.strip()
        heading = _HEADING_RE.match(line) is not None
        item = _ITEM_RE.match(line) is not None
        if not stripped or heading or item:
            if current:
                blocks.append(current)
            current = []
            if not stripped or heading:
                continue
            stripped = _ITEM_RE.sub("", line, count=1).strip()
        current.append(stripped.replace("**", ""))
    if current:
        blocks.append(current)
    return [joined for block in blocks if (joined := " ".join(block).strip())]


def note_prose(text: str) -> str:
    """A whole note as one line of prose (its blocks, headings left out)."""
    return " ".join(note_blocks(text))


def note_sentences(text: str, limit: int) -> list[str]:
    """The sentences of a note, each on one line and cut to ``limit`` characters at a
    word (linear in ``text``)."""
    out: list[str] = []
    for block in note_blocks(text):
        for part in split_sentences(block):
            sentence = one_line(part, limit, at_word=True)
            if len(sentence) > 3:
                out.append(sentence)
    return out


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
