"""Display objects for scout runs and harness turns, with their provenance.

:class:`ScoutDisplay` and :class:`TurnDisplay` implement ``_repr_mimebundle_`` and return
three representations at once:

* ``text/plain``: a stable account (no ids, addresses, timings or paths), so terminals and
  nbval get readable, comparable output;
* ``text/markdown``: the same account with every piece of untrusted text escaped;
* ``application/vnd.jupyter.widget-view+json``: the interactive bundle panel, so a live
  JupyterLab shows widgets while a saved notebook without widget state still shows text.

The display metadata carries the provenance under ``"supercontext_lab"``: route kind,
model name and base URL (credentials stripped), agent definition hash, tokens, durations
and the skip or failure reason. It never carries an API key: models read keys from the
environment at call time and nothing here looks at them.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Collection, Mapping
from functools import cached_property
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from .._text import one_line, strip_userinfo
from ..bundle.render import md_block, md_inline
from ..harness import TurnResult
from ..models.base import ChatModel, Usage
from ..scout import ScoutRun, TraceStep
from ..sources.workspace import Workspace
from .shown import WIDGET_VIEW_MIME, workspace_name

__all__ = [
    "METADATA_KEY",
    "ScoutDisplay",
    "TurnDisplay",
    "model_provenance",
    "public_base_url",
    "run_provenance",
    "turn_provenance",
]

METADATA_KEY = "supercontext_lab"
"""The display-metadata key holding a display's provenance."""

MimeBundle = tuple[dict[str, Any], dict[str, Any]]

# --------------------------------------------------------------------------- provenance


def public_base_url(url: str | None) -> str | None:
    """``url`` without user info, query or fragment: the part that is safe to record."""
    if not url:
        return None
    try:
        parts = urlsplit(strip_userinfo(url))
        _ = parts.port  # a port out of range makes the URL unusable, and unshown
    except ValueError:
        return None
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))


def model_provenance(model: ChatModel) -> dict[str, Any]:
    """Route kind (``openai``, ``offline`` or ``custom``), model name and base URL."""
    from ..models.offline import OfflineOrchestratorModel, OfflineScoutModel
    from ..models.openai import OpenAICompatibleModel

    if isinstance(model, OpenAICompatibleModel):
        return {
            "route": "openai",
            "model": model.name,
            "base_url": public_base_url(model.base_url),
            "stream": model.stream,
            "native_tool_calling": model.native_tool_calling,
        }
    kind = (
        "offline" if isinstance(model, OfflineScoutModel | OfflineOrchestratorModel) else "custom"
    )
    return {"route": kind, "model": model.name, "base_url": None}


def _tokens(usage: Usage) -> dict[str, int]:
    return {
        "prompt": usage.prompt_tokens,
        "completion": usage.completion_tokens,
        "total": usage.total_tokens,
    }


def run_provenance(run: ScoutRun, *, model: ChatModel | None = None) -> dict[str, Any]:
    """How a scout run was made: route, definition hash, tokens, duration, problems."""
    scout = (
        model_provenance(model)
        if model is not None
        else {"route": "unknown", "model": run.model_name, "base_url": None}
    )
    return {
        "kind": "scout_run",
        "scout": scout,
        "definition_hash": run.definition_hash,
        "status": run.status,
        "reason": run.reason,
        "problems": list(run.problems),
        "model_calls": run.model_calls,
        "tool_calls": sum(1 for step in run.trace if step.kind == "tool"),
        "tokens": _tokens(run.usage),
        "durations_ms": {"scout": round(run.elapsed_ms, 3)},
    }


def turn_provenance(
    turn: TurnResult,
    *,
    orchestrator_model: ChatModel,
    scout_model: ChatModel | None = None,
    definition_hash: str | None = None,
) -> dict[str, Any]:
    """How a turn was made: both routes, preparation and its reason, tokens, durations."""
    durations = {name: round(value, 3) for name, value in turn.timings_ms.items()}
    scout: dict[str, Any] | None = None
    tokens: dict[str, Any] = {"orchestrator": _tokens(turn.usage)}
    if turn.scout is not None:
        scout = run_provenance(turn.scout, model=scout_model)
        definition_hash = definition_hash or turn.scout.definition_hash
        tokens["scout"] = _tokens(turn.scout.usage)
        durations["scout"] = round(turn.scout.elapsed_ms, 3)
    tokens["total"] = sum(part["total"] for part in tokens.values())
    return {
        "kind": "turn",
        "first_turn": turn.first_turn,
        "preparation": turn.preparation,
        "reason": None if turn.reason is None else turn.reason.value,
        "reason_detail": turn.reason_detail,
        "design": turn.design,
        "prepared_by": turn.prepared_by,
        "deadline_ms": turn.deadline_ms,
        "deadline_missed": turn.deadline_missed,
        "orchestrator": model_provenance(orchestrator_model),
        "orchestrator_error": turn.orchestrator_error,
        "scout": scout,
        "definition_hash": definition_hash,
        "tokens": tokens,
        "durations_ms": durations,
    }


