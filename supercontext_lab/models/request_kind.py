"""What a request is, read from its words: the rules the offline scout and the extractive
emission share, so both decide alike.

:func:`request_kind` tells a greeting, a one-shot question and a piece of work apart
(SPEC §10): a question gets no thread goal. :func:`integrations_named` lists the
integrations a request points at, by their name or a word that stands for them
("email" for gmail), which is how the offline scout picks a ``delegate_<toolkit>`` call.
"""

from __future__ import annotations

from ..gate import GREETINGS, normalize_message
from ..reading.words import words

__all__ = ["INTEGRATION_ALIASES", "integrations_named", "request_kind"]

_INTERROGATIVES = frozenset(
    "what who whom whose when where why how which is are am was were do does did can could "
    "should would will shall may might has have had cosa chi quando dove perché perche come "
    "quale quali quanto quanti".split()
)
_THANKS = frozenset({"thanks", "thank you", "thx", "grazie", "cheers", "thanks a lot"})

INTEGRATION_ALIASES: dict[str, frozenset[str]] = {
    "gmail": frozenset("gmail email emails mail inbox reply".split()),
    "google_calendar": frozenset("calendar meeting meetings schedule event events agenda".split()),
    "slack": frozenset("slack channel dm".split()),
    "github": frozenset("github repo repository pull issue issues pr commit".split()),
    "notion": frozenset("notion".split()),
    "google_drive": frozenset("drive gdrive".split()),
    "zotero": frozenset("zotero library references bibliography".split()),
    "linkedin": frozenset("linkedin".split()),
    "whatsapp": frozenset("whatsapp".split()),
}
"""Words that point at an integration even when its toolkit name is not used."""


def request_kind(request: str) -> str:
    """``greeting``, ``question`` or ``work`` (SPEC §10)."""
    normal = normalize_message(request)
    if not normal or normal in GREETINGS or normal in _THANKS:
        return "greeting"
    first = words(normal)[:1]
    if request.strip().endswith("?") and first and first[0] in _INTERROGATIVES:
        return "question"
    return "work"


def integrations_named(text: str) -> list[str]:
    """The toolkits ``text`` points at, in :data:`INTEGRATION_ALIASES` order."""
    said = set(words(text))
    # Word by word: "google_calendar" is the words "google" and "calendar".
    return [
        toolkit
        for toolkit, aliases in INTEGRATION_ALIASES.items()
        if said & aliases or set(words(toolkit)) <= said
    ]
