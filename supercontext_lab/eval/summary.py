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

from .end_to_end import COLD, REPLY_RATES, paired_counts, reply_metrics
from .metrics import RATE_METRICS, aggregate, rate_counts, spread
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
    metrics: dict[str, float | int | None]
    """Every metric; a rate with nothing to count (0/0) is ``None``, not applicable."""
    spread: dict[str, dict[str, float]] = field(default_factory=dict)
    per_repeat: list[dict[str, float | int | None]] = field(default_factory=list)
    cache_hits: int = 0
    cache_misses: int = 0
    definition_hash: str = ""
    source: str = ""
    model: str = ""
    reused_runs: int = 0
    intervals: dict[str, tuple[float, float]] = field(default_factory=dict)
    """The 95 % interval of each rate that applies (:mod:`.stats`: Wilson; the lift's, a
    paired bootstrap); a rate that is ``None`` has none."""
    design: str = "scout"
    """The pre-flight design that prepared the variant's cases."""

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
            "intervals": self.intervals_json(),
        }
        if self.spread:
            out["spread"] = {name: dict(stats) for name, stats in self.spread.items()}
            out["per_repeat"] = [dict(metrics) for metrics in self.per_repeat]
        return out

    def intervals_json(self) -> dict[str, list[float] | None]:
        """Each interval as ``[low, high]``, and ``None`` (JSON null) for a rate that is
        not applicable, so a reader finds every rate under both ``metrics`` and
        ``intervals``."""
        out: dict[str, list[float] | None] = {
            name: [round(low, 6), round(high, 6)] for name, (low, high) in self.intervals.items()
        }
        for name in (*RATE_METRICS, *REPLY_RATES, "reply_lift"):
            if name in self.metrics and self.metrics[name] is None:
                out[name] = None
        return out


def with_replies(
    reports: list[VariantReport], results: Sequence[CaseResult]
) -> list[VariantReport]:
    """The reports with the end-to-end metrics and their intervals (against ``cold``)."""
    cold = [result for result in results if result.variant == COLD]
    out = []
    for report in reports:
        mine = [result for result in results if result.variant == report.name]
        metrics, intervals = reply_metrics(mine, cold, is_cold=report.name == COLD)
        out.append(
            replace(
                report,
                metrics={**report.metrics, **metrics},
                intervals={**report.intervals, **intervals},
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
    per_repeat = [
        aggregate([r.measure() for r in mine if r.repeat == repeat]) for repeat in range(repeats)
    ]
    return VariantReport(
        name=variant.name,
        metrics=aggregate([r.measure() for r in mine]),
        spread=spread(per_repeat) if repeats > 1 else {},
        per_repeat=per_repeat if repeats > 1 else [],
        cache_hits=sum(r.cache_hits for r in mine),
        cache_misses=sum(r.cache_misses for r in mine),
        reused_runs=sum(1 for r in mine if r.from_cache),
        definition_hash=variant.definition.definition_hash(),
        source=variant.definition.source,
        model=variant.model_label(),
        intervals={
            name: wilson(k, n)
            for name, (k, n) in rate_counts([r.measure() for r in mine]).items()
            if n  # 0/0 is not applicable: no rate, so no interval
        },
        design=variant.design,
    )
