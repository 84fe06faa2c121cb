"""What results add up to: one variant's report of its own runs, and every two variants
compared case by case on the bundle's mentions."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from supercontext_lab.eval import BASELINE, CaseResult, CaseScores, baseline
from supercontext_lab.eval.stats import wilson
from supercontext_lab.eval.summary import (
    VariantReport,
    paired_comparisons,
    variant_report,
    with_replies,
)


def _result(case_id: str, variant: str, repeat: int, found: int | None) -> CaseResult:
    """A valid run that found ``found`` of one expected mention (``None``: none expected)."""
    return CaseResult(
        id=case_id,
        variant=variant,
        repeat=repeat,
        status="completed",
        envelope="[context_bundle][/context_bundle]",
        bundle={},
        problems=[],
        trace_summary={},
        elapsed_ms=10.0,
        tokens=100,
        model_calls=2,
        model_name="scripted",
        definition_hash="h",
        scores=CaseScores(
            valid=True,
            mentions_found=found,
            mentions_expected=None if found is None else 1,
        ),
        cache_hits=1,
    )


def test_a_variant_report_adds_up_its_own_runs_per_repeat_with_intervals() -> None:
    results = [
        _result("a", BASELINE, 0, 1),
        _result("b", BASELINE, 0, 0),
        _result("a", BASELINE, 1, 1),
        _result("b", BASELINE, 1, 1),
        _result("a", "other", 0, 0),
    ]
    report = variant_report(baseline(), results, repeats=2)
    assert report.name == BASELINE and report.design == "scout"
    assert report.metrics["runs"] == 4
    assert report.metrics["mention_rate"] == 0.75
    assert [m["mention_rate"] for m in report.per_repeat] == [0.5, 1.0]
    assert report.spread["mention_rate"]["min"] == 0.5
    assert report.spread["mention_rate"]["max"] == 1.0
    assert report.intervals["mention_rate"] == wilson(3, 4)
    assert report.cache_hits == 4 and report.reused_runs == 0
    assert report.definition_hash == baseline().definition.definition_hash()
    once = variant_report(baseline(), results[:2], repeats=1)
    assert (once.spread, once.per_repeat) == ({}, [])


def test_every_two_variants_are_paired_on_the_cases_both_expect_mentions_of() -> None:
    results = [
        *(_result(case, "first", 0, 1) for case in "abcd"),
        *(
            _result(case, "second", 0, found)
            for case, found in zip("abcd", (1, 0, 0, 0), strict=True)
        ),
        *(_result(case, "silent", 0, None) for case in "abcd"),
    ]
    reports = [VariantReport(name, {}) for name in ("first", "second", "silent")]
    (pair,) = paired_comparisons(reports, results, end_to_end=False)
    assert (pair.first, pair.second, pair.measure) == ("first", "second", "mention_rate")
    assert (pair.cases, pair.only_first, pair.only_second) == (4, 3, 0)
    assert pair.difference == pytest.approx(0.75)
    # Without the cases' clusters there is no clustered estimate, and the line is as ever.
    assert pair.clustered is None and "(mention_rate, 4 cases)" in pair.line()


# The lift's worked example of tests/eval/test_clusters.py: per case, the reply's expected
# mentions found with the design and cold, of expected; lift 3/8, SE sqrt(183)/64.
LIFT_CASES = {"a": (2, 0, 2), "b": (1, 1, 2), "c": (1, 0, 1), "d": (0, 0, 3)}
LIFT_CLUSTERS = {"a": "A", "b": "A", "c": "B", "d": "C"}


def _turn(case_id: str, variant: str, found: int, expected: int) -> CaseResult:
    result = _result(case_id, variant, 0, None)
    turn = {
        "reply_scores": {
            "found": found,
            "expected": expected,
            "forbidden": None,
            "forbidden_expected": None,
        },
        "prompt_tokens": 10,
        "time_to_reply_ms": 1.0,
    }
    return replace(result, turn=turn)


def _lift_results() -> list[CaseResult]:
    return [
        *(
            _turn(case, "pack", found, expected)
            for case, (found, _, expected) in LIFT_CASES.items()
        ),
        *(
            _turn(case, "cold", found, expected)
            for case, (_, found, expected) in LIFT_CASES.items()
        ),
    ]


def test_a_lift_over_cases_that_share_clusters_gets_the_clustered_interval() -> None:
    reports = [VariantReport(name, {}) for name in ("pack", "cold")]
    pack, cold = with_replies(reports, _lift_results(), LIFT_CLUSTERS)
    assert pack.lift is not None and cold.lift is None
    assert pack.lift.estimate == pytest.approx(3 / 8)
    assert pack.lift.se == pytest.approx(math.sqrt(183) / 64)
    assert (pack.lift.cases, pack.lift.clusters) == (4, 3)
    # The interval shown is the clustered one; the bootstrap's is kept beside it.
    assert pack.intervals["reply_lift"] == pack.lift.interval()
    assert pack.intervals["reply_lift_bootstrap"] != pack.intervals["reply_lift"]
    assert pack.to_dict()["lift"]["clusters"] == 3
    (pair,) = paired_comparisons(
        [pack, cold], _lift_results(), end_to_end=True, clusters=LIFT_CLUSTERS
    )
    assert pair.clustered == pack.lift
    low, high, method = pair.interval()
    assert (low, high, method) == (*pack.lift.interval(), "clustered")  # type: ignore[misc]
    assert "(reply_mention_rate, 4 cases in 3 clusters): +0.375 [" in pair.line()
    assert "] clustered; every mention" in pair.line()
    assert pair.to_dict()["bootstrap_interval"] == [round(pair.low, 6), round(pair.high, 6)]


def test_a_lift_over_independent_cases_or_one_cluster_keeps_the_bootstrap() -> None:
    reports = [VariantReport(name, {}) for name in ("pack", "cold")]
    bare, _ = with_replies(reports, _lift_results())
    assert bare.lift is None and "reply_lift_bootstrap" not in bare.intervals
    for clusters in ({case: case for case in LIFT_CASES}, dict.fromkeys(LIFT_CASES, "one")):
        pack, _ = with_replies(reports, _lift_results(), clusters)
        assert pack.intervals["reply_lift"] == bare.intervals["reply_lift"]
        assert pack.lift is not None and not (pack.lift.shares_clusters and pack.lift.se)
    assert pack.lift is not None and pack.lift.se is None and pack.lift.clusters == 1
