"""Standard errors that hold when cases are not independent: cluster-robust (CR1) standard
errors of a mean and of a paired mean difference, the intervals they give and the smallest
difference a set of cases can detect.

**Clusters.** Cases that share a workspace or a conversation are not independent: one note
that the scout ranks badly fails every case it answers, one well-indexed conversation
helps all its questions. :func:`case_clusters` puts each case in a cluster: its dataset
line's ``cluster`` when set (say, follow-ups of one conversation, each a case of its own),
else its workspace (the evaluation's default one for a case that names none); and cases
that name the same past conversation in ``expect.sources`` (``transcript: <id>``) join
one cluster, whatever their workspaces. Repeats of a case are always in its cluster.

**The standard error** (:func:`clustered_se`). For values ``y_i`` with weights ``w_i``
(1 for a plain mean) in ``G`` clusters, the weighted mean is
``theta = sum_i w_i y_i / sum_i w_i`` and its cluster-robust variance, with the CR1
small-sample correction ``G / (G - 1)`` (Cameron & Miller 2015, eq. 11; Stata's
``vce(cluster)`` for a mean, whose ``(N - 1) / (N - K)`` factor is 1 with one parameter),
is::

    V = G / (G - 1) * sum_g ( sum_{i in g} w_i (y_i - theta) )**2 / ( sum_i w_i )**2

and the standard error ``sqrt(V)``. Within a cluster the residuals are summed before they
are squared, so cases that fail together count once, not as independent evidence. With
one value per cluster and equal weights, ``V = s**2 / n``: the ordinary standard error of
the mean (the sample standard deviation, divided by ``n - 1``, over ``sqrt(n)``). With
fewer than two clusters ``V`` has no meaning (``G - 1 = 0``): the result is ``None``,
shown "–", never a number.

A **paired mean difference** is the mean of the per-case differences, clustered the same
way (:func:`clustered_difference`). The **reply lift** (a design's reply mention rate
minus cold's, micro-averaged over expected mentions) is the weighted mean of the per-case
differences of rates, weighted by the case's expected mentions
(:func:`~.stats.clustered_lift`):
``sum(found_a - found_b) / sum(expected)``, exactly the lift.

**Interval and detectable difference.** With few clusters the normal quantile 1.96 is too
small (the standard error itself is estimated from G clusters), so the 95 % interval is
``theta ± t(0.975, G - 1) * SE`` (Student's t with ``G - 1`` degrees of freedom, as
Stata and Cameron & Miller advise), and the minimum detectable difference at alpha 0.05
two-sided and power 0.8 is ``(t(0.975, G - 1) + t(0.80, G - 1)) * SE``: with many
clusters ``(1.96 + 0.84) * SE``, with 4 clusters ``(3.18 + 0.98) * SE``.

Plain arithmetic, as in :mod:`.stats` (which builds on this module): no numpy, no scipy.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .dataset import EvalCase

__all__ = [
    "CLUSTER_METHOD",
    "CONFIDENCE",
    "POWER",
    "ClusteredEstimate",
    "case_clusters",
    "clustered_difference",
    "clustered_mean",
    "clustered_se",
    "mdd_line",
    "t_quantile",
]

CONFIDENCE = 0.95
"""The level of every interval of an evaluation (:mod:`.stats` too)."""
POWER = 0.8
"""The power the minimum detectable difference is computed for (alpha 0.05, two-sided)."""
CLUSTER_METHOD = (
    "cluster-robust (CR1) standard error, clustered by workspace or conversation; 95 % "
    "interval estimate ± t(0.975, G-1) × SE; minimum detectable difference "
    "(t(0.975, G-1) + t(0.80, G-1)) × SE, alpha 0.05 two-sided, power 0.8"
)


# ---------------------------------------------------------------- Student's t


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    result = d
    for m in range(1, 300):
        for numerator in (
            m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1)),
        ):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            result *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return result


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b), 0 <= x <= 1."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    front = math.exp(
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    # The fraction converges fast on the side of the mean; the other side by symmetry.
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _beta_fraction(a, b, x) / a
    return 1.0 - front * _beta_fraction(b, a, 1.0 - x) / b


def _t_upper_tail(t: float, df: float) -> float:
    """P(T > t) for t >= 0 under Student's t with ``df`` degrees of freedom."""
    return 0.5 * _incomplete_beta(df / 2.0, 0.5, df / (df + t * t))


