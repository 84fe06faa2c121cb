"""The bundle contract (SPEC §2): extraction, rejection reasons, parsing, line fields, fit."""

from __future__ import annotations

import pytest

from supercontext_lab.bundle import (
    CLOSE_TAG,
    MIN_FIT_CHARS,
    OPEN_TAG,
    TRUNCATION_MARKER,
    ContextBundle,
    RecommendedSkill,
    RecommendedToolCall,
    bundle_rejection_reason,
    extract_context_bundle,
    fit_bundle,
    parse_context_bundle,
    parse_has_enough_context,
    parse_proposed_goal,
)
from supercontext_lab.bundle.render import write_envelope

BODY = "\nhas_enough_context: true\nproposed_goal: none\nsummary: ok (memory)\n"
ENVELOPE = OPEN_TAG + BODY + CLOSE_TAG

FULL = """[context_bundle]
has_enough_context: false
proposed_goal: Ship the Q3 report to finance by Friday
summary: The user owns the Q3 report (memory).
  The draft lives in Drive (integrations).
  Missing: the final revenue numbers.
recommended_tool_calls:
  - tool: `gmail_search`
    args: {"query": "Q3 revenue", "limit": 5}
    why: find the revenue numbers
  - tool: drive_read
    args: the draft document, first section only
    why: see what is written already
recommended_skills:
  - skill: "weekly-report"
    installed: TRUE
    why: formats the report
  - skill: finance-digest
    installed: `false`
    why: summarises revenue mails
[/context_bundle]"""


def wrap(body: str) -> str:
    return f"{OPEN_TAG}\n{body}\n{CLOSE_TAG}"


# ---------------------------------------------------------------------------- extraction


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("just prose, no envelope at all", None),
        (OPEN_TAG + BODY, None),  # unterminated
        (CLOSE_TAG + BODY + OPEN_TAG, None),  # reversed
        (ENVELOPE + "\n" + ENVELOPE, None),  # two envelopes
        (OPEN_TAG + BODY + "the tag [context_bundle] is quoted\n" + CLOSE_TAG, None),
        (OPEN_TAG + BODY + "ends with [/context_bundle] quoted\n" + CLOSE_TAG, None),
        (ENVELOPE + CLOSE_TAG, None),  # a stray second closing tag
        (BODY + CLOSE_TAG, None),  # closing tag only
        (OPEN_TAG + CLOSE_TAG, None),  # empty inside
        (OPEN_TAG + " \n\t\r\n " + CLOSE_TAG, None),  # whitespace only
        (OPEN_TAG + "\u3000\u00a0\n" + CLOSE_TAG, None),  # Unicode whitespace only
        ("[Context_Bundle]" + BODY + "[/Context_Bundle]", None),  # tags are case-sensitive
        ("[CONTEXT_BUNDLE]" + BODY + CLOSE_TAG, None),
        ("[ context_bundle ]" + BODY + "[ /context_bundle ]", None),  # no spaces in tags
        ("[context_bundle ]" + BODY + CLOSE_TAG, None),
        ("Sure! Here is what I found:\n" + ENVELOPE + "\nHope it helps.", ENVELOPE),
        ("```\n" + ENVELOPE + "\n```", ENVELOPE),
        ("```text\n" + ENVELOPE + "\n```\n", ENVELOPE),
        ("   \n" + ENVELOPE + "   \n", ENVELOPE),
        (ENVELOPE, ENVELOPE),
        (OPEN_TAG + "x" + CLOSE_TAG, OPEN_TAG + "x" + CLOSE_TAG),
        # The inside is kept byte for byte: CRLF, tabs, trailing spaces, non-ASCII.
        (
            "pre "
            + OPEN_TAG
            + "\r\n\tsummary: caf\u00e9 \U0001f600 \u4e2d\u6587  \r\n"
            + CLOSE_TAG,
            OPEN_TAG + "\r\n\tsummary: caf\u00e9 \U0001f600 \u4e2d\u6587  \r\n" + CLOSE_TAG,
        ),
    ],
)
def test_extract_context_bundle(output: str, expected: str | None) -> None:
    assert extract_context_bundle(output) == expected


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        ("no envelope here", "no [context_bundle] opening tag"),
        (BODY + CLOSE_TAG, "no [context_bundle] opening tag"),
        (
            "[Context_Bundle]" + BODY + "[/Context_Bundle]",
            "no [context_bundle] opening tag (found '[Context_Bundle]'; "
            "tags are exact: lower case, no spaces)",
        ),
        (
            "[ context_bundle ]" + BODY,
            "no [context_bundle] opening tag (found '[ context_bundle ]'; "
            "tags are exact: lower case, no spaces)",
        ),
        (OPEN_TAG + BODY, "the opening tag has no closing [/context_bundle] tag (unterminated)"),
        (
            OPEN_TAG + BODY + "[/CONTEXT_BUNDLE]",
            "the opening tag has no closing [/context_bundle] tag (unterminated; "
            "found '[/CONTEXT_BUNDLE]'; tags are exact: lower case, no spaces)",
        ),
        (CLOSE_TAG + BODY + OPEN_TAG, "the closing tag comes before the opening tag"),
        (ENVELOPE + ENVELOPE, "2 opening tags; exactly one is allowed"),
        (ENVELOPE * 3, "3 opening tags; exactly one is allowed"),
        (
            OPEN_TAG + "quote [/context_bundle] here" + CLOSE_TAG,
            "2 closing tags; exactly one is allowed",
        ),
        (OPEN_TAG + CLOSE_TAG, "the envelope is empty"),
        (OPEN_TAG + "  \n  " + CLOSE_TAG, "the envelope is empty (whitespace only)"),
        (ENVELOPE, None),
        ("prose " + ENVELOPE + " prose", None),
    ],
)
def test_bundle_rejection_reason(output: str, reason: str | None) -> None:
    assert bundle_rejection_reason(output) == reason
    assert (reason is None) == (extract_context_bundle(output) is not None)
    assert (reason is None) == (parse_context_bundle(output) is not None)


