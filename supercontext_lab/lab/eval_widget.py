"""The evaluation comparison widget: metrics side by side, a chart, per-case bundle diffs.

:class:`EvalComparison` renders an :class:`~supercontext_lab.eval.report.EvalReport`:

* **Metrics**: the report's HTML table (variants as columns, the best value of each
  metric highlighted) and a bar chart of the rate metrics, drawn with matplotlib's Agg
  backend into a PNG ``Image`` widget (no pyplot, no display, no network);
* **Cases**: pick a case and two variants; every variant's envelope is shown in its own
  column, with the scores and misses above it, and the field-by-field differences between
  the two picked variants are marked (:func:`~supercontext_lab.lab.widgets.bundle_diff_html`);
* **Export**: buttons writing the per-run CSV, the per-variant metrics CSV and the JSON
  into a folder the user chooses (default: ``exports/`` in the kernel's working folder,
  which JupyterLab makes the notebook's own, so the files appear beside it), each file
  shown by its whole path.

All text that came from a workspace or a model is escaped before it becomes HTML. The
widget's ``repr`` is the report's stable text table, which is what nbval compares.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from .._text import one_line
from ..bundle import ContextBundle, parse_context_bundle
from ..eval.dataset import EvalCase
from ..eval.metrics import RATE_METRICS
from ..eval.report import EvalReport
from ..eval.results import CaseResult
from .widgets import bundle_diff_html
from .widgets.html import badge, escape, note, pre, section, table

__all__ = [
    "CHART_METRICS",
    "EvalComparison",
    "chart_png",
    "default_export_folder",
    "statistics_html",
]

CHART_METRICS: tuple[str, ...] = RATE_METRICS
"""The metrics drawn in the chart: all rates between 0 and 1."""

# Okabe-Ito: distinguishable with every common form of colour blindness.
_PALETTE = ("#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442")
_TAB_TITLES = ("Metrics", "Cases", "Export")
_LABEL = {"description_width": "70px"}
_PICK = widgets.Layout(width="280px")


def default_export_folder() -> Path:
    """Where exports go unless the user picks another folder: ``exports/`` in the kernel's
    working folder, which JupyterLab sets to the notebook's folder, so the files show up in
    its file browser beside the notebook. Not the lab home: a notebook often points that
    at a temporary folder, removed when its kernel stops."""
    return Path.cwd() / "exports"


def chart_png(report: EvalReport, metrics: Sequence[str] = CHART_METRICS) -> bytes:
    """A grouped bar chart (one group per metric, one bar per variant) as PNG bytes.

    Error bars show the standard deviation across repeats when there were several, else
    each rate's 95 % interval.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9.0, 3.4), dpi=100)
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    count = max(1, len(report.variants))
    width = 0.8 / count
    for number, variant in enumerate(report.variants):
        offsets = [index - 0.4 + width * (number + 0.5) for index in range(len(metrics))]
        # A rate of 0 of 0 (shown() is None) gets no bar: NaN draws nothing, where its
        # SPEC value, 1.0, would read as "all right" (and its error bars collapse to 0).
        raw = [variant.shown(name) for name in metrics]
        values = [math.nan if value is None else float(value) for value in raw]
        errors: Any = None
        if variant.spread:
            errors = [variant.spread.get(name, {}).get("stdev", 0.0) for name in metrics]
        elif variant.intervals:
            # The 95 % interval of each rate, as asymmetric error bars.
            bounds = [
                variant.intervals.get(name, (value, value))
                for name, value in zip(metrics, values, strict=True)
            ]
            errors = [
                [max(0.0, value - low) for value, (low, _) in zip(values, bounds, strict=True)],
                [max(0.0, high - value) for value, (_, high) in zip(values, bounds, strict=True)],
            ]
        axes.bar(
            offsets,
            values,
            width=width,
            yerr=errors,
            label=variant.name,
            color=_PALETTE[number % len(_PALETTE)],
            capsize=2 if errors else 0,
        )
    axes.set_xticks(range(len(metrics)))
    axes.set_xticklabels([name.replace("_", "\n", 1) for name in metrics], fontsize=7.5, rotation=0)
    axes.set_ylim(0, 1.05)
    axes.set_ylabel("rate", fontsize=8)
    axes.tick_params(axis="y", labelsize=7.5)
    axes.spines["top"].set_visible(False)
    axes.spines["right"].set_visible(False)
    axes.legend(
        fontsize=7.5,
        frameon=False,
        ncols=min(count, 4),
        loc="upper center",
        bbox_to_anchor=(0.5, 1.16),
    )
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    return buffer.getvalue()


