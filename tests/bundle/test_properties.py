"""Property tests for the bundle parser and fitter: untrusted text never breaks them."""

from __future__ import annotations

import json

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from supercontext_lab.bundle import (
    CLOSE_TAG,
    OPEN_TAG,
    TRUNCATION_MARKER,
    bundle_rejection_reason,
    extract_context_bundle,
    fit_bundle,
    parse_context_bundle,
    parse_has_enough_context,
    parse_proposed_goal,
)

# Pieces of the grammar, so generated text often looks almost like a bundle.
FRAGMENTS = [
    OPEN_TAG,
    CLOSE_TAG,
    "[Context_Bundle]",
    "[ context_bundle ]",
    "[context_bundle",
    "context_bundle]",
    "has_enough_context:",
    "HAS_ENOUGH_CONTEXT:",
    "proposed_goal:",
    "proposed_goal :",
    "summary:",
    "recommended_tool_calls:",
    "recommended_skills:",
    "- tool:",
    "* skill:",
    "tool:",
    "args:",
    "why:",
    "installed:",
    "Missing:",
    "true",
    "`false`",
    '"none"',
    "None.",
    "[]",
    '{"a": [1, {"b": null}]}',
    "{",
    "}",
    "[",
    "]",
    TRUNCATION_MARKER,
    "```",
    "```json",
    "\n",
    "\r\n",
    "\n  ",
    "\n      ",
    "\t",
    " ",
    "\u3000",
    "\u2028",
    "é",
    "\U0001f600",
    "中文",
    "…",
]

fragment_text = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=6)), max_size=60
).map("".join)
any_text = st.one_of(st.text(max_size=300), fragment_text)

WORDS = ["the", "user", "(memory)", "report", "Q3", "café", "日本語", "中文", "😀", "🚀", "x" * 40]
words = st.lists(st.one_of(st.sampled_from(WORDS), st.just("\n")), max_size=12).map(" ".join)
# Hypothesis keeps lists short, so long text repeats a random chunk a random number of times.
long_words = st.builds(
    lambda chunk, times, tail: chunk * times + tail,
    st.lists(st.one_of(st.sampled_from(WORDS), st.just("\n"), st.just("\n  ")), max_size=8).map(
        " ".join
    ),
    st.integers(0, 300),
    words,
)
names = st.from_regex(r"[a-z][a-z0-9_-]{0,20}", fullmatch=True)
# JSON objects, pretty-printed over several lines or on one line.
json_args = st.builds(
    lambda value, indent: json.dumps(value, ensure_ascii=False, indent=indent),
    st.dictionaries(names, st.one_of(st.integers(), words), max_size=3),
    st.sampled_from([None, 2]),
)


@st.composite
def bundles(draw: st.DrawFn) -> str:
    """A well-formed envelope with random (often multibyte) fields."""
    lines = [f"has_enough_context: {draw(st.sampled_from(['true', 'False', '`false`', 'maybe']))}"]
    lines.append(f"proposed_goal: {draw(st.one_of(st.just('none'), words, long_words))}")
    lines.append("summary: " + draw(long_words))
    tools = draw(st.lists(st.tuples(names, st.one_of(json_args, words), words), max_size=12))
    empty_header = draw(st.booleans())  # "recommended_tool_calls: []" or no section
    if tools or empty_header:
        lines.append("recommended_tool_calls:" + ("" if tools else " []"))
    for tool, args, why in tools:
        lines += [f"  - tool: {tool}", f"    args: {args}", f"    why: {why}"]
    skills = draw(
        st.lists(st.tuples(names, st.sampled_from(["true", "false", "?"]), words), max_size=12)
    )
    if skills:
        lines.append("recommended_skills:")
    for skill, installed, why in skills:
        lines += [f"  - skill: `{skill}`", f"    installed: {installed}", f"    why: {why}"]
    envelope = OPEN_TAG + "\n" + "\n".join(lines) + "\n" + CLOSE_TAG
    assume(extract_context_bundle(envelope) == envelope)
    return envelope


@settings(deadline=None)
@given(any_text)
def test_parse_never_raises_and_agrees_with_extract(text: str) -> None:
    bundle = parse_context_bundle(text)
    envelope = extract_context_bundle(text)
    assert (bundle is None) == (envelope is None)
    assert (bundle_rejection_reason(text) is None) == (envelope is not None)
    parse_has_enough_context(text)
    parse_proposed_goal(text)
    if bundle is not None:
        assert bundle.envelope == envelope
        assert bundle.has_enough_context == parse_has_enough_context(bundle.envelope)
        assert bundle.proposed_goal == parse_proposed_goal(bundle.envelope)
        json.dumps(bundle.to_dict())
        mimebundle = bundle._repr_mimebundle_()
        assert "<" not in mimebundle["text/markdown"]
        assert mimebundle["text/plain"].startswith("ContextBundle\n")