# --------------------------------------------------------------------------- line fields


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("has_enough_context: true", True),
        ("has_enough_context: True", True),
        ("has_enough_context: TRUE", True),
        ("has_enough_context: false", False),
        ("has_enough_context: `false`", False),
        ('has_enough_context: "true"', True),
        ("has_enough_context: 'False'", False),
        ("has_enough_context:true", True),
        ("   has_enough_context:   false   ", False),
        ("HAS_ENOUGH_CONTEXT: true", True),
        ("Has_Enough_Context: false", False),
        ("has_enough_context: maybe", None),
        ("has_enough_context: yes", None),
        ("has_enough_context: true.", None),
        ("has_enough_context:", None),
        ("has_enough_context:\ntrue", None),  # same-line value only
        ("has_enough_context : true", None),  # not a key line
        ("- has_enough_context: true", None),  # not a key line either
        ("summary: nothing", None),  # no such line
        ("has_enough_context: false\nhas_enough_context: true", False),  # first line wins
        ("summary: x\nhas_enough_context: true", True),  # order does not matter
    ],
)
def test_parse_has_enough_context(body: str, expected: bool | None) -> None:
    assert parse_has_enough_context(wrap(body)) is expected
    bundle = parse_context_bundle(wrap(body))
    assert bundle is not None
    assert bundle.has_enough_context is expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("proposed_goal: Ship the Q3 report", "Ship the Q3 report"),
        ("proposed_goal:   Ship it  ", "Ship it"),
        ("proposed_goal:Ship it", "Ship it"),
        ("    proposed_goal: indented goal", "indented goal"),
        ("PROPOSED_GOAL: Upper-case key", "Upper-case key"),
        ('proposed_goal: "Keep quotes on a real goal"', '"Keep quotes on a real goal"'),
        ("proposed_goal: none", None),
        ("proposed_goal: None.", None),
        ("proposed_goal: NONE", None),
        ('proposed_goal: "none"', None),
        ("proposed_goal: `none`", None),
        ("proposed_goal: 'None'.", None),
        ("proposed_goal: none of the above", "none of the above"),
        ("proposed_goal:", None),
        ("proposed_goal:    ", None),
        ("proposed_goal:\nShip it on the next line", None),  # same-line rule
        ("proposed_goal : Not a key line", None),
        ("summary: only a summary", None),
        ("proposed_goal: first\nproposed_goal: second", "first"),
    ],
)
def test_parse_proposed_goal(body: str, expected: str | None) -> None:
    assert parse_proposed_goal(wrap(body)) == expected
    bundle = parse_context_bundle(wrap(body))
    assert bundle is not None
    assert bundle.proposed_goal == expected


