"""What results add up to: one variant's report of its own runs, and every two variants
compared case by case on the bundle's mentions."""

from __future__ import annotations

import pytest

from supercontext_lab.eval import BASELINE, CaseResult, CaseScores, baseline
from supercontext_lab.eval.stats import wilson
from supercontext_lab.eval.summary import VariantReport, paired_comparisons, variant_report


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
