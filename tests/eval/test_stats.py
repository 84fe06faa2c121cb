"""The statistics of an evaluation on constructed cases: Wilson intervals, the exact
McNemar test and the paired bootstrap."""

from __future__ import annotations

import math

import pytest

from supercontext_lab.eval.stats import (
    FEW_CASES,
    CaseCounts,
    compare_pair,
    few_cases_note,
    format_interval,
    mcnemar_exact,
    paired_bootstrap,
    wilson,
)


@pytest.mark.parametrize(
    ("k", "n", "low", "high"),
    [
        # Reference values (Wilson 1927; the same as statsmodels' proportion_confint with
        # method="wilson"), to four decimals.
        (5, 10, 0.2366, 0.7634),
        (0, 10, 0.0, 0.2775),
        (10, 10, 0.7225, 1.0),
        (81, 263, 0.2553, 0.3662),
        (1, 40, 0.0044, 0.1288),
    ],
)
def test_wilson_matches_reference_values(k: int, n: int, low: float, high: float) -> None:
    got = wilson(k, n)
    assert got == pytest.approx((low, high), abs=1e-4)


def test_wilson_of_nothing_measured_excludes_nothing() -> None:
    assert wilson(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="0 <= k <= n"):
        wilson(3, 2)


def test_mcnemar_exact_on_a_constructed_case() -> None:
    # Twelve discordant cases, ten of them won by the first variant: the two-sided
    # binomial tail is 2 * (C(12,0) + C(12,1) + C(12,2)) / 2**12 = 158 / 4096.
    assert mcnemar_exact(10, 2) == pytest.approx(158 / 4096)
    assert mcnemar_exact(2, 10) == mcnemar_exact(10, 2)
    assert mcnemar_exact(0, 0) == 1.0
    assert mcnemar_exact(3, 3) == 1.0
    # Six to none: 2 / 64.
    assert mcnemar_exact(6, 0) == pytest.approx(2 / 64)
    assert mcnemar_exact(5, 0) == pytest.approx(2 / 32)


def test_paired_bootstrap_on_constructed_cases() -> None:
    same = [CaseCounts(1, 2), CaseCounts(2, 2), CaseCounts(0, 3)]
    assert paired_bootstrap(same, same) == (0.0, 0.0, 0.0)
    always = [CaseCounts(2, 2)] * 8
    never = [CaseCounts(0, 2)] * 8
    assert paired_bootstrap(always, never) == (1.0, 1.0, 1.0)
    # Half the cases gain everything, half gain nothing: the difference is 0.5 and the
    # interval holds it, inside [0, 1].
    first = [CaseCounts(2, 2)] * 10 + [CaseCounts(0, 2)] * 10
    second = [CaseCounts(0, 2)] * 20
    difference, low, high = paired_bootstrap(first, second)
    assert difference == 0.5
    assert 0.0 < low < 0.5 < high < 1.0
    # Seeded: the same interval every time.
    assert paired_bootstrap(first, second) == (difference, low, high)
    with pytest.raises(ValueError, match="same cases"):
        paired_bootstrap(first, second[:3])


def test_compare_pair_counts_the_discordant_cases() -> None:
    counts = {
        "pack": {f"c{i}": CaseCounts(1, 1) for i in range(10)} | {"c10": CaseCounts(0, 1)},
        "cold": {f"c{i}": CaseCounts(0, 1) for i in range(9)}
        | {"c9": CaseCounts(1, 1), "c10": CaseCounts(1, 1), "only-cold": CaseCounts(1, 1)},
    }
    pair = compare_pair("pack", "cold", "reply_mention_rate", counts)
    assert pair is not None
    assert pair.cases == 11  # "only-cold" is not shared
    assert (pair.first_complete, pair.second_complete) == (10, 2)
    assert (pair.only_first, pair.only_second) == (9, 1)
    assert pair.p_value == pytest.approx(2 * (1 + 10) / 2**10)
    assert pair.difference == pytest.approx(8 / 11)
    assert pair.low <= pair.difference <= pair.high
    data = pair.to_dict()
    assert data["discordant"] == [9, 1] and data["complete"] == [10, 2]
    assert "McNemar exact p = 0.021" in pair.line()
    assert compare_pair("pack", "nobody", "x", counts) is None


def test_format_interval() -> None:
    assert format_interval(0.25, 1.0) == "[0.250, 1.000]"
    assert not math.isnan(wilson(1, 3)[0])


@pytest.mark.parametrize(
    ("cases", "interval"), [(1, "[21%, 100%]"), (2, "[9%, 91%]"), (19, "[32%, 73%]")]
)
def test_under_twenty_cases_a_table_says_what_its_intervals_mean(cases: int, interval: str) -> None:
    note = few_cases_note(cases)
    assert note.startswith(f"Only {cases} case")
    assert interval in note and "20 or more cases" in note
    low, high = wilson((cases + 1) // 2, cases)
    assert f"[{low:.0%}, {high:.0%}]" == interval


def test_from_twenty_cases_on_no_note() -> None:
    assert FEW_CASES == 20
    assert few_cases_note(20) == "" and few_cases_note(40) == ""