def test_line_fields_read_bare_text_too() -> None:
    text = "notes\nhas_enough_context: true\nproposed_goal: Plan the trip"
    assert parse_has_enough_context(text) is True
    assert parse_proposed_goal(text) == "Plan the trip"


# ------------------------------------------------------------------------------- parsing


def test_parse_full_bundle() -> None:
    bundle = parse_context_bundle("Here you go:\n" + FULL + "\nDone.")
    assert bundle == ContextBundle(
        envelope=FULL,
        has_enough_context=False,
        proposed_goal="Ship the Q3 report to finance by Friday",
        summary="The user owns the Q3 report (memory).\n"
        "The draft lives in Drive (integrations).\n"
        "Missing: the final revenue numbers.",
        recommended_tool_calls=[
            RecommendedToolCall(
                tool="gmail_search",
                args='{"query": "Q3 revenue", "limit": 5}',
                args_json={"query": "Q3 revenue", "limit": 5},
                why="find the revenue numbers",
            ),
            RecommendedToolCall(
                tool="drive_read",
                args="the draft document, first section only",
                args_json=None,
                why="see what is written already",
            ),
        ],
        recommended_skills=[
            RecommendedSkill(skill="weekly-report", installed=True, why="formats the report"),
            RecommendedSkill(
                skill="finance-digest", installed=False, why="summarises revenue mails"
            ),
        ],
    )


@pytest.mark.parametrize(
    ("body", "summary"),
    [
        ("summary: one line (memory)", "one line (memory)"),
        ("summary:   padded   ", "padded"),
        ("summary:\n  starts below\n  and continues", "starts below\nand continues"),
        (
            "summary: Facts (memory).\nMissing: the budget.\nNote: ask first.",
            "Facts (memory).\nMissing: the budget.\nNote: ask first.",
        ),
        (
            "summary: a\n\n  b\nrecommended_tool_calls: []",
            "a\n\nb",
        ),  # inner blank line kept, runs until the next top-level key
        ("summary: a\nRECOMMENDED_SKILLS:\n- skill: x", "a"),  # upper-case key ends it
        ("summary: a\nproposed_goal : not a key\nb", "a\nproposed_goal : not a key\nb"),
        ("summary: a\n  - tool: not an item here", "a\n- tool: not an item here"),
        ("summary: a\n" + TRUNCATION_MARKER, "a"),  # the marker is structure, not text
        ("has_enough_context: true", ""),  # no summary
        ("summary:", ""),
        ("Some prose before the keys.\nsummary: s", "s"),  # prose before keys is ignored
        ("summary: a\nhas_enough_context: true\nsummary: b", "a\nb"),  # a repeated key adds
        ("```\nsummary: fenced inside\n```", "fenced inside"),
        ("summary: caf\u00e9 \U0001f600 \u4e2d\u6587", "caf\u00e9 \U0001f600 \u4e2d\u6587"),
    ],
)
def test_parse_summary(body: str, summary: str) -> None:
    bundle = parse_context_bundle(wrap(body))
    assert bundle is not None
    assert bundle.summary == summary


