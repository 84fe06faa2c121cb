"""The bundle panel: what one scout run or one harness turn prepared, and why.

A :class:`BundlePanel` leads with the outcome ("bundle accepted" and the grounding check's
"grounded N of M", or "cold start: <reason>"), then the run's status, then the workspace
it searched (its folder's name, the path on hover and beside it). Below it: the goal,
the ``has_enough_context`` badge, the summary with its attributions as chips (each shows
the text of its source on hover and opens it on click: see :mod:`.cited`), the recommended
tool calls and skills
checked against the workspace, what the check dropped (struck through, with why), the
raw envelope, the problems (each once) and the trace. It only renders what the engine
returned; it never re-parses or re-decides anything.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import ipywidgets as widgets

from ...bundle import ContextBundle, RecommendedSkill, RecommendedToolCall
from ...gate import ColdStartReason
from ...harness import TurnResult
from ...harness.turn import failure_reason
from ...scout import Dropped, ScoutRun
from ...scout.grounding import GroundingReport, known_names
from ...sources.workspace import Workspace
from ..shown import shown_path, workspace_name
from .cited import cited_sources
from .html import badge, escape, note, pre, render_summary_html, section, table
from .trace import TraceTimeline

__all__ = ["TAB_TITLES", "BundlePanel", "describe_cold_start"]

TAB_TITLES = ("Bundle", "Envelope", "Trace", "Problems")
"""The panel's tab titles, in order."""

_PROBLEMS_TAB = TAB_TITLES.index("Problems")
_RAW_OUTPUT_CHARS = 4000


def describe_cold_start(reason: ColdStartReason | None, detail: str | None = None) -> str:
    """A readable line for why a turn started cold: the code, its explanation (the one
    table, :attr:`ColdStartReason.explanation`) and the free-text ``detail`` when there
    is one."""
    if reason is None:
        return detail or "No context was prepared."
    text = f"{reason}: {reason.explanation}"
    return f"{text} {detail}" if detail else text


@dataclass
class _View:
    """What the panel shows, gathered from a run and/or a turn."""

    bundle: ContextBundle | None = None
    envelope: str | None = None
    ran: bool = False
    """Whether there is a run or a turn to show at all."""
    cold_code: ColdStartReason | None = None
    """Why there is no bundle, as the one code (``None`` with a bundle)."""
    cold_detail: str | None = None
    """The free text beside :attr:`cold_code`: an exception's message, the run's problems."""
    status: str = ""
    problems: list[str] = field(default_factory=list)
    raw_output: str = ""
    meta: list[str] = field(default_factory=list)
    design: list[tuple[str, str]] = field(default_factory=list)
    """Badges saying which pre-flight design prepared a turn, and a missed deadline."""

    @property
    def why(self) -> str:
        """Why there is no bundle, for the header: the code's explanation and the detail."""
        if not self.ran:
            return "Nothing has run yet."
        if self.cold_code is None:
            return self.cold_detail or "No bundle was produced."
        explanation = self.cold_code.explanation
        return f"{explanation} {self.cold_detail}" if self.cold_detail else explanation


def _run_status(run: ScoutRun | None, turn: TurnResult | None) -> str:
    """The run's status as the header says it, after the outcome."""
    if run is not None:
        return f"scout {run.status}"
    if turn is not None and turn.reason is not None:
        return "scout skipped" if turn.reason.skipped else "scout did not run"
    return ""


