"""SPEC §11 metrics, checked against tables computed by hand."""

from __future__ import annotations

import pytest

from supercontext_lab.bundle import parse_context_bundle
from supercontext_lab.eval.dataset import Expectations
from supercontext_lab.eval.metrics import (
    METRIC_NAMES,
    CaseScores,
    RunMeasure,
    aggregate,
    percentile,
    rate_counts,
    score_case,
    spread,
)
from supercontext_lab.testing import envelope


def _run(expect: Expectations, text: str | None, **costs: float) -> RunMeasure:
    bundle = parse_context_bundle(text) if text is not None else None
    env = bundle.envelope if bundle is not None else None
    return RunMeasure(
        scores=score_case(expect, env, bundle.to_dict() if bundle is not None else None),
        elapsed_ms=float(costs.get("ms", 10.0)),
        tokens=int(costs.get("tokens", 100)),
        model_calls=int(costs.get("calls", 2)),
        envelope_chars=len(env) if env is not None else None,
    )


def _skills(*names: str) -> list[tuple[str, bool, str]]:
    return [(name, True, "fits") for name in names]


def _tools(*names: str) -> list[tuple[str, str, str]]:
    return [(name, "{}", "fits") for name in names]


# Case A: skills a,b expected; a,c recommended -> 1 matched of 2 recommended, 2 expected.
# Case B: skill c expected; no envelope at all -> 0 of 0 recommended, 1 expected.
# Case C: no skill expectation; recommends x -> not counted.
# Case D: no skills expected ([]); recommends y -> 0 of 1 recommended, 0 expected.
# precision = (1+0+0)/(2+0+1) = 1/3; recall = (1+0+0)/(2+1+0) = 1/3.
CASE_A = (
    Expectations(
        skills=("a", "b"),
        tools=("delegate_gmail",),
        has_goal=True,
        has_enough_context=True,
        mentions=("2Dt", "GR-7731"),
        must_not_mention=("sourdough",),
    ),
    envelope(
        has_enough_context=True,
        proposed_goal="Draft the reply",
        summary="The 2dt kernel was chosen (memory). Sourdough notes too.",
        recommended_skills=_skills("A", "c"),
        recommended_tool_calls=_tools("delegate_gmail", "web_search"),
    ),
)
CASE_B = (
    Expectations(skills=("c",), has_goal=False, mentions=("Sobol",), must_not_mention=("Lofoten",)),
    None,
)
CASE_C = (
    Expectations(),
    envelope(recommended_skills=_skills("x"), recommended_tool_calls=_tools("file_read")),
)
CASE_D = (
    Expectations(skills=(), tools=(), has_goal=False, has_enough_context=False),
    envelope(has_enough_context=None, recommended_skills=_skills("y")),
)


def test_aggregate_matches_the_hand_computed_table() -> None:
    runs = [
        _run(*CASE_A, ms=10, tokens=100, calls=3),
        _run(*CASE_B, ms=20, tokens=200, calls=1),
        _run(*CASE_C, ms=30, tokens=300, calls=2),
        _run(*CASE_D, ms=40, tokens=400, calls=2),
    ]
    metrics = aggregate(runs)
    expected = {
        "valid_rate": 3 / 4,
        "skill_precision": 1 / 3,
        "skill_recall": 1 / 3,
        # tools: A 1 of 2 recommended, 1 expected; D 0 of 0 recommended, 0 expected.
        "tool_precision": 1 / 2,
        "tool_recall": 1 / 1,
        # goal: A right, B wrong (no envelope), D right (none) -> 2/3.
        "goal_accuracy": 2 / 3,
        # has-enough: A right, D wrong (the line is missing, so None is not False) -> 1/2.
        "has_enough_accuracy": 1 / 2,
        # mentions: A 1 of 2 (2Dt matches "2dt"), B 0 of 1 -> 1/3.
        "mention_rate": 1 / 3,
        # forbidden: A 1 of 1 ("Sourdough"), B 0 of 1 -> 1/2.
        "forbidden_mention_rate": 1 / 2,
        # bullets: A's summary is prose, B has no envelope -> 0 of 0 bullets.
        "bullet_precision": 1.0,
        "model_calls_mean": 2.0,
        "latency_mean_ms": 25.0,
        "latency_p50_ms": 25.0,
        "latency_p95_ms": 38.5,
        "tokens_mean": 250.0,
        "runs": 4,
        "valid_runs": 3,
        "skill_cases": 3,
        "tool_cases": 2,
        "goal_cases": 3,
        "has_enough_cases": 2,
        "mention_cases": 2,
        "forbidden_cases": 2,
        "summary_bullets": 0,
    }
    for name, value in expected.items():
        assert metrics[name] == pytest.approx(value), name
    chars = [run.envelope_chars for run in runs if run.envelope_chars is not None]
    assert metrics["envelope_chars_mean"] == pytest.approx(sum(chars) / 3)