@pytest.mark.parametrize(
    ("body", "tools"),
    [
        ("recommended_tool_calls: []", []),
        ("recommended_tool_calls:\n", []),
        ("recommended_tool_calls: none", []),
        ("summary: s", []),
        (
            "recommended_tool_calls:\n  - tool: web_search\n    args: latest rust release\n"
            "    why: fresh facts",
            [("web_search", "latest rust release", None, "fresh facts")],
        ),
        (
            'recommended_tool_calls:\n- tool: gmail_search\n  args: {"q": "invoice"}\n  why: w',
            [("gmail_search", '{"q": "invoice"}', {"q": "invoice"}, "w")],
        ),
        (
            # Pretty JSON spanning lines is joined until the next sub-key.
            "recommended_tool_calls:\n  - tool: calendar_create\n    args: {\n"
            '      "title": "Sync",\n      "minutes": 30\n    }\n    why: book it',
            [
                (
                    "calendar_create",
                    '{\n  "title": "Sync",\n  "minutes": 30\n}',
                    {"title": "Sync", "minutes": 30},
                    "book it",
                )
            ],
        ),
        (
            'recommended_tool_calls:\n  - tool: t\n    args:\n      {\n        "a": [1, 2]\n'
            "      }\n    why: w",
            [("t", '{\n  "a": [1, 2]\n}', {"a": [1, 2]}, "w")],
        ),
        (
            'recommended_tool_calls:\n  - tool: t\n    args: `{"a": 1}`',
            [("t", '`{"a": 1}`', {"a": 1}, "")],
        ),
        (
            "recommended_tool_calls:\n  - tool: t\n    args: [1, 2]\n  - tool: u\n    args: 42",
            [("t", "[1, 2]", None, ""), ("u", "42", None, "")],  # JSON, but not an object
        ),
        (
            "recommended_tool_calls:\n  - tool: t\n    args: {not json}",
            [("t", "{not json}", None, "")],
        ),
        (
            # Dash variations, quoted names, upper-case sub-keys, indentation.
            "Recommended_Tool_Calls:\n* tool: 'a'\n  ARGS: x\n      WHY: y\n"
            '1. tool: "b"\ntool: `c`\n        why: z',
            [("a", "x", None, "y"), ("b", "", None, ""), ("c", "", None, "z")],
        ),
        (
            "recommended_tool_calls:\n  prose before the first item\n  - tool: t\n"
            "    ignored line under the name\n    why: first line\n    second line",
            [("t", "", None, "first line\nsecond line")],
        ),
        (
            "recommended_tool_calls:\n  - tool: t\n    why: w\n  - skill: not here\n"
            + TRUNCATION_MARKER,
            [("t", "", None, "w\n- skill: not here")],
        ),
        (
            "recommended_tool_calls:\n  - tool : t\n  - tool:",
            [("", "", None, "")],  # "tool :" is no key line; an empty name is kept
        ),
    ],
)
def test_parse_tool_calls(
    body: str, tools: list[tuple[str, str, dict[str, object] | None, str]]
) -> None:
    bundle = parse_context_bundle(wrap(body))
    assert bundle is not None
    got = [(c.tool, c.args, c.args_json, c.why) for c in bundle.recommended_tool_calls]
    assert got == tools


@pytest.mark.parametrize(
    ("body", "skills"),
    [
        ("recommended_skills: []", []),
        (
            "recommended_skills:\n  - skill: weekly-report\n    installed: true\n    why: w",
            [("weekly-report", True, "w")],
        ),
        ("recommended_skills:\n  - skill: a\n    installed: False", [("a", False, "")]),
        ("recommended_skills:\n  - skill: a\n    installed: `TRUE`", [("a", True, "")]),
        ("recommended_skills:\n  - skill: a\n    installed: 'false'", [("a", False, "")]),
        ("recommended_skills:\n  - skill: a\n    installed: maybe", [("a", None, "")]),
        ("recommended_skills:\n  - skill: a", [("a", None, "")]),
        (
            'recommended_skills:\n  - skill: `b-c`\n  - skill: "d"',
            [("b-c", None, ""), ("d", None, "")],
        ),
        ("recommended_skills:\n  - skill: a\n    args: not a skill sub-key", [("a", None, "")]),
        (
            "recommended_skills:\n  - skill: a\n    why: w\n    args: stays in why",
            [("a", None, "w\nargs: stays in why")],
        ),
        (
            "recommended_skills:\n  - skill: a\n    INSTALLED: true\n"
            "recommended_tool_calls:\n  - tool: t\nrecommended_skills:\n  - skill: b",
            [("a", True, ""), ("b", None, "")],
        ),
    ],
)
def test_parse_skills(body: str, skills: list[tuple[str, bool | None, str]]) -> None:
    bundle = parse_context_bundle(wrap(body))
    assert bundle is not None
    assert [(s.skill, s.installed, s.why) for s in bundle.recommended_skills] == skills


