"""The evaluation report: per-variant metrics, per-case results, exports and displays.

``text/plain`` (terminals, nbval) leaves out everything that depends on the machine or on
the cache's history — latencies, wall time, cache hits — so a rerun prints the same text.
HTML and Markdown show them.
"""

from __future__ import annotations

import csv
import html
import io
import json
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._atomic import write_atomic
from .._text import escape_undecodable
from .end_to_end import REPLY_METRICS
from .metrics import COUNT_NAMES, METRIC_NAMES, RATE_METRICS, TIMING_METRICS
from .metrics import metric as metric_of
from .results import encodable
from .stats import INTERVAL_METHOD, PAIRED_METHOD, PairedComparison, format_interval
from .summary import VariantReport

if TYPE_CHECKING:
    from .dataset import EvalCase
    from .results import CaseResult

__all__ = ["EvalReport", "VariantReport", "csv_cell", "format_value"]

# A cell starting with one of these is a formula to a spreadsheet (CSV injection, OWASP):
# =, +, - and @, a tab, a line break, NUL, and their full-width forms.
_FORMULA_STARTS = (
    "=",
    "+",
    "-",
    "@",
    "\t",
    "\r",
    "\n",
    "\0",
    "\uff1d",
    "\uff0b",
    "\uff0d",
    "\uff20",
)


def csv_cell(value: Any) -> Any:
    """A value as a CSV cell: text that a spreadsheet would read as a formula gets a
    leading ``'`` (shown as text, as OWASP advises against CSV injection), and bytes that
    are not UTF-8 are escaped; numbers, booleans and ``None`` are written as they are."""
    if not isinstance(value, str):
        return value
    text = escape_undecodable(value)
    return "'" + text if text.lstrip(" ").startswith(_FORMULA_STARTS) else text


CASE_COLUMNS = (
    "id",
    "variant",
    "repeat",
    "status",
    "valid",
    "skill_precision",
    "skill_recall",
    "tool_precision",
    "tool_recall",
    "goal_correct",
    "has_enough_correct",
    "mention_rate",
    "forbidden_mention_rate",
    "grounded_rate",
    "invented_names",
    "gathered_mention_rate",
    "missed_mentions",
    "forbidden_mentions",
    "missed_skills",
    "unexpected_skills",
    "missed_tools",
    "unexpected_tools",
    "model_calls",
    "tokens",
    "elapsed_ms",
    "envelope_chars",
    "cache_hits",
    "from_cache",
    "problems",
)


def _text_table(rows: Sequence[Sequence[str]]) -> str:
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


