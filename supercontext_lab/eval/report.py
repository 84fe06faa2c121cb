"""The evaluation report: per-variant metrics, per-case results, exports and displays.

``text/plain`` (terminals, nbval) leaves out everything that depends on the machine or on
the cache's history — latencies, wall time, cache hits — so a rerun prints the same text.
HTML and Markdown show them. The tables are drawn by :mod:`.report_display` and the files
written by :mod:`.report_export`; what each variant's runs add up to is :mod:`.summary`.
Under 20 cases every table, in every form (text, HTML, Markdown, the JSON's
``few_cases_note``, the widget), carries :meth:`EvalReport.few_cases_note`; a CSV holds
its rows only.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .clusters import CLUSTER_METHOD, case_clusters
from .metrics import COUNT_NAMES, METRIC_NAMES
from .metrics import metric as metric_of
from .report_display import (
    html_table,
    intervals_table,
    latency_table,
    markdown_table,
    metrics_rows,
    paired_lines,
    replies_table,
    text_table,
)
from .report_export import (
    CASE_COLUMNS,
    case_row,
    csv_text,
    json_text,
    shown_case_row,
    shown_value,
)
from .stats import INTERVAL_METHOD, PAIRED_METHOD, PairedComparison, few_cases_note
from .summary import VariantReport
from .turns import TurnGroupMetrics, has_follow_ups, per_turn, per_turn_text

if TYPE_CHECKING:
    from .dataset import EvalCase
    from .results import CaseResult

__all__ = ["EvalReport", "VariantReport"]

_RAN = {
    "scout": "ran the scout",
    "pack": "ran the pack",
    "cached": "read the cached envelope",
    "prefetch": "sent a pack of an earlier lookup (none on a first turn)",
    "cold": "ran cold (no pre-flight)",
}
"""What a run of each pre-flight design did, for the footer (:meth:`EvalReport.ran`)."""


@dataclass
class EvalReport:
    """What :func:`~supercontext_lab.eval.evaluate` returns."""

    cases: list[EvalCase]
    variants: list[VariantReport]
    results: list[CaseResult]
    settings: dict[str, Any] = field(default_factory=dict)
    wall_s: float = 0.0
    paired: list[PairedComparison] = field(default_factory=list)
    """Every two variants compared on the same cases (:mod:`.stats`)."""
    _per_turn: tuple[Any, list[TurnGroupMetrics]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    # ------------------------------------------------------------------ access

    @property
    def variant_names(self) -> list[str]:
        return [variant.name for variant in self.variants]

    def variant(self, name: str) -> VariantReport:
        """The report of one variant (``KeyError`` naming the known ones otherwise)."""
        for variant in self.variants:
            if variant.name == name:
                return variant
        raise KeyError(f"no variant {name!r}; the report has {', '.join(self.variant_names)}")

    def metrics(self, variant: str) -> dict[str, float | int]:
        """The metrics of one variant (SPEC §11's values: 0/0 is 1.0, or 0.0 for forbidden
        mentions; the tables show it "–")."""
        return self.variant(variant).metrics

    def result(self, case_id: str, variant: str, repeat: int = 0) -> CaseResult:
        """The result of one case under one variant (``KeyError`` when absent)."""
        for result in self.results:
            if result.id == case_id and result.variant == variant and result.repeat == repeat:
                return result
        raise KeyError(f"no result for case {case_id!r}, variant {variant!r}, repeat {repeat}")

    @property
    def cache_hits(self) -> int:
        return sum(variant.cache_hits for variant in self.variants)

    @property
    def cache_misses(self) -> int:
        return sum(variant.cache_misses for variant in self.variants)

    @property
    def reused_runs(self) -> int:
        """How many results came whole from the result store (nothing was run for them)."""
        return sum(variant.reused_runs for variant in self.variants)

    def best(self, metric: str) -> set[str]:
        """Names of the variants with the best value of ``metric`` (empty when the metric
        has no direction, or when every variant ties)."""
        described = metric_of(metric)
        if described is None or described.better is None:
            return set()
        pick = max if described.better == "higher" else min
        # A variant where the rate is 0 of 0 is neither best nor worst: its SPEC value,
        # 1.0, would make a design that recommends nothing the most precise.
        values = {
            v.name: float(value) for v in self.variants if (value := v.shown(metric)) is not None
        }
        if len(values) < 2 or len(set(values.values())) == 1:
            return set()
        target = pick(values.values())
        return {name for name, value in values.items() if value == target}

    # ------------------------------------------------------------------ exports

    def to_dict(self) -> dict[str, Any]:
        """``{"variants": [{"name", "metrics", ...}], "cases": [{"id", "variant",
        "envelope", "problems", "scores", ...}], "settings", "wall_s"}``, and end to end
        with follow-ups ``"per_turn"`` (:meth:`per_turn`)."""
        rows = self.per_turn()
        return {
            "variants": [variant.to_dict() for variant in self.variants],
            "cases": [result.to_dict() for result in self.results],
            "settings": dict(self.settings),
            "wall_s": round(self.wall_s, 3),
            "paired": [pair.to_dict() for pair in self.paired],
            "statistics": self.statistics(),
            "few_cases_note": self.few_cases_note(),
            **({"per_turn": [row.to_dict() for row in rows]} if rows else {}),
        }

    def statistics(self) -> dict[str, Any]:
        """How the intervals and tests were made, and how many clusters the cases are in."""
        return {
            "intervals": INTERVAL_METHOD,
            "paired": PAIRED_METHOD,
            "clustered": CLUSTER_METHOD,
            "clusters": len(set(case_clusters(self.cases).values())),
        }

    def to_json(self, path: str | os.PathLike[str] | None = None, *, indent: int = 2) -> str:
        """The report as JSON text; also written to ``path`` when given."""
        return json_text(self.to_dict(), path, indent=indent)

    def case_rows(self) -> list[dict[str, Any]]:
        """One flat row per run: scores, misses and costs."""
        return [case_row(result) for result in self.results]

    def metric_rows(self) -> list[dict[str, Any]]:
        """One row per variant: its name and every metric and count (SPEC §11's values)."""
        return [
            {"variant": v.name, **{name: v.metrics[name] for name in METRIC_NAMES + COUNT_NAMES}}
            for v in self.variants
        ]

    def to_csv(self, path: str | os.PathLike[str] | None = None, *, table: str = "cases") -> str:
        """CSV text of ``table`` (``"cases"``: one row per run; ``"metrics"``: one row per
        variant); also written to ``path`` when given. Every cell is a :func:`csv_cell`: a
        case id or expectation starting with ``=`` is text, never a formula. A rate of 0 of
        0 is "–" (:func:`~.scores.applicable`), as in every table a person reads. Rows only,
        however few the cases (see :meth:`few_cases_note` for the other forms)."""
        if table == "cases":
            rows = [
                shown_case_row(row, result.scores)
                for row, result in zip(self.case_rows(), self.results, strict=True)
            ]
            columns = list(CASE_COLUMNS)
        elif table == "metrics":
            rows = [
                {**row, **{name: shown_value(v, name) for name in METRIC_NAMES}}
                for row, v in zip(self.metric_rows(), self.variants, strict=True)
            ]
            columns = ["variant", *METRIC_NAMES, *COUNT_NAMES]
        else:
            raise ValueError(f"table must be 'cases' or 'metrics', not {table!r}")
        return csv_text(rows, columns, path)

    # ------------------------------------------------------------------ display

    def title(self) -> str:
        """``Scout evaluation: N cases x M variants`` (and the repeats when several)."""
        repeats = int(self.settings.get("repeats", 1))
        text = f"Scout evaluation: {len(self.cases)} cases x {len(self.variants)} variants"
        return text + (f" x {repeats} repeats" if repeats > 1 else "")

    def metrics_table(self, *, timings: bool = True) -> list[list[str]]:
        """Rows of ``[metric, value per variant...]``, headed by the variant names."""
        return metrics_rows(self.variants, timings=timings)

    def few_cases_note(self, cases: int | None = None) -> str:
        """Under 20 cases, the line every table of this report carries saying what its
        intervals mean at that size (:func:`~.stats.few_cases_note`); else empty.
        ``cases``: a table over fewer cases than the report's (the cases that expect
        mentions, under a lift)."""
        count = len(self.cases)
        return few_cases_note(count if cases is None else min(cases, count))

    def to_text(self) -> str:
        """A stable plain-text table (no timings, no cache counts), and under it the
        :meth:`few_cases_note` when there are fewer than 20 cases."""
        note = self.few_cases_note()
        table = [self.title(), text_table(self.metrics_table(timings=False))]
        return "\n".join([*table, note] if note else table)

    def latency_text(self) -> str:
        """The latency of one run, per variant: p50 and p95 in milliseconds (a result
        reused from the cache keeps the latency of the run that made it)."""
        return latency_table(self.variants, self.results, self.few_cases_note())

    def intervals_text(self) -> str:
        """Every rate of every variant with its 95 % interval, one row per rate."""
        return intervals_table(self.variants, self.few_cases_note())

    @property
    def end_to_end(self) -> bool:
        """Whether the report holds whole first turns (``eval --end-to-end``)."""
        return bool(self.settings.get("end_to_end"))

    def replies_text(self) -> str:
        """The end-to-end metrics per variant (empty when the report has none): the
        reply's mentions with their intervals, the lift over cold, the prompt tokens the
        pre-flight added and the time to the reply."""
        if not self.end_to_end:
            return ""
        lifts = [v.lift.cases for v in self.variants if v.lift is not None and v.lift.units]
        note = self.few_cases_note(min(lifts) if lifts else None)
        return replies_table(self.variants, str(self.settings.get("orchestrator", "?")), note)

    def per_turn(self) -> list[TurnGroupMetrics]:
        """End to end, every variant's reply metrics per group of turns of the cases with
        follow-ups (:mod:`.turns`); empty otherwise."""
        if not self.end_to_end or not has_follow_ups(self.results):
            return []
        # Kept: its bootstrap is redone for nothing by every display and export.
        key = (len(self.results), tuple(self.variant_names))
        if self._per_turn is None or self._per_turn[0] != key:
            self._per_turn = (key, per_turn(self.results, self.variant_names))
        return list(self._per_turn[1])

    def per_turn_text(self) -> str:
        """:meth:`per_turn` as tables: the lift over cold per group of turns, then the
        mention and forbidden rates (empty without follow-ups), with the
        :meth:`few_cases_note` of the smallest group under them."""
        rows = self.per_turn()
        note = self.few_cases_note(min(row.cases for row in rows)) if rows else ""
        return per_turn_text(rows, self.variant_names, note)

    def paired_text(self) -> str:
        """One line per two variants: the paired comparison (empty for one variant), and
        the minimum detectable difference of each."""
        sizes = [p.clustered.cases if p.clustered is not None else p.cases for p in self.paired]
        return paired_lines(self.paired, self.few_cases_note(min(sizes) if sizes else None))

    @property
    def replies_sent(self) -> int:
        """Model replies the runs of this evaluation asked the model for (none for a result
        reused whole, none for a reply the response cache served)."""
        return sum(
            max(0, result.model_calls - result.cache_hits)
            for result in self.results
            if not result.from_cache
        )

    def footer(self) -> str:
        """What ran and what came from the cache, the wall time and the executor: what
        varies between reruns."""
        runs = len(self.results)
        reused = self.reused_runs
        mode = self.settings.get("cache", "?")
        cache = {"readwrite": "", "off": ", cache off", "replay": ", replaying the cache"}.get(
            mode, f", cache {mode}"
        )
        return (
            f"{runs} runs in {self.wall_s:.2f} s ({self.settings.get('executor', '?')} "
            f"executor{cache}): {self.ran()}, {reused} reused from the "
            f"cache; model replies: {self.replies_sent} from the model, {self.cache_hits} "
            "from the cache"
        )

    def ran(self) -> str:
        """What the runs that were not reused did, per design of the report's variants:
        "28 ran the scout, 28 ran the pack, 28 read the cached envelope, 28 ran cold (no
        pre-flight)". Only the ``scout`` design runs the scout; ``cached`` and ``cold`` run
        none, and counting them as scout runs would mislead."""
        design = {variant.name: variant.design for variant in self.variants}
        counts = dict.fromkeys(design.values(), 0)
        for result in self.results:
            if not result.from_cache:
                kind = design.get(result.variant, "scout")
                counts[kind] = counts.get(kind, 0) + 1
        return ", ".join(f"{counts[kind]} {what}" for kind, what in _RAN.items() if kind in counts)

    def to_html(self) -> str:
        """An HTML table, variants as columns, the best value of each metric highlighted."""
        return html_table(
            self.title(),
            self.metrics_table(timings=True),
            self.best,
            self.footer(),
            self.few_cases_note(),
        )

    def to_markdown(self) -> str:
        """A Markdown table with every metric (timings included)."""
        return markdown_table(
            self.title(),
            self.metrics_table(timings=True),
            self.best,
            self.footer(),
            self.few_cases_note(),
        )

    def _repr_mimebundle_(
        self, include: Iterable[str] | None = None, exclude: Iterable[str] | None = None
    ) -> dict[str, str]:
        data = {
            "text/plain": self.to_text(),
            "text/html": self.to_html(),
            "text/markdown": self.to_markdown(),
        }
        if include:
            data = {mime: text for mime, text in data.items() if mime in set(include)}
        if exclude:
            data = {mime: text for mime, text in data.items() if mime not in set(exclude)}
        return data

    def __repr__(self) -> str:
        return self.to_text()

    def misses(self, variant: str) -> list[tuple[str, Sequence[str]]]:
        """Per case of ``variant`` (repeat 0), the expectations it missed, in words."""
        out: list[tuple[str, Sequence[str]]] = []
        for result in self.results:
            if result.variant != variant or result.repeat != 0:
                continue
            s = result.scores
            notes: list[str] = []
            if not s.valid:
                notes.append("no valid envelope")
            notes += [f"missing mention {m!r}" for m in s.missed_mentions]
            notes += [f"forbidden mention {m!r}" for m in s.forbidden_mentions]
            notes += [f"missed skill {m}" for m in s.missed_skills]
            notes += [f"unexpected skill {m}" for m in s.unexpected_skills]
            notes += [f"missed tool {m}" for m in s.missed_tools]
            notes += [f"unexpected tool {m}" for m in s.unexpected_tools]
            if s.goal_correct is False:
                notes.append("wrong proposed_goal (none vs a goal)")
            if s.has_enough_correct is False:
                notes.append("wrong has_enough_context")
            if notes:
                out.append((result.id, notes))
        return out