@pytest.mark.parametrize(
    "output",
    [
        "",
        "no envelope",
        OPEN_TAG,
        OPEN_TAG + "   " + CLOSE_TAG,
        "[Context_Bundle]" + BODY + "[/Context_Bundle]",
        ENVELOPE + ENVELOPE,
    ],
)
def test_parse_context_bundle_none_when_extraction_fails(output: str) -> None:
    assert parse_context_bundle(output) is None


@pytest.mark.parametrize(
    "body",
    [
        "x",
        "recommended_tool_calls:\n  - tool: t\n    args: " + "[" * 5000,  # deep JSON
        "recommended_tool_calls:\n  - tool: t\n    args: " + "1" * 6000,  # huge int
        'recommended_tool_calls:\n  - tool: t\n    args: {"a": NaN}',
        "summary:\n\x0b\x0c\x1c\u2028\u2029",
        "recommended_skills: - skill: inline",
    ],
)
def test_parse_context_bundle_tolerates_odd_text(body: str) -> None:
    bundle = parse_context_bundle(wrap(body))
    assert bundle is not None
    assert bundle.envelope == wrap(body)


# ------------------------------------------------------------------------ shape and repr


def test_to_dict_shape() -> None:
    bundle = parse_context_bundle(FULL)
    assert bundle is not None
    assert bundle.to_dict() == {
        "has_enough_context": False,
        "proposed_goal": "Ship the Q3 report to finance by Friday",
        "summary": "The user owns the Q3 report (memory).\n"
        "The draft lives in Drive (integrations).\n"
        "Missing: the final revenue numbers.",
        "recommended_tool_calls": [
            {
                "tool": "gmail_search",
                "args": '{"query": "Q3 revenue", "limit": 5}',
                "why": "find the revenue numbers",
            },
            {
                "tool": "drive_read",
                "args": "the draft document, first section only",
                "why": "see what is written already",
            },
        ],
        "recommended_skills": [
            {"skill": "weekly-report", "installed": True, "why": "formats the report"},
            {"skill": "finance-digest", "installed": False, "why": "summarises revenue mails"},
        ],
    }


def test_repr_plain_is_stable() -> None:
    bundle = parse_context_bundle(FULL)
    assert bundle is not None
    assert bundle._repr_mimebundle_()["text/plain"] == (
        "ContextBundle\n"
        "  has_enough_context: false\n"
        "  proposed_goal: Ship the Q3 report to finance by Friday\n"
        "  summary:\n"
        "    The user owns the Q3 report (memory).\n"
        "    The draft lives in Drive (integrations).\n"
        "    Missing: the final revenue numbers.\n"
        "  recommended_tool_calls: 2\n"
        "    1. gmail_search\n"
        '       args: {"query": "Q3 revenue", "limit": 5}\n'
        "       why: find the revenue numbers\n"
        "    2. drive_read\n"
        "       args: the draft document, first section only\n"
        "       why: see what is written already\n"
        "  recommended_skills: 2\n"
        "    1. weekly-report (installed)\n"
        "       why: formats the report\n"
        "    2. finance-digest (not installed)\n"
        "       why: summarises revenue mails"
    )


