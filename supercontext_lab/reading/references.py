"""References: the identifiers a passage points at, followed to the notes about them.

A tracker row says "RG-2304 … Status: waiting on letters (see to-do)"; the to-do list says
what the letters are, under "RG-2304", in words the request never uses ("What paperwork is
Tomasz's bid still missing?"). A reader follows the reference. So does the gathering
round: after its first recall, the identifiers of letters and digits that the best
passages name and the request does not (:func:`references`) are recalled in turn, and a
note found so is weighed as the note that named it, on the request and the identifier
(:func:`referred`, used by :func:`~.passages.ranked_passages`).

Dates ("2026-03-02") and words joined by hyphens ("db-east") are no references: a
reference holds a letter and a digit, as a ticket, a case or an order number does.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from .relevance import RequestTerms
from .words import IDENTIFIER_JOIN, identifiers, stems

__all__ = [
    "FOLLOWED",
    "followed_notes",
    "is_reference",
    "references",
    "referred",
    "with_reference",
]

FOLLOWED = 2
"""The most references one gathering round follows."""


def is_reference(identifier: str) -> bool:
    """Whether ``identifier`` (as :func:`~.words.identifiers` gives it) names a thing by
    number: it holds a letter and a digit ("rg-2304", "b-12", "v5.0.2")."""
    return any(ch.isdigit() for ch in identifier) and any(ch.isalpha() for ch in identifier)


def _term(identifier: str) -> str:
    return next((t for t in stems([identifier]) if IDENTIFIER_JOIN in t), "")


def references(texts: Iterable[str], request: RequestTerms, limit: int = FOLLOWED) -> list[str]:
    """The references ``texts`` (the best passages, best first) name that ``request`` does
    not, in order, at most ``limit``."""
    found: list[str] = []
    for text in texts:
        for identifier in identifiers(text):
            term = _term(identifier)
            if (
                is_reference(identifier)
                and term
                and term not in request.terms
                and identifier not in found
            ):
                found.append(identifier)
                if len(found) == limit:
                    return found
    return found


def referred(query: str, request: RequestTerms) -> str:
    """The reference a recall ``query`` follows: its whole text when that is one reference
    the request does not name; ``""`` for a search on the request's words."""
    named = identifiers(query)
    if len(named) != 1 or named[0] != query.strip().lower() or not is_reference(named[0]):
        return ""
    return "" if _term(named[0]) in request.terms else named[0]


def with_reference(request: RequestTerms, identifier: str) -> RequestTerms:
    """``request`` asking about ``identifier`` too, by name: a note found by following it
    is read for the request and for it."""
    term = _term(identifier)
    if not term:
        return request
    return replace(request, terms=request.terms | {term}, names=(*request.names, term))


def followed_notes(
    hits: Iterable[tuple[str, str, float | None]],
) -> dict[str, tuple[list[str], float]]:
    """For each text found by following a reference, among ``hits`` (text, the reference
    it was found by or ``""``, recall score): the references it was found by, and the
    best score of a hit of the request's own search that names one of them, never itself
    (texts no such hit names are left out)."""
    listed = list(hits)
    vias: dict[str, list[str]] = {}
    for text, via, _score in listed:
        if via and via not in vias.setdefault(text, []):
            vias[text].append(via)
    followed: dict[str, tuple[list[str], float]] = {}
    for text, refs in vias.items():
        namers = [
            score or 0.0
            for other, via, score in listed
            if not via and other != text and any(ref in other.lower() for ref in refs)
        ]
        if namers:
            followed[text] = (refs, max(namers))
    return followed
