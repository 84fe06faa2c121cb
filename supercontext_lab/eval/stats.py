"""The statistics of an evaluation: intervals for every rate and a paired test for every
two variants (SPEC §16). One module, so every figure says the same thing.

* **Intervals.** A rate that is a proportion of counted units (``k`` of ``n``: valid
  runs, expected mentions found, recommended tools that were expected) gets the 95 %
  **Wilson score interval** (:func:`wilson`). It counts each unit as independent; a
  micro-averaged rate over mentions that cluster in cases is therefore given a slightly
  narrow interval, which the paired bootstrap below does not assume. A difference between
  two variants on the same cases (``reply_lift``) gets a **paired bootstrap** interval
  (:func:`paired_bootstrap`): the cases are resampled with replacement, the same cases for
  both variants, and the difference of the two micro-averaged rates is recomputed; the
  interval is the 2.5th and 97.5th percentiles of 2,000 resamples, seeded so a report is
  the same on every run.
* **Paired test.** Two variants run on the same cases are compared on each case's binary
  outcome "every expected mention is there" with the **exact McNemar test**
  (:func:`mcnemar_exact`): only the cases where the two disagree count, and under the
  null hypothesis each disagreement goes either way with probability one half, so the
  two-sided p-value is a binomial tail. The difference of their mention rates comes with
  its paired bootstrap interval (:func:`compare_pair`).
* **Clusters.** Both McNemar and the bootstrap treat cases as independent; cases that
  share a workspace or a conversation are not. Where cases share clusters (and there are
  two clusters or more), a difference's reported interval is the cluster-robust one of
  :mod:`.clusters` instead, and the number of clusters is shown beside the cases
  (:meth:`PairedComparison.line`).

* **Few cases.** Under :data:`FEW_CASES` cases an interval is too wide to settle much;
  every table of results over fewer cases carries :func:`few_cases_note` (the report's
  text, HTML and Markdown, every table the command line prints, the JSON's
  ``few_cases_note``, the widget, notebook 09), so a 2-case
  table is never read beside a 33-case one as if it weighed the same.

Everything here is plain arithmetic on counts: no numpy, no scipy.
"""

from __future__ import annotations

import math
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from .clusters import CONFIDENCE, ClusteredEstimate, clustered_mean

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "CONFIDENCE",
    "FEW_CASES",
    "INTERVAL_METHOD",
    "PAIRED_METHOD",
    "CaseCounts",
    "PairedComparison",
    "clustered_lift",
    "compare_pair",
    "few_cases_note",
    "format_interval",
    "mcnemar_exact",
    "paired_bootstrap",
    "wilson",
]

_Z = 1.959963984540054
"""The two-sided 95 % quantile of the standard normal distribution."""
BOOTSTRAP_RESAMPLES = 2000
_SEED = 20261215
INTERVAL_METHOD = "Wilson score interval, 95 %"
PAIRED_METHOD = (
    "exact McNemar test on each case's outcome 'every expected mention is there'; the "
    "difference of mention rates with a 95 % interval: cluster-robust (t with G-1 degrees "
    "of freedom, G clusters of cases sharing a workspace or conversation) where cases "
    "share clusters, else a paired bootstrap (2,000 resamples of cases)"
)


FEW_CASES = 20
"""Below this many cases a results table says what its intervals mean (:func:`few_cases_note`)."""


def few_cases_note(cases: int) -> str:
    """The line under a table of results over ``cases`` cases: empty from
    :data:`FEW_CASES` on, else what a 95 % interval means at that size, with the interval
    of a rate of about one half over that many cases as the example."""
    if cases >= FEW_CASES:
        return ""
    k = (cases + 1) // 2
    low, high = wilson(k, cases)
    return (
        f"Only {cases} case{'s' if cases != 1 else ''}: at this size a 95 % interval is "
        f"wide (a rate measured as {k} of {cases} has the interval [{low:.0%}, {high:.0%}]), so "
        f"these figures are a smoke test, not a result; run {FEW_CASES} or more cases "
        "before comparing variants."
    )


