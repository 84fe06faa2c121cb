"""How the report is shown: plain-text tables for terminals and the command line, HTML and
Markdown for notebooks and documents.

Under 20 cases every table carries the report's few-cases note (``note``:
:func:`~.stats.few_cases_note`), and every table of differences (the lift over cold, the
paired comparisons) the smallest difference its cases can detect
(:func:`~.clusters.mdd_line`).

Every table is drawn from the per-variant reports (:mod:`.summary`); which metrics go in,
and so what a rerun prints, the report decides (:mod:`.report`). A value is written by
:func:`format_value`, a metric's value with its spread over repeats when there are
several.
"""

from __future__ import annotations

import html
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from .clusters import mdd_line
from .end_to_end import REPLY_METRICS
from .metrics import COUNT_NAMES, METRIC_NAMES, RATE_METRICS, TIMING_METRICS
from .stats import INTERVAL_METHOD, PAIRED_METHOD, PairedComparison, format_interval

if TYPE_CHECKING:
    from .results import CaseResult
    from .summary import VariantReport

__all__ = [
    "NOT_APPLICABLE",
    "format_value",
    "html_table",
    "intervals_table",
    "latency_table",
    "lift_lines",
    "markdown_table",
    "metrics_rows",
    "paired_lines",
    "replies_table",
    "text_table",
    "under",
]


def text_table(rows: Sequence[Sequence[str]]) -> str:
    """Aligned plain-text columns: the first left-aligned, the others right-aligned, a
    rule under the header row."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = []
    for number, row in enumerate(rows):
        cells = [row[0].ljust(widths[0])] + [
            cell.rjust(width) for cell, width in zip(row[1:], widths[1:], strict=True)
        ]
        lines.append("  ".join(cells).rstrip())
        if number == 0:
            lines.append("  ".join("-" * width for width in widths))
    return "\n".join(lines)


NOT_APPLICABLE = "\u2013"
"""How a value that is not applicable is shown: an en dash. A rate of 0 of 0 keeps SPEC
§11's value as data; :meth:`~.summary.VariantReport.shown` gives ``None`` for it."""


def format_value(value: float | int | None) -> str:
    """Integers as they are, rates and means with three decimals, ``None`` (not
    applicable: :meth:`~.summary.VariantReport.shown`) as :data:`NOT_APPLICABLE`."""
    if value is None:
        return NOT_APPLICABLE
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{value:.3f}"


def _cell(variant: VariantReport, name: str) -> str:
    value = variant.shown(name)
    text = format_value(value)
    stats = variant.spread.get(name)
    if stats is not None and value is not None:
        text += f" ±{stats['stdev']:.3f}"
    return text


def metrics_rows(variants: Sequence[VariantReport], *, timings: bool) -> list[list[str]]:
    """Rows of ``[metric, value per variant...]``, headed by the variant names; every
    metric (the timings only with ``timings``), then every count."""
    names = [n for n in METRIC_NAMES if timings or n not in TIMING_METRICS]
    rows = [["metric", *(variant.name for variant in variants)]]
    for name in (*names, *COUNT_NAMES):
        rows.append([name, *(_cell(v, name) for v in variants)])
    return rows


def under(table: str, *lines: str) -> str:
    """``table`` with the non-empty ``lines`` under it, one a line."""
    return "\n".join([table, *(line for line in lines if line)])


def latency_table(
    variants: Sequence[VariantReport], results: Sequence[CaseResult], note: str = ""
) -> str:
    """Per variant, its runs and the p50 and p95 latency of one run in milliseconds."""
    rows = [["latency", "runs", "p50 ms", "p95 ms"]]
    for variant in variants:
        runs = sum(1 for result in results if result.variant == variant.name)
        p50, p95 = variant.metrics["latency_p50_ms"], variant.metrics["latency_p95_ms"]
        rows.append([variant.name, str(runs), f"{p50:.1f}", f"{p95:.1f}"])
    return under(text_table(rows), note)


def _with_interval(variant: VariantReport, name: str) -> str:
    """A rate and its interval; a rate that does not apply (0 of 0) has neither (``–``)."""
    value = variant.shown(name)
    text = format_value(value)
    if value is not None and name in variant.intervals:
        text += " " + format_interval(*variant.intervals[name])
    return text


def intervals_table(variants: Sequence[VariantReport], note: str = "") -> str:
    """Every rate of every variant with its 95 % interval, one row per rate, and the
    method under the table; "–" where a rate is not applicable (0/0)."""
    names = [n for n in RATE_METRICS if any(n in v.metrics for v in variants)]
    rows = [["95 % interval", *(variant.name for variant in variants)]]
    for name in names:
        rows.append([name, *(_with_interval(variant, name) for variant in variants)])
    method = f"({INTERVAL_METHOD}; {NOT_APPLICABLE}: not applicable, 0 of 0)"
    return under(text_table(rows), method, note)


