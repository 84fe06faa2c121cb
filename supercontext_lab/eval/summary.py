"""What an evaluation's results add up to, per variant and between variants.

A :class:`VariantReport` holds one variant's metrics over all its runs (:mod:`.metrics`),
their spread across repeats, the 95 % interval of each rate and where the variant came
from; end to end, the reply metrics against the ``cold`` variant join them
(:mod:`.end_to_end`). Every two variants are compared on the same cases
(:func:`~.stats.compare_pair`). The report (:mod:`.report`) shows what is built here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from .end_to_end import COLD, paired_counts, reply_metrics, reply_rate_counts
from .metrics import aggregate, applicable, rate_counts, spread
from .results import CaseResult
from .stats import CaseCounts, PairedComparison, compare_pair, wilson
from .variants import Variant

__all__ = ["VariantReport", "paired_comparisons", "variant_report", "with_replies"]


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
        if self.spread:
            out["spread"] = {name: dict(stats) for name, stats in self.spread.items()}
            out["per_repeat"] = [dict(metrics) for metrics in self.per_repeat]
        return out


def with_replies(
    reports: list[VariantReport], results: Sequence[CaseResult]
) -> list[VariantReport]:
    """The reports with the end-to-end metrics and their intervals (against ``cold``)."""
    cold = [result for result in results if result.variant == COLD]
    out = []
    for report in reports:
        mine = [result for result in results if result.variant == report.name]
        metrics, intervals = reply_metrics(mine, cold)
        counts = reply_rate_counts(mine, cold, is_cold=report.name == COLD)
        out.append(
            replace(
                report,
                metrics={**report.metrics, **metrics},
                intervals={**report.intervals, **intervals},
                counts={**report.counts, **counts},
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
    reports: Sequence[VariantReport], results: Sequence[CaseResult], *, end_to_end: bool
) -> list[PairedComparison]:
    """Every two variants compared on the same cases (:func:`~.stats.compare_pair`): on
    the reply's mentions end to end, else on the bundle's."""
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
