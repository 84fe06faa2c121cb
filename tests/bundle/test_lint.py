"""Warnings about accepted envelopes: what the tolerant parser reads as unknown or drops."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.bundle.lint import bundle_warnings
from supercontext_lab.testing import envelope

CLEAN = envelope(
    proposed_goal="Finish Section 3.2",
    summary="- The 2Dt kernel is primary (memory)\nMissing: the Sobol indices",
    recommended_tool_calls=[
        {"tool": "file_read", "args": '{\n  "path": "files/grant/aims.md"\n}', "why": "aims"}
    ],
    recommended_skills=[{"skill": "sensitivity-analysis-planner", "installed": False}],
)


def test_a_clean_envelope_has_no_warnings() -> None:
    assert parse_context_bundle(CLEAN) is not None
    assert bundle_warnings("Sure, here it is:\n" + CLEAN) == []


def test_no_envelope_is_a_rejection_not_a_warning() -> None:
    assert bundle_warnings("no envelope here") == []
    assert bundle_warnings("[context_bundle]\nsummary: x\n") == []


@pytest.mark.parametrize(
    ("body", "warning"),
    [
        ("has_enough_context: maybe", "has_enough_context: 'maybe' is not true or false"),
        ("has_enough_context:", "has_enough_context: nothing is not true or false"),
        ("foo: bar", "unknown key 'foo' before the first field is ignored: 'foo: bar'"),
        ("Some prose first", "text before the first field is ignored: 'Some prose first'"),
        (
            "proposed_goal:\n  Finish it",
            "text after proposed_goal is ignored: 'Finish it'",
        ),
        (
            "has_enough_context: true\nhas_enough_context: false",
            "has_enough_context appears again; only the first one counts",
        ),
        (
            "recommended_tool_calls:\n  - tool: file_read\n    priority: high\n    why: x",
            "unknown key 'priority' in recommended_tool_calls item 'file_read' is ignored",
        ),
        (
            "recommended_tool_calls:\n  - tool:\n    why: x",
            "recommended_tool_calls: an item has no tool name",
        ),
        (
            'recommended_tool_calls:\n  - tool: "` `"\n    why: x',
            "recommended_tool_calls: an item has no tool name",
        ),
        (
            "recommended_skills:\n  - skill: a\n    installed: perhaps",
            "recommended_skills 'a': installed 'perhaps' is not true or false",
        ),
        (
            "recommended_skills:\n  - tool: file_read",
            "unknown key 'tool' in recommended_skills is ignored: '- tool: file_read'",
        ),
    ],
)
def test_each_thing_the_parser_leaves_unread_is_named(body: str, warning: str) -> None:
    text = f"[context_bundle]\n{body}\n[/context_bundle]"
    assert parse_context_bundle(text) is not None  # accepted all the same
    warnings = bundle_warnings(text)
    assert any(w.startswith(warning) for w in warnings), warnings


@pytest.mark.parametrize(
    ("summary", "warning"),
    [
        (None, "summary is missing: the bundle gives the orchestrator no context"),
        ("", "summary is empty: the bundle gives the orchestrator no context"),
    ],
)
def test_a_missing_or_empty_summary_is_named(summary: str | None, warning: str) -> None:
    lines = ["[context_bundle]", "has_enough_context: true", "proposed_goal: none"]
    if summary is not None:
        lines.append(f"summary: {summary}")
    lines.append("[/context_bundle]")
    assert bundle_warnings("\n".join(lines)) == [warning]


def test_missing_line_fields_say_how_they_are_read() -> None:
    warnings = bundle_warnings("[context_bundle]\nsummary: x (memory)\n[/context_bundle]")
    assert warnings == [
        "has_enough_context is missing; it is read as unknown",
        "proposed_goal is missing; it is read as none",
    ]


def test_long_ignored_lines_are_shortened() -> None:
    text = "[context_bundle]\nfoo: " + "x" * 500 + "\n[/context_bundle]"
    [first, *_] = bundle_warnings(text)
    assert first.endswith("…'") and len(first) < 140


@given(st.text(max_size=300))
def test_never_raises_and_is_empty_exactly_without_an_envelope_or_with_a_clean_one(
    inside: str,
) -> None:
    text = f"[context_bundle]\n{inside}\n[/context_bundle]"
    warnings = bundle_warnings(text)
    if parse_context_bundle(text) is None:
        assert warnings == []
    assert all(isinstance(w, str) and w for w in warnings)
