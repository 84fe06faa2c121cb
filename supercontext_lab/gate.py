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

Every reason a turn starts cold is one :class:`ColdStartReason`: the structural ones
(:func:`structural_skip_reason`), the four of the message gate, and why a preparation
that ran failed. It is a ``str`` enum, so a reason equals its SPEC string
(``super_context_skip_reason("hi") == "context_free_greeting"``) and JSON shows the
string; :attr:`ColdStartReason.explanation` is its one-line explanation for people.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Mapping, Sequence
from enum import Enum
from typing import Any, Protocol

__all__ = [
    "CONTEXT_HINTS",
    "FOLDER_PHRASES",
    "GREETINGS",
    "INTENT_HINTS",
    "POLITE_LEAD_INS",
    "SKIP_REASONS",
    "ColdStartReason",
    "has_prior_conversation",
    "normalize_message",
    "should_run_super_context",
    "structural_skip_reason",
    "super_context_skip_reason",
]


class ColdStartReason(str, Enum):
    """Why a turn starts cold: the scout was skipped, or it ran and gave nothing usable.

    A ``str``, so it compares equal to its value and JSON and text show the value. The
    free text of one case (an exception's message, the scout's problems) travels beside
    it (``TurnResult.reason_detail``), never in it.
    """

    # The structural gate (should_run_super_context).
    SUPER_CONTEXT_DISABLED = "super_context_disabled"
    NOT_ORCHESTRATOR = "not_orchestrator"
    NOT_FIRST_TURN = "not_first_turn"
    PRIOR_CONVERSATION = "prior_conversation"
    # The message gate (super_context_skip_reason, SPEC §4).
    EMPTY_MESSAGE = "empty_message"
    CONTEXT_FREE_GREETING = "context_free_greeting"
    SIMPLE_LOCAL_FILESYSTEM_ACTION = "simple_local_filesystem_action"
    NON_NATIVE_PROVIDER_NO_EXPLICIT_INTENT = "non_native_provider_no_explicit_intent"
    # A preparation that ran and failed (SPEC §7.6).
    SCOUT_ERROR = "scout_error"
    MODEL_ERROR = "model_error"
    TIMEOUT = "timeout"
    ITERATION_CAP = "iteration_cap"
    CONTEXT_FULL = "context_full"
    NO_ENVELOPE = "no_envelope"
    UNGROUNDED = "ungrounded"
    # The pre-flight design (SPEC §16).
    DESIGN_COLD = "design_cold"
    DESIGN_TOOL_ONLY = "design_tool_only"
    DEADLINE_MISSED = "deadline_missed"
    NO_CACHED_ENVELOPE = "no_cached_envelope"
    NO_EARLIER_LOOKUP = "no_earlier_lookup"

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        # Shown like the plain string, so a tuple of reasons prints as the SPEC's strings.
        return repr(self.value)

    @property
    def skipped(self) -> bool:
        """True when the scout did not run at all (a gate said no)."""
        return self not in _FAILURES

    @property
    def explanation(self) -> str:
        """One sentence saying what the reason means, for a person reading it."""
        return _EXPLANATIONS[self]


_FAILURES = frozenset(
    {
        ColdStartReason.SCOUT_ERROR,
        ColdStartReason.MODEL_ERROR,
        ColdStartReason.TIMEOUT,
        ColdStartReason.ITERATION_CAP,
        ColdStartReason.CONTEXT_FULL,
        ColdStartReason.NO_ENVELOPE,
        ColdStartReason.UNGROUNDED,
        ColdStartReason.DEADLINE_MISSED,
        ColdStartReason.NO_CACHED_ENVELOPE,
    }
)

