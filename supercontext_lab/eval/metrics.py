"""Scoring one bundle against a case's expectations, and the per-variant metrics (SPEC §11).

Rules:

* skill, tool, goal, has-enough and mention metrics count only the cases that set that
  expectation;
* precision and recall are micro-averaged over the items: precision = matched /
  recommended, recall = matched / expected, summed over the counted cases;
* an empty ratio (0/0) counts as 1.0, except ``forbidden_mention_rate`` (0.0);
* mentions match case-insensitively anywhere in the envelope;
* ``goal_accuracy`` compares ``has_goal`` with ``proposed_goal is not None``;
* ``grounded_rate`` is supported bullets / bullets checked by the grounding check (SPEC
  §13), over the runs whose model wrote an envelope; ``invented_names`` sums the
  recommended tools and skills that exist nowhere; ``gathered_mention_rate`` is the share
  of expected mentions present in what the model was given (its prompt and every tool
  result), the ceiling of ``mention_rate`` for a model that only selects.

A run without a valid envelope recommends nothing, mentions nothing and counts as wrong
for goal and has-enough accuracy (it gave no answer to be right with); ``valid_rate``
shows how often that happened. Skill ids and tool names are compared case-insensitively,
each counted once per run. ``envelope_chars_mean`` averages over the runs that produced an
envelope; the other means and percentiles over every run.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from .dataset import Expectations

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
)
"""How many runs each metric was computed over."""


def metric(name: str) -> Metric | None:
    """The :class:`Metric` called ``name`` (``None`` for a count or an unknown name)."""
    return _BY_NAME.get(name)


def ratio(numerator: int, denominator: int, *, empty: float = 1.0) -> float:
    """``numerator / denominator``, or ``empty`` when the denominator is 0."""
    return numerator / denominator if denominator else empty


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


def _norm(items: Iterable[str]) -> list[str]:
    """The items trimmed, without empty ones and case-insensitive repeats, spelt as first
    written: matching ignores case, but a reader sees "2Dt", not "2dt"."""
    seen: set[str] = set()
    kept: list[str] = []
    for item in items:
        shown = item.strip()
        key = shown.casefold()
        if key and key not in seen:
            seen.add(key)
            kept.append(shown)
    return kept


@dataclass(frozen=True)
class CaseScores:
    """How one run's bundle fared against its case's expectations.

    Counts are ``None`` when the case does not set that expectation.
    """

    valid: bool
    skills_matched: int | None = None
    skills_recommended: int | None = None
    skills_expected: int | None = None
    tools_matched: int | None = None
    tools_recommended: int | None = None
    tools_expected: int | None = None
    goal_correct: bool | None = None
    has_enough_correct: bool | None = None
    mentions_found: int | None = None
    mentions_expected: int | None = None
    forbidden_found: int | None = None
    forbidden_expected: int | None = None
    missed_skills: tuple[str, ...] = ()
    unexpected_skills: tuple[str, ...] = ()
    missed_tools: tuple[str, ...] = ()
    unexpected_tools: tuple[str, ...] = ()
    missed_mentions: tuple[str, ...] = ()
    forbidden_mentions: tuple[str, ...] = ()
    bullets: int | None = None
    """Bullets the grounding check read (``None`` when the model wrote no envelope)."""
    bullets_supported: int | None = None
    invented_names: int = 0
    gathered_found: int | None = None
    """Expected mentions present in what the model was given."""

    def to_dict(self) -> dict[str, Any]:
        """Per-case rates (``None`` when not scored) followed by the raw counts and misses."""
        out: dict[str, Any] = {
            "valid": self.valid,
            "skill_precision": _opt_ratio(self.skills_matched, self.skills_recommended),
            "skill_recall": _opt_ratio(self.skills_matched, self.skills_expected),
            "tool_precision": _opt_ratio(self.tools_matched, self.tools_recommended),
            "tool_recall": _opt_ratio(self.tools_matched, self.tools_expected),
            "goal_correct": self.goal_correct,
            "has_enough_correct": self.has_enough_correct,
            "mention_rate": _opt_ratio(self.mentions_found, self.mentions_expected),
            "forbidden_mention_rate": _opt_ratio(
                self.forbidden_found, self.forbidden_expected, empty=0.0
            ),
            "grounded_rate": _opt_ratio(self.bullets_supported, self.bullets),
            "gathered_mention_rate": _opt_ratio(self.gathered_found, self.mentions_expected),
        }
        for key, value in asdict(self).items():
            if key not in out:
                out[key] = list(value) if isinstance(value, tuple) else value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CaseScores:
        """Rebuild scores from :meth:`to_dict` output."""
        names = cls.__dataclass_fields__
        values: dict[str, Any] = {
            key: tuple(value) if isinstance(value, list) else value
            for key, value in data.items()
            if key in names
        }
        return cls(**values)


def _opt_ratio(
    numerator: int | None, denominator: int | None, *, empty: float = 1.0
) -> float | None:
    if numerator is None or denominator is None:
        return None
    return ratio(numerator, denominator, empty=empty)


def _match(
    recommended: Sequence[str], expected: Sequence[str]
) -> tuple[int, int, int, tuple[str, ...], tuple[str, ...]]:
    got = _norm(recommended)
    want = _norm(expected)
    got_keys = {item.casefold() for item in got}
    want_keys = {item.casefold() for item in want}
    matched = [item for item in got if item.casefold() in want_keys]
    return (
        len(matched),
        len(got),
        len(want),
        tuple(item for item in want if item.casefold() not in got_keys),
        tuple(item for item in got if item.casefold() not in want_keys),
    )


def score_case(
    expect: Expectations,
    envelope: str | None,
    bundle: Mapping[str, Any] | None,
    *,
    grounding: Mapping[str, Any] | None = None,
    gathered: str | None = None,
) -> CaseScores:
    """Score one run: ``bundle`` is ``ContextBundle.to_dict()`` (``None`` when invalid),
    ``grounding`` the run's ``GroundingReport.to_dict()`` and ``gathered`` the text the
    model was given (both ``None`` when unknown)."""
    valid = envelope is not None and bundle is not None
    values: dict[str, Any] = {"valid": valid}
    if grounding is not None:
        values.update(
            bullets=int(grounding.get("checked", 0)),
            bullets_supported=int(grounding.get("grounded", 0)),
            invented_names=int(grounding.get("invented_names", 0)),
        )
    for kind, section, key, expected in (
        ("skills", "recommended_skills", "skill", expect.skills),
        ("tools", "recommended_tool_calls", "tool", expect.tools),
    ):
        if expected is None:
            continue
        names = [str(item.get(key, "")) for item in (bundle or {}).get(section, [])]
        matched, got, want, missed, extra = _match(names, expected)
        values.update(
            {
                f"{kind}_matched": matched,
                f"{kind}_recommended": got,
                f"{kind}_expected": want,
                f"missed_{kind}": missed,
                f"unexpected_{kind}": extra,
            }
        )
    if expect.has_goal is not None:
        values["goal_correct"] = valid and (
            expect.has_goal == ((bundle or {}).get("proposed_goal") is not None)
        )
    if expect.has_enough_context is not None:
        values["has_enough_correct"] = valid and (
            (bundle or {}).get("has_enough_context") is expect.has_enough_context
        )
    text = (envelope or "").casefold()
    if expect.mentions is not None:
        wanted = _norm(expect.mentions)
        missed = tuple(item for item in wanted if item.casefold() not in text)
        values.update(
            mentions_found=len(wanted) - len(missed),
            mentions_expected=len(wanted),
            missed_mentions=missed,
        )
        if gathered is not None:
            given = gathered.casefold()
            values["gathered_found"] = sum(1 for item in wanted if item.casefold() in given)
    if expect.must_not_mention is not None:
        banned = _norm(expect.must_not_mention)
        seen = tuple(item for item in banned if item.casefold() in text)
        values.update(
            forbidden_found=len(seen), forbidden_expected=len(banned), forbidden_mentions=seen
        )
    return CaseScores(**values)


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
    }


def spread(per_repeat: Sequence[Mapping[str, float | int]]) -> dict[str, dict[str, float]]:
    """For each metric, the ``stdev`` (sample; 0.0 for one repeat), ``min`` and ``max``
    across repeats."""
    out: dict[str, dict[str, float]] = {}
    if not per_repeat:
        return out
    for name in METRIC_NAMES:
        values = [float(metrics[name]) for metrics in per_repeat]
        out[name] = {
            "stdev": statistics.stdev(values) if len(values) > 1 else 0.0,
            "min": min(values),
            "max": max(values),
        }
    return out