@settings(deadline=None)
@given(any_text)
def test_rejection_reason_is_one_line(text: str) -> None:
    reason = bundle_rejection_reason(text)
    if reason is not None:
        assert reason
        assert "\n" not in reason


@settings(deadline=None)
@given(any_text)
def test_extracted_envelope_shape(text: str) -> None:
    envelope = extract_context_bundle(text)
    if envelope is None:
        return
    assert envelope in text
    assert envelope.startswith(OPEN_TAG)
    assert envelope.endswith(CLOSE_TAG)
    assert envelope.count(OPEN_TAG) == 1
    assert envelope.count(CLOSE_TAG) == 1
    assert envelope[len(OPEN_TAG) : -len(CLOSE_TAG)].strip()
    assert text.count(OPEN_TAG) == 1
    assert text.count(CLOSE_TAG) == 1


prose = st.text(max_size=80).filter(lambda s: "context_bundle]" not in s)


@settings(deadline=None)
@given(bundles(), prose, prose)
def test_extract_drops_the_prose_around_an_envelope(envelope: str, before: str, after: str) -> None:
    assume(extract_context_bundle(before + envelope + after) is not None)
    assert extract_context_bundle(before + envelope + after) == envelope


def check_fit(text: str, cap: int) -> str:
    """The properties every fit result has; returns the result for more checks."""
    envelope = extract_context_bundle(text)
    assert envelope is not None
    result = fit_bundle(text, cap)
    assert len(result) <= cap
    assert extract_context_bundle(result) == result
    if len(envelope) <= cap:
        assert result == envelope
    else:
        assert TRUNCATION_MARKER in result
    assert parse_has_enough_context(result) == parse_has_enough_context(envelope)
    goal, fitted_goal = parse_proposed_goal(envelope), parse_proposed_goal(result)
    if fitted_goal != goal:
        assert goal is not None
        assert fitted_goal is not None
        assert fitted_goal.endswith("…")
        assert goal.startswith(fitted_goal[:-1].rstrip())
    assert fit_bundle(result, cap) == result
    return result


@settings(deadline=None)
@given(bundles(), st.integers(200, 6000))
def test_fit_bundle_properties(envelope: str, cap: int) -> None:
    result = check_fit(envelope, cap)
    original, fitted = parse_context_bundle(envelope), parse_context_bundle(result)
    assert original is not None
    assert fitted is not None
    # List items are only ever dropped from the end, never altered.
    kept_tools = fitted.recommended_tool_calls
    assert kept_tools == original.recommended_tool_calls[: len(kept_tools)]
    kept_skills = fitted.recommended_skills
    assert kept_skills == original.recommended_skills[: len(kept_skills)]
    if kept_tools != original.recommended_tool_calls:
        assert kept_skills == []  # skills go before tool calls
    if len(envelope) > cap and fitted.summary != original.summary:
        assert fitted.summary.endswith("…")


# Envelope insides made of lines: some indentation, often a key, then odd or long text.
INNER_FRAGMENTS = [f for f in FRAGMENTS if f not in (OPEN_TAG, CLOSE_TAG)]
odd_line = st.builds(
    lambda indent, key, text: indent + key + text,
    st.sampled_from(["", "  ", "    ", "\t"]),
    st.sampled_from(["", *[f for f in INNER_FRAGMENTS if f.endswith(":")]]),
    st.one_of(
        st.lists(st.one_of(st.sampled_from(INNER_FRAGMENTS), st.text(max_size=6)), max_size=8).map(
            "".join
        ),
        long_words,
    ),
)
odd_inside = st.lists(odd_line, max_size=40).map("\n".join)


@settings(deadline=None)
@given(odd_inside, st.integers(200, 2000))
# Two args blocks joined into one value once re-rendered as an extra "- tool:" item.
@example(
    inside="recommended_tool_calls:\n- tool:\n[Context_Bundle]\nargs:[Context_Bundle]"
    "[Context_Bundle][Context_Bundle][Context_Bundle]\nargs:- tool:",
    cap=200,
)
def test_fit_bundle_on_odd_envelopes(inside: str, cap: int) -> None:
    text = OPEN_TAG + inside + CLOSE_TAG
    assume(extract_context_bundle(text) is not None)
    result = check_fit(text, cap)
    original, fitted = parse_context_bundle(text), parse_context_bundle(result)
    assert original is not None
    assert fitted is not None
    kept = [call.tool for call in fitted.recommended_tool_calls]
    assert kept == [call.tool for call in original.recommended_tool_calls][: len(kept)]
    kept = [skill.skill for skill in fitted.recommended_skills]
    assert kept == [skill.skill for skill in original.recommended_skills][: len(kept)]
