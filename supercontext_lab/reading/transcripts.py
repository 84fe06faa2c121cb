"""How the turns of a past conversation are written as text, and who said a quote of them.

A recalled turn reaches a model (and every route that quotes it) as lines labelled with
who spoke, ``User: …`` and ``Assistant: …`` (:func:`transcript_lines`). A passage quoted
from the middle of a turn loses that label ("By the way, I just got back from a
networking event …" does not say who "I" is), so :func:`with_speaker` puts the speaker
back in front of it. One layout, one place: the transcript store writes it, the scout's
sources and the offline scout read it.

A quote that only repeats the request is no fact (:func:`echoes`): a thread that asked
"Help me finish the budget section" last week does not tell a new thread asking the same
anything but that it was asked.
"""

from __future__ import annotations

from collections.abc import Iterable

from .._text import one_line
from .relevance import RequestTerms
from .words import keywords, stems

__all__ = ["SPEAKERS", "echoes", "speaker_label", "transcript_lines", "with_speaker"]

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