def _gather(run: ScoutRun | None, turn: TurnResult | None) -> _View:
    view = _View(ran=run is not None or turn is not None, status=_run_status(run, turn))
    if turn is not None:
        view.bundle, view.envelope = turn.bundle, turn.envelope
        if not turn.prepared:
            view.cold_code, view.cold_detail = turn.reason, turn.reason_detail
            # A detail made of this very run's problems is listed with them below; any
            # other detail (the scout's exception) is a problem of its own.
            if turn.reason_detail and not (run is not None and turn.scout is run):
                view.problems.append(turn.reason_detail)
    if run is not None:
        view.bundle = view.bundle or run.bundle
        view.envelope = view.envelope or run.envelope
        view.problems.extend(run.problems)
        if view.bundle is None:
            view.raw_output = run.output
            if turn is None:
                view.cold_code = failure_reason(run)
                view.cold_detail = "; ".join(dict.fromkeys(run.problems)) or None
        view.meta = [
            f"model {run.model_name}",
            f"{run.model_calls} model call{'' if run.model_calls == 1 else 's'}",
            f"{run.usage.total_tokens} tokens",
            f"{run.elapsed_ms:.0f} ms",
            f"definition {run.definition_hash}",
        ]
    if turn is not None and turn.first_turn:
        if turn.prepared_by is not None:
            view.design.append((f"prepared by {turn.prepared_by}", "info"))
        if turn.design != (turn.prepared_by or turn.design):
            view.design.append((f"design {turn.design}", "neutral"))
        if turn.deadline_missed and turn.deadline_ms is not None:
            took = "" if turn.preflight_ms is None else f" ({turn.preflight_ms:.0f} ms)"
            label = f"pre-flight missed its {turn.deadline_ms:g} ms deadline{took}"
            view.design.append((label, "warn"))
        if turn.fallback_cut:
            view.design.append(("pack cut short at the deadline", "warn"))
    if turn is not None and turn.orchestrator_error:
        view.problems.append(f"Orchestrator error: {turn.orchestrator_error}")
    # Each problem once: two refusals of one tool are one line, and so is a message both
    # the run and the turn carry.
    view.problems = list(dict.fromkeys(view.problems))
    return view


def _outcome_html(view: _View, report: GroundingReport | None) -> str:
    """The panel's first line: the outcome ("bundle accepted" with the grounding check's
    "grounded N of M", or "cold start: <reason>"), then the run's status."""
    if view.bundle is not None:
        parts = [badge("bundle accepted", "ok")]
        if report is not None and report.mode != "off":
            whole = report.grounded == report.checked
            parts.append(badge(report.badge, "ok" if whole else "warn"))
    elif view.cold_code is not None:
        kind = "info" if view.cold_code.skipped else "warn"
        parts = [badge(f"cold start: {view.cold_code}", kind)]
    elif view.ran:
        parts = [badge("cold start: no bundle", "warn")]
    else:
        parts = [badge("nothing has run yet", "neutral")]
    parts.extend(badge(text, kind) for text, kind in view.design)
    if view.status:
        parts.append(
            f'<span class="scl-run-status" style="color:#616161;">{escape(view.status)}</span>'
        )
    return (
        '<div class="scl-outcome" style="display:flex; gap:8px; align-items:center; '
        f'margin:2px 0 4px 0; font-size:13px;">{" ".join(parts)}</div>'
    )


def _args_html(call: RecommendedToolCall) -> str:
    if call.args_json is not None:
        return pre(json.dumps(call.args_json, indent=2, ensure_ascii=False))
    return f"<code>{escape(call.args)}</code>" if call.args else ""


