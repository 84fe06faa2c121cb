"""Scoring one run against its case's expectations: each field, and names in any case."""

from __future__ import annotations

import pytest

from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.eval.dataset import Expectations
from supercontext_lab.eval.scores import CaseScores, applicable, ratio, score_case
from supercontext_lab.testing import envelope


@pytest.mark.parametrize(
    ("expect", "text", "field", "value"),
    [
        (Expectations(has_goal=True), envelope(proposed_goal="Do it"), "goal_correct", True),
        (Expectations(has_goal=True), envelope(proposed_goal=None), "goal_correct", False),
        (Expectations(has_goal=False), envelope(proposed_goal=None), "goal_correct", True),
        (Expectations(has_goal=False), None, "goal_correct", False),
        (
            Expectations(has_enough_context=False),
            envelope(has_enough_context=False),
            "has_enough_correct",
            True,
        ),
        (
            Expectations(has_enough_context=True),
            envelope(has_enough_context=False),
            "has_enough_correct",
            False,
        ),
        (Expectations(mentions=("GBIF",)), envelope(summary="gbif (memory)"), "mentions_found", 1),
        (Expectations(mentions=("GBIF",)), envelope(summary="none"), "mentions_found", 0),
        (Expectations(mentions=("GBIF", "gbif")), envelope(), "mentions_expected", 1),
        (
            Expectations(skills=("fig",)),
            envelope(recommended_skills=[("Fig", True, "fits"), ("fig", True, "fits")]),
            "skills_recommended",
            1,
        ),
        (Expectations(), envelope(), "skills_expected", None),
    ],
)
def test_score_case_fields(
    expect: Expectations, text: str | None, field: str, value: object
) -> None:
    bundle = parse_context_bundle(text) if text is not None else None
    scores = score_case(
        expect,
        bundle.envelope if bundle is not None else None,
        bundle.to_dict() if bundle is not None else None,
    )
    assert getattr(scores, field) == value


def test_reported_names_keep_their_first_spelling_and_match_any_case() -> None:
    expect = Expectations(mentions=("2Dt", "2DT", "Lofoten"), skills=("Planner", "planner"))
    text = envelope(
        summary="lofoten trip (memory)",
        recommended_skills=[{"skill": "PLANNER"}, {"skill": "Extra-Skill"}],
    )
    bundle = parse_context_bundle(text)
    assert bundle is not None
    scores = score_case(expect, bundle.envelope, bundle.to_dict())
    assert scores.mentions_expected == 2  # "2Dt" and "2DT" are one mention
    assert scores.missed_mentions == ("2Dt",)
    assert scores.skills_matched == 1
    assert scores.missed_skills == ()
    assert scores.unexpected_skills == ("Extra-Skill",)


THREE_BULLETS = "\n".join(
    [
        "- The GBIF snapshot of 2026-10-01 is pinned (memory)",
        "- The lab meeting moved to Thursday (notes: calendar.md)",
        "- Reviewer 2 asked for more figures (notes: review.md)",
        "Missing: the GBIF licence terms.",
    ]
)


def _scored(expect: Expectations, text: str | None) -> CaseScores:
    bundle = parse_context_bundle(text) if text is not None else None
    return score_case(
        expect,
        bundle.envelope if bundle is not None else None,
        bundle.to_dict() if bundle is not None else None,
    )


def test_bullet_precision_is_the_share_of_bullets_holding_an_expected_mention() -> None:
    # Three bullets, one holds "gbif" (any case); the "Missing:" line holds it too but is
    # not a bullet, and "Sobol" is in no bullet.
    scores = _scored(Expectations(mentions=("gbif", "Sobol")), envelope(summary=THREE_BULLETS))
    assert (scores.summary_bullets, scores.bullets_on_topic) == (3, 1)
    assert scores.to_dict()["bullet_precision"] == pytest.approx(1 / 3)


def test_a_bullet_holding_two_mentions_counts_once_and_wrapped_lines_belong_to_it() -> None:
    summary = "- Thursday's meeting\n  is about GBIF and Sobol (memory)\n- Sobol indices (memory)"
    scores = _scored(Expectations(mentions=("gbif", "sobol")), envelope(summary=summary))
    assert (scores.summary_bullets, scores.bullets_on_topic) == (2, 2)


def test_a_bullet_citing_an_expected_source_is_on_topic_without_the_mention() -> None:
    summary = (
        "- We moved to SES directly (memory: adr/ADR019-use-amazon-ses)\n"
        "- Notify uses SES too (memory: adr/ADR002-use-govuk-notify)\n"
        "- TLS was opportunistic (memory: adr/adr019-use-amazon-ses)"
    )
    expect = Expectations(
        mentions=("first live incident",), sources=("memory: adr/ADR019-use-amazon-ses",)
    )
    scores = _scored(expect, envelope(summary=summary))
    # The first cites the answering note; the second another note; the third a key spelt
    # otherwise, which names no document of the workspace.
    assert (scores.summary_bullets, scores.bullets_on_topic) == (3, 1)
    assert scores.mentions_found == 0


def test_bullet_precision_is_not_scored_without_mentions_and_empty_is_perfect() -> None:
    unset = _scored(Expectations(has_goal=False), envelope(summary=THREE_BULLETS))
    assert (unset.summary_bullets, unset.bullets_on_topic) == (None, None)
    assert unset.to_dict()["bullet_precision"] is None
    # No envelope (or a summary without bullets): 0 of 0 bullets, which counts as 1.0.
    for text in (None, envelope(summary="GBIF, said as prose.")):
        none = _scored(Expectations(mentions=("GBIF",)), text)
        assert (none.summary_bullets, none.bullets_on_topic) == (0, 0)
        assert none.to_dict()["bullet_precision"] == 1.0


@pytest.mark.parametrize(
    ("counts", "applies"), [((0, 0), False), ((0, 3), True), ((2, 2), True), (None, True)]
)
def test_only_a_rate_of_0_of_0_is_not_applicable(
    counts: tuple[int, int] | None, applies: bool
) -> None:
    assert applicable(counts) is applies


def test_an_empty_ratio_keeps_the_spec_value() -> None:
    assert (ratio(0, 0), ratio(0, 0, empty=0.0), ratio(1, 4)) == (1.0, 0.0, 0.25)


def test_rate_counts_are_the_counts_behind_to_dict() -> None:
    scores = _scored(
        Expectations(tools=("run_workflow",), mentions=("GBIF", "Aurora")),
        envelope(summary="- GBIF is the source (memory)"),
    )
    counts = scores.rate_counts()
    rates = scores.to_dict()
    assert counts["tool_precision"] == (0, 0) and rates["tool_precision"] == 1.0
    assert "skill_precision" not in counts and rates["skill_precision"] is None
    for name, (k, n) in counts.items():
        assert rates[name] == (k / n if n else 1.0), name