# The one table of explanations; tests/test_gate.py holds it complete.
_EXPLANATIONS: dict[ColdStartReason, str] = {
    ColdStartReason.SUPER_CONTEXT_DISABLED: "Super Context is off for this thread.",
    ColdStartReason.NOT_ORCHESTRATOR: "Only an orchestrator thread is prepared.",
    ColdStartReason.NOT_FIRST_TURN: "Only the first turn of a thread is prepared.",
    ColdStartReason.PRIOR_CONVERSATION: "The thread resumes an earlier conversation.",
    ColdStartReason.EMPTY_MESSAGE: "The message is empty.",
    ColdStartReason.CONTEXT_FREE_GREETING: (
        "The message is a greeting or thanks that needs no context."
    ),
    ColdStartReason.SIMPLE_LOCAL_FILESYSTEM_ACTION: (
        "The message is a simple folder action that needs no context."
    ),
    ColdStartReason.NON_NATIVE_PROVIDER_NO_EXPLICIT_INTENT: (
        "The provider has no native tool calling and the message asks for no earlier context."
    ),
    ColdStartReason.SCOUT_ERROR: "The scout could not run (its model route, its workspace or a bug).",
    ColdStartReason.MODEL_ERROR: "The scout's model failed.",
    ColdStartReason.TIMEOUT: "The scout ran out of time.",
    ColdStartReason.ITERATION_CAP: "The scout used all its model calls without an envelope.",
    ColdStartReason.CONTEXT_FULL: "The scout's model ran out of context window.",
    ColdStartReason.NO_ENVELOPE: "The scout finished without a valid envelope.",
    ColdStartReason.UNGROUNDED: (
        "The grounding check found nothing in the bundle that exists or that what the scout "
        "read supports."
    ),
    ColdStartReason.DESIGN_COLD: 'The pre-flight design is "cold": no context is prepared.',
    ColdStartReason.DESIGN_TOOL_ONLY: (
        'The pre-flight design is "tool-only": no context is prepared; the orchestrator '
        "may call memory_recall itself."
    ),
    ColdStartReason.DEADLINE_MISSED: (
        "The scout was not done by the pre-turn deadline and nothing else prepared the turn."
    ),
    ColdStartReason.NO_CACHED_ENVELOPE: (
        "The workspace gave the cached design nothing to put in an envelope."
    ),
    ColdStartReason.NO_EARLIER_LOOKUP: (
        "The prefetch design had no completed lookup of an earlier turn to send."
    ),
}

SKIP_REASONS: tuple[ColdStartReason, ...] = (
    ColdStartReason.EMPTY_MESSAGE,
    ColdStartReason.CONTEXT_FREE_GREETING,
    ColdStartReason.SIMPLE_LOCAL_FILESYSTEM_ACTION,
    ColdStartReason.NON_NATIVE_PROVIDER_NO_EXPLICIT_INTENT,
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


def structural_skip_reason(
    *, is_orchestrator: bool, first_turn: bool, has_prior_conversation: bool, enabled: bool
) -> ColdStartReason | None:
    """Why the structural gate is closed for this turn, or ``None`` when it is open.

    Checked in this order: the flag is off, the thread is not an orchestrator's, the turn
    is not the first, the thread already holds a conversation.
    """
    if not enabled:
        return ColdStartReason.SUPER_CONTEXT_DISABLED
    if not is_orchestrator:
        return ColdStartReason.NOT_ORCHESTRATOR
    if not first_turn:
        return ColdStartReason.NOT_FIRST_TURN
    if has_prior_conversation:
        return ColdStartReason.PRIOR_CONVERSATION
    return None


def should_run_super_context(
    *, is_orchestrator: bool, first_turn: bool, has_prior_conversation: bool, enabled: bool
) -> bool:
    """Whether the harness prepares context for this turn.

    True only for the orchestrator's first turn of a thread with no prior conversation,
    when the ``super_context_enabled`` flag is on (:func:`structural_skip_reason` says
    which of those fails).
    """
    return (
        structural_skip_reason(
            is_orchestrator=is_orchestrator,
            first_turn=first_turn,
            has_prior_conversation=has_prior_conversation,
            enabled=enabled,
        )
        is None
    )


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


def super_context_skip_reason(
    message: str, *, native_tool_calling: bool = True
) -> ColdStartReason | None:
    """Why the scout should not run for this first message, or ``None`` to run it.

    The reasons, checked in the order of :data:`SKIP_REASONS`, are explained in the
    module docstring; each equals its SPEC string. ``native_tool_calling`` describes the
    orchestrator's provider; the last reason applies only when it is false.
    """
    normalized = normalize_message(message)
    if not normalized:
        return ColdStartReason.EMPTY_MESSAGE
    if normalized in _GREETING_SET:
        return ColdStartReason.CONTEXT_FREE_GREETING
    if _is_simple_filesystem_action(normalized):
        return ColdStartReason.SIMPLE_LOCAL_FILESYSTEM_ACTION
    if not native_tool_calling and _INTENT_HINT_RE.search(normalized) is None:
        return ColdStartReason.NON_NATIVE_PROVIDER_NO_EXPLICIT_INTENT
    return None
