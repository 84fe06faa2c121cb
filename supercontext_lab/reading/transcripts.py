"""How the turns of a past conversation are written as text, and who said a quote of them.

A recalled turn reaches a model (and every route that quotes it) as lines labelled with
who spoke, ``User: …`` and ``Assistant: …`` (:func:`transcript_lines`). A passage quoted
from the middle of a turn loses that label ("By the way, I just got back from a
networking event …" does not say who "I" is), so :func:`with_speaker` puts the speaker
back in front of it. One layout, one place: the transcript store writes it, the scout's
sources and the offline scout read it.

A quote that only repeats the request is no fact (:func:`echoes`): a thread that asked
"Help me finish the budget section" last week does not tell a new thread asking the same
anything but that it was asked. Nor is a quote in which the user only asks (:func:`asks_only`):
"User: Where do I test participants?" says what was asked, not what is true.
:func:`no_fact` is both rules, the one every route quotes a past turn by.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._text import one_line
from .relevance import RequestTerms
from .sentences import split_sentences
from .words import keywords, stems, words

__all__ = [
    "SPEAKERS",
    "asks_only",
    "echoes",
    "no_fact",
    "speaker_label",
    "transcript_lines",
    "with_speaker",
]

SPEAKERS = {"user": "User", "assistant": "Assistant"}
"""The label of each role, as a quoted turn starts."""
_PROBE_CHARS = 60


def speaker_label(role: str) -> str:
    """``User`` or ``Assistant`` (another role keeps its own name, capitalised)."""
    return SPEAKERS.get(role, role.capitalize())


def transcript_lines(turns: Iterable[tuple[str, str]]) -> str:
    """``(role, content)`` pairs as lines labelled with who said them (``User: …``); a
    turn's own line breaks are kept, so its paragraphs and lists stay apart."""
    return "\n".join(f"{speaker_label(role)}: {content.strip()}" for role, content in turns)


def _turns(text: str) -> list[tuple[str, str]]:
    """The labelled turns of a text written by :func:`transcript_lines`, each on one line."""
    labels = tuple(f"{label}: " for label in SPEAKERS.values())
    found: list[tuple[str, list[str]]] = []
    for line in text.split("\n"):
        label = next((lab for lab in labels if line.startswith(lab)), None)
        if label is not None:
            found.append((label[:-2], [line[len(label) :]]))
        elif found:
            found[-1][1].append(line)
    return [(label, one_line(" ".join(lines))) for label, lines in found]


def with_speaker(transcript: str, passage: str) -> str:
    """``passage`` (whole sentences quoted from ``transcript``) with the label of the turn
    it starts in put in front, unless it starts with one already or cannot be placed."""
    flat = one_line(passage)
    if any(flat.startswith(f"{label}: ") for label in SPEAKERS.values()):
        return flat
    probe = flat[:_PROBE_CHARS]
    for label, text in _turns(transcript):
        if probe and probe in text:
            return f"{label}: {flat}"
    return flat


def echoes(quote: str, request: RequestTerms) -> bool:
    """Whether ``quote`` (of a past conversation) says nothing the request does not: every
    content word of it, who spoke left out, is one of the request's."""
    labels = tuple(f"{label}:" for label in SPEAKERS.values())
    said = " ".join(word for word in quote.split() if word not in labels)
    terms = stems(keywords(said))
    return bool(terms) and terms <= request.terms


# The words a question opens with: a sentence that opens so and ends in "?" only asks.
_ASKING = frozenset(
    """
    what where when who whom whose which why how can could would will should shall do does
    did is are was were have has had may might must any anyone
    """.split()
)


def asks_only(quote: str) -> bool:
    """Whether ``quote`` (of a past conversation) is the user asking and nothing else:
    every sentence of it is said by the user, opens with a question word and ends in
    ``?``. "I moved the review to Friday, can you update the calendar?" says something;
    "Where do I test participants?" only asks."""
    turns = _turns(quote) or [(SPEAKERS["user"], one_line(quote))]
    if any(label != SPEAKERS["user"] for label, _ in turns):
        return False
    sentences = [s for _, text in turns for s in split_sentences(text)]
    return bool(sentences) and all(
        s.rstrip().endswith("?") and (words(s[:40]) or [""])[0] in _ASKING for s in sentences
    )


def no_fact(quote: str, request: RequestTerms) -> bool:
    """Whether a quote of a past conversation is no fact for ``request``: it only repeats
    the request (:func:`echoes`) or only asks (:func:`asks_only`)."""
    return echoes(quote, request) or asks_only(quote)
