"""Display objects: stable text, escaped markdown, the widget view and the provenance."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pytest

from supercontext_lab.harness import Thread, TurnResult
from supercontext_lab.lab.display import (
    METADATA_KEY,
    ScoutDisplay,
    TurnDisplay,
    model_provenance,
    public_base_url,
    run_provenance,
    turn_provenance,
)
from supercontext_lab.lab.shown import WIDGET_VIEW_MIME
from supercontext_lab.lab.widgets import BundlePanel
from supercontext_lab.models.offline import OfflineScoutModel
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.scout import ScoutRun
from supercontext_lab.testing import OpenAITestServer, ScriptedModel, envelope

GRANT = "Help me finish the sensitivity analysis section for the grant renewal"
SCRIPT = "<script>alert('x')</script>"
CANARY = "sk-canary-display-93c1e7"
UNSTABLE = [
    re.compile(r"0x[0-9a-fA-F]{4,}"),  # memory addresses
    re.compile(r"\d+(\.\d+)?\s?ms\b"),  # timings
    re.compile(r"[0-9a-f]{12}"),  # thread ids and definition hashes
]


def _scout_display(message: str, workspace: Any = None) -> ScoutDisplay:
    thread = Thread(workspace)
    run = thread.run_scout(message)
    return ScoutDisplay(
        run,
        workspace=thread.workspace,
        provenance=run_provenance(run, model=thread.scout_model),
    )


def _turn_displays(*messages: str, **thread_options: Any) -> list[TurnDisplay]:
    thread = Thread(**thread_options)
    shown = []
    for message in messages:
        turn = thread.send(message)
        provenance = turn_provenance(
            turn, orchestrator_model=thread.orchestrator_model, scout_model=None
        )
        shown.append(TurnDisplay(turn, workspace=thread.workspace, provenance=provenance))
    return shown


def _plain(display: Any) -> str:
    data, _ = display._repr_mimebundle_()
    text: str = data["text/plain"]
    return text


def _assert_stable(text: str, *forbidden: str) -> None:
    for pattern in UNSTABLE:
        assert pattern.search(text) is None, pattern.pattern
    for value in forbidden:
        assert value not in text


# --------------------------------------------------------------------------- stable text


@pytest.mark.parametrize(
    "message",
    [
        GRANT,
        "What did we decide about the dispersal kernel?",
        "hi",
    ],
)
def test_scout_text_is_identical_across_runs_and_has_no_ids_or_timings(message: str) -> None:
    first, second = _scout_display(message), _scout_display(message)
    assert _plain(first) == _plain(second)
    _assert_stable(_plain(first), str(first.workspace.root), first.run.definition_hash)
    assert _plain(first).startswith("Scout run: completed\n  workspace: demo-workspace\n")
    assert repr(first) == _plain(first)


def test_turn_texts_are_identical_across_threads_and_carry_the_reply() -> None:
    messages = (GRANT, "And what about the budget?")
    # Neither thread archives: the second would recall the first's turns (SPEC §15).
    one = _turn_displays(*messages, archive=False)
    two = _turn_displays(*messages, archive=False)
    for left, right in zip(one, two, strict=True):
        assert _plain(left) == _plain(right)
        _assert_stable(_plain(left), str(left.workspace.root) if left.workspace else "")
    first, later = (_plain(display) for display in one)
    assert first.startswith("Turn (first turn): prepared\n  workspace: demo-workspace\n")
    assert "proposed_goal: Finish the sensitivity analysis section" in first
    assert first.endswith("\n".join("  " + line for line in one[0].turn.reply.splitlines()))
    assert later.startswith("Reply:\n")
    assert "ContextBundle" not in later


def test_a_run_without_an_envelope_shows_its_problems() -> None:
    model = ScriptedModel(["I looked around but found nothing worth saying."])
    thread = Thread(scout_model=model, orchestrator_model=ScriptedModel(["Cold answer."]))
    turn = thread.send(GRANT)
    assert turn.preparation == "failed"
    display = TurnDisplay(
        turn,
        workspace=thread.workspace,
        provenance=turn_provenance(turn, orchestrator_model=thread.orchestrator_model),
    )
    text = _plain(display)
    assert text.startswith(
        f"Turn (first turn): failed\n  workspace: demo-workspace\n  reason: {turn.reason}"
    )
    assert "  Scout run: completed\n    no context bundle\n    problems:\n" in text
    assert text.endswith("Reply:\n  Cold answer.")
    assert display._repr_mimebundle_()[1][METADATA_KEY]["reason"] == turn.reason


def test_an_orchestrator_error_is_shown() -> None:
    thread = Thread(super_context_enabled=False, orchestrator_model=ScriptedModel([]))
    turn = thread.send("hello there, how are things")
    display = TurnDisplay(
        turn,
        workspace=thread.workspace,
        provenance=turn_provenance(turn, orchestrator_model=thread.orchestrator_model),
    )
    assert turn.orchestrator_error
    assert "Reply:\n  (none)\n  orchestrator error: " in _plain(display)
    assert "**Orchestrator error:**" in display.markdown()


# --------------------------------------------------------------------------- escaping


def _scripted_run(summary: str, goal: str) -> tuple[ScoutRun, Thread]:
    text = envelope(
        proposed_goal=goal,
        summary=summary,
        recommended_tool_calls=[
            {"tool": "web_search", "args": {"q": SCRIPT}, "why": "<b>bold</b>"}
        ],
        recommended_skills=[("lit-review-digest", True, "[link](javascript:alert(1))")],
    )
    thread = Thread(scout_model=ScriptedModel([text]))
    return thread.run_scout("Help me with the plan"), thread


def test_markdown_escapes_script_tags_links_and_emphasis() -> None:
    run, thread = _scripted_run(
        f"{SCRIPT} and *stars* (memory)", "Ship <img src=x onerror=alert(1)>"
    )
    markdown = ScoutDisplay(run, workspace=thread.workspace).markdown()
    assert "<script" not in markdown and "<img" not in markdown and "<b>" not in markdown
    assert "&lt;script&gt;" in markdown
    assert "](javascript" not in markdown
    assert "\\*stars\\*" in markdown
    assert SCRIPT in _plain(ScoutDisplay(run, workspace=thread.workspace))


def test_a_script_from_memory_stays_text(tmp_path: Path) -> None:
    note = tmp_path / "memory" / "global" / "alert.md"
    note.parent.mkdir(parents=True)
    note.write_text(f"The grant renewal alert: {SCRIPT} must stay text.\n", "utf-8")
    display = _scout_display("Help me finish the grant renewal alert", tmp_path)
    assert display.run.bundle is not None and SCRIPT in display.run.bundle.summary
    assert "<script" not in display.markdown()
    assert "&lt;script&gt;" in display.markdown()


def test_the_reply_is_escaped_in_the_widget_and_the_markdown() -> None:
    reply = f"Here you go: {SCRIPT}"
    displays = _turn_displays(GRANT, orchestrator_model=ScriptedModel([reply]))
    widget = displays[0].widget
    assert isinstance(widget, widgets.VBox)
    panel, reply_html = widget.children
    assert isinstance(panel, BundlePanel)
    assert "<script" not in reply_html.value
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;" in reply_html.value
    assert "<script" not in displays[0].markdown()


# --------------------------------------------------------------------------- mime bundle


@pytest.mark.parametrize(
    ("include", "exclude", "keys"),
    [
        (None, None, {"text/plain", "text/markdown", WIDGET_VIEW_MIME}),
        ({"text/plain"}, None, {"text/plain"}),
        (None, {WIDGET_VIEW_MIME}, {"text/plain", "text/markdown"}),
        ({"text/markdown", WIDGET_VIEW_MIME}, {"text/markdown"}, {WIDGET_VIEW_MIME}),
    ],
)
def test_include_and_exclude(
    include: set[str] | None, exclude: set[str] | None, keys: set[str]
) -> None:
    data, metadata = _scout_display(GRANT)._repr_mimebundle_(include=include, exclude=exclude)
    assert set(data) == keys
    assert set(metadata) == {METADATA_KEY}


def test_the_widget_view_is_the_panels_own_and_built_once() -> None:
    display = _scout_display(GRANT)
    first, _ = display._repr_mimebundle_()
    second, _ = display._repr_mimebundle_()
    assert isinstance(display.widget, BundlePanel)
    assert display.widget.run is display.run
    assert first[WIDGET_VIEW_MIME] == display.widget._repr_mimebundle_()[WIDGET_VIEW_MIME]
    assert first[WIDGET_VIEW_MIME]["model_id"] == second[WIDGET_VIEW_MIME]["model_id"]


def test_only_a_first_turn_has_a_widget() -> None:
    first, later = _turn_displays(GRANT, "Thanks, and the budget?")
    assert WIDGET_VIEW_MIME in first._repr_mimebundle_()[0]
    assert later.widget is None
    assert WIDGET_VIEW_MIME not in later._repr_mimebundle_()[0]


# --------------------------------------------------------------------------- provenance


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://127.0.0.1:11434/v1", "http://127.0.0.1:11434/v1"),
        ("https://user:secret@api.example.com/v1", "https://api.example.com/v1"),
        ("https://api.example.com/v1?api_key=secret#frag", "https://api.example.com/v1"),
        ("http://[::1]:8080/v1", "http://[::1]:8080/v1"),
        ("http://host:99999/v1", None),
        ("", None),
        (None, None),
    ],
)
def test_public_base_url_drops_credentials(url: str | None, shown: str | None) -> None:
    assert public_base_url(url) == shown


def test_model_provenance_of_an_openai_model_has_no_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCL_DISPLAY_KEY", CANARY)
    model = OpenAICompatibleModel(
        base_url=f"http://me:{CANARY}@127.0.0.1:9/v1", model="qwen", api_key_env="SCL_DISPLAY_KEY"
    )
    try:
        assert model_provenance(model) == {
            "route": "openai",
            "model": "openai:qwen",
            "base_url": "http://127.0.0.1:9/v1",
            "stream": False,
            "native_tool_calling": True,
        }
    finally:
        model.close()


def test_provenance_of_a_real_run_never_contains_the_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SCL_DISPLAY_KEY", CANARY)
    with OpenAITestServer(model=OfflineScoutModel()) as server:
        model = OpenAICompatibleModel(
            base_url=server.base_url, model="served", api_key_env="SCL_DISPLAY_KEY"
        )
        thread = Thread(scout_model=model, orchestrator_model=ScriptedModel(["Done."]))
        turn: TurnResult = thread.send(GRANT)
        sent = [request.headers.get("Authorization") for request in server.requests]
        model.close()
    assert sent and all(header == f"Bearer {CANARY}" for header in sent)
    provenance = turn_provenance(
        turn,
        orchestrator_model=thread.orchestrator_model,
        scout_model=model,
        definition_hash=thread.definition.definition_hash(),
    )
    display = TurnDisplay(turn, workspace=thread.workspace, provenance=provenance)
    data, metadata = display._repr_mimebundle_()
    everything = json.dumps([data, metadata])
    assert CANARY not in everything
    recorded = metadata[METADATA_KEY]
    assert recorded["scout"]["scout"] == {
        "route": "openai",
        "model": "openai:served",
        "base_url": server.base_url,
        "stream": False,
        "native_tool_calling": True,
    }
    assert recorded["orchestrator"] == {"route": "custom", "model": "scripted", "base_url": None}
    assert recorded["definition_hash"] == thread.definition.definition_hash()
    assert recorded["preparation"] == "prepared"
    assert recorded["tokens"]["total"] == (
        recorded["tokens"]["orchestrator"]["total"] + recorded["tokens"]["scout"]["total"]
    )
    assert set(recorded["durations_ms"]) == {
        "preparation_ms",
        "orchestrator_ms",
        "total_ms",
        "scout",
    }
