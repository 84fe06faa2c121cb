"""The bundle panel shows what the orchestrator reads: bidirectional controls and
zero-width characters are drawn visibly in every field.

U+202E (right-to-left override) makes ``1234-5678`` display as ``8765-4321``; a zero-width
space makes two names look alike. The command line shows them as escapes; the panel's
HTML kept them as they were, so a reviewer read one thing and the orchestrator another.
Every panel field (summary, chips, a note's text, the raw envelope, tools, the trace)
must hold none of them raw, and show each as a visible mark.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from supercontext_lab.harness import Thread
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, build_workspace, tool_call_message

from .support import MESSAGE, scripted_orchestrator

pytest.importorskip("ipywidgets")

HIDDEN = {
    "right-to-left-override": "\u202e",
    "pop-directional-formatting": "\u202c",
    "left-to-right-isolate": "\u2066",
    "zero-width-space": "\u200b",
    "zero-width-joiner-in-latin": "\u200d",
    "byte-order-mark": "\ufeff",
    "right-to-left-mark": "\u200f",
}
ACCOUNT = "Payments go to account \u202e8765-4321\u202c for the grant renewal budget."


def _values(widget: Any) -> list[str]:
    import ipywidgets as widgets

    values = [widget.value] if isinstance(widget, widgets.HTML | widgets.Textarea) else []
    for child in getattr(widget, "children", ()):
        values.extend(_values(child))
    return values


@pytest.mark.parametrize("name", list(HIDDEN))
def test_no_panel_field_holds_a_hidden_character(tmp_path: Path, name: str) -> None:
    """A bidi control or zero-width character in a note, a citation, a tool and the envelope"""
    from supercontext_lab.lab.widgets import BundlePanel

    mark = HIDDEN[name]
    note = f"The grant renewal budget{mark} is 40k. {ACCOUNT}"
    root = build_workspace(tmp_path / "ws", {"memory/project/budget.md": note + "\n"})
    scout = ScriptedModel(
        [
            tool_call_message(("memory_recall", {"namespace": "project", "query": "budget"})),
            "[context_bundle]\nhas_enough_context: true\nproposed_goal: Check the grant"
            f" renewal{mark} budget\nsummary:\n- {note} (memory: project/budget)\n"
            f"- Another (memory: project/bud{mark}get)\nrecommended_tool_calls:\n"
            f"  - tool: run{mark}_workflow\n    args: {{}}\n    why: pay{mark}\n"
            "recommended_skills: []\n[/context_bundle]",
        ]
    )
    thread = Thread(
        Workspace(root),
        scout_model=scout,
        orchestrator_model=scripted_orchestrator(),
        super_context_enabled=True,
    )
    turn = thread.send(MESSAGE)
    assert turn.scout is not None and mark in (turn.scout.output or "")
    panel = BundlePanel(turn=turn, workspace=thread.workspace)
    values = _values(panel)
    holding = [value for value in values if any(ch in value for ch in HIDDEN.values())]
    assert holding == []
    code = f"{ord(mark):04X}"
    for field in (panel.summary_html, panel.envelope_text, panel.goal_html, panel.trace.html):
        assert code in field.value.upper(), field