# Bullets: E has three bullets, one holding "GBIF" (as "gbif"); F sets no mentions, so
# its two on-topic bullets are not counted; G has one bullet, holding "Sobol".
# bullet_precision over E, F = 1/3; over E, F, G = (1 + 1) / (3 + 1) = 1/2.
CASE_E = (
    Expectations(mentions=("GBIF", "Sobol")),
    envelope(
        summary="- the gbif snapshot is pinned (memory)\n- lab meeting on Thursday (memory)\n"
        "- reviewer 2 wants figures (memory)"
    ),
)
CASE_F = (Expectations(has_goal=False), envelope(summary="- GBIF (memory)\n- GBIF again (memory)"))
CASE_G = (Expectations(mentions=("Sobol",)), envelope(summary="- Sobol indices (memory)"))


def test_bullet_precision_sums_bullets_over_the_cases_that_set_mentions() -> None:
    two = [_run(*CASE_E), _run(*CASE_F)]
    metrics = aggregate(two)
    assert metrics["bullet_precision"] == pytest.approx(1 / 3)
    assert (metrics["summary_bullets"], metrics["mention_cases"]) == (3, 1)
    assert rate_counts(two)["bullet_precision"] == (1, 3)
    three = [*two, _run(*CASE_G)]
    assert aggregate(three)["bullet_precision"] == pytest.approx(1 / 2)
    assert rate_counts(three)["bullet_precision"] == (2, 4)


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("skill_precision", 1.0),
        ("skill_recall", 1.0),
        ("tool_precision", 1.0),
        ("tool_recall", 1.0),
        ("goal_accuracy", 1.0),
        ("has_enough_accuracy", 1.0),
        ("mention_rate", 1.0),
        ("forbidden_mention_rate", 0.0),
        ("bullet_precision", 1.0),
        ("skill_cases", 0),
        ("mention_cases", 0),
        ("forbidden_cases", 0),
    ],
)
def test_empty_ratios_follow_the_spec(name: str, value: float) -> None:
    # One run with no expectations at all: every expectation metric is 0/0.
    metrics = aggregate([_run(Expectations(), envelope(recommended_skills=_skills("x")))])
    assert metrics[name] == value


def test_empty_expected_and_empty_recommended_is_perfect() -> None:
    metrics = aggregate([_run(Expectations(skills=(), tools=()), envelope())])
    assert (metrics["skill_precision"], metrics["skill_recall"]) == (1.0, 1.0)
    assert (metrics["tool_precision"], metrics["tool_recall"]) == (1.0, 1.0)
    assert metrics["skill_cases"] == 1


def test_case_scores_report_the_misses_and_round_trip() -> None:
    expect, text = CASE_A
    bundle = parse_context_bundle(text)
    assert bundle is not None
    scores = score_case(expect, bundle.envelope, bundle.to_dict())
    assert scores.missed_mentions == ("GR-7731",)  # as the expectation spells it
    assert scores.forbidden_mentions == ("sourdough",)
    assert scores.missed_skills == ("b",)
    assert scores.unexpected_skills == ("c",)
    assert scores.unexpected_tools == ("web_search",)
    data = scores.to_dict()
    assert data["skill_precision"] == 0.5
    assert data["mention_rate"] == 0.5
    assert data["forbidden_mention_rate"] == 1.0
    assert data["goal_correct"] is True
    assert CaseScores.from_dict(data) == scores


