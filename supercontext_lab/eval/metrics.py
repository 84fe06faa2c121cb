"""The per-variant metrics (SPEC §11): their table, and how one variant's runs add up.

Each run is scored on its own (:mod:`.scores`); here the scores of many runs become the
metrics of :data:`METRICS`:

* skill, tool, goal, has-enough and mention metrics count only the cases that set that
  expectation;
* precision and recall are micro-averaged over the items: precision = matched /
  recommended, recall = matched / expected, summed over the counted cases;
* an empty ratio (0/0) counts as 1.0, except ``forbidden_mention_rate`` (0.0)
  (:func:`~.scores.ratio`), as SPEC §11 says: :func:`aggregate`, the report's metrics and
  the JSON ``metrics`` hold these values. Renderers (text, HTML, Markdown, the widget,
  CSV) show a rate whose counts (:func:`rate_counts`) are 0 of 0 as "–", with no interval
  (:func:`~.scores.applicable`), and :func:`spread` and the best value leave it out;
* ``grounded_rate`` is supported bullets / bullets checked by the grounding check (SPEC
  §13), over the runs whose model wrote an envelope; ``invented_names`` sums the
  recommended tools and skills that exist nowhere; ``gathered_mention_rate`` is the share
  of expected mentions present in what the model was given (its prompt and every tool
  result), the ceiling of ``mention_rate`` for a model that only selects;
* ``bullet_precision`` is the share of the summary's bullets that hold an expected
  mention or cite an expected source: on-topic bullets / bullets, summed over the cases
  that set mentions.

``valid_rate`` is the share of runs with a valid envelope (a run without one is wrong for
goal and has-enough accuracy). ``envelope_chars_mean`` averages over the runs that
produced an envelope; the other means and percentiles over every run.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from .scores import CaseScores, applicable, ratio, score_case

__all__ = [
    "COUNT_NAMES",
    "METRICS",
    "METRIC_NAMES",
    "RATE_METRICS",
    "TIMING_METRICS",
    "CaseScores",
    "Direction",
    "Metric",
    "RunMeasure",
    "aggregate",
    "applicable",
    "metric",
    "percentile",
    "rate_counts",
    "ratio",
    "score_case",
    "spread",
]

Direction = Literal["higher", "lower"]


@dataclass(frozen=True)
class Metric:
    """One per-variant metric: its name, which way is better, and what kind it is."""

    name: str
    better: Direction | None
    """``"higher"`` or ``"lower"``; ``None`` when neither is better (a size)."""
    rate: bool = False
    """A quality rate between 0 and 1 (what the comparison chart plots)."""
    timing: bool = False
    """Depends on the machine, not on the bundles (left out of stable reports)."""


METRICS: tuple[Metric, ...] = (
    Metric("valid_rate", "higher", rate=True),
    Metric("skill_precision", "higher", rate=True),
    Metric("skill_recall", "higher", rate=True),
    Metric("tool_precision", "higher", rate=True),
    Metric("tool_recall", "higher", rate=True),
    Metric("goal_accuracy", "higher", rate=True),
    Metric("has_enough_accuracy", "higher", rate=True),
    Metric("mention_rate", "higher", rate=True),
    Metric("forbidden_mention_rate", "lower", rate=True),
    Metric("grounded_rate", "higher", rate=True),
    Metric("gathered_mention_rate", "higher", rate=True),
    Metric("bullet_precision", "higher", rate=True),
    Metric("invented_names", "lower"),
    Metric("model_calls_mean", "lower"),
    Metric("latency_mean_ms", "lower", timing=True),
    Metric("latency_p50_ms", "lower", timing=True),
    Metric("latency_p95_ms", "lower", timing=True),
    Metric("tokens_mean", "lower"),
    Metric("envelope_chars_mean", None),
)
"""The one table of per-variant metrics, in display order; the names below are views."""

METRIC_NAMES: tuple[str, ...] = tuple(metric.name for metric in METRICS)
"""Every per-variant metric, in display order."""

RATE_METRICS: tuple[str, ...] = tuple(metric.name for metric in METRICS if metric.rate)
"""The quality metrics: rates between 0 and 1."""

TIMING_METRICS = frozenset(metric.name for metric in METRICS if metric.timing)
"""Metrics that depend on the machine, not on the bundles."""

_BY_NAME = {metric.name: metric for metric in METRICS}

COUNT_NAMES: tuple[str, ...] = (
    "runs",
    "valid_runs",
    "skill_cases",
    "tool_cases",
    "goal_cases",
    "has_enough_cases",
    "mention_cases",
    "forbidden_cases",
    "grounded_bullets",
    "summary_bullets",
)
"""How many runs each metric was computed over."""


def metric(name: str) -> Metric | None:
    """The :class:`Metric` called ``name`` (``None`` for a count or an unknown name)."""
    return _BY_NAME.get(name)


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0..100) with linear interpolation; 0.0 for no values."""
    if not values:
        return 0.0
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be between 0 and 100, not {q!r}")
    ordered = sorted(values)
    position = (len(ordered) - 1) * q / 100.0
    low = math.floor(position)
    high = math.ceil(position)
    if low == high:
        return float(ordered[low])
    return float(ordered[low] + (ordered[high] - ordered[low]) * (position - low))