def wilson(k: int, n: int) -> tuple[float, float]:
    """The 95 % Wilson score interval of ``k`` successes in ``n`` trials; ``(0.0, 1.0)``
    when ``n`` is 0 (nothing was measured, so nothing is excluded)."""
    if n < 0 or k < 0 or k > n:
        raise ValueError(f"wilson needs 0 <= k <= n, not k={k}, n={n}")
    if n == 0:
        return 0.0, 1.0
    p = k / n
    z2 = _Z * _Z
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = _Z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    # At k = 0 or k = n the bound is exactly 0 or 1; rounding must not move it past.
    low = 0.0 if k == 0 else max(0.0, centre - half)
    high = 1.0 if k == n else min(1.0, centre + half)
    return low, high


def mcnemar_exact(only_first: int, only_second: int) -> float:
    """The two-sided exact McNemar p-value for ``only_first`` cases that succeed under the
    first variant alone and ``only_second`` under the second alone: twice the smaller
    binomial tail of Binomial(b + c, 1/2), at most 1. No disagreement gives 1.0."""
    if only_first < 0 or only_second < 0:
        raise ValueError("mcnemar_exact needs counts >= 0")
    n = only_first + only_second
    if n == 0:
        return 1.0
    low = min(only_first, only_second)
    tail = sum(math.comb(n, i) for i in range(low + 1)) / 2.0**n
    return min(1.0, 2.0 * tail)


@dataclass(frozen=True)
class CaseCounts:
    """One case's counts under one variant: expected mentions found of expected."""

    found: int
    expected: int

    @property
    def complete(self) -> bool:
        """Every expected mention is there."""
        return self.found == self.expected


def _rate(counts: Sequence[CaseCounts]) -> float:
    expected = sum(c.expected for c in counts)
    return sum(c.found for c in counts) / expected if expected else 0.0


def paired_bootstrap(
    first: Sequence[CaseCounts],
    second: Sequence[CaseCounts],
    *,
    resamples: int = BOOTSTRAP_RESAMPLES,
    seed: int = _SEED,
) -> tuple[float, float, float]:
    """The difference of micro-averaged rates, ``rate(first) - rate(second)``, over
    paired cases (``first[i]`` and ``second[i]`` are the same case), and its 95 % paired
    bootstrap interval: ``(difference, low, high)``."""
    if len(first) != len(second):
        raise ValueError("paired_bootstrap needs the same cases under both variants")
    difference = _rate(first) - _rate(second)
    if not first:
        return 0.0, 0.0, 0.0
    chooser = random.Random(seed)
    size = len(first)
    values = []
    for _ in range(resamples):
        picks = [chooser.randrange(size) for _ in range(size)]
        values.append(_rate([first[i] for i in picks]) - _rate([second[i] for i in picks]))
    values.sort()
    low = values[math.floor(0.025 * (resamples - 1))]
    high = values[math.ceil(0.975 * (resamples - 1))]
    return difference, low, high


def clustered_lift(
    first: Sequence[CaseCounts],
    second: Sequence[CaseCounts],
    clusters: Sequence[str],
    *,
    cases: Sequence[str] | None = None,
) -> ClusteredEstimate:
    """The difference of micro-averaged mention rates, ``rate(first) - rate(second)``, over
    paired cases (``first[i]`` and ``second[i]`` the same case, in cluster
    ``clusters[i]``), as the mean of per-case rate differences weighted by expected
    mentions, with its cluster-robust standard error (:mod:`.clusters`); its interval is
    cut to [-1, 1]. Cases that expect nothing weigh nothing."""
    if len(first) != len(second):
        raise ValueError("a paired difference needs the same cases under both variants")
    weights = [float(a.expected) for a in first]
    values = [
        (a.found - b.found) / a.expected if a.expected else 0.0
        for a, b in zip(first, second, strict=True)
    ]
    estimate = clustered_mean(values, clusters, weights, cases=cases)
    return replace(estimate, bounds=(-1.0, 1.0))