# --------------------------------------------------------------------------- text


def _indent(text: str, prefix: str) -> list[str]:
    return [prefix + line if line else line for line in text.splitlines()]


def _tools_used(trace: list[TraceStep]) -> str:
    """``memory_recall ×2, list_workflows ×1``, sorted by name so it is stable."""
    counts = Counter(step.tool for step in trace if step.kind == "tool")
    refused = sum(1 for step in trace if step.kind == "tool" and step.refused)
    if not counts:
        return "none"
    used = ", ".join(f"{name} ×{count}" for name, count in sorted(counts.items()))
    return used + (f" ({refused} refused)" if refused else "")


def _extra_problems(run: ScoutRun) -> list[str]:
    """The run's problems without its reason (the reason is shown on its own line)."""
    return [problem for problem in run.problems if problem != run.reason]


def _run_plain(run: ScoutRun, prefix: str = "") -> list[str]:
    lines = [f"{prefix}Scout run: {run.status}"]
    if run.reason:
        lines.append(f"{prefix}  reason: {one_line(run.reason)}")
    if run.bundle is not None:
        lines.extend(_indent(run.bundle._repr_mimebundle_()["text/plain"], prefix + "  "))
    else:
        lines.append(f"{prefix}  no context bundle")
    problems = _extra_problems(run)
    if problems:
        lines.append(f"{prefix}  problems:")
        lines.extend(f"{prefix}    - {one_line(problem)}" for problem in problems)
    lines.append(f"{prefix}  trace: {run.model_calls} model calls; tools: {_tools_used(run.trace)}")
    return lines


def _run_markdown(run: ScoutRun) -> list[str]:
    lines = [f"**Scout run:** {md_inline(run.status)}", ""]
    if run.reason:
        lines += [f"**Reason:** {md_inline(run.reason)}", ""]
    if run.bundle is not None:
        lines += [run.bundle._repr_mimebundle_()["text/markdown"], ""]
    else:
        lines += ["*No context bundle.*", ""]
    problems = _extra_problems(run)
    if problems:
        lines += ["**Problems**", ""]
        lines += [f"- {md_inline(problem)}" for problem in problems]
        lines.append("")
    lines.append(
        f"*Trace:* {run.model_calls} model calls; tools: {md_inline(_tools_used(run.trace))}"
    )
    return lines


# --------------------------------------------------------------------------- displays


class _Display:
    """Shared ``_repr_mimebundle_``: text, markdown, the widget view and the provenance."""

    def __init__(self, *, workspace: Workspace | None, provenance: Mapping[str, Any]) -> None:
        self.workspace = workspace
        self.provenance: dict[str, Any] = dict(provenance)

    def text(self) -> str:
        """The stable ``text/plain`` representation."""
        raise NotImplementedError

    def markdown(self) -> str:
        """The escaped ``text/markdown`` representation."""
        raise NotImplementedError

    def _make_widget(self) -> Any:
        raise NotImplementedError

    @cached_property
    def widget(self) -> Any:
        """The interactive view (built once, on first use), or ``None`` when there is none."""
        return self._make_widget()

    def _repr_mimebundle_(
        self, include: Collection[str] | None = None, exclude: Collection[str] | None = None
    ) -> MimeBundle:
        def wanted(mime: str) -> bool:
            return (not include or mime in include) and not (exclude and mime in exclude)

        data: dict[str, Any] = {}
        if wanted("text/plain"):
            data["text/plain"] = self.text()
        if wanted("text/markdown"):
            data["text/markdown"] = self.markdown()
        if wanted(WIDGET_VIEW_MIME) and self.widget is not None:
            view = (self.widget._repr_mimebundle_() or {}).get(WIDGET_VIEW_MIME)
            if view is not None:
                data[WIDGET_VIEW_MIME] = view
        return data, {METADATA_KEY: self.provenance}

    def __repr__(self) -> str:
        return self.text()

    def _workspace_plain(self, prefix: str) -> list[str]:
        """The line naming the workspace searched (none when the display has none)."""
        if self.workspace is None:
            return []
        return [f"{prefix}workspace: {one_line(workspace_name(self.workspace))}"]

    def _workspace_markdown(self) -> list[str]:
        if self.workspace is None:
            return []
        return [f"**Workspace:** {md_inline(workspace_name(self.workspace))}", ""]