@dataclass(frozen=True)
class RunMeasure:
    """What :func:`aggregate` needs of one run besides its scores."""

    scores: CaseScores
    elapsed_ms: float
    tokens: int
    model_calls: int
    envelope_chars: int | None


def _sum(values: Iterable[int | None]) -> int:
    return sum(value for value in values if value is not None)


def aggregate(runs: Sequence[RunMeasure]) -> dict[str, float | int]:
    """The metrics of :data:`METRIC_NAMES` and the counts of :data:`COUNT_NAMES`."""
    scores = [run.scores for run in runs]
    skill = [s for s in scores if s.skills_expected is not None]
    tool = [s for s in scores if s.tools_expected is not None]
    goal = [s for s in scores if s.goal_correct is not None]
    enough = [s for s in scores if s.has_enough_correct is not None]
    mention = [s for s in scores if s.mentions_expected is not None]
    forbidden = [s for s in scores if s.forbidden_expected is not None]
    checked = [s for s in scores if s.bullets is not None]
    gathered = [s for s in mention if s.gathered_found is not None]
    latencies = [run.elapsed_ms for run in runs]
    chars = [run.envelope_chars for run in runs if run.envelope_chars is not None]
    valid = sum(1 for s in scores if s.valid)
    metrics: dict[str, float | int] = {
        "valid_rate": ratio(valid, len(scores)),
        "skill_precision": ratio(
            _sum(s.skills_matched for s in skill), _sum(s.skills_recommended for s in skill)
        ),
        "skill_recall": ratio(
            _sum(s.skills_matched for s in skill), _sum(s.skills_expected for s in skill)
        ),
        "tool_precision": ratio(
            _sum(s.tools_matched for s in tool), _sum(s.tools_recommended for s in tool)
        ),
        "tool_recall": ratio(
            _sum(s.tools_matched for s in tool), _sum(s.tools_expected for s in tool)
        ),
        "goal_accuracy": ratio(sum(1 for s in goal if s.goal_correct), len(goal)),
        "has_enough_accuracy": ratio(sum(1 for s in enough if s.has_enough_correct), len(enough)),
        "mention_rate": ratio(
            _sum(s.mentions_found for s in mention), _sum(s.mentions_expected for s in mention)
        ),
        "forbidden_mention_rate": ratio(
            _sum(s.forbidden_found for s in forbidden),
            _sum(s.forbidden_expected for s in forbidden),
            empty=0.0,
        ),
        "grounded_rate": ratio(
            _sum(s.bullets_supported for s in checked), _sum(s.bullets for s in checked)
        ),
        "gathered_mention_rate": ratio(
            _sum(s.gathered_found for s in gathered), _sum(s.mentions_expected for s in gathered)
        ),
        "bullet_precision": ratio(
            _sum(s.bullets_on_topic for s in mention), _sum(s.summary_bullets for s in mention)
        ),
        "invented_names": sum(s.invented_names for s in scores),
        "model_calls_mean": statistics.fmean([r.model_calls for r in runs]) if runs else 0.0,
        "latency_mean_ms": statistics.fmean(latencies) if latencies else 0.0,
        "latency_p50_ms": percentile(latencies, 50),
        "latency_p95_ms": percentile(latencies, 95),
        "tokens_mean": statistics.fmean([r.tokens for r in runs]) if runs else 0.0,
        "envelope_chars_mean": statistics.fmean(chars) if chars else 0.0,
        "runs": len(scores),
        "valid_runs": valid,
        "skill_cases": len(skill),
        "tool_cases": len(tool),
        "goal_cases": len(goal),
        "has_enough_cases": len(enough),
        "mention_cases": len(mention),
        "forbidden_cases": len(forbidden),
        "grounded_bullets": _sum(s.bullets for s in checked),
        "summary_bullets": _sum(s.summary_bullets for s in mention),
    }
    return metrics


