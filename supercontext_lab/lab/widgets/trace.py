"""A timeline of a scout run: one row per model call, tool call or grounding check, with a
duration bar. Reads the harness made before the first model call (prefetch) say so; a
model call that failed has an error badge, a red bar and the number of requests it tried.

A tool call's arguments and result are shown whole (JSON indented), escaped, in a box that
scrolls past a dozen lines: what the model was given is read in full, not guessed from a
clipped line, and a long result keeps the table short."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Sequence

import ipywidgets as widgets

from ..._bounded import json_loads
from ...errors import SupercontextError
from ...scout import TraceStep
from .html import badge, escape, table

__all__ = ["TraceTimeline", "render_trace_html"]

# The box of a tool's arguments or result: whole, scrolling past about a dozen lines.
_BOX_STYLE = (
    "max-height:14em; overflow:auto; white-space:pre-wrap; overflow-wrap:anywhere; "
    "margin:2px 0; padding:2px 4px; background:#f5f5f5; border-radius:3px; font-size:11px;"
)
_BAR_COLOURS = {
    "model": "#5c6bc0",
    "tool": "#26a69a",
    "check": "#8d6e63",
    "refused": "#c62828",
    "failed": "#c62828",
    "error": "#ef6c00",
}


def _whole(text: str) -> str:
    """``text`` in a scrolling box, escaped; JSON indented, so long objects read by line."""
    # Not JSON (or too deep to parse): shown as it is.
    with contextlib.suppress(SupercontextError, ValueError):
        text = json.dumps(json_loads(text), indent=2, ensure_ascii=False)
    return f'<pre class="scl-json" style="{_BOX_STYLE}">{escape(text)}</pre>'


def _attempts(step: TraceStep) -> str:
    return f"{step.attempts} attempt{'' if step.attempts == 1 else 's'}"


def _bar(step: TraceStep, longest: float) -> str:
    share = 0.0 if longest <= 0 else max(0.0, step.duration_ms) / longest
    # A sliver stays visible for steps too fast to measure against the longest one.
    width = max(1.0, round(share * 100.0, 1))
    failed = step.kind == "model" and not step.ok
    if failed:
        colour = _BAR_COLOURS["failed"]
    elif step.kind in ("model", "check"):
        colour = _BAR_COLOURS[step.kind]
    elif step.refused:
        colour = _BAR_COLOURS["refused"]
    else:
        colour = _BAR_COLOURS["tool" if step.ok else "error"]
    css = "scl-bar scl-bar-failed" if failed else "scl-bar"
    return (
        '<div style="width:160px; background:#eeeeee; border-radius:3px; height:10px;">'
        f'<div class="{css}" style="width:{width}%; background:{colour}; height:10px; '
        'border-radius:3px;"></div></div>'
        f'<div style="font-size:11px; color:#616161;">{step.duration_ms:.1f} ms</div>'
    )


def _model_cells(step: TraceStep) -> list[str]:
    label = f"<b>model call</b> · iteration {step.iteration}"
    if step.grace:
        label += " " + badge("grace: final call without tools", "warn")
    if not step.ok:
        # The error is the step's text: the model's failure, as the client worded it.
        label += f" {badge('error', 'error')} {escape(_attempts(step))}"
        return [label, f'<span style="color:#8e1b1b;">{escape(step.text_preview)}</span>']
    if step.attempts > 1:
        # It answered, but only after retries: a slow or overloaded server shows here.
        label += " " + badge(_attempts(step), "warn")
    details = [f"{step.prompt_tokens} + {step.completion_tokens} = {step.tokens} tokens"]
    if step.finish_reason:
        details.append(f"finish: {escape(step.finish_reason)}")
    if step.tool_calls:
        asked = ", ".join(f"<code>{escape(name)}</code>" for name in step.tool_calls)
        details.append(f"asked for: {asked}")
    if step.text_preview:
        details.append(f'<span style="color:#616161;">{escape(step.text_preview)}</span>')
    return [label, "<br>".join(details)]


def _tool_cells(step: TraceStep) -> list[str]:
    if step.refused:
        state = badge("REFUSED", "error")
    elif step.ok:
        state = badge("ok", "ok")
    else:
        state = badge("error", "warn")
    label = f"<b>tool</b> <code>{escape(step.tool)}</code> {state}"
    if step.prefetched:
        label += " " + badge("gathered before the model", "info")
    details = []
    if step.arguments:
        details.append(f"args:{_whole(step.arguments)}")
    # The whole result when the run kept it; a step read back from JSON has its start only.
    result = step.result or step.result_preview
    if result:
        details.append(f"result:{_whole(result)}")
    return [label, "".join(details)]


def _check_cells(step: TraceStep) -> list[str]:
    state = badge("ok", "ok") if step.ok else badge("emptied the bundle", "error")
    return [f"<b>grounding check</b> {state}", escape(step.result_preview)]


def _deadline_cells(step: TraceStep) -> list[str]:
    return [f"<b>deadline</b> {badge('missed', 'error')}", escape(step.result_preview)]


_CELLS = {
    "model": _model_cells,
    "tool": _tool_cells,
    "check": _check_cells,
    "deadline": _deadline_cells,
}


def render_trace_html(steps: Sequence[TraceStep]) -> str:
    """The timeline as an HTML table; every string taken from the trace is escaped."""
    longest = max((step.duration_ms for step in steps), default=0.0)
    rows = []
    for number, step in enumerate(steps, start=1):
        cells = _CELLS[step.kind](step)
        rows.append([str(number), *cells, _bar(step, longest)])
    models = [s for s in steps if s.kind == "model"]
    tools = [s for s in steps if s.kind == "tool"]
    failures = [s for s in models if not s.ok]
    failed = (
        f", {len(failures)} failed model call(s) after "
        f"{sum(s.attempts for s in failures)} attempt(s)"
        if failures
        else ""
    )
    totals = (
        f'<div style="font-size:12px; color:#424242; margin-bottom:4px;">'
        f"{len(models)} model call(s), {len(tools)} tool call(s), "
        f"{sum(s.tokens for s in models)} tokens, "
        f"{sum(1 for s in tools if s.refused)} refused"
        f"{failed}</div>"
    )
    return totals + table(["#", "step", "details", "duration"], rows, empty="No steps recorded.")


class TraceTimeline(widgets.VBox):  # type: ignore[misc]
    """A read-only timeline of :class:`~supercontext_lab.scout.TraceStep` rows.

    ``.html`` is the ``HTML`` widget holding the rendered table; :meth:`update` replaces
    the steps.
    """

    def __init__(self, steps: Sequence[TraceStep] = ()) -> None:
        self.html = widgets.HTML()
        self.steps: list[TraceStep] = []
        super().__init__(children=[self.html])
        self.add_class("scl-trace")
        self.update(steps)

    def update(self, steps: Sequence[TraceStep]) -> None:
        """Show ``steps`` instead of the current ones."""
        self.steps = list(steps)
        self.html.value = render_trace_html(self.steps)