def test_repr_markdown_renders_fields() -> None:
    bundle = parse_context_bundle(
        wrap("has_enough_context: true\nproposed_goal: none\nsummary: a b")
    )
    assert bundle is not None
    assert bundle._repr_mimebundle_()["text/markdown"] == (
        "**Context bundle** · has enough context: **yes**\n\n"
        "**Proposed goal:** *none*\n\n"
        "**Summary**\n\na b\n\n"
        "**Recommended tool calls**\n\n*none*\n\n"
        "**Recommended skills**\n\n*none*"
    )


HOSTILE = '<script>alert("x")</script> [click](javascript:alert(1)) <img src=x onerror=y> **b**'


def test_repr_markdown_escapes_untrusted_text() -> None:
    body = (
        f"has_enough_context: true\nproposed_goal: {HOSTILE}\nsummary: {HOSTILE}\n"
        f"# heading\n> quote\n    code block\nhttps://evil.example/x www.evil.example\n"
        f"recommended_tool_calls:\n  - tool: {HOSTILE}\n    args: {HOSTILE}\n    why: {HOSTILE}\n"
        f"recommended_skills:\n  - skill: {HOSTILE}\n    why: {HOSTILE}"
    )
    bundle = parse_context_bundle(wrap(body))
    assert bundle is not None
    markdown = bundle._repr_mimebundle_()["text/markdown"]
    for raw in ("<", ">", "](", "[click]", "https://", "www.evil", "\n#", "\n    code"):
        assert raw not in markdown
    assert "&lt;script&gt;" in markdown
    assert "\\*\\*b\\*\\*" in markdown
    # Plain text shows what the scout wrote.
    assert "<script>" in bundle._repr_mimebundle_()["text/plain"]


@pytest.mark.parametrize(
    ("include", "exclude", "keys"),
    [
        (None, None, ["text/plain", "text/markdown"]),
        (["text/plain"], None, ["text/plain"]),
        (None, ["text/markdown"], ["text/plain"]),
        (["text/html"], None, []),
    ],
)
def test_repr_mimebundle_include_exclude(
    include: list[str] | None, exclude: list[str] | None, keys: list[str]
) -> None:
    bundle = parse_context_bundle(ENVELOPE)
    assert bundle is not None
    assert list(bundle._repr_mimebundle_(include=include, exclude=exclude)) == keys


# ----------------------------------------------------------------------------------- fit


def big_bundle(summary: str, n_tools: int = 0, n_skills: int = 0, goal: str = "Ship it") -> str:
    lines = ["has_enough_context: true", f"proposed_goal: {goal}", f"summary: {summary}"]
    if n_tools:
        lines.append("recommended_tool_calls:")
        for i in range(n_tools):
            lines += [f"  - tool: tool_{i}", f'    args: {{"n": {i}}}', f"    why: reason {i}"]
    if n_skills:
        lines.append("recommended_skills:")
        for i in range(n_skills):
            lines += [f"  - skill: skill-{i}", "    installed: false", f"    why: fits {i}"]
    return wrap("\n".join(lines))


def test_write_envelope_round_trips_through_the_parser() -> None:
    envelope = write_envelope(
        has_enough_context=False,
        proposed_goal="Finish Section 3.2",
        summary="- Due 2026-12-15 (memory)\n- Prefers short answers (profile)",
        tool_calls=[("file_read", '{"path": "files/aims.md"}', "the draft")],
        skills=[("figure-polish", True, "the figure")],
    )
    bundle = parse_context_bundle(envelope)
    assert bundle is not None and bundle.envelope == envelope
    assert bundle.has_enough_context is False
    assert bundle.proposed_goal == "Finish Section 3.2"
    assert bundle.summary == "- Due 2026-12-15 (memory)\n- Prefers short answers (profile)"
    assert [(c.tool, c.args_json, c.why) for c in bundle.recommended_tool_calls] == [
        ("file_read", {"path": "files/aims.md"}, "the draft")
    ]
    assert [(s.skill, s.installed, s.why) for s in bundle.recommended_skills] == [
        ("figure-polish", True, "the figure")
    ]


