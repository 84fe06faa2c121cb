"""Scoring one run against its case's expectations: each field, and names in any case."""

from __future__ import annotations

import pytest

from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.eval.dataset import Expectations
from supercontext_lab.eval.scores import score_case
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
