"""The first-turn gate: decide, cheaply and deterministically, whether the scout runs.

The scout is a pre-flight pass: it costs a model run (several calls and tool reads)
before the orchestrator sees the user's first message. That cost is only worth paying
when the answer can benefit from prepared context, so two checks run first.

:func:`should_run_super_context` is the structural gate: only the orchestrator's first
turn of a genuinely new thread, with the ``super_context_enabled`` flag on, is prepared.
A thread resumed from a saved transcript already has its context in the conversation.

:func:`super_context_skip_reason` is the message gate, applied only when the structural
gate passes. It returns the first reason that applies, or ``None`` to run the scout:

``"empty_message"``
    Nothing is left after normalising (blank or punctuation only). There is no request
    to prepare context for, and a scout given an empty request would only guess.
``"context_free_greeting"``
    The whole message is a greeting or a thanks ("hi", "thank you", "good morning").
    The reply is social; sweeping memory and integrations would add latency for nothing.
``"simple_local_filesystem_action"``
    The message (after polite lead-ins such as "can you please") asks to create a
    folder ("create a folder named x", "crea una cartella progetti") and mentions no
    context source. The action is self-contained; the orchestrator can do it at once.
    A context hint ("the notes we discussed", "from my drive") turns the check off,
    because then the folder's content or name depends on what the user has said or
    stored elsewhere.
``"non_native_provider_no_explicit_intent"``
    The orchestrator's provider has no native tool calling, so a prepared bundle of
    recommended tool calls is of little use, and the scout runs only when the message
    explicitly asks for remembered or connected data (an intent hint such as
    "remember", "my calendar", "we talked").

Every phrase and hint matches as a whole word or word sequence on the normalised
message: "prevent" does not contain the hint "event", "driver" is not "drive", and
"emails" is not "email". Letters (including accented ones such as "è"), digits and the
underscore are word characters. The patterns are compiled once, at import.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Protocol

__all__ = [
    "CONTEXT_HINTS",
    "FOLDER_PHRASES",
    "GREETINGS",
    "INTENT_HINTS",
    "POLITE_LEAD_INS",
    "SKIP_REASONS",
    "has_prior_conversation",
    "normalize_message",
    "should_run_super_context",
    "super_context_skip_reason",
]

SKIP_REASONS: tuple[str, ...] = (
    "empty_message",
    "context_free_greeting",
    "simple_local_filesystem_action",
    "non_native_provider_no_explicit_intent",
)
"""The four reasons :func:`super_context_skip_reason` can return, in the order checked."""

GREETINGS: tuple[str, ...] = (
    "hi",
    "hello",
    "hey",
    "yo",
    "ciao",
    "hola",
    "bonjour",
    "thanks",
    "thank you",
    "ok",
    "okay",
    "good morning",
    "good afternoon",
    "good evening",
    "good night",
)
"""Messages that, on their own, are a context-free greeting or thanks."""

POLITE_LEAD_INS: tuple[str, ...] = (
    "can you please",
    "could you please",
    "would you please",
    "can you",
    "could you",
    "would you",
    "please",
    "hey",
    "hello",
    "hi",
    "puoi per favore",
    "potresti per favore",
    "puoi",
    "potresti",
    "per favore",
    "per piacere",
    "ciao",
    "ehi",
)
"""Lead-ins stripped (up to three, in any combination) before looking for a folder phrase."""

FOLDER_PHRASES: tuple[str, ...] = (
    "create folder",
    "create a folder",
    "make folder",
    "make a folder",
    "create directory",
    "create a directory",
    "make directory",
    "make a directory",
    "mkdir",
    "crea cartella",
    "crea una cartella",
    "crea la cartella",
    "creare cartella",
    "creare una cartella",
    "creare la cartella",
    "crea directory",
    "crea una directory",
    "fai una cartella",
    "fammi una cartella",
    "nuova cartella",
)
"""Phrases that open a simple folder-creation request (they must be followed by more words)."""

CONTEXT_HINTS: tuple[str, ...] = (
    "discussed",
    "mentioned",
    "previous",
    "earlier",
    "last time",
    "email",
    "gmail",
    "calendar",
    "slack",
    "notion",
    "github",
    "drive",
    "discusso",
    "parlato",
    "calendario",
    "precedente",
)
"""Words that make a folder request depend on context, so the scout still runs."""

INTENT_HINTS: tuple[str, ...] = (
    "discussed",
    "mentioned",
    "previous",
    "earlier",
    "last time",
    "remember",
    "we talked",
    "you said",
    "my profile",
    "connection",
    "connections",
    "integration",
    "integrations",
    "connected",
    "calendar",
    "schedule",
    "meeting",
    "reminder",
    "remind me",
    "event",
    "email",
    "gmail",
    "inbox",
    "slack",
    "notion",
    "github",
    "drive",
    "linkedin",
    "whatsapp",
    "telegram",
    "connessione",
    "connessioni",
    "integrazione",
    "riunione",
    "promemoria",
    "ricordami",
    "agenda",
)
"""Words that explicitly ask for remembered or connected data (non-native providers)."""

# Stripped jointly so that "! ? hi" and "hi" normalise alike and normalising twice
# changes nothing (trimming punctuation then whitespace once would leave "? hi").
_EDGE_CHARS = string.punctuation + " "

# One or more ASCII punctuation or whitespace characters between lead-ins
# ("hey, can you please ..."). ``re.escape`` keeps "]", "\\" and "-" literal.
_SEPARATOR = "[\\s" + re.escape(string.punctuation) + "]+"


def _alternation(phrases: Iterable[str]) -> str:
    """A regex alternation of the phrases, longest first so the longest reading wins."""
    ordered = sorted(set(phrases), key=lambda phrase: (-len(phrase), phrase))
    return "|".join(re.escape(phrase) for phrase in ordered)


def _whole_words(phrases: Iterable[str]) -> re.Pattern[str]:
    # ``\w`` is Unicode-aware for str patterns, so "è" and "ç" count as word characters
    # and "perchè" never yields a match that starts or ends inside a word.
    return re.compile(r"(?<!\w)(?:" + _alternation(phrases) + r")(?!\w)")


_CONTEXT_HINT_RE = _whole_words(CONTEXT_HINTS)
_INTENT_HINT_RE = _whole_words(INTENT_HINTS)
_GREETING_SET = frozenset(GREETINGS)

# At the start: up to three lead-ins, each ending at a word boundary and followed by a
# separator; then a folder phrase ending at a word boundary; then at least one more word.
_FILESYSTEM_ACTION_RE = re.compile(
    r"^(?:(?:"
    + _alternation(POLITE_LEAD_INS)
    + r")(?!\w)"
    + _SEPARATOR
    + r"){0,3}(?:"
    + _alternation(FOLDER_PHRASES)
    + r")(?!\w)\W*\w"
)


def should_run_super_context(
    *, is_orchestrator: bool, first_turn: bool, has_prior_conversation: bool, enabled: bool
) -> bool:
    """Whether the harness prepares context for this turn.

    True only for the orchestrator's first turn of a thread with no prior conversation,
    when the ``super_context_enabled`` flag is on.
    """
    return is_orchestrator and first_turn and not has_prior_conversation and enabled


class _RoleMessage(Protocol):
    @property
    def role(self) -> object: ...


def _role_of(message: Mapping[str, Any] | _RoleMessage) -> object:
    if isinstance(message, Mapping):
        return message.get("role")
    try:
        return message.role
    except AttributeError:  # an object with no role holds no conversation
        return None


def has_prior_conversation(transcript: Sequence[Mapping[str, Any] | _RoleMessage]) -> bool:
    """Whether a transcript already holds a conversation (any ``assistant`` message).

    Messages may be mappings with a ``"role"`` key or objects with a ``.role`` attribute.
    A transcript holding only the user's just-sent message (for instance a thread opened
    with an attachment) is still a new thread.
    """
    for message in transcript:
        role = _role_of(message)
        if isinstance(role, str) and role.strip().lower() == "assistant":
            return True
    return False


def normalize_message(message: str) -> str:
    """Normalise a message for the skip checks.

    Runs of whitespace become one space, ASCII punctuation and spaces are trimmed from
    both ends, and the result is lower-cased. Normalising twice gives the same result.
    """
    collapsed = " ".join(message.split())
    return collapsed.strip(_EDGE_CHARS).lower()


def _is_simple_filesystem_action(normalized: str) -> bool:
    if _FILESYSTEM_ACTION_RE.match(normalized) is None:
        return False
    return _CONTEXT_HINT_RE.search(normalized) is None


def super_context_skip_reason(message: str, *, native_tool_calling: bool = True) -> str | None:
    """Why the scout should not run for this first message, or ``None`` to run it.

    The reasons, checked in the order of :data:`SKIP_REASONS`, are explained in the
    module docstring. ``native_tool_calling`` describes the orchestrator's provider; the
    last reason applies only when it is false.
    """
    normalized = normalize_message(message)
    if not normalized:
        return "empty_message"
    if normalized in _GREETING_SET:
        return "context_free_greeting"
    if _is_simple_filesystem_action(normalized):
        return "simple_local_filesystem_action"
    if not native_tool_calling and _INTENT_HINT_RE.search(normalized) is None:
        return "non_native_provider_no_explicit_intent"
    return None