def test_write_envelope_writes_none_and_empty_lists_for_missing_fields() -> None:
    envelope = write_envelope(has_enough_context=True, proposed_goal=None, summary="")
    assert envelope.splitlines() == [
        OPEN_TAG,
        "has_enough_context: true",
        "proposed_goal: none",
        "summary:",
        "recommended_tool_calls: []",
        "recommended_skills: []",
        CLOSE_TAG,
    ]
    bundle = parse_context_bundle(envelope)
    assert bundle is not None and bundle.proposed_goal is None and bundle.summary == ""


@pytest.mark.parametrize("cap", [len(FULL), len(FULL) + 1, 5000])
def test_fit_returns_envelope_unchanged_within_cap(cap: int) -> None:
    assert fit_bundle(FULL, cap) == FULL
    assert fit_bundle("Sure:\n```\n" + FULL + "\n```\nbye", cap) == FULL


@pytest.mark.parametrize(
    ("text", "cap"),
    [
        # 190 code points but 570 bytes in UTF-8: within the cap, so untouched.
        (wrap("summary: " + "\u4e2d" * 150), 200),
        (wrap("summary: " + "\U0001f600" * 150), 200),
    ],
)
def test_fit_counts_code_points_not_bytes(text: str, cap: int) -> None:
    assert len(text) <= cap < len(text.encode())
    assert fit_bundle(text, cap) == text


def test_fit_shortens_multibyte_summary_by_code_points() -> None:
    text = big_bundle("\U0001f600\u4e2d" * 400, n_tools=2)
    result = fit_bundle(text, 400)
    assert len(result) <= 400
    bundle = parse_context_bundle(result)
    assert bundle is not None
    assert bundle.summary.endswith("…")
    assert bundle.summary[:-1] == ("\U0001f600\u4e2d" * 400)[: len(bundle.summary) - 1]
    assert [c.tool for c in bundle.recommended_tool_calls] == ["tool_0", "tool_1"]


def test_fit_shortens_summary_first_at_a_word_boundary() -> None:
    words = " ".join(f"word{i}" for i in range(400))
    text = big_bundle(words, n_tools=2, n_skills=2)
    result = fit_bundle(text, 600)
    assert len(result) <= 600
    assert result.startswith(OPEN_TAG + "\nhas_enough_context: true\nproposed_goal: Ship it\n")
    assert result.endswith("\n" + TRUNCATION_MARKER + "\n" + CLOSE_TAG)
    original, bundle = parse_context_bundle(text), parse_context_bundle(result)
    assert original is not None
    assert bundle is not None
    assert bundle.recommended_tool_calls == original.recommended_tool_calls
    assert bundle.recommended_skills == original.recommended_skills
    assert bundle.summary.endswith("…")
    kept = bundle.summary[:-1]
    assert words.startswith(kept)
    assert words[len(kept)] == " "  # cut between words
    assert len(result) > 600 - 12  # and the room was used


def test_fit_cuts_summary_at_a_line_boundary() -> None:
    summary = "\n".join(f"Fact number {i} about the user (memory)." for i in range(60))
    result = fit_bundle(big_bundle(summary), 500)
    bundle = parse_context_bundle(result)
    assert bundle is not None
    assert len(result) <= 500
    kept = bundle.summary.removesuffix("…")
    assert summary.startswith(kept)
    assert kept.endswith("(memory).")


def test_fit_drops_list_items_from_the_end() -> None:
    text = big_bundle("short summary", n_tools=30, n_skills=30)
    result = fit_bundle(text, 1200)
    assert len(result) <= 1200
    bundle = parse_context_bundle(result)
    original = parse_context_bundle(text)
    assert bundle is not None
    assert original is not None
    assert bundle.recommended_skills == []  # the last list goes first
    kept = bundle.recommended_tool_calls
    assert 0 < len(kept) < 30
    assert kept == original.recommended_tool_calls[: len(kept)]
    # As many items as fit with a one-character summary; the room left goes to the summary.
    n = len(kept)
    next_item = f'  - tool: tool_{n}\n    args: {{"n": {n}}}\n    why: reason {n}'
    assert len(result) - len(bundle.summary) + 1 + len(next_item) + 1 > 1200
    assert bundle.summary == "short summary"
    assert TRUNCATION_MARKER in result


