"""The first-turn gate (SPEC §4): structural gate, transcript check and skip reasons."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from supercontext_lab.gate import (
    CONTEXT_HINTS,
    FOLDER_PHRASES,
    GREETINGS,
    INTENT_HINTS,
    POLITE_LEAD_INS,
    SKIP_REASONS,
    ColdStartReason,
    has_prior_conversation,
    normalize_message,
    should_run_super_context,
    structural_skip_reason,
    super_context_skip_reason,
)
from supercontext_lab.models.base import Message

EMPTY = "empty_message"
GREETING = "context_free_greeting"
FILESYSTEM = "simple_local_filesystem_action"
NON_NATIVE = "non_native_provider_no_explicit_intent"

# The lists from SPEC §4, written out here so a drifting constant fails a test.
SPEC_GREETINGS = (
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
SPEC_LEAD_INS = (
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
SPEC_ENGLISH_FOLDER_PHRASES = (
    "create folder",
    "create a folder",
    "make folder",
    "make a folder",
    "create directory",
    "create a directory",
    "make directory",
    "make a directory",
    "mkdir",
)
SPEC_ITALIAN_FOLDER_PHRASES = (
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
SPEC_CONTEXT_HINTS = (
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
SPEC_INTENT_HINTS = (
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

# Lead-in prefixes with zero to three lead-ins, mixing separators.
ENGLISH_PREFIXES = (
    "",
    "please ",
    "Can you ",
    "could you please ",
    "hey, would you please ",
    "Hi! can you, please ",
    "hello... hey -- please ",
)
ITALIAN_PREFIXES = (
    "",
    "per favore ",
    "Puoi ",
    "potresti per favore ",
    "ciao, puoi per favore ",
    "Ehi! ciao, per piacere ",
    "ciao... ehi -- potresti ",
)


def test_exported_lists_match_the_spec() -> None:
    assert GREETINGS == SPEC_GREETINGS
    assert POLITE_LEAD_INS == SPEC_LEAD_INS
    assert FOLDER_PHRASES == SPEC_ENGLISH_FOLDER_PHRASES + SPEC_ITALIAN_FOLDER_PHRASES
    assert CONTEXT_HINTS == SPEC_CONTEXT_HINTS
    assert INTENT_HINTS == SPEC_INTENT_HINTS
    assert SKIP_REASONS == (EMPTY, GREETING, FILESYSTEM, NON_NATIVE)


# --- should_run_super_context: every combination ---------------------------------------


@pytest.mark.parametrize(
    ("is_orchestrator", "first_turn", "prior", "enabled", "expected"),
    [
        (True, True, False, True, True),
        (True, True, False, False, False),
        (True, True, True, True, False),
        (True, True, True, False, False),
        (True, False, False, True, False),
        (True, False, False, False, False),
        (True, False, True, True, False),
        (True, False, True, False, False),
        (False, True, False, True, False),
        (False, True, False, False, False),
        (False, True, True, True, False),
        (False, True, True, False, False),
        (False, False, False, True, False),
        (False, False, False, False, False),
        (False, False, True, True, False),
        (False, False, True, False, False),
    ],
)
def test_should_run_super_context_truth_table(
    is_orchestrator: bool, first_turn: bool, prior: bool, enabled: bool, expected: bool
) -> None:
    result = should_run_super_context(
        is_orchestrator=is_orchestrator,
        first_turn=first_turn,
        has_prior_conversation=prior,
        enabled=enabled,
    )
    assert result is expected


# --- has_prior_conversation ----------------------------------------------------------


@pytest.mark.parametrize(
    ("transcript", "expected"),
    [
        ([], False),
        ([{"role": "user", "content": "hello"}], False),
        ([{"role": "system", "content": "x"}, {"role": "user", "content": "y"}], False),
        ([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], True),
        ([{"role": "assistant", "content": None}], True),
        ([{"role": "Assistant", "content": "b"}], True),
        ([{"role": "tool", "content": "result"}], False),
        ([{"content": "no role at all"}], False),
        ([{"role": None}], False),
        ([Message(role="user", content="only the first message")], False),
        ([Message(role="system", content="s"), Message(role="user", content="u")], False),
        ([Message(role="user", content="u"), Message(role="assistant", content="a")], True),
        ([SimpleNamespace(role="assistant")], True),
        ([SimpleNamespace(role="user")], False),
        ([SimpleNamespace(content="no role")], False),
        ([{"role": "user"}, SimpleNamespace(role="assistant")], True),
        ((Message(role="user", content="u"), {"role": "assistant"}), True),
    ],
)
def test_has_prior_conversation(transcript: list[Any], expected: bool) -> None:
    assert has_prior_conversation(transcript) is expected


# --- normalize_message ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("", ""),
        ("   ", ""),
        ("?!...", ""),
        ("  Hello!!  ", "hello"),
        ("Thank you.", "thank you"),
        ("thank \t\n you", "thank you"),
        ("!? hi ?!", "hi"),
        ("(Create a folder)", "create a folder"),
        ("Don't stop.", "don't stop"),
        ("a,  b ,c", "a, b ,c"),
        ("¿Qué?", "¿qué"),
        ("PERCHÈ no", "perchè no"),
        ("line one\r\nline two\u00a0end", "line one line two end"),
    ],
)
def test_normalize_message(message: str, expected: str) -> None:
    assert normalize_message(message) == expected


# --- super_context_skip_reason -------------------------------------------------------


def _greeting_cases() -> list[tuple[str, bool, str | None]]:
    cases: list[tuple[str, bool, str | None]] = []
    for greeting in SPEC_GREETINGS:
        cases.append((greeting, True, GREETING))
        cases.append((f"  {greeting.upper()}!!  ", True, GREETING))
        cases.append((greeting.title() + ".", True, GREETING))
        cases.append((greeting.replace(" ", "   "), False, GREETING))
        # More words after a greeting make it a real message.
        cases.append((f"{greeting}, what did we discuss about the grant?", True, None))
    return cases


GREETING_CASES = [
    *_greeting_cases(),
    ("  Hello!!  ", True, GREETING),
    ("Thank you.", True, GREETING),
    ("...hey?", True, GREETING),
    ("hi, what did we discuss about the grant?", True, None),
    ("hello there", True, None),
    ("hello there", False, NON_NATIVE),
    ("hi hi", True, None),
    ("thank", True, None),
    ("goodnight", True, None),
    ("hiya", True, None),
    ("thank-you", True, None),
]

EMPTY_CASES = [
    ("", True, EMPTY),
    ("   ", True, EMPTY),
    ("\n\t  \r\n", True, EMPTY),
    ("?!...", True, EMPTY),
    (" - ", False, EMPTY),
    ("!!! ??? ...", True, EMPTY),
    ("`~@#$%^&*()_+={}[]|\\:;\"'<>,./", True, EMPTY),
    # Only ASCII punctuation is trimmed: a non-ASCII mark is content.
    ("…", True, None),
    ("¿", False, NON_NATIVE),
]


def _folder_cases() -> list[tuple[str, bool, str | None]]:
    cases: list[tuple[str, bool, str | None]] = []
    phrase_sets = (
        (SPEC_ENGLISH_FOLDER_PHRASES, ENGLISH_PREFIXES, "named reports"),
        (SPEC_ITALIAN_FOLDER_PHRASES, ITALIAN_PREFIXES, "chiamata progetti"),
    )
    for phrases, prefixes, tail in phrase_sets:
        for phrase in phrases:
            for prefix in prefixes:
                cases.append((f"{prefix}{phrase} {tail}", True, FILESYSTEM))
            # The filesystem reason comes before the non-native one.
            cases.append((f"{prefixes[4]}{phrase} {tail}!", False, FILESYSTEM))
            # A folder phrase with nothing after it is not a filesystem action.
            cases.append((phrase, True, None))
            cases.append((f"{prefixes[3]}{phrase}?", True, None))
    return cases


FOLDER_CASES = [
    *_folder_cases(),
    ("hey, can you please create a folder named x", True, FILESYSTEM),
    ("hey,can you please create a folder named x", True, FILESYSTEM),
    ("CREATE   A  FOLDER   NAMED   X", True, FILESYSTEM),
    ("create a folder: notes", True, FILESYSTEM),
    ("mkdir -p src/app", True, FILESYSTEM),
    ("ciao, crea una cartella progetti", True, FILESYSTEM),
    ("create a folder called drivers", True, FILESYSTEM),
    ("create a folder called emails", True, FILESYSTEM),
    ("create a folder named calendars", True, FILESYSTEM),
    ("create a folder for the preview builds", True, FILESYSTEM),
    ("create a folder named mydrive", True, FILESYSTEM),
    ("create a folder named drive_backup", True, FILESYSTEM),
    ("create a folder named drive2", True, FILESYSTEM),
    ("crea una cartella chiamata calendari", True, FILESYSTEM),
    # Four lead-ins: only three are stripped.
    ("hey hey hey hey create a folder x", True, None),
    ("hey hey hey create a folder x", True, FILESYSTEM),
    # The folder phrase must open the message and be whole words.
    ("I want to create a folder named x", True, None),
    ("created a folder named x", True, None),
    ("please create a folders x", True, None),
    ("mkdirs x", True, None),
    ("hiplease create a folder x", True, None),
    ("pleasecreate a folder x", True, None),
    ("create a folder", True, None),
    ("create a folder.", True, None),
    ("please create a folder!!", True, None),
    ("create a folder", False, NON_NATIVE),
    ("create a folder ...", True, None),
    # Context hints (whole words) turn the action into one that needs context.
    ("create a folder for the notes we discussed", True, None),
    ("create a folder for previous builds", True, None),
    ("create a folder named drive", True, None),
    ("create a folder named drive-backup", True, None),
    ("create a folder for my Gmail attachments", True, None),
    ("crea una cartella per le note di cui abbiamo parlato", True, None),
    ("crea una cartella come la volta precedente", True, None),
]


def _context_hint_cases() -> list[tuple[str, bool, str | None]]:
    cases: list[tuple[str, bool, str | None]] = []
    for hint in SPEC_CONTEXT_HINTS:
        cases.append((f"create a folder for the {hint} files", True, None))
        cases.append((f"Please make a directory named {hint.upper()}!", True, None))
        cases.append((f"ciao, crea una cartella {hint}", True, None))
    return cases


def _intent_hint_cases() -> list[tuple[str, bool, str | None]]:
    cases: list[tuple[str, bool, str | None]] = []
    for hint in SPEC_INTENT_HINTS:
        cases.append((f"tell me about {hint} today", False, None))
        cases.append((f"{hint.upper()}?", False, None))
        cases.append((f"what about {hint}, then", False, None))
        # With native tool calling there is no reason to skip either way.
        cases.append((f"tell me about {hint} today", True, None))
        # Inside a longer word a hint does not count.
        cases.append((f"tell me about x{hint.replace(' ', '')}y today", False, NON_NATIVE))
    return cases


NON_NATIVE_CASES = [
    *_context_hint_cases(),
    *_intent_hint_cases(),
    ("what is the capital of France?", True, None),
    ("what is the capital of France?", False, NON_NATIVE),
    ("how do I prevent overfitting", False, NON_NATIVE),
    ("how do I prevent overfitting", True, None),
    ("update the GPU driver", False, NON_NATIVE),
    ("show me the preview", False, NON_NATIVE),
    ("what was in the previous thread", False, None),
    ("list my calendars", False, NON_NATIVE),
    ("check my emails", False, NON_NATIVE),
    ("check my email", False, None),
    ("what did we talk about", False, NON_NATIVE),
    ("what did we talked about", False, None),
    ("remind me to call Anna", False, None),
    ("reminds me of something", False, NON_NATIVE),
    ("ho una riunione domani", False, None),
    ("riunioneè domani", False, NON_NATIVE),
    ("èagenda", False, NON_NATIVE),
    ("please", False, NON_NATIVE),
    ("please", True, None),
]

ORDERING_CASES = [
    ("", False, EMPTY),
    ("hello", False, GREETING),
    ("Good evening!", False, GREETING),
    ("create a folder named x", False, FILESYSTEM),
    ("hey create a folder named x", False, FILESYSTEM),
]


@pytest.mark.parametrize(
    ("message", "native", "expected"),
    [*GREETING_CASES, *EMPTY_CASES, *FOLDER_CASES, *NON_NATIVE_CASES, *ORDERING_CASES],
)
def test_super_context_skip_reason(message: str, native: bool, expected: str | None) -> None:
    assert super_context_skip_reason(message, native_tool_calling=native) == expected


def test_native_tool_calling_defaults_to_true() -> None:
    assert super_context_skip_reason("what is the capital of France?") is None


# --- ColdStartReason: one enum for every cold start -------------------------------------


def test_reasons_equal_their_spec_strings_and_show_as_them() -> None:
    import json

    reason = super_context_skip_reason("hi")
    assert reason is ColdStartReason.CONTEXT_FREE_GREETING
    assert reason == GREETING and isinstance(reason, str)
    assert f"{reason}" == str(reason) == GREETING
    assert json.dumps({"reason": reason}) == '{"reason": "context_free_greeting"}'
    assert repr(SKIP_REASONS) == repr((EMPTY, GREETING, FILESYSTEM, NON_NATIVE))


def test_every_reason_has_one_explanation() -> None:
    for reason in ColdStartReason:
        assert reason.explanation.endswith(".") and "\n" not in reason.explanation
    assert len({reason.explanation for reason in ColdStartReason}) == len(ColdStartReason)


def test_skipped_reasons_are_the_gates_ones() -> None:
    skipped = {reason for reason in ColdStartReason if reason.skipped}
    assert set(SKIP_REASONS) <= skipped
    assert {"super_context_disabled", "not_orchestrator", "not_first_turn"} <= skipped
    assert "no_envelope" not in skipped and "timeout" not in skipped


@pytest.mark.parametrize(
    ("options", "expected"),
    [
        ({}, None),
        ({"enabled": False}, ColdStartReason.SUPER_CONTEXT_DISABLED),
        ({"enabled": False, "is_orchestrator": False}, ColdStartReason.SUPER_CONTEXT_DISABLED),
        ({"is_orchestrator": False, "first_turn": False}, ColdStartReason.NOT_ORCHESTRATOR),
        ({"first_turn": False, "has_prior_conversation": True}, ColdStartReason.NOT_FIRST_TURN),
        ({"has_prior_conversation": True}, ColdStartReason.PRIOR_CONVERSATION),
    ],
)
def test_structural_skip_reason_names_the_first_closed_check(
    options: dict[str, bool], expected: ColdStartReason | None
) -> None:
    gate: dict[str, bool] = {
        "is_orchestrator": True,
        "first_turn": True,
        "has_prior_conversation": False,
        "enabled": True,
        **options,
    }
    assert structural_skip_reason(**gate) is expected
    assert should_run_super_context(**gate) is (expected is None)