def format_value(value: float | int | None) -> str:
    """Integers as they are, rates and means with three decimals, ``None`` as ``-``."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return str(value)
    return f"{value:.3f}"


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
        """The metrics of one variant."""
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
        values = {v.name: float(v.metrics[metric]) for v in self.variants}
        if len(values) < 2 or len(set(values.values())) == 1:
            return set()
        target = pick(values.values())
        return {name for name, value in values.items() if value == target}

    # ------------------------------------------------------------------ exports

    def to_dict(self) -> dict[str, Any]:
        """``{"variants": [{"name", "metrics", ...}], "cases": [{"id", "variant",
        "envelope", "problems", "scores", ...}], "settings", "wall_s"}``."""
        return {
            "variants": [variant.to_dict() for variant in self.variants],
            "cases": [result.to_dict() for result in self.results],
            "settings": dict(self.settings),
            "wall_s": round(self.wall_s, 3),
            "paired": [pair.to_dict() for pair in self.paired],
            "statistics": {"intervals": INTERVAL_METHOD, "paired": PAIRED_METHOD},
        }

    def to_json(self, path: str | os.PathLike[str] | None = None, *, indent: int = 2) -> str:
        """The report as JSON text; also written to ``path`` when given."""
        text = json.dumps(encodable(self.to_dict()), ensure_ascii=False, indent=indent) + "\n"
        if path is not None:
            write_atomic(path, text)
        return text

    def case_rows(self) -> list[dict[str, Any]]:
        """One flat row per run: scores, misses and costs."""
        rows = []
        for result in self.results:
            scores = result.scores.to_dict()
            row: dict[str, Any] = {
                "id": result.id,
                "variant": result.variant,
                "repeat": result.repeat,
                "status": result.status,
                "model_calls": result.model_calls,
                "tokens": result.tokens,
                "elapsed_ms": round(result.elapsed_ms, 3),
                "envelope_chars": len(result.envelope) if result.envelope is not None else None,
                "cache_hits": result.cache_hits,
                "from_cache": result.from_cache,
                "problems": " | ".join(result.problems),
            }
            for column in CASE_COLUMNS:
                if column not in row:
                    value = scores.get(column)
                    row[column] = "; ".join(value) if isinstance(value, list) else value
            rows.append({column: row[column] for column in CASE_COLUMNS})
        return rows

    def metric_rows(self) -> list[dict[str, Any]]:
        """One row per variant: its name and every metric and count."""
        return [
            {"variant": v.name, **{name: v.metrics[name] for name in METRIC_NAMES + COUNT_NAMES}}
            for v in self.variants
        ]

    def to_csv(self, path: str | os.PathLike[str] | None = None, *, table: str = "cases") -> str:
        """CSV text of ``table`` (``"cases"``: one row per run; ``"metrics"``: one row per
        variant); also written to ``path`` when given. Every cell is a :func:`csv_cell`: a
        case id or expectation starting with ``=`` is text, never a formula."""
        if table == "cases":
            rows, columns = self.case_rows(), list(CASE_COLUMNS)
        elif table == "metrics":
            rows, columns = self.metric_rows(), ["variant", *METRIC_NAMES, *COUNT_NAMES]
        else:
            raise ValueError(f"table must be 'cases' or 'metrics', not {table!r}")
        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows({column: csv_cell(row[column]) for column in columns} for row in rows)
        text = buffer.getvalue()
        if path is not None:
            write_atomic(path, text)
        return text

    # ------------------------------------------------------------------ display

    def _cell(self, variant: VariantReport, name: str) -> str:
        text = format_value(variant.metrics[name])
        stats = variant.spread.get(name)
        if stats is not None:
            text += f" ±{stats['stdev']:.3f}"
        return text

    def title(self) -> str:
        """``Scout evaluation: N cases x M variants`` (and the repeats when several)."""
        repeats = int(self.settings.get("repeats", 1))
        text = f"Scout evaluation: {len(self.cases)} cases x {len(self.variants)} variants"
        return text + (f" x {repeats} repeats" if repeats > 1 else "")

    def metrics_table(self, *, timings: bool = True) -> list[list[str]]:
        """Rows of ``[metric, value per variant...]``, headed by the variant names."""
        names = [n for n in METRIC_NAMES if timings or n not in TIMING_METRICS]
        rows = [["metric", *self.variant_names]]
        for name in (*names, *COUNT_NAMES):
            rows.append([name, *(self._cell(v, name) for v in self.variants)])
        return rows

    def to_text(self) -> str:
        """A stable plain-text table (no timings, no cache counts)."""
        return "\n".join([self.title(), _text_table(self.metrics_table(timings=False))])

    def latency_text(self) -> str:
        """The latency of one run, per variant: p50 and p95 in milliseconds (a result
        reused from the cache keeps the latency of the run that made it)."""
        rows = [["latency", "runs", "p50 ms", "p95 ms"]]
        for variant in self.variants:
            runs = sum(1 for result in self.results if result.variant == variant.name)
            p50, p95 = variant.metrics["latency_p50_ms"], variant.metrics["latency_p95_ms"]
            rows.append([variant.name, str(runs), f"{p50:.1f}", f"{p95:.1f}"])
        return _text_table(rows)

    def intervals_text(self) -> str:
        """Every rate of every variant with its 95 % interval, one row per rate."""
        names = [n for n in RATE_METRICS if any(n in v.intervals for v in self.variants)]
        rows = [["95 % interval", *self.variant_names]]
        for name in names:
            cells = []
            for variant in self.variants:
                low, high = variant.intervals.get(name, (0.0, 1.0))
                cells.append(f"{format_value(variant.metrics[name])} {format_interval(low, high)}")
            rows.append([name, *cells])
        return f"{_text_table(rows)}\n({INTERVAL_METHOD})"

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
        rows = [["end to end", *self.variant_names]]
        for name in REPLY_METRICS:
            cells = []
            for variant in self.variants:
                value = variant.metrics.get(name)
                text = format_value(value)
                if name in variant.intervals:
                    text += " " + format_interval(*variant.intervals[name])
                cells.append(text)
            rows.append([name, *cells])
        head = f"Orchestrator: {self.settings.get('orchestrator', '?')}, temperature 0"
        return f"{head}\n{_text_table(rows)}"

    def paired_text(self) -> str:
        """One line per two variants: the paired comparison (empty for one variant)."""
        if not self.paired:
            return ""
        lines = [f"Paired comparisons ({PAIRED_METHOD}):"]
        lines.extend("  " + pair.line() for pair in self.paired)
        return "\n".join(lines)

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
            f"executor{cache}): {runs - reused} ran the scout, {reused} reused from the "
            f"cache; model replies: {self.replies_sent} from the model, {self.cache_hits} "
            "from the cache"
        )

    def to_html(self) -> str:
        """An HTML table, variants as columns, the best value of each metric highlighted."""
        esc = html.escape
        head = "".join(f"<th>{esc(name)}</th>" for name in self.variant_names)
        body = []
        for row in self.metrics_table(timings=True)[1:]:
            best = self.best(row[0])
            cells = []
            for variant, cell in zip(self.variant_names, row[1:], strict=True):
                if variant in best:
                    cells.append(
                        f'<td class="scout-eval-best" style="font-weight:bold;'
                        f'background:#e6f4ea">{esc(cell)}</td>'
                    )
                else:
                    cells.append(f"<td>{esc(cell)}</td>")
            body.append(f"<tr><th>{esc(row[0])}</th>{''.join(cells)}</tr>")
        return (
            f'<div class="scout-eval-report"><strong>{esc(self.title())}</strong>'
            f'<table class="scout-eval-metrics"><thead><tr><th>metric</th>{head}</tr></thead>'
            f"<tbody>{''.join(body)}</tbody></table>"
            f"<small>{esc(self.footer())}</small></div>"
        )

    def to_markdown(self) -> str:
        """A Markdown table with every metric (timings included)."""

        def cell(text: str) -> str:
            return text.replace("|", "\\|")

        rows = self.metrics_table(timings=True)
        lines = [f"**{self.title()}**", ""]
        lines.append("| " + " | ".join(cell(c) for c in rows[0]) + " |")
        lines.append("|" + "---|" * len(rows[0]))
        for row in rows[1:]:
            best = self.best(row[0])
            shown = [
                f"**{cell(value)}**" if variant in best else cell(value)
                for variant, value in zip(self.variant_names, row[1:], strict=True)
            ]
            lines.append(f"| {cell(row[0])} | " + " | ".join(shown) + " |")
        lines += ["", self.footer()]
        return "\n".join(lines)

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
