"""The bundle's records: attributions, summary lines and bullets (SPEC §13)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

import supercontext_lab
from supercontext_lab import bundle as bundle_module
from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.bundle.records import (
    SOURCE_KINDS,
    ContextBundle,
    Source,
    SummaryLine,
    find_attributions,
    split_summary,
)
from supercontext_lab.testing import envelope


def test_the_records_are_one_class_wherever_they_are_imported_from() -> None:
    assert supercontext_lab.ContextBundle is bundle_module.ContextBundle is ContextBundle


@pytest.mark.parametrize(
    ("text", "sources"),
    [
        ("A fact (memory)", [("memory", None)]),
        (
            "A fact (Memory: project-grant/budget-summary)",
            [("memory", "project-grant/budget-summary")],
        ),
        ("(PROFILE) and (integrations)", [("profile", None), ("integrations", None)]),
        ("(skill: grant-budget-check)", [("skill", "grant-budget-check")]),
        (
            "(web: https://en.wikipedia.org/wiki/Kernel_(statistics))",
            [("web", "https://en.wikipedia.org/wiki/Kernel_(statistics)")],
        ),
        ("(transcript:  2026-11-20 aim 2 )", [("transcript", "2026-11-20 aim 2")]),
        ("( memory )", [("memory", None)]),
        ("(memories) (memory (web:) (web:  ) (profile: x) (skill) (s\u212aill: x)", []),
        ("(web: a (b) (c))", [("web", "a (b) (c)")]),
        ("(web: a ((b)))", []),
    ],
)
def test_find_attributions(text: str, sources: list[tuple[str, str | None]]) -> None:
    found = find_attributions(text)
    assert [(a.source.kind, a.source.ref) for a in found] == sources
    for attribution in found:
        assert text[attribution.start] == "(" and text[attribution.end - 1] == ")"


def test_a_named_memory_document_reads_as_namespace_and_key() -> None:
    assert Source("memory", "project-grant/budget-summary").memory_document == (
        "project-grant",
        "budget-summary",
    )
    assert Source("memory", "budget-summary").memory_document is None
    assert Source("memory").memory_document is None
    assert Source("memory", "ns/key").label == "memory: ns/key"
    assert Source("profile").label == "profile"


def test_summary_lines_keep_bullets_and_other_lines_in_order() -> None:
    summary = (
        "- Due 2026-12-15 (memory: project-grant/deadline) (profile)\n"
        "* Prefers short answers (PROFILE)\n"
        "\n"
        "  • Uses Slack (integrations)\n"
        "Missing: the budget (memory)\n"
        "-not a bullet"
    )
    lines = split_summary(summary)
    assert [(line.bullet, line.text) for line in lines] == [
        (True, "Due 2026-12-15 (memory: project-grant/deadline) (profile)"),
        (True, "Prefers short answers (PROFILE)"),
        (True, "Uses Slack (integrations)"),
        (False, "Missing: the budget (memory)"),
        (False, "-not a bullet"),
    ]
    assert lines[0].sources == (Source("memory", "project-grant/deadline"), Source("profile"))
    assert lines[0].claim == "Due 2026-12-15"
    assert lines[3].sources == (Source("memory"),)


def test_every_list_marker_is_an_item_and_indented_lines_continue_it() -> None:
    summary = (
        "+ Plus item (memory)\n"
        "1. Numbered (memory)\n"
        "2) Numbered again\n"
        "a) Lettered\n"
        "- Wrapped bullet that\n"
        "  goes on here (memory)\n"
        "\n"
        "  indented after a blank line\n"
        "Plain line\n"
        "   continued by indentation"
    )
    lines = split_summary(summary)
    assert [(line.bullet, line.text, line.first, line.last) for line in lines] == [
        (True, "Plus item (memory)", 0, 0),
        (True, "Numbered (memory)", 1, 1),
        (True, "Numbered again", 2, 2),
        (True, "Lettered", 3, 3),
        (True, "Wrapped bullet that goes on here (memory)", 4, 5),
        (False, "indented after a blank line", 7, 7),
        (False, "Plain line continued by indentation", 8, 9),
    ]
    assert [line.marker for line in lines[:5]] == ["+ ", "1. ", "2) ", "a) ", "- "]
    assert lines[4].sources == (Source("memory"),)


def test_a_bundle_exposes_its_bullets_with_their_sources() -> None:
    bundle = parse_context_bundle(
        envelope(summary="- A (memory: ns/a)\n- B (web: https://b.org) (memory)\nMissing: C")
    )
    assert bundle is not None
    assert [(b.claim, b.sources) for b in bundle.bullets] == [
        ("A", (Source("memory", "ns/a"),)),
        ("B", (Source("web", "https://b.org"), Source("memory"))),
    ]
    assert [line.text for line in bundle.summary_lines] == [
        "A (memory: ns/a)",
        "B (web: https://b.org) (memory)",
        "Missing: C",
    ]
    assert isinstance(bundle.bullets[0], SummaryLine)
    with pytest.raises(AttributeError):
        bundle.bullets[0].text = "changed"  # type: ignore[misc]
    # Reading the bullets leaves the bundle equal to a fresh one.
    assert bundle == parse_context_bundle(bundle.envelope)


def test_every_source_kind_has_a_chip_colour() -> None:
    from supercontext_lab.lab.widgets.html import CHIP_COLOURS

    assert set(CHIP_COLOURS) == set(SOURCE_KINDS)


@given(
    st.lists(st.sampled_from(["(", ")", "(web: ", "(memory: ", "x", " ", "\n", "(memory)"])).map(
        "".join
    )
)
def test_attributions_never_overlap_and_are_in_order(text: str) -> None:
    found = find_attributions(text)
    ends = [0]
    for attribution in found:
        assert attribution.start >= ends[-1]
        ends.append(attribution.end)