class BundlePanel(widgets.VBox):  # type: ignore[misc]
    """An interactive view of a :class:`ScoutRun` and/or a :class:`TurnResult`.

    ``workspace`` enables the catalogue checks (the grounding check's own,
    :func:`~supercontext_lab.scout.grounding.known_names`): a recommended tool missing from
    the orchestrator's catalogue is flagged "not in catalogue", and a skill that is neither
    installed nor a registry entry is flagged "unknown skill". Without a workspace a run
    whose grounding check ran shows the check's verdict; otherwise the checks say they were
    skipped. Items the check dropped are listed struck through, with why.
    """

    def __init__(
        self,
        run: ScoutRun | None = None,
        *,
        turn: TurnResult | None = None,
        workspace: Workspace | None = None,
        title: str = "",
    ) -> None:
        self.workspace = workspace
        self.title = title
        self.run: ScoutRun | None = None
        self.turn: TurnResult | None = None
        self.bundle: ContextBundle | None = None
        self.flags: list[str] = []
        self.dropped: list[Dropped] = []
        self.title_html = widgets.HTML()
        self.outcome_html = widgets.HTML()
        self.workspace_html = widgets.HTML()
        self.workspace_html.add_class("scl-workspace")
        self.reason_html = widgets.HTML()
        self.goal_html = widgets.HTML()
        self.badge_html = widgets.HTML()
        self.meta_html = widgets.HTML()
        self.summary_html = widgets.HTML()
        self.tools_html = widgets.HTML()
        self.skills_html = widgets.HTML()
        self.envelope_text = widgets.HTML()
        self.problems_html = widgets.HTML()
        self.problems_html.add_class("scl-problems")
        self.trace = TraceTimeline()
        bundle_tab = widgets.VBox([self.summary_html, self.tools_html, self.skills_html])
        self.tabs = widgets.Tab(
            children=[bundle_tab, self.envelope_text, self.trace, self.problems_html],
            titles=TAB_TITLES,
        )
        header = widgets.HBox(
            [self.goal_html, self.badge_html],
            layout=widgets.Layout(align_items="center", justify_content="space-between"),
        )
        super().__init__(
            children=[
                self.title_html,
                self.outcome_html,
                self.workspace_html,
                self.reason_html,
                header,
                self.meta_html,
                self.tabs,
            ],
            layout=widgets.Layout(border="1px solid #e0e0e0", padding="6px"),
        )
        self.add_class("scl-bundle-panel")
        self.update(run, turn)

    # -- rendering -------------------------------------------------------------------------

    def update(self, run: ScoutRun | None = None, turn: TurnResult | None = None) -> None:
        """Show ``run`` and/or ``turn`` (a turn's own scout run is used when ``run`` is None)."""
        if run is None and turn is not None:
            run = turn.scout
        self.run, self.turn = run, turn
        view = _gather(run, turn)
        self.bundle = view.bundle
        self.flags = []
        report = run.grounding if run is not None else None
        self.dropped = list(report.dropped) if report is not None and report.changed else []
        self.title_html.value = (
            f'<div style="font-weight:700; font-size:14px;">{escape(self.title)}</div>'
            if self.title
            else ""
        )
        self.meta_html.value = (
            f'<div style="font-size:11.5px; color:#616161;">{escape(" · ".join(view.meta))}</div>'
            if view.meta
            else ""
        )
        self.outcome_html.value = _outcome_html(view, report)
        self.workspace_html.value = self._workspace_line(searched=run is not None)
        self._render_header(view)
        self._render_bundle(view.bundle)
        self._render_envelope(view.envelope)
        self.trace.update(run.trace if run is not None else [])
        self._render_problems(view)
        self.tabs.selected_index = _PROBLEMS_TAB if view.bundle is None else 0

    def _workspace_line(self, *, searched: bool) -> str:
        """Which workspace the run searched (or the turn would have): its name, and its
        path beside it and on hover."""
        if self.workspace is None:
            return ""
        path = shown_path(self.workspace.root)
        verb = "searched workspace" if searched else "workspace (not searched)"
        return (
            f'<div style="font-size:12px; color:#424242; margin:0 0 4px 0;">{verb} '
            f'<b title="{escape(path)}">{escape(workspace_name(self.workspace))}</b> '
            f'<span style="color:#757575;">{escape(path)}</span></div>'
        )

    def _render_header(self, view: _View) -> None:
        bundle = view.bundle
        if bundle is None:
            # The outcome line already says "cold start: <reason>"; this says why, in words.
            shown = view.ran
            self.reason_html.value = note(view.why, "warn", strong="Why:") if shown else ""
            self.reason_html.layout.display = None if shown else "none"
            self.goal_html.value = section("Goal", '<i style="color:#757575;">no bundle</i>')
            self.badge_html.value = ""
            return
        self.reason_html.value = ""
        self.reason_html.layout.display = "none"
        goal = bundle.proposed_goal
        goal_html = (
            f'<span class="scl-goal">{escape(goal)}</span>'
            if goal is not None
            else '<i style="color:#757575;">none</i>'
        )
        if self.turn is not None and self.turn.goal_from_bundle:
            goal_html += " " + badge("adopted as the thread goal", "info")
        self.goal_html.value = section("Goal", goal_html)
        state = {True: ("enough", "ok"), False: ("missing", "warn"), None: ("unknown", "neutral")}
        label, kind = state[bundle.has_enough_context]
        self.badge_html.value = (
            f'<span title="has_enough_context">has enough context: {badge(label, kind)}</span>'
        )

    def _render_bundle(self, bundle: ContextBundle | None) -> None:
        if bundle is None:
            self.summary_html.value = section("Summary", "<i>no bundle</i>")
            self.tools_html.value = ""
            self.skills_html.value = ""
            return
        notes = cited_sources(self.run.sources, self.workspace) if self.run is not None else None
        summary = (
            render_summary_html(bundle.summary, notes) if bundle.summary.strip() else "<i>empty</i>"
        )
        self.summary_html.value = section("Summary", summary + self._dropped_html("bullet"))
        self.tools_html.value = section(
            "Recommended tool calls",
            table(
                ["tool", "args", "why", "check"],
                [self._tool_row(call) for call in bundle.recommended_tool_calls]
                + self._dropped_rows("tool"),
            ),
        )
        self.skills_html.value = section(
            "Recommended skills",
            table(
                ["skill", "installed", "why", "check"],
                [self._skill_row(skill) for skill in bundle.recommended_skills]
                + self._dropped_rows("skill"),
            ),
        )

    def _dropped_of(self, kind: str) -> list[Dropped]:
        return [item for item in self.dropped if item.kind == kind]

    def _dropped_html(self, kind: str) -> str:
        """The bullets the check dropped, struck through, each with why."""
        items = self._dropped_of(kind)
        if not items:
            return ""
        lines = "".join(
            f'<li><del class="scl-dropped">{escape(item.item)}</del> '
            f'{badge("dropped", "error")} <span style="color:#757575;">{escape(item.why)}</span></li>'
            for item in items
        )
        return f'<ul class="scl-dropped-list" style="margin:2px 0; padding-left:20px;">{lines}</ul>'

    def _dropped_rows(self, kind: str) -> list[list[str]]:
        """Table rows for the tools or skills the check dropped, struck through."""
        return [
            [
                f'<del class="scl-dropped"><code>{escape(item.item)}</code></del>',
                "",
                "",
                f"{badge('dropped', 'error')} {escape(item.why)}",
            ]
            for item in self._dropped_of(kind)
        ]

    def _checked_by_run(self) -> bool:
        report = self.run.grounding if self.run is not None else None
        return report is not None and report.mode == "drop"

    def _tool_row(self, call: RecommendedToolCall) -> list[str]:
        if self.workspace is None:
            # What the run's check let through in drop mode exists in its catalogue.
            checked = self._checked_by_run()
            check = badge("in catalogue", "ok") if checked else badge("not checked", "neutral")
        elif call.tool in known_names(self.workspace).tools:
            check = badge("in catalogue", "ok")
        else:
            check = badge("not in catalogue", "error")
            self.flags.append(
                f"recommended tool '{call.tool}' is not in the orchestrator catalogue"
            )
        return [f"<code>{escape(call.tool)}</code>", _args_html(call), escape(call.why), check]

    def _skill_row(self, skill: RecommendedSkill) -> list[str]:
        said = {True: ("installed", "ok"), False: ("not installed", "info"), None: ("?", "neutral")}
        label, kind = said[skill.installed]
        checks: list[str] = []
        if self.workspace is None:
            checked = self._checked_by_run()
            checks.append(badge("checked", "ok") if checked else badge("not checked", "neutral"))
        else:
            names = known_names(self.workspace)
            installed = skill.skill in names.installed
            in_registry = skill.skill in names.registry
            if installed:
                checks.append(badge("installed here", "ok"))
            elif in_registry:
                checks.append(badge("in registry", "info"))
            else:
                checks.append(badge("unknown skill", "error"))
                self.flags.append(
                    f"recommended skill '{skill.skill}' is neither installed nor in the registry"
                )
            if (
                skill.installed is not None
                and (installed or in_registry)
                and (skill.installed != installed)
            ):
                checks.append(badge("installed flag is wrong", "warn"))
                self.flags.append(
                    f"recommended skill '{skill.skill}' says installed: "
                    f"{str(skill.installed).lower()}, the workspace says {str(installed).lower()}"
                )
        return [
            f"<code>{escape(skill.skill)}</code>",
            badge(label, kind),
            escape(skill.why),
            " ".join(checks),
        ]

    def _render_envelope(self, envelope: str | None) -> None:
        if envelope is None:
            self.envelope_text.value = '<i style="color:#757575;">No envelope.</i>'
        else:
            self.envelope_text.value = pre(envelope, max_height="420px")

    def _render_problems(self, view: _View) -> None:
        items = list(dict.fromkeys(view.problems + self.flags))
        parts = []
        if view.bundle is None:
            # The code and its explanation; the detail is the list below, each line once.
            said = describe_cold_start(view.cold_code) if view.cold_code is not None else view.why
            parts.append(note(said, "warn", strong="Cold start:"))
        if items:
            parts.append(
                "<ul style='margin:4px 0; padding-left:20px;'>"
                + "".join(f"<li>{escape(item)}</li>" for item in items)
                + "</ul>"
            )
        elif view.bundle is not None:
            parts.append('<i style="color:#757575;">No problems.</i>')
        if view.raw_output.strip():
            raw = view.raw_output
            if len(raw) > _RAW_OUTPUT_CHARS:
                raw = raw[:_RAW_OUTPUT_CHARS] + "\n[… cut for display]"
            parts.append(section("Raw scout output", pre(raw, max_height="300px")))
        self.problems_html.value = "".join(parts)