def statistics_html(report: EvalReport) -> str:
    """The end-to-end metrics, the reply's lift turn by turn (threads with follow-ups),
    every rate with its 95 % interval and the paired comparison of every two variants, as
    HTML (all text escaped)."""
    parts = []
    replies = report.replies_text()
    if replies:
        parts.append(section("End to end", pre(replies)))
    by_turn = report.per_turn_text()
    if by_turn:
        parts.append(section("Turn by turn", pre(by_turn)))
    parts.append(section("95 % intervals", pre(report.intervals_text())))
    paired = report.paired_text()
    if paired:
        parts.append(section("Paired comparisons", pre(paired)))
    return "".join(parts)


def _bundle(result: CaseResult | None) -> ContextBundle | None:
    if result is None or result.envelope is None:
        return None
    return parse_context_bundle(result.envelope)


def _expectations_html(case: EvalCase) -> str:
    rows = []
    for key, value in case.expect.to_dict().items():
        shown = ", ".join(value) if isinstance(value, list) else str(value).lower()
        rows.append([escape(key), escape(shown or "(none)")])
    return table(["expectation", "value"], rows, empty="no expectations")


def _score_lines(result: CaseResult) -> list[str]:
    scores = result.scores
    lines = []
    pairs = [
        ("missing mentions", scores.missed_mentions),
        ("forbidden mentions", scores.forbidden_mentions),
        ("missed skills", scores.missed_skills),
        ("unexpected skills", scores.unexpected_skills),
        ("missed tools", scores.missed_tools),
        ("unexpected tools", scores.unexpected_tools),
    ]
    for label, items in pairs:
        if items:
            lines.append(f"{label}: {', '.join(items)}")
    if scores.goal_correct is False:
        lines.append("proposed_goal: wrong (none vs a goal)")
    if scores.has_enough_correct is False:
        lines.append("has_enough_context: wrong")
    return lines


def _variant_column(name: str, result: CaseResult | None) -> str:
    if result is None:
        return section(name, note("no run of this case", "neutral"))
    state = badge("valid", "ok") if result.ok else badge("no valid envelope", "error")
    facts = (
        f"{result.model_calls} model calls, {result.tokens} tokens, "
        f"{result.elapsed_ms:.0f} ms, cache hits {result.cache_hits}"
    )
    misses = _score_lines(result)
    body = [
        f'<div style="margin:2px 0;">{state} <span style="color:#616161;">'
        f"{escape(facts)}</span></div>"
    ]
    if misses:
        body.append(note("\n".join(misses), "warn", strong="Misses:"))
    else:
        body.append(note("every expectation met", "ok"))
    if result.problems:
        body.append(note("\n".join(result.problems), "error", strong="Problems:"))
    body.append(pre(result.envelope if result.envelope is not None else "(no envelope)"))
    if result.turn is not None:
        # An end-to-end run: what the orchestrator answered, and what prepared it.
        turn = result.turn
        made = f"prepared by {turn.get('prepared_by') or 'nothing (cold)'}"
        body.append(
            note(str(turn.get("reply") or "(no reply)"), "neutral", strong=f"Reply ({made}):")
        )
    return section(name, "".join(body))