@pytest.mark.parametrize(
    ("values", "q", "expected"),
    [
        ([], 50, 0.0),
        ([7.0], 95, 7.0),
        ([1.0, 2.0, 3.0, 4.0], 50, 2.5),
        ([10.0, 20.0, 30.0, 40.0], 95, 38.5),
        ([5.0, 1.0, 3.0], 0, 1.0),
        ([5.0, 1.0, 3.0], 100, 5.0),
        ([1.0, 2.0, 3.0, 4.0, 5.0], 50, 3.0),
    ],
)
def test_percentile_interpolates_linearly(values: list[float], q: float, expected: float) -> None:
    assert percentile(values, q) == pytest.approx(expected)


def test_percentile_rejects_out_of_range() -> None:
    with pytest.raises(ValueError, match="between 0 and 100"):
        percentile([1.0], 101)


def test_spread_over_repeats() -> None:
    wanted = Expectations(mentions=("kappa", "zeta"))
    first = aggregate([_run(wanted, envelope(summary="kappa"))])
    second = aggregate([_run(wanted, envelope(summary="kappa and zeta"))])
    stats = spread([first, second])
    assert stats["mention_rate"]["min"] == 0.5
    assert stats["mention_rate"]["max"] == 1.0
    assert stats["mention_rate"]["stdev"] == pytest.approx(0.3535533905932738)
    assert stats["valid_rate"] == {"stdev": 0.0, "min": 1.0, "max": 1.0}
    assert spread([first])["mention_rate"]["stdev"] == 0.0


def test_one_table_names_every_metric_with_its_direction() -> None:
    from supercontext_lab.eval.metrics import (
        METRIC_NAMES,
        METRICS,
        RATE_METRICS,
        TIMING_METRICS,
        metric,
    )

    assert tuple(m.name for m in METRICS) == METRIC_NAMES
    assert set(RATE_METRICS) | set(TIMING_METRICS) <= set(METRIC_NAMES)
    assert metric("forbidden_mention_rate").better == "lower"
    assert metric("valid_rate").better == "higher"
    assert metric("envelope_chars_mean").better is None
    assert metric("runs") is None
    # Every rate is judged; only the envelope size has no better direction.
    assert [m.name for m in METRICS if m.better is None] == ["envelope_chars_mean"]
    aggregated = aggregate([])
    assert set(METRIC_NAMES) <= set(aggregated)


def test_the_spread_leaves_out_repeats_where_a_rate_is_0_of_0() -> None:
    # tool_precision: 0.5 (1 of 2), then 0 of 0 twice (SPEC value 1.0, left out);
    # grounded_rate: 0 of 0 in every repeat, so no entry; mention_rate counts everywhere.
    per_repeat = [
        {**dict.fromkeys(METRIC_NAMES, 0.5)},
        {**dict.fromkeys(METRIC_NAMES, 1.0)},
        {**dict.fromkeys(METRIC_NAMES, 0.0), "tool_precision": 1.0, "grounded_rate": 1.0},
    ]
    counts = [
        {"tool_precision": (1, 2), "grounded_rate": (0, 0), "mention_rate": (1, 2)},
        {"tool_precision": (0, 0), "grounded_rate": (0, 0), "mention_rate": (2, 2)},
        {"tool_precision": (0, 0), "grounded_rate": (0, 0), "mention_rate": (0, 2)},
    ]
    stats = spread(per_repeat, counts)
    assert stats["tool_precision"] == {"stdev": 0.0, "min": 0.5, "max": 0.5}
    assert "grounded_rate" not in stats
    assert (stats["mention_rate"]["min"], stats["mention_rate"]["max"]) == (0.0, 1.0)
    # Without counts every repeat's value is taken as it is.
    assert spread(per_repeat)["tool_precision"]["max"] == 1.0
