"""Cluster-robust standard errors on worked examples: the mean, the paired difference, the
reply lift, Student's t, the minimum detectable difference and the clusters of cases."""

from __future__ import annotations

import math
import statistics
from pathlib import Path

import pytest

from supercontext_lab.eval import EvalCase, Expectations
from supercontext_lab.eval.clusters import (
    ClusteredEstimate,
    case_clusters,
    clustered_difference,
    clustered_mean,
    clustered_se,
    mdd_line,
    t_quantile,
)
from supercontext_lab.eval.stats import CaseCounts, clustered_lift


def test_clustered_se_of_a_mean_on_a_worked_example() -> None:
    # Six values in three clusters: A = (1, 0), B = (1, 1, 1), C = (0).
    #   mean theta = 4/6 = 2/3
    #   residuals y - theta: A = (1/3, -2/3), B = (1/3, 1/3, 1/3), C = (-2/3)
    #   summed per cluster:  A = -1/3, B = 1, C = -2/3
    #   squared and added:   1/9 + 1 + 4/9 = 14/9
    #   V = G/(G-1) * 14/9 / n**2 = 3/2 * 14/9 / 36 = 7/108 = 0.0648148...
    #   SE = sqrt(7/108) = 0.2545875...
    values = [1, 0, 1, 1, 1, 0]
    clusters = ["A", "A", "B", "B", "B", "C"]
    assert clustered_se(values, clusters) == pytest.approx(math.sqrt(7 / 108))
    assert clustered_se(values, clusters) == pytest.approx(0.2545875, abs=1e-7)
    estimate = clustered_mean(values, clusters)
    assert estimate.estimate == pytest.approx(2 / 3)
    assert (estimate.cases, estimate.units, estimate.clusters) == (6, 6, 3)
    assert estimate.shares_clusters
    # Treated as six independent cases it would be smaller: s / sqrt(6), s**2 = (4/3)/5.
    assert estimate.case_se == pytest.approx(math.sqrt(4 / 15 / 6))
    assert estimate.case_se is not None and estimate.case_se < math.sqrt(7 / 108)


def test_clustered_se_of_a_paired_difference_on_a_worked_example() -> None:
    # The same six cases under two variants; the differences are those of the mean's
    # example, so the standard error is the same: sqrt(7/108).
    #   first  = (1, 1, 1, 1, 1, 0)
    #   second = (0, 1, 0, 0, 0, 0)  ->  differences (1, 0, 1, 1, 1, 0)
    first = [1, 1, 1, 1, 1, 0]
    second = [0, 1, 0, 0, 0, 0]
    clusters = ["A", "A", "B", "B", "B", "C"]
    difference = clustered_difference(first, second, clusters)
    assert difference.estimate == pytest.approx(2 / 3)
    assert difference.se == pytest.approx(math.sqrt(7 / 108))
    with pytest.raises(ValueError, match="same cases"):
        clustered_difference(first, second[:2], clusters)


def test_clustered_se_of_a_lift_on_a_worked_example() -> None:
    # Four cases, expected mentions e, found by the design (a) and cold (b):
    #   case 1 (cluster A): a 2, b 0, e 2      case 3 (cluster B): a 1, b 0, e 1
    #   case 2 (cluster A): a 1, b 1, e 2      case 4 (cluster C): a 0, b 0, e 3
    #   lift R = sum(a - b) / sum(e) = (2 + 0 + 1 + 0) / 8 = 3/8 (the micro-averaged lift)
    #   scores d - R e: case 1  2 - 6/8 = 5/4,  case 2  0 - 6/8 = -3/4,
    #                   case 3  1 - 3/8 = 5/8,  case 4  0 - 9/8 = -9/8
    #   summed per cluster: A = 1/2, B = 5/8, C = -9/8   (they add up to 0)
    #   squared and added:  16/64 + 25/64 + 81/64 = 122/64
    #   V = 3/2 * (122/64) / 8**2 = 183/4096;  SE = sqrt(183)/64 = 0.2113710...
    first = [CaseCounts(2, 2), CaseCounts(1, 2), CaseCounts(1, 1), CaseCounts(0, 3)]
    second = [CaseCounts(0, 2), CaseCounts(1, 2), CaseCounts(0, 1), CaseCounts(0, 3)]
    lift = clustered_lift(first, second, ["A", "A", "B", "C"])
    assert lift.estimate == pytest.approx(3 / 8)
    assert lift.se == pytest.approx(math.sqrt(183) / 64)
    assert lift.se == pytest.approx(0.2113710, abs=1e-7)
    # 95 %: 3/8 ± t(0.975, 2) * SE = 0.375 ± 4.302653 * 0.211371 = 0.375 ± 0.909455,
    # cut to the values a difference of rates can take, [-1, 1].
    assert lift.half_width() == pytest.approx(4.302653 * 0.2113710, abs=1e-5)
    assert lift.interval() == pytest.approx((0.375 - 0.909455, 1.0), abs=1e-5)
    # MDD = (t(0.975, 2) + t(0.80, 2)) * SE = (4.302653 + 1.060660) * 0.211371 = 1.133655.
    assert lift.mdd() == pytest.approx((4.302653 + 1.060660) * 0.2113710, abs=1e-5)
    assert lift.describe() == "+0.38 ± 0.91 (95 %, 4 cases in 3 clusters)"