def test_fit_drops_skills_before_tool_calls() -> None:
    text = big_bundle("s", n_tools=3, n_skills=20)
    result = fit_bundle(text, 700)
    bundle = parse_context_bundle(result)
    assert bundle is not None
    assert len(result) <= 700
    assert [c.tool for c in bundle.recommended_tool_calls] == ["tool_0", "tool_1", "tool_2"]
    assert 0 < len(bundle.recommended_skills) < 20
    assert [s.skill for s in bundle.recommended_skills] == [
        f"skill-{i}" for i in range(len(bundle.recommended_skills))
    ]


def test_fit_keeps_multiline_args_intact() -> None:
    body = (
        "has_enough_context: false\nproposed_goal: none\nsummary: " + "x " * 300 + "\n"
        'recommended_tool_calls:\n  - tool: t\n    args: {\n      "a": 1,\n'
        '      "b": [2]\n    }\n    why: w'
    )
    original = parse_context_bundle(wrap(body))
    bundle = parse_context_bundle(fit_bundle(wrap(body), 300))
    assert original is not None
    assert bundle is not None
    assert bundle.recommended_tool_calls == original.recommended_tool_calls
    assert bundle.recommended_tool_calls[0].args_json == {"a": 1, "b": [2]}
    assert (bundle.has_enough_context, bundle.proposed_goal) == (False, None)


@pytest.mark.parametrize(
    ("goal", "hec"),
    [
        ("G" * 5000, "true"),
        ("word " * 2000, "`false`"),
        ("\u4e2d" * 3000, "maybe"),
    ],
)
def test_fit_tiny_cap_with_huge_goal_keeps_both_lines(goal: str, hec: str) -> None:
    text = wrap(f"has_enough_context: {hec}\nproposed_goal: {goal}\nsummary: {'s ' * 500}")
    result = fit_bundle(text, MIN_FIT_CHARS)
    assert len(result) <= MIN_FIT_CHARS
    bundle = parse_context_bundle(result)
    assert bundle is not None
    assert bundle.has_enough_context == parse_has_enough_context(text)
    assert f"\nhas_enough_context: {hec}\n" in result
    assert bundle.proposed_goal is not None
    assert bundle.proposed_goal.endswith("…")
    assert goal.startswith(bundle.proposed_goal[:-1].rstrip())


def test_fit_shortens_a_huge_has_enough_context_line_too() -> None:
    text = wrap(f"has_enough_context: {'z' * 3000}\nproposed_goal: {'g' * 3000}")
    result = fit_bundle(text, MIN_FIT_CHARS)
    assert len(result) <= MIN_FIT_CHARS
    assert parse_has_enough_context(result) is None
    assert "\nhas_enough_context: z" in result
    assert "\nproposed_goal: …" in result


@pytest.mark.parametrize("cap", [MIN_FIT_CHARS - 1, 0, -5])
def test_fit_rejects_caps_below_the_minimum(cap: int) -> None:
    with pytest.raises(ValueError, match=rf"max_chars={cap} is below the minimum of 200"):
        fit_bundle(FULL, cap)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no envelope", "no \\[context_bundle\\] opening tag"),
        (FULL + FULL, "2 opening tags"),
        (OPEN_TAG + " " + CLOSE_TAG, "the envelope is empty"),
    ],
)
def test_fit_rejects_text_without_an_envelope(text: str, reason: str) -> None:
    with pytest.raises(ValueError, match=f"Cannot fit the bundle: {reason}"):
        fit_bundle(text, 5000)


def test_fit_result_fits_again_unchanged() -> None:
    text = big_bundle("long summary " * 200, n_tools=10, n_skills=10)
    once = fit_bundle(text, 900)
    assert fit_bundle(once, 900) == once
