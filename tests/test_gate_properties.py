"""Property tests for the message gate: it must behave on any text a user may send."""

from __future__ import annotations

import re
import string

from hypothesis import given, settings
from hypothesis import strategies as st

from supercontext_lab.gate import (
    CONTEXT_HINTS,
    FOLDER_PHRASES,
    POLITE_LEAD_INS,
    SKIP_REASONS,
    normalize_message,
    super_context_skip_reason,
)

FILESYSTEM = "simple_local_filesystem_action"

_edges = st.text(alphabet=string.punctuation + string.whitespace, max_size=12)
_separators = st.text(alphabet=" ,.!-;:?\t\n", min_size=1, max_size=4)
# A word starts with a letter or digit: a tail of only "_" is ASCII punctuation, which the
# normaliser trims from the ends, so it would leave the folder phrase with no words after it.
_words = st.from_regex(r"[a-zA-Z0-9èàù][a-zA-Z0-9èàù_]*(?:[-./'][a-zA-Z0-9èàù_]+)?", fullmatch=True)


@st.composite
def folder_requests(draw: st.DrawFn) -> str:
    """A message built like a folder request: lead-ins, a folder phrase, more words."""
    lead_ins = draw(st.lists(st.sampled_from(POLITE_LEAD_INS), max_size=3))
    prefix = "".join(lead_in + draw(_separators) for lead_in in lead_ins)
    phrase = draw(st.sampled_from(FOLDER_PHRASES))
    tail = " ".join(draw(st.lists(_words, min_size=1, max_size=5)))
    return f"{draw(_edges)}{prefix}{phrase} {tail}{draw(_edges)}"


@settings(deadline=None)
@given(message=st.text(), native=st.booleans())
def test_skip_reason_is_total(message: str, native: bool) -> None:
    reason = super_context_skip_reason(message, native_tool_calling=native)
    assert reason is None or reason in SKIP_REASONS


@settings(deadline=None)
@given(message=st.text())
def test_normalize_is_idempotent(message: str) -> None:
    once = normalize_message(message)
    assert normalize_message(once) == once


@settings(deadline=None)
@given(message=folder_requests())
def test_folder_requests_are_mostly_filesystem_actions(message: str) -> None:
    # Random tails can spell a context hint ("drive"); everything else must be an action.
    normalized = normalize_message(message)
    has_hint = any(
        re.search(rf"(?<!\w){re.escape(hint)}(?!\w)", normalized) for hint in CONTEXT_HINTS
    )
    if not has_hint:
        assert super_context_skip_reason(message) == FILESYSTEM


@settings(deadline=None)
@given(
    message=st.one_of(folder_requests(), st.text()),
    hint=st.sampled_from(CONTEXT_HINTS),
    native=st.booleans(),
)
def test_a_context_hint_cancels_a_filesystem_action(message: str, hint: str, native: bool) -> None:
    if super_context_skip_reason(message, native_tool_calling=native) != FILESYSTEM:
        return
    extended = f"{message} {hint}"
    assert super_context_skip_reason(extended, native_tool_calling=native) != FILESYSTEM
    assert super_context_skip_reason(extended) is None


@settings(deadline=None)
@given(
    message=st.one_of(st.text(), folder_requests()),
    prefix=_edges,
    suffix=_edges,
    native=st.booleans(),
)
def test_surrounding_punctuation_and_whitespace_change_nothing(
    message: str, prefix: str, suffix: str, native: bool
) -> None:
    wrapped = prefix + message + suffix
    assert normalize_message(wrapped) == normalize_message(message)
    assert super_context_skip_reason(
        wrapped, native_tool_calling=native
    ) == super_context_skip_reason(message, native_tool_calling=native)