def test_one_case_per_cluster_is_the_ordinary_standard_error() -> None:
    values = [0.2, 0.9, 0.4, 0.4, 1.0, 0.0, 0.7]
    n = len(values)
    se = clustered_se(values, [f"c{i}" for i in range(n)])
    # CR1 with G = n: the population standard error times sqrt(n/(n-1)), which is the
    # sample standard deviation over sqrt(n).
    ordinary = statistics.pstdev(values) / math.sqrt(n)
    assert se == pytest.approx(ordinary * math.sqrt(n / (n - 1)))
    assert se == pytest.approx(statistics.stdev(values) / math.sqrt(n))
    estimate = clustered_mean(values, [f"c{i}" for i in range(n)])
    assert not estimate.shares_clusters and estimate.se == pytest.approx(estimate.case_se)


def test_fewer_than_two_clusters_give_no_number() -> None:
    assert clustered_se([0.1, 0.5, 0.9], ["only"] * 3) is None
    assert clustered_se([0.5], ["a"]) is None
    assert clustered_se([], []) is None
    # Weight 0 puts a case in no cluster.
    assert clustered_se([1.0, 0.0], ["a", "b"], [1.0, 0.0]) is None
    estimate = clustered_mean([0.1, 0.5, 0.9], ["only"] * 3)
    assert estimate.se is None and estimate.clusters == 1
    assert estimate.interval() is None and estimate.half_width() is None
    assert estimate.mdd() is None
    assert estimate.describe() == "+0.50 (3 cases in 1 cluster: no clustered interval)"
    assert estimate.to_dict()["se"] is None and estimate.to_dict()["mdd"] is None
    # As if the cases were independent: s = 0.4, SE = 0.4 / sqrt(3), df 2.
    assert estimate.case_se == pytest.approx(0.4 / math.sqrt(3))
    assert estimate.mdd(clustered=False) == pytest.approx(
        (4.302653 + 1.060660) * 0.4 / math.sqrt(3), abs=1e-5
    )
    with pytest.raises(ValueError, match="one entry per case"):
        clustered_se([1.0], ["a", "b"])


@pytest.mark.parametrize(
    ("p", "df", "quantile"),
    [
        # Student's t table values (the same as scipy.stats.t.ppf), to six decimals.
        (0.975, 1, 12.706205),
        (0.975, 2, 4.302653),
        (0.975, 3, 3.182446),
        (0.975, 13, 2.160369),
        (0.975, 30, 2.042272),
        (0.8, 2, 1.060660),
        (0.8, 3, 0.978472),
        (0.8, 30, 0.853767),
        (0.5, 5, 0.0),
    ],
)
def test_t_quantiles_match_the_table(p: float, df: int, quantile: float) -> None:
    assert t_quantile(p, df) == pytest.approx(quantile, abs=1e-6)


def test_with_many_clusters_the_mdd_is_two_point_eight_standard_errors() -> None:
    # t(0.975) + t(0.80) tends to 1.96 + 0.84 as the clusters grow.
    many = ClusteredEstimate(estimate=0.1, se=0.05, cases=5000, units=5000, clusters=5000)
    assert many.mdd() == pytest.approx((1.959964 + 0.841621) * 0.05, abs=1e-4)
    few = ClusteredEstimate(estimate=0.1, se=0.05, cases=14, units=14, clusters=4)
    assert few.mdd() == pytest.approx((3.182446 + 0.978472) * 0.05, abs=1e-6)
    with pytest.raises(ValueError, match="t_quantile"):
        t_quantile(0.3, 2)


def test_mdd_line_says_it_in_words() -> None:
    few = ClusteredEstimate(estimate=0.1, se=0.05, cases=14, units=14, clusters=4)
    line = mdd_line({"scout": few})
    assert line.startswith("With 14 cases in 4 clusters, differences smaller than 0.21 (scout)")
    assert "cannot be told from noise" in line and "power 0.8" in line
    alone = ClusteredEstimate(estimate=0.1, se=None, cases=40, units=40, clusters=1, case_se=0.05)
    line = mdd_line({"pack": alone})
    assert line.startswith("With 40 cases in 1 cluster no clustered standard error")
    assert "even if the cases were independent" in line and "0.14 (pack)" in line
    assert mdd_line({}) == ""


def _case(case_id: str, workspace: Path | None = None, **keys: object) -> EvalCase:
    sources = keys.pop("sources", None)
    return EvalCase(
        id=case_id,
        message="m",
        workspace=workspace,
        expect=Expectations(sources=sources),  # type: ignore[arg-type]
        cluster=keys.pop("cluster", None),  # type: ignore[arg-type]
    )


def test_cases_are_clustered_by_workspace_cluster_key_and_shared_conversation(
    tmp_path: Path,
) -> None:
    one, two, three = tmp_path / "one", tmp_path / "two", tmp_path / "three"
    cases = [
        _case("a", one),
        _case("b", one),
        _case("c", two),
        # Own workspaces, one conversation: one cluster.
        _case("d", three, sources=("transcript: conv-7",)),
        _case("e", tmp_path / "four", sources=("transcript: conv-7", "profile")),
        # A cluster named in the dataset wins over the workspace.
        _case("f", one, cluster="follow-ups"),
        _case("g", two, cluster="follow-ups"),
        # No workspace: the evaluation's default one, shared.
        _case("h"),
        _case("i"),
    ]
    clusters = case_clusters(cases)
    assert clusters["a"] == clusters["b"] != clusters["c"]
    assert clusters["d"] == clusters["e"]
    assert clusters["f"] == clusters["g"] != clusters["a"]
    assert clusters["h"] == clusters["i"] != clusters["a"]
    assert len(set(clusters.values())) == 5