@dataclass(frozen=True)
class PairedComparison:
    """Two variants on the same cases (see the module docstring)."""

    first: str
    second: str
    measure: str
    """What was compared: ``mention_rate`` (the bundle) or ``reply_mention_rate``."""
    cases: int
    first_complete: int
    second_complete: int
    only_first: int
    """Cases complete under the first variant only (McNemar's b)."""
    only_second: int
    """Cases complete under the second variant only (McNemar's c)."""
    p_value: float
    difference: float
    low: float
    high: float
    """The paired bootstrap interval (:func:`paired_bootstrap`)."""
    clustered: ClusteredEstimate | None = None
    """The difference with its cluster-robust standard error (:mod:`.clusters`), when the
    cases' clusters are known."""

    def interval(self) -> tuple[float, float, str]:
        """The interval a reader is shown and how it was made: the clustered one where
        cases share clusters and it can be computed, else the bootstrap's."""
        clustered = self.clustered
        if clustered is not None and clustered.shares_clusters:
            shown = clustered.interval()
            if shown is not None:
                return shown[0], shown[1], "clustered"
        return self.low, self.high, "bootstrap"

    def to_dict(self) -> dict[str, Any]:
        low, high, method = self.interval()
        return {
            "first": self.first,
            "second": self.second,
            "measure": self.measure,
            "cases": self.cases,
            "complete": [self.first_complete, self.second_complete],
            "discordant": [self.only_first, self.only_second],
            "mcnemar_exact_p": round(self.p_value, 6),
            "difference": round(self.difference, 6),
            "interval": [round(low, 6), round(high, 6)],
            "interval_method": method,
            "bootstrap_interval": [round(self.low, 6), round(self.high, 6)],
            "clustered": None if self.clustered is None else self.clustered.to_dict(),
            "method": PAIRED_METHOD,
        }

    def line(self) -> str:
        """One line for a text report: the cases (in how many clusters, when known), the
        difference and its interval, named by how it was made."""
        low, high, method = self.interval()
        sample = f"{self.cases} cases"
        if self.clustered is not None:
            sample = self.clustered.sample()
        return (
            f"{self.first} vs {self.second} ({self.measure}, {sample}): "
            f"{self.difference:+.3f} {format_interval(low, high)} {method}; every mention "
            f"{self.first_complete} vs {self.second_complete}, discordant "
            f"{self.only_first}/{self.only_second}, McNemar exact p {_p(self.p_value)}"
        )


def _p(value: float) -> str:
    return "< 0.001" if value < 0.001 else f"= {value:.3f}"


def format_interval(low: float, high: float) -> str:
    """``[0.412, 0.688]``."""
    return f"[{low:.3f}, {high:.3f}]"


def compare_pair(
    first: str,
    second: str,
    measure: str,
    counts: Mapping[str, Mapping[str, CaseCounts]],
) -> PairedComparison | None:
    """The paired comparison of two variants over the cases both have counts for
    (``counts[variant][case id]``); ``None`` when they share no case."""
    shared = [case for case in counts.get(first, {}) if case in counts.get(second, {})]
    if not shared:
        return None
    a = [counts[first][case] for case in shared]
    b = [counts[second][case] for case in shared]
    only_first = sum(1 for x, y in zip(a, b, strict=True) if x.complete and not y.complete)
    only_second = sum(1 for x, y in zip(a, b, strict=True) if y.complete and not x.complete)
    difference, low, high = paired_bootstrap(a, b)
    return PairedComparison(
        first=first,
        second=second,
        measure=measure,
        cases=len(shared),
        first_complete=sum(1 for x in a if x.complete),
        second_complete=sum(1 for y in b if y.complete),
        only_first=only_first,
        only_second=only_second,
        p_value=mcnemar_exact(only_first, only_second),
        difference=difference,
        low=low,
        high=high,
    )
