"""The form half of the agent editor: one control per ``agent.toml`` field and tool.

The form only shows a definition and reports changes; the editor applies a change to the
TOML text (the single source of truth) and shows the result back here.
"""

from __future__ import annotations

from typing import Any, get_args

import ipywidgets as widgets

from ...agents.definition import AgentDefinition
from ...agents.known_tools import READ_ONLY_TOOLS

__all__ = ["OMIT_FIELDS", "AgentForm"]

OMIT_FIELDS = (
    "omit_identity",
    "omit_memory_context",
    "omit_safety_preamble",
    "omit_profile",
    "omit_memory_md",
)
"""The five ``omit_*`` switches, in ``agent.toml`` order."""

_STYLE = {"description_width": "150px"}
_WIDE = widgets.Layout(width="340px")


def _options(field: str) -> list[str]:
    """The allowed values of a ``Literal`` field of :class:`AgentDefinition`."""
    return [str(value) for value in get_args(AgentDefinition.model_fields[field].annotation)]


class AgentForm(widgets.VBox):  # type: ignore[misc]
    """Controls for the scalar fields, the ``omit_*`` switches and the read-only tools."""

    def __init__(self) -> None:
        self.temperature = widgets.FloatSlider(
            description="temperature", min=0.0, max=2.0, step=0.05, readout_format=".2f",
            continuous_update=False, style=_STYLE, layout=_WIDE,
        )  # fmt: skip
        self.max_iterations = widgets.BoundedIntText(
            description="max_iterations", min=1, max=10**9, style=_STYLE, layout=_WIDE
        )
        self.max_result_chars = widgets.BoundedIntText(
            description="max_result_chars", min=500, max=10_000_000, style=_STYLE, layout=_WIDE
        )
        self.iteration_policy = widgets.Dropdown(
            description="iteration_policy", options=_options("iteration_policy"),
            style=_STYLE, layout=_WIDE,
        )  # fmt: skip
        self.prefetch = widgets.Dropdown(
            description="prefetch", options=_options("prefetch"), style=_STYLE, layout=_WIDE
        )
        self.grounding = widgets.Dropdown(
            description="grounding", options=_options("grounding"), style=_STYLE, layout=_WIDE
        )
        self.sandbox_mode = widgets.Dropdown(
            description="sandbox_mode", options=_options("sandbox_mode"), style=_STYLE, layout=_WIDE
        )
        self.agent_tier = widgets.Dropdown(
            description="agent_tier", options=_options("agent_tier"), style=_STYLE, layout=_WIDE
        )
        self.omit_boxes = {
            name: widgets.Checkbox(description=name, indent=False) for name in OMIT_FIELDS
        }
        self.model_hint = widgets.Text(
            description="model.hint", continuous_update=False, style=_STYLE, layout=_WIDE
        )
        self.tool_boxes = {
            tool: widgets.Checkbox(description=tool, indent=False)
            for tool in sorted(READ_ONLY_TOOLS)
        }
        super().__init__(
            [
                self.temperature,
                self.max_iterations,
                self.max_result_chars,
                self.iteration_policy,
                self.prefetch,
                self.grounding,
                self.sandbox_mode,
                self.agent_tier,
                self.model_hint,
                widgets.HTML("<b>Prompt parts to leave out</b>"),
                *self.omit_boxes.values(),
                widgets.HTML("<b>Tools</b> (read-only, <code>[tools] named</code>)"),
                *self.tool_boxes.values(),
            ],
            layout=widgets.Layout(min_width="360px"),
        )

    def fields(self) -> dict[str, Any]:
        """The control of each ``agent.toml`` key it edits (tools excepted)."""
        return {
            "temperature": self.temperature,
            "max_iterations": self.max_iterations,
            "max_result_chars": self.max_result_chars,
            "iteration_policy": self.iteration_policy,
            "prefetch": self.prefetch,
            "grounding": self.grounding,
            "sandbox_mode": self.sandbox_mode,
            "agent_tier": self.agent_tier,
            "model.hint": self.model_hint,
            **self.omit_boxes,
        }

    def set_disabled(self, disabled: bool) -> None:
        """Disable (while the text is invalid) or enable every control."""
        for control in [*self.fields().values(), *self.tool_boxes.values()]:
            control.disabled = disabled

    def show(self, definition: AgentDefinition) -> None:
        """Set every control to what ``definition`` says."""
        self.temperature.value = definition.temperature
        self.max_iterations.value = definition.max_iterations
        self.max_result_chars.value = definition.max_result_chars
        self.iteration_policy.value = definition.iteration_policy
        self.prefetch.value = definition.prefetch
        self.grounding.value = definition.grounding
        self.sandbox_mode.value = definition.sandbox_mode
        self.agent_tier.value = definition.agent_tier
        self.model_hint.value = definition.model.hint
        for name, box in self.omit_boxes.items():
            box.value = bool(getattr(definition, name))
        for tool, box in self.tool_boxes.items():
            box.value = tool in definition.tools.named