class EvalComparison(widgets.VBox):  # type: ignore[misc]
    """Compare the variants of an evaluation report; see the module docstring."""

    def __init__(self, report: EvalReport, **kwargs: Any) -> None:
        self.report = report
        self._updating = False
        names = report.variant_names
        self.header = widgets.HTML(value=self._header_html())
        # -- metrics
        self.metrics_html = widgets.HTML(value=report.to_html())
        self.chart = widgets.Image(value=chart_png(report), format="png")
        self.statistics_html = widgets.HTML(value=statistics_html(report))
        metrics_box = widgets.VBox([self.metrics_html, self.chart, self.statistics_html])
        # -- cases
        # Widths: ipywidgets' defaults (a 300px control, an 80px label) cut the case
        # labels and the longer descriptions off.
        self.only_differences = widgets.Checkbox(
            value=False,
            description="only cases where the picked variants differ",
            indent=False,
            layout=widgets.Layout(width="auto"),
        )
        self.case_select = widgets.Dropdown(
            description="case",
            options=self._case_options(),
            style=_LABEL,
            layout=widgets.Layout(width="100%", max_width="820px"),
        )
        self.left = widgets.Dropdown(
            description="compare", options=names, value=names[0], style=_LABEL, layout=_PICK
        )
        self.right = widgets.Dropdown(
            description="with",
            options=names,
            value=names[1] if len(names) > 1 else names[0],
            style=_LABEL,
            layout=_PICK,
        )
        repeats = int(report.settings.get("repeats", 1))
        self.repeat = widgets.BoundedIntText(
            value=0, min=0, max=max(0, repeats - 1), description="repeat", style=_LABEL
        )
        self.repeat.layout.display = "" if repeats > 1 else "none"
        self.case_html = widgets.HTML()
        for control in (self.case_select, self.left, self.right, self.repeat):
            control.observe(self._on_pick, names="value")
        self.only_differences.observe(self._on_filter, names="value")
        cases_box = widgets.VBox(
            [
                widgets.HBox([self.case_select, self.repeat], layout=widgets.Layout(width="100%")),
                widgets.HBox([self.left, self.right]),
                self.only_differences,
                self.case_html,
            ]
        )
        # -- export
        self.export_folder = widgets.Text(
            value=str(default_export_folder()),
            description="folder",
            placeholder="the folder the files go into (created when missing)",
            style=_LABEL,
            layout=widgets.Layout(width="100%", max_width="640px"),
        )
        self.export_base = widgets.Text(
            value="scout_eval",
            description="file name",
            placeholder="name (the files get _cases.csv, _metrics.csv, .json)",
            style=_LABEL,
            layout=widgets.Layout(width="100%", max_width="640px"),
        )
        self.csv_button = widgets.Button(description="Export CSV", icon="table")
        self.json_button = widgets.Button(description="Export JSON", icon="download")
        self.export_status = widgets.HTML()
        self.csv_button.on_click(self._on_csv)
        self.json_button.on_click(self._on_json)
        export_box = widgets.VBox(
            [
                self.export_folder,
                self.export_base,
                widgets.HBox([self.csv_button, self.json_button]),
                self.export_status,
            ]
        )
        self.tabs = widgets.Tab(children=[metrics_box, cases_box, export_box])
        self.tabs.titles = _TAB_TITLES
        # Exceptions raised in callbacks would vanish into the browser console otherwise.
        self.errors = widgets.Output()
        super().__init__([self.header, self.tabs, self.errors], **kwargs)
        self.add_class("scl-eval-comparison")
        self._render_case()

    # ------------------------------------------------------------------ rendering

    def _header_html(self) -> str:
        report = self.report
        variants = ", ".join(report.variant_names)
        return (
            f"<div><b>{escape(report.title())}</b>: {escape(variants)}<br>"
            f'<span style="color:#616161;">{escape(report.footer())}</span></div>'
        )

    def _case_options(self) -> list[tuple[str, str]]:
        cases = self.report.cases
        if self.only_differences.value:
            cases = [case for case in cases if self._differs(case.id)]
        options = []
        for case in cases:
            label = one_line(case.message, 60)
            options.append((f"{case.id}: {label}", case.id))
        return options

    def _result(self, case_id: str, variant: str) -> CaseResult | None:
        try:
            return self.report.result(case_id, variant, int(self.repeat.value))
        except KeyError:
            return None

    def _differs(self, case_id: str) -> bool:
        left = self._result(case_id, self.left.value)
        right = self._result(case_id, self.right.value)
        return (left.envelope if left else None) != (right.envelope if right else None)

    def _case(self, case_id: str) -> EvalCase | None:
        return next((case for case in self.report.cases if case.id == case_id), None)

    def _render_case(self) -> None:
        case_id = self.case_select.value
        case = self._case(case_id) if case_id is not None else None
        if case is None:
            self.case_html.value = note("no case to show (the filter hides every case)", "neutral")
            return
        left_name, right_name = self.left.value, self.right.value
        left, right = self._result(case.id, left_name), self._result(case.id, right_name)
        intro = [f"<b>{escape(case.id)}</b>: {escape(case.message)}"]
        if case.focus:
            intro.append(f"<br><i>focus</i>: {escape(case.focus)}")
        diff_title = f"Differences: {left_name} → {right_name}"
        columns = "".join(
            f'<div style="flex:1 1 0; min-width:260px;">'
            f"{_variant_column(name, self._result(case.id, name))}</div>"
            for name in self.report.variant_names
        )
        self.case_html.value = (
            f'<div class="scout-eval-case">{"".join(intro)}'
            f"{section('Expectations', _expectations_html(case))}"
            f"{section(diff_title, bundle_diff_html(_bundle(left), _bundle(right)))}"
            f'<div style="display:flex; gap:12px; align-items:flex-start;">{columns}</div></div>'
        )

    # ------------------------------------------------------------------ callbacks

    def _on_pick(self, change: dict[str, Any]) -> None:
        if self._updating:
            return
        with self.errors:
            if change["owner"] is not self.case_select and self.only_differences.value:
                self._refresh_options()
            self._render_case()

    def _on_filter(self, change: dict[str, Any]) -> None:
        with self.errors:
            self._refresh_options()
            self._render_case()

    def _refresh_options(self) -> None:
        options = self._case_options()
        current = self.case_select.value
        ids = [value for _, value in options]
        # Replacing the options resets the selection; keep the shown case when it stays.
        self._updating = True
        try:
            self.case_select.options = options
            if current in ids:
                self.case_select.value = current
        finally:
            self._updating = False

    def _base(self) -> Path:
        """The chosen folder joined with the chosen name (an absolute name wins); the
        chosen folder is created when missing, a folder inside the name is not."""
        folder = Path(self.export_folder.value.strip() or default_export_folder()).expanduser()
        base = folder / Path(self.export_base.value.strip() or "scout_eval").expanduser()
        if base.parent == folder:
            folder.mkdir(parents=True, exist_ok=True)
        return base.absolute()

    def export_csv(self, base: str | Path | None = None) -> list[Path]:
        """Write ``<base>_cases.csv`` (one row per run) and ``<base>_metrics.csv``;
        ``base`` defaults to the chosen folder and file name."""
        stem = Path(base) if base is not None else self._base()
        paths = [
            stem.with_name(stem.name + "_cases.csv"),
            stem.with_name(stem.name + "_metrics.csv"),
        ]
        self.report.to_csv(paths[0], table="cases")
        self.report.to_csv(paths[1], table="metrics")
        return paths

    def export_json(self, base: str | Path | None = None) -> Path:
        """Write ``<base>.json`` (the whole report); ``base`` as for :meth:`export_csv`."""
        stem = Path(base) if base is not None else self._base()
        path = stem.with_name(stem.name + ".json")
        self.report.to_json(path)
        return path

    def _report_export(self, paths: Sequence[Path] | None, error: OSError | None) -> None:
        if error is not None:
            self.export_status.value = note(
                f"could not write the file: {error}; choose another folder or file name.",
                "error",
            )
        else:
            # Whole paths, one a line: a bare name does not say where the file went.
            written = "\n".join(str(path.absolute()) for path in paths or ())
            self.export_status.value = note(written, "ok", strong="Wrote:")

    def _on_csv(self, _button: widgets.Button) -> None:
        with self.errors:
            try:
                paths = self.export_csv()
            except OSError as exc:
                self._report_export(None, exc)
            else:
                self._report_export(paths, None)

    def _on_json(self, _button: widgets.Button) -> None:
        with self.errors:
            try:
                path = self.export_json()
            except OSError as exc:
                self._report_export(None, exc)
            else:
                self._report_export([path], None)

    def __repr__(self) -> str:
        return self.report.to_text()