def rate_counts(runs: Sequence[RunMeasure]) -> dict[str, tuple[int, int]]:
    """Each rate of :data:`RATE_METRICS` as the counts it is the ratio of, ``(k, n)``:
    the same sums :func:`aggregate` divides (an interval needs them, not the ratio)."""
    scores = [run.scores for run in runs]
    skill = [s for s in scores if s.skills_expected is not None]
    tool = [s for s in scores if s.tools_expected is not None]
    goal = [s for s in scores if s.goal_correct is not None]
    enough = [s for s in scores if s.has_enough_correct is not None]
    mention = [s for s in scores if s.mentions_expected is not None]
    forbidden = [s for s in scores if s.forbidden_expected is not None]
    checked = [s for s in scores if s.bullets is not None]
    gathered = [s for s in mention if s.gathered_found is not None]
    return {
        "valid_rate": (sum(1 for s in scores if s.valid), len(scores)),
        "skill_precision": (
            _sum(s.skills_matched for s in skill),
            _sum(s.skills_recommended for s in skill),
        ),
        "skill_recall": (
            _sum(s.skills_matched for s in skill),
            _sum(s.skills_expected for s in skill),
        ),
        "tool_precision": (
            _sum(s.tools_matched for s in tool),
            _sum(s.tools_recommended for s in tool),
        ),
        "tool_recall": (_sum(s.tools_matched for s in tool), _sum(s.tools_expected for s in tool)),
        "goal_accuracy": (sum(1 for s in goal if s.goal_correct), len(goal)),
        "has_enough_accuracy": (sum(1 for s in enough if s.has_enough_correct), len(enough)),
        "mention_rate": (
            _sum(s.mentions_found for s in mention),
            _sum(s.mentions_expected for s in mention),
        ),
        "forbidden_mention_rate": (
            _sum(s.forbidden_found for s in forbidden),
            _sum(s.forbidden_expected for s in forbidden),
        ),
        "grounded_rate": (
            _sum(s.bullets_supported for s in checked),
            _sum(s.bullets for s in checked),
        ),
        "gathered_mention_rate": (
            _sum(s.gathered_found for s in gathered),
            _sum(s.mentions_expected for s in gathered),
        ),
        "bullet_precision": (
            _sum(s.bullets_on_topic for s in mention),
            _sum(s.summary_bullets for s in mention),
        ),
    }


def spread(
    per_repeat: Sequence[Mapping[str, float | int]],
    counts: Sequence[Mapping[str, tuple[int, int]]] = (),
) -> dict[str, dict[str, float]]:
    """For each metric, the ``stdev`` (sample; 0.0 for one value), ``min`` and ``max``
    across repeats. With ``counts`` (each repeat's :func:`rate_counts`), a repeat where a
    rate is 0 of 0 is left out (:func:`~.scores.applicable`): its SPEC value, 1.0, would
    pull the spread towards a perfection nobody measured; a rate that is 0 of 0 in every
    repeat has no entry."""
    out: dict[str, dict[str, float]] = {}
    for name in METRIC_NAMES:
        values = [
            float(metrics[name])
            for number, metrics in enumerate(per_repeat)
            if number >= len(counts) or applicable(counts[number].get(name))
        ]
        if not values:
            continue
        out[name] = {
            "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values),
            "max": max(values),
        }
    return out