def t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile (0.5 <= p < 1) of Student's t with ``df`` > 0 degrees of freedom,
    by bisection on its distribution function: ``t_quantile(0.975, 3)`` is 3.182."""
    if not 0.5 <= p < 1.0 or df <= 0:
        raise ValueError(f"t_quantile needs 0.5 <= p < 1 and df > 0, not p={p}, df={df}")
    tail = 1.0 - p
    low, high = 0.0, 2.0
    while _t_upper_tail(high, df) > tail:
        low, high = high, high * 2.0
    for _ in range(200):
        middle = (low + high) / 2.0
        if _t_upper_tail(middle, df) > tail:
            low = middle
        else:
            high = middle
        if high - low < 1e-12:
            break
    return (low + high) / 2.0


# ---------------------------------------------------------------- the standard error


def _weighted(
    values: Sequence[float], clusters: Sequence[str], weights: Sequence[float] | None
) -> tuple[list[float], list[str], list[float]]:
    if len(values) != len(clusters) or (weights is not None and len(weights) != len(values)):
        raise ValueError("values, clusters and weights must have one entry per case")
    kept = [
        (float(v), c, float(w))
        for v, c, w in zip(values, clusters, weights or [1.0] * len(values), strict=True)
        if w != 0
    ]
    if any(w < 0 for _, _, w in kept):
        raise ValueError("weights must be >= 0")
    return [v for v, _, _ in kept], [c for _, c, _ in kept], [w for _, _, w in kept]


def _mean_and_se(
    values: Sequence[float], clusters: Sequence[str], weights: Sequence[float] | None
) -> tuple[float, float | None, int]:
    """The weighted mean, its CR1 standard error (``None`` under 2 clusters) and the
    number of clusters (see the module docstring for the formula)."""
    ys, gs, ws = _weighted(values, clusters, weights)
    total = sum(ws)
    if not ys or total == 0:
        return 0.0, None, 0
    theta = sum(w * y for y, w in zip(ys, ws, strict=True)) / total
    sums: dict[str, float] = {}
    for y, g, w in zip(ys, gs, ws, strict=True):
        sums[g] = sums.get(g, 0.0) + w * (y - theta)
    count = len(sums)
    if count < 2:
        return theta, None, count
    variance = count / (count - 1) * sum(s * s for s in sums.values()) / (total * total)
    return theta, math.sqrt(variance), count


def clustered_se(
    values: Sequence[float],
    clusters: Sequence[str],
    weights: Sequence[float] | None = None,
) -> float | None:
    """The cluster-robust (CR1) standard error of the (weighted) mean of ``values``, case
    ``i`` in cluster ``clusters[i]`` with weight ``weights[i]`` (default 1)::

        SE = sqrt( G/(G-1) * sum_g (sum_{i in g} w_i (y_i - theta))**2 / (sum_i w_i)**2 )

    where ``theta`` is the weighted mean and ``G`` the number of clusters (cases of weight
    0 count in none). ``None`` when there are fewer than two clusters: the correction
    ``G/(G-1)`` is undefined at one, and no number would be honest."""
    return _mean_and_se(values, clusters, weights)[1]


@dataclass(frozen=True)
class ClusteredEstimate:
    """A mean (or a paired mean difference) with its cluster-robust standard error."""

    estimate: float
    se: float | None
    """CR1 standard error over the clusters; ``None`` under two clusters."""
    cases: int
    units: int
    """Values behind the estimate: cases times repeats."""
    clusters: int
    case_se: float | None = None
    """The standard error with each case a cluster of its own (its repeats together):
    what the cases would give if they were independent; ``None`` under two cases."""
    bounds: tuple[float, float] | None = None
    """The values the estimate can take (a difference of rates: -1 to 1); the interval is
    cut to them, as Wilson's is to [0, 1]."""

    @property
    def shares_clusters(self) -> bool:
        """Whether some cluster holds more than one value, so that clustering matters."""
        return self.clusters < self.units

    def _df(self, clustered: bool) -> int:
        return (self.clusters if clustered else self.cases) - 1

    def half_width(self) -> float | None:
        """``t(0.975, G-1) * SE``; ``None`` without a clustered standard error."""
        if self.se is None:
            return None
        return t_quantile(0.5 + CONFIDENCE / 2, self._df(True)) * self.se

    def interval(self) -> tuple[float, float] | None:
        """The 95 % interval ``estimate ± half_width`` (within :attr:`bounds`), or ``None``."""
        half = self.half_width()
        if half is None:
            return None
        low, high = self.bounds or (-math.inf, math.inf)
        return max(low, self.estimate - half), min(high, self.estimate + half)

    def mdd(self, *, clustered: bool = True) -> float | None:
        """The minimum detectable difference, ``(t(0.975, df) + t(0.80, df)) * SE``
        (alpha 0.05 two-sided, power 0.8) on the clustered standard error, or with
        ``clustered=False`` on :attr:`case_se` (df: cases - 1); ``None`` when that
        standard error cannot be computed."""
        se = self.se if clustered else self.case_se
        if se is None:
            return None
        df = self._df(clustered)
        return (t_quantile(0.5 + CONFIDENCE / 2, df) + t_quantile(POWER, df)) * se

    def sample(self) -> str:
        """``"14 cases in 4 clusters"``."""
        return (
            f"{self.cases} case{'s' if self.cases != 1 else ''} in {self.clusters} "
            f"cluster{'s' if self.clusters != 1 else ''}"
        )

    def describe(self) -> str:
        """``"+0.12 ± 0.08 (95 %, 14 cases in 4 clusters)"``; without a clustered standard
        error, ``"+0.12 (40 cases in 1 cluster: no clustered interval)"``."""
        half = self.half_width()
        if half is None:
            return f"{self.estimate:+.2f} ({self.sample()}: no clustered interval)"
        return f"{self.estimate:+.2f} ± {half:.2f} (95 %, {self.sample()})"

    def to_dict(self) -> dict[str, Any]:
        interval = self.interval()
        mdd, independent = self.mdd(), self.mdd(clustered=False)
        return {
            "estimate": round(self.estimate, 6),
            "se": None if self.se is None else round(self.se, 6),
            "interval": None if interval is None else [round(v, 6) for v in interval],
            "cases": self.cases,
            "units": self.units,
            "clusters": self.clusters,
            "mdd": None if mdd is None else round(mdd, 6),
            "case_se": None if self.case_se is None else round(self.case_se, 6),
            "mdd_if_independent": None if independent is None else round(independent, 6),
        }