class ScoutDisplay(_Display):
    """A scout run shown as the bundle panel, with a stable text and markdown fallback."""

    def __init__(
        self,
        run: ScoutRun,
        *,
        workspace: Workspace | None = None,
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__(workspace=workspace, provenance=provenance or run_provenance(run))
        self.run = run

    def text(self) -> str:
        lines = _run_plain(self.run)
        return "\n".join(lines[:1] + self._workspace_plain("  ") + lines[1:])

    def markdown(self) -> str:
        lines = _run_markdown(self.run)
        return "\n".join(lines[:2] + self._workspace_markdown() + lines[2:])

    def _make_widget(self) -> Any:
        from .widgets import BundlePanel

        return BundlePanel(self.run, workspace=self.workspace)


class TurnDisplay(_Display):
    """A harness turn: on a first turn the bundle panel then the reply, later the reply only;
    ``notice`` is a line said under the reply (that the thread is archived, the first time;
    see :mod:`.archive_notice`)."""

    def __init__(
        self,
        turn: TurnResult,
        *,
        workspace: Workspace | None = None,
        provenance: Mapping[str, Any],
        notice: str | None = None,
    ) -> None:
        super().__init__(workspace=workspace, provenance=provenance)
        self.turn = turn
        self.notice = notice

    def _reply_plain(self) -> list[str]:
        turn = self.turn
        lines = ["Reply:"]
        if turn.reply:
            lines.extend(_indent(turn.reply, "  "))
        else:
            lines.append("  (none)")
        if turn.orchestrator_error:
            lines.append(f"  orchestrator error: {one_line(turn.orchestrator_error)}")
        return lines

    def text(self) -> str:
        turn = self.turn
        notice = [f"note: {one_line(self.notice)}"] if self.notice else []
        if not turn.first_turn:
            return "\n".join(self._reply_plain() + notice)
        lines = [f"Turn (first turn): {turn.preparation}", *self._workspace_plain("  ")]
        if turn.reason is not None:
            lines.append(f"  reason: {turn.reason}")
        if turn.reason_detail:
            lines.append(f"  detail: {one_line(turn.reason_detail)}")
        lines.extend(f"  {one_line(line)}" for line in turn.design_lines())
        if turn.goal:
            lines.append(f"  thread goal: {one_line(turn.goal)}")
        if turn.scout is not None:
            lines.extend(_run_plain(turn.scout, prefix="  "))
        return "\n".join(lines + self._reply_plain() + notice)

    def markdown(self) -> str:
        turn = self.turn
        lines: list[str] = []
        if turn.first_turn:
            lines += [f"**Turn (first turn):** {md_inline(turn.preparation)}", ""]
            lines += self._workspace_markdown()
            if turn.reason is not None:
                lines += [f"**Reason:** {md_inline(turn.reason)}", ""]
            if turn.reason_detail:
                lines += [f"**Detail:** {md_inline(turn.reason_detail)}", ""]
            if turn.design_lines():
                lines += [f"**Pre-flight:** {md_inline('; '.join(turn.design_lines()))}", ""]
            if turn.goal:
                lines += [f"**Thread goal:** {md_inline(turn.goal)}", ""]
            if turn.scout is not None:
                lines += [*_run_markdown(turn.scout), ""]
        lines += ["**Reply**", "", md_block(turn.reply) or "*none*"]
        if turn.orchestrator_error:
            lines += ["", f"**Orchestrator error:** {md_inline(turn.orchestrator_error)}"]
        if self.notice:
            lines += ["", f"*{md_inline(self.notice)}*"]
        return "\n".join(lines)

    def _make_widget(self) -> Any:
        if not self.turn.first_turn:
            return None
        import ipywidgets as widgets

        from .widgets import BundlePanel
        from .widgets.html import note

        panel = BundlePanel(self.turn.scout, turn=self.turn, workspace=self.workspace)
        children = [panel, widgets.HTML(value=self._reply_html())]
        if self.notice:
            children.append(widgets.HTML(value=note(self.notice, "info")))
        return widgets.VBox(children)

    def _reply_html(self) -> str:
        turn = self.turn
        body = html.escape(turn.reply) if turn.reply else "<em>no reply</em>"
        error = (
            f'<div style="color:#b71c1c;">orchestrator error: '
            f"{html.escape(turn.orchestrator_error)}</div>"
            if turn.orchestrator_error
            else ""
        )
        return (
            '<div class="scl-reply" style="margin-top:6px;">'
            '<div style="font-weight:700;">Reply</div>'
            f'<div style="white-space:pre-wrap;">{body}</div>{error}</div>'
        )
