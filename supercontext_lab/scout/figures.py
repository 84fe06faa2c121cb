"""Figures and identifiers: the words a supported sentence must keep exactly (SPEC §13).

Sharing most of its terms with a note is not enough for a sentence to be supported: a
changed amount, date or address would slip through. So every figure and every identifier
of the sentence must also occur in the text it cites (:func:`~.claims.judge` applies the
rule; this module says what counts as either):

* a *figure* is each word holding a digit (``40k``, ``2026``, the parts of
  ``1234-5678``; ordinals read as numbers, ``15th`` as ``15``), each month and weekday
  (``Dec`` and ``December`` are one month), each magnitude word (``thousand``,
  ``million``, ``percent``) and each currency or percent sign;
* an *identifier* is a word holding ``@``, ``/``, ``\\`` or ``_``, a dot between two
  letters on each side (a host name, a file name), an upper-case letter after a
  lower-case one (``GitHub``) or only capitals (``NASA``); it is compared letter case
  aside.

Each figure has one canonical form, so two spellings of one date or number compare equal;
:func:`describe_figure` names it back in words for the reason a claim is dropped.
"""

from __future__ import annotations

import re
import unicodedata

from ..reading.words import STOPWORDS, words

__all__ = ["describe_figure", "figures", "identifier_tokens", "identifiers"]

# ---------------------------------------------------------------------------- figures

_MONTHS = {
    name: number
    for number, names in enumerate(
        (
            ("january", "jan", "gennaio"),
            ("february", "feb", "febbraio"),
            ("march", "mar", "marzo"),
            ("april", "apr", "aprile"),
            # "may" is left out: it is far more often the verb.
            ("maggio",),
            ("june", "jun", "giugno"),
            ("july", "jul", "luglio"),
            ("august", "aug", "agosto"),
            ("september", "sep", "sept", "settembre"),
            ("october", "oct", "ottobre"),
            ("november", "nov", "novembre"),
            ("december", "dec", "dicembre"),
        ),
        start=1,
    )
    for name in names
}
_WEEKDAYS = {
    name: number
    for number, names in enumerate(
        (
            ("monday", "lunedi", "lunedì"),
            ("tuesday", "martedi", "martedì"),
            ("wednesday", "mercoledi", "mercoledì"),
            ("thursday", "giovedi", "giovedì"),
            ("friday", "venerdi", "venerdì"),
            ("saturday", "sabato"),
            ("sunday", "domenica"),
        ),
        start=1,
    )
    for name in names
}
_MAGNITUDES = {
    "hundred": "hundred",
    "thousand": "thousand",
    "thousands": "thousand",
    "million": "million",
    "millions": "million",
    "billion": "billion",
    "billions": "billion",
    "trillion": "trillion",
    "percent": "%",
    "percentage": "%",
}
_ORDINALS = frozenset({"st", "nd", "rd", "th"})
_DIGIT_RE = re.compile(r"\d")
# The percent sign and every currency sign of the Basic Multilingual Plane ($, €, £, ¥, ₹, …).
_SIGNS_RE = re.compile(
    "[%"
    + "".join(re.escape(chr(c)) for c in range(0x10000) if unicodedata.category(chr(c)) == "Sc")
    + "]"
)


def _number(word: str) -> str:
    if word[-2:] in _ORDINALS and word[:-2].isdigit():
        word = word[:-2]
    if word.isdigit():
        return word.lstrip("0") or "0"
    return word


def figures(text: str) -> frozenset[str]:
    """The figures of ``text`` (see the module docstring), each in one canonical form."""
    seen = set(words(text))
    found = {_number(word) for word in seen if not word.isalpha() and _DIGIT_RE.search(word)}
    found.update(f"month {_MONTHS[word]}" for word in seen.intersection(_MONTHS))
    found.update(f"weekday {_WEEKDAYS[word]}" for word in seen.intersection(_WEEKDAYS))
    found.update(_MAGNITUDES[word] for word in seen.intersection(_MAGNITUDES))
    found.update(_SIGNS_RE.findall(text))
    return frozenset(found)


def describe_figure(figure: str) -> str:
    """``figure``, in its canonical form, as a reason names it: ``the month December``,
    ``the day Monday``, ``the figure '40k'``."""
    kind, _, number = figure.partition(" ")
    if kind == "month" and number.isdigit():
        names = [name for name, n in _MONTHS.items() if n == int(number)]
        return f"the month {names[0].capitalize()}"
    if kind == "weekday" and number.isdigit():
        names = [name for name, n in _WEEKDAYS.items() if n == int(number)]
        return f"the day {names[0].capitalize()}"
    return f"the figure '{figure}'"


# ---------------------------------------------------------------------------- identifiers

_EDGE_PUNCTUATION = "\"'`()[]{}<>,;:!?.*"
_MARK_RE = re.compile(r"[@/\\_]|[^\W\d_]{2}[.][^\W\d_]{2}|[a-z][A-Z]")


def identifiers(text: str) -> list[str]:
    """The identifiers of ``text``, case-folded (see the module docstring)."""
    found: list[str] = []
    for token in text.split():
        token = token.strip(_EDGE_PUNCTUATION)
        if len(token) < 2:
            continue
        letters = [ch for ch in token if ch.isalpha()]
        shouting = (
            len(letters) >= 2
            and all(ch.isupper() for ch in letters)
            and token.lower() not in STOPWORDS
        )
        if shouting or _MARK_RE.search(token):
            found.append(token.casefold())
    return found


def identifier_tokens(text: str) -> frozenset[str]:
    """The words of ``text`` as :func:`identifiers` reads them (split at white space, edge
    punctuation off), case-folded: the words an identifier is looked up among."""
    return frozenset(token.strip(_EDGE_PUNCTUATION).casefold() for token in text.split())