def clustered_mean(
    values: Sequence[float],
    clusters: Sequence[str],
    weights: Sequence[float] | None = None,
    *,
    cases: Sequence[str] | None = None,
) -> ClusteredEstimate:
    """The (weighted) mean of ``values`` with its :func:`clustered_se`; ``cases[i]`` names
    the case value ``i`` belongs to (default: each value its own case), for the count of
    cases and :attr:`ClusteredEstimate.case_se`."""
    owners = list(cases) if cases is not None else [str(i) for i in range(len(values))]
    if len(owners) != len(values):
        raise ValueError("values and cases must have one entry per value")
    theta, se, count = _mean_and_se(values, clusters, weights)
    case_se = _mean_and_se(values, owners, weights)[1]
    kept = [i for i in range(len(values)) if weights is None or weights[i] != 0]
    return ClusteredEstimate(
        estimate=theta,
        se=se,
        cases=len({owners[i] for i in kept}),
        units=len(kept),
        clusters=count,
        case_se=case_se,
    )


def clustered_difference(
    first: Sequence[float],
    second: Sequence[float],
    clusters: Sequence[str],
    *,
    cases: Sequence[str] | None = None,
) -> ClusteredEstimate:
    """The paired mean difference, mean of ``first[i] - second[i]`` (the same case under
    two variants), with its cluster-robust standard error."""
    if len(first) != len(second):
        raise ValueError("a paired difference needs the same cases under both variants")
    differences = [a - b for a, b in zip(first, second, strict=True)]
    return clustered_mean(differences, clusters, cases=cases)


# ---------------------------------------------------------------- clusters of cases


def case_clusters(cases: Sequence[EvalCase]) -> dict[str, str]:
    """Each case's cluster, by case id (see the module docstring): its ``cluster`` key,
    else its workspace; cases citing one past conversation (``transcript: <id>``) joined."""
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    own: dict[str, str] = {}
    for case in cases:
        if case.cluster is not None:
            own[case.id] = f"cluster: {case.cluster}"
        else:
            own[case.id] = f"workspace: {case.workspace or '(default)'}"
        for source in case.expect.sources or ():
            kind, _, name = source.partition(":")
            if kind.strip() == "transcript" and name.strip():
                parent[root(f"transcript: {name.strip()}")] = root(own[case.id])
    return {case_id: root(label) for case_id, label in own.items()}


def mdd_line(estimates: Mapping[str, ClusteredEstimate]) -> str:
    """One sentence under a table of paired differences (``estimates`` by what is
    compared, e.g. ``"scout"``): the smallest difference its cases can tell from noise
    (alpha 0.05 two-sided, power 0.8), on the clustered standard error; under two
    clusters, what the cases would detect if they were independent, said as such."""
    if not estimates:
        return ""
    samples = {estimate.sample() for estimate in estimates.values()}
    sample = samples.pop() if len(samples) == 1 else "these cases"
    clustered = any(estimate.se is not None for estimate in estimates.values())

    def figures(independent: bool) -> str:
        parts = []
        for name, estimate in estimates.items():
            mdd = estimate.mdd(clustered=not independent)
            parts.append(f"{'–' if mdd is None else f'{mdd:.2f}'} ({name})")
        return ", ".join(parts)

    rule = "minimum detectable difference at alpha 0.05 two-sided and power 0.8"
    if clustered:
        return (
            f"With {sample}, differences smaller than {figures(False)} cannot be told from "
            f"noise ({rule}, clustered by workspace or conversation)."
        )
    return (
        f"With {sample} no clustered standard error can be computed (it needs 2 clusters "
        f"or more); even if the cases were independent, differences smaller than "
        f"{figures(True)} could not be told from noise ({rule})."
    )
