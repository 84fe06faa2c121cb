"""What an evaluation's results add up to, per variant and between variants.

A :class:`VariantReport` holds one variant's metrics over all its runs (:mod:`.metrics`),
their spread across repeats, the 95 % interval of each rate and where the variant came
from; end to end, the reply metrics against the ``cold`` variant join them
(:mod:`.end_to_end`). Every two variants are compared on the same cases
(:func:`~.stats.compare_pair`). Given each case's cluster (:func:`~.clusters.case_clusters`),
a lift and every paired difference also get their cluster-robust standard error, and their
reported interval is the clustered one where cases share clusters. The report
(:mod:`.report`) shows what is built here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .clusters import ClusteredEstimate
from .end_to_end import COLD, mention_counts, paired_counts, reply_metrics, reply_rate_counts
from .metrics import aggregate, applicable, rate_counts, spread
from .results import CaseResult
from .stats import CaseCounts, PairedComparison, clustered_lift, compare_pair, wilson
from .variants import Variant

__all__ = [
    "VariantReport",
    "paired_comparisons",
    "paired_lift",
    "variant_report",
    "with_replies",
]


@dataclass(frozen=True)
class VariantReport:
    """One variant's metrics (over every run), their spread across repeats and provenance.

    ``cache_hits`` counts model replies that did not reach the model (a result reused from
    the result store counts each of its model calls); ``reused_runs`` counts the results
    reused whole.
    """

    name: str
    metrics: dict[str, float | int]
    """Every metric, with SPEC §11's values: a rate of 0/0 is 1.0 (0.0 for forbidden
    mentions); :meth:`shown` is what a reader is shown."""
    spread: dict[str, dict[str, float]] = field(default_factory=dict)
    per_repeat: list[dict[str, float | int]] = field(default_factory=list)
    cache_hits: int = 0
    cache_misses: int = 0
    definition_hash: str = ""
    source: str = ""
    model: str = ""
    reused_runs: int = 0
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    """The 95 % interval of each rate (:mod:`.stats`: Wilson, [0, 1] for 0 of 0; the
    lift's, a paired bootstrap)."""
    design: str = "scout"
    """The pre-flight design that prepared the variant's cases."""
    counts: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Each rate (and the lift) as the counts behind it, ``(k, n)``: whether it applies."""
    lift: ClusteredEstimate | None = None
    """End to end, the reply lift over cold with its cluster-robust standard error (not
    for cold itself, nor without the cases' clusters)."""

    def applies(self, name: str) -> bool:
        """Whether metric ``name`` means anything for this variant: not a rate of 0 of 0
        (:func:`~.scores.applicable`, the rule every renderer asks through here)."""
        return applicable(self.counts.get(name))

    def shown(self, name: str) -> float | int | None:
        """Metric ``name`` as a reader is shown it: its value, or ``None`` (drawn "–",
        with no interval) when it does not apply; ``None`` too when the variant lacks it."""
        return self.metrics.get(name) if self.applies(name) else None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "name": self.name,
            "metrics": dict(self.metrics),
            "cache": {
                "hits": self.cache_hits,
                "misses": self.cache_misses,
                "reused_runs": self.reused_runs,
            },
            "definition_hash": self.definition_hash,
            "source": self.source,
            "model": self.model,
            "design": self.design,
            "intervals": {
                name: [round(low, 6), round(high, 6)]
                for name, (low, high) in self.intervals.items()
            },
            "counts": {name: list(pair) for name, pair in self.counts.items()},
        }
        if self.lift is not None:
            out["lift"] = self.lift.to_dict()
        if self.spread:
            out["spread"] = {name: dict(stats) for name, stats in self.spread.items()}
            out["per_repeat"] = [dict(metrics) for metrics in self.per_repeat]
        return out


def _unit_clusters(keys: Sequence[str], clusters: Mapping[str, str]) -> tuple[list[str], list[str]]:
    """For ``"case id#repeat"`` keys, each one's cluster and case: a case with no known
    cluster is a cluster of its own."""
    cases = [key.rsplit("#", 1)[0] for key in keys]
    return [clusters.get(case, f"case: {case}") for case in cases], cases


def paired_lift(
    first: Mapping[str, CaseCounts], second: Mapping[str, CaseCounts], clusters: Mapping[str, str]
) -> ClusteredEstimate:
    """The difference of mention rates of two variants over the ``"case id#repeat"`` keys
    both have, with its cluster-robust standard error (``clusters``: by case id)."""
    shared = [key for key in first if key in second]
    groups, cases = _unit_clusters(shared, clusters)
    return clustered_lift(
        [first[key] for key in shared], [second[key] for key in shared], groups, cases=cases
    )


def with_replies(
    reports: list[VariantReport],
    results: Sequence[CaseResult],
    clusters: Mapping[str, str] | None = None,
) -> list[VariantReport]:
    """The reports with the end-to-end metrics and their intervals (against ``cold``).
    With ``clusters`` (each case's, by id), each lift also gets its cluster-robust standard
    error, and its interval is the clustered one where cases share clusters; the paired
    bootstrap's is kept as ``reply_lift_bootstrap``."""
    cold = [result for result in results if result.variant == COLD]
    out = []
    for report in reports:
        mine = [result for result in results if result.variant == report.name]
        metrics, intervals = reply_metrics(mine, cold)
        counts = reply_rate_counts(mine, cold, is_cold=report.name == COLD)
        lift = None
        if clusters is not None and report.name != COLD:
            turns = [result for result in mine if result.turn is not None]
            lift = paired_lift(mention_counts(turns), mention_counts(cold), clusters)
            intervals["reply_lift_bootstrap"] = intervals["reply_lift"]
            shown = lift.interval() if lift.shares_clusters else None
            if shown is not None:
                intervals["reply_lift"] = shown
        out.append(
            replace(
                report,
                metrics={**report.metrics, **metrics},
                intervals={**report.intervals, **intervals},
                counts={**report.counts, **counts},
                lift=lift,
            )
        )
    return out


def _bundle_counts(results: Sequence[CaseResult]) -> dict[str, CaseCounts]:
    """Per ``"case id#repeat"``, the bundle's expected mentions found of expected."""
    return {
        f"{result.id}#{result.repeat}": CaseCounts(s.mentions_found, s.mentions_expected)
        for result in results
        if (s := result.scores).mentions_found is not None and s.mentions_expected is not None
    }


def paired_comparisons(
    reports: Sequence[VariantReport],
    results: Sequence[CaseResult],
    *,
    end_to_end: bool,
    clusters: Mapping[str, str] | None = None,
) -> list[PairedComparison]:
    """Every two variants compared on the same cases (:func:`~.stats.compare_pair`): on
    the reply's mentions end to end, else on the bundle's; with ``clusters`` (each case's,
    by id), with the difference's cluster-robust standard error too."""
    names = [report.name for report in reports]
    by_variant = {name: [r for r in results if r.variant == name] for name in names}
    if end_to_end:
        measure, counts = "reply_mention_rate", paired_counts(by_variant)
    else:
        measure = "mention_rate"
        counts = {name: _bundle_counts(mine) for name, mine in by_variant.items()}
    pairs = []
    for index, first in enumerate(names):
        for second in names[index + 1 :]:
            compared = compare_pair(first, second, measure, counts)
            if compared is not None and clusters is not None:
                clustered = paired_lift(counts[first], counts[second], clusters)
                compared = replace(compared, clustered=clustered)
            if compared is not None:
                pairs.append(compared)
    return pairs


def variant_report(variant: Variant, results: Sequence[CaseResult], repeats: int) -> VariantReport:
    """One variant's metrics (and their spread over repeats) from its results, with the
    95 % interval of each rate."""
    mine = [result for result in results if result.variant == variant.name]
    measures = [[r.measure() for r in mine if r.repeat == repeat] for repeat in range(repeats)]
    per_repeat = [aggregate(runs) for runs in measures]
    counts = rate_counts([r.measure() for r in mine])
    return VariantReport(
        name=variant.name,
        metrics=aggregate([r.measure() for r in mine]),
        spread=spread(per_repeat, [rate_counts(runs) for runs in measures]) if repeats > 1 else {},
        per_repeat=per_repeat if repeats > 1 else [],
        cache_hits=sum(r.cache_hits for r in mine),
        cache_misses=sum(r.cache_misses for r in mine),
        reused_runs=sum(1 for r in mine if r.from_cache),
        definition_hash=variant.definition.definition_hash(),
        source=variant.definition.source,
        model=variant.model_label(),
        intervals={name: wilson(k, n) for name, (k, n) in counts.items()},
        design=variant.design,
        counts=counts,
    )