def lift_lines(variants: Sequence[VariantReport]) -> list[str]:
    """Under the end-to-end table: each variant's lift over cold with its cluster-robust
    interval and the cases and clusters behind it, then the minimum detectable difference
    (none when no variant has its clustered lift)."""
    lifts = {v.name: v.lift for v in variants if v.lift is not None and v.lift.units}
    if not lifts:
        return []
    width = max(len(name) for name in lifts)
    return [
        "reply_lift, clustered by workspace or conversation (the table's interval where "
        "cases share clusters):",
        *(f"  {name.ljust(width)}  {lift.describe()}" for name, lift in lifts.items()),
        mdd_line(lifts),
    ]


def replies_table(variants: Sequence[VariantReport], orchestrator: str, note: str = "") -> str:
    """The end-to-end metrics per variant, each with its interval when it has one, under
    a line naming the ``orchestrator`` that replied; the clustered lifts and the minimum
    detectable difference under it (:func:`lift_lines`)."""
    rows = [["end to end", *(variant.name for variant in variants)]]
    for name in REPLY_METRICS:
        rows.append([name, *(_with_interval(variant, name) for variant in variants)])
    head = f"Orchestrator: {orchestrator}, temperature 0"
    return under(f"{head}\n{text_table(rows)}", *lift_lines(variants), note)


def paired_lines(paired: Sequence[PairedComparison], note: str = "") -> str:
    """One line per paired comparison under the method's name, and the minimum detectable
    difference of each under them (empty for none)."""
    if not paired:
        return ""
    lines = [f"Paired comparisons ({PAIRED_METHOD}):"]
    lines.extend("  " + pair.line() for pair in paired)
    clustered = {
        f"{pair.first} vs {pair.second}": pair.clustered
        for pair in paired
        if pair.clustered is not None and pair.clustered.units
    }
    return under("\n".join(lines), mdd_line(clustered), note)


def html_table(
    title: str,
    rows: Sequence[Sequence[str]],
    best: Callable[[str], set[str]],
    footer: str,
    note: str = "",
) -> str:
    """``rows`` (:func:`metrics_rows`) as an HTML table under ``title``, the cells of the
    variants ``best`` names for a metric highlighted, ``note`` (when given) and then
    ``footer`` below."""
    esc = html.escape
    names = rows[0][1:]
    head = "".join(f"<th>{esc(name)}</th>" for name in names)
    body = []
    for row in rows[1:]:
        winners = best(row[0])
        cells = []
        for variant, cell in zip(names, row[1:], strict=True):
            if variant in winners:
                cells.append(
                    f'<td class="scout-eval-best" style="font-weight:bold;'
                    f'background:#e6f4ea">{esc(cell)}</td>'
                )
            else:
                cells.append(f"<td>{esc(cell)}</td>")
        body.append(f"<tr><th>{esc(row[0])}</th>{''.join(cells)}</tr>")
    return (
        f'<div class="scout-eval-report"><strong>{esc(title)}</strong>'
        f'<table class="scout-eval-metrics"><thead><tr><th>metric</th>{head}</tr></thead>'
        f"<tbody>{''.join(body)}</tbody></table>"
        + (f'<p class="scout-eval-note">{esc(note)}</p>' if note else "")
        + f"<small>{esc(footer)}</small></div>"
    )


def markdown_table(
    title: str,
    rows: Sequence[Sequence[str]],
    best: Callable[[str], set[str]],
    footer: str,
    note: str = "",
) -> str:
    """``rows`` (:func:`metrics_rows`) as a Markdown table under ``title`` in bold, the
    values of the variants ``best`` names for a metric in bold, ``note`` (when given) and
    then ``footer`` below."""

    def cell(text: str) -> str:
        return text.replace("|", "\\|")

    names = rows[0][1:]
    lines = [f"**{title}**", ""]
    lines.append("| " + " | ".join(cell(c) for c in rows[0]) + " |")
    lines.append("|" + "---|" * len(rows[0]))
    for row in rows[1:]:
        winners = best(row[0])
        shown = [
            f"**{cell(value)}**" if variant in winners else cell(value)
            for variant, value in zip(names, row[1:], strict=True)
        ]
        lines.append(f"| {cell(row[0])} | " + " | ".join(shown) + " |")
    lines += ["", *([note, ""] if note else []), footer]
    return "\n".join(lines)
