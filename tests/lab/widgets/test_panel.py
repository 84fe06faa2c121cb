"""The bundle panel, the trace timeline and the HTML helpers, without a browser."""

from __future__ import annotations

import html
import json
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import ipywidgets as widgets
import pytest
from hypothesis import given
from hypothesis import strategies as st

import supercontext_lab
from supercontext_lab.agents import default_agent_toml, edit_agent_toml, load_agent_definition
from supercontext_lab.bundle.records import Source
from supercontext_lab.gate import ColdStartReason
from supercontext_lab.harness import Thread
from supercontext_lab.lab.widgets import BundlePanel, TraceTimeline
from supercontext_lab.lab.widgets.html import (
    NOT_READ,
    badge,
    escape,
    render_summary_html,
    strip_bullet,
)
from supercontext_lab.lab.widgets.panel import TAB_TITLES, describe_cold_start
from supercontext_lab.models.openai import OpenAICompatibleModel
from supercontext_lab.routes import parse_model_id
from supercontext_lab.scout import ScoutRun, run_scout
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import ScriptedModel, envelope, tool_call_message
from supercontext_lab.testing.server import OpenAITestServer, ScriptedResponse

BUDGET = "Help me prepare the grant renewal budget"
SCRIPT = "<script>alert(1)</script>"
ESCAPED_SCRIPT = "&lt;script&gt;alert(1)&lt;/script&gt;"


def html_values(widget: Any) -> list[str]:
    """Every HTML widget value in a widget tree."""
    values = [widget.value] if isinstance(widget, widgets.HTML) else []
    for child in getattr(widget, "children", ()):
        values.extend(html_values(child))
    return values


def scripted_run(
    workspace: Workspace, *steps: Any, message: str = BUDGET, grounding: str = "drop"
) -> ScoutRun:
    definition = load_agent_definition(
        edit_agent_toml(default_agent_toml(), {"grounding": grounding})
    )
    return run_scout(
        message, workspace=workspace, model=ScriptedModel(list(steps)), definition=definition
    )


# ------------------------------------------------------------------------------ demo run


def test_panel_from_an_offline_demo_run() -> None:
    thread = supercontext_lab.Thread(super_context_enabled=True)
    run = thread.run_scout(BUDGET)
    panel = BundlePanel(run, workspace=thread.workspace, title="Demo")

    assert run.bundle is not None
    assert "Prepare the grant renewal budget" in panel.goal_html.value
    assert "enough" in panel.badge_html.value
    assert "scl-chip-memory" in panel.summary_html.value
    assert "GR-7731" in panel.summary_html.value
    assert "<code>run_workflow</code>" in panel.tools_html.value
    assert "not in catalogue" not in panel.tools_html.value
    # JSON arguments are pretty-printed, one key a line.
    assert escape('{\n  "workflow": "grant-budget-check"\n}') in panel.tools_html.value
    assert "<code>grant-budget-check</code>" in panel.skills_html.value
    assert "installed here" in panel.skills_html.value
    assert "unknown skill" not in panel.skills_html.value
    assert escape("[context_bundle]") in panel.envelope_text.value
    assert "memory_recall" in panel.trace.html.value
    assert panel.tabs.titles == TAB_TITLES
    assert panel.tabs.selected_index == 0
    assert panel.reason_html.layout.display == "none"
    assert panel.flags == []
    assert "No problems." in panel.problems_html.value
    assert "Demo" in panel.title_html.value
    assert run.definition_hash in panel.meta_html.value
    # The header leads with the outcome, then the run's status, above everything else.
    outcome = panel.outcome_html.value
    assert panel.children[:2] == (panel.title_html, panel.outcome_html)
    assert (
        outcome.index("bundle accepted")
        < outcome.index("grounded ")
        < outcome.index("scout completed")
    )
    assert "status" not in panel.meta_html.value
    # Then the workspace it searched: the folder's name, its path beside it.
    assert panel.children[2] is panel.workspace_html
    assert "searched workspace <b" in panel.workspace_html.value
    assert ">demo-workspace</b>" in panel.workspace_html.value


def test_the_workspace_line_names_the_folder_and_escapes_its_path(tmp_path: Path) -> None:
    folder = tmp_path / 'kelp <b>"ws"'
    folder.mkdir()
    thread = Thread(Workspace(folder), super_context_enabled=False)
    run = thread.run_scout(BUDGET)

    searched = BundlePanel(run, workspace=thread.workspace).workspace_html.value
    skipped = BundlePanel(turn=thread.send(BUDGET), workspace=thread.workspace)

    assert "searched workspace" in searched
    assert escape('kelp <b>"ws"') in searched
    assert '<b>"ws"' not in searched
    assert "workspace (not searched)" in skipped.workspace_html.value
    assert BundlePanel(run).workspace_html.value == ""


def test_update_replaces_what_the_panel_shows() -> None:
    thread = supercontext_lab.Thread(super_context_enabled=True)
    panel = BundlePanel(workspace=thread.workspace)
    assert "nothing has run yet" in panel.outcome_html.value
    assert "Nothing has run yet." in panel.problems_html.value
    assert panel.tabs.selected_index == TAB_TITLES.index("Problems")

    panel.update(thread.run_scout(BUDGET))

    assert panel.reason_html.value == ""
    assert "bundle accepted" in panel.outcome_html.value
    assert "Prepare the grant renewal budget" in panel.goal_html.value
    assert panel.tabs.selected_index == 0


# ------------------------------------------------------------------------------ catalogue checks


@pytest.mark.parametrize(
    ("tool", "expected", "flagged"),
    [
        ("run_workflow", "in catalogue", False),
        ("delegate_gmail", "in catalogue", False),
        ("launch_rockets", "not in catalogue", True),
        ("memory_recall_v2", "not in catalogue", True),
    ],
)
def test_tool_not_in_the_catalogue_is_flagged(tool: str, expected: str, flagged: bool) -> None:
    workspace = supercontext_lab.open_workspace(None)
    bundle = envelope(
        proposed_goal="Check the budget", recommended_tool_calls=[(tool, {"x": 1}, "because")]
    )
    panel = BundlePanel(scripted_run(workspace, bundle, grounding="off"), workspace=workspace)

    assert expected in panel.tools_html.value
    assert ("not in catalogue" in panel.tools_html.value) is flagged
    flag = f"recommended tool '{tool}' is not in the orchestrator catalogue"
    assert (flag in panel.flags) is flagged
    assert (escape(flag) in panel.problems_html.value) is flagged


@pytest.mark.parametrize(
    ("skill", "installed", "expected", "flagged"),
    [
        ("grant-budget-check", True, "installed here", False),
        ("sensitivity-analysis-planner", False, "in registry", False),
        ("made-up-skill", False, "unknown skill", True),
        ("made-up-skill", True, "unknown skill", True),
    ],
)
def test_unknown_skill_is_flagged(
    skill: str, installed: bool, expected: str, flagged: bool
) -> None:
    workspace = supercontext_lab.open_workspace(None)
    bundle = envelope(
        proposed_goal="Check the budget", recommended_skills=[(skill, installed, "fits")]
    )
    panel = BundlePanel(scripted_run(workspace, bundle, grounding="off"), workspace=workspace)

    assert expected in panel.skills_html.value
    assert ("unknown skill" in panel.skills_html.value) is flagged
    assert any("neither installed nor in the registry" in f for f in panel.flags) is flagged


def test_wrong_installed_flag_is_marked() -> None:
    workspace = supercontext_lab.open_workspace(None)
    bundle = envelope(recommended_skills=[("sensitivity-analysis-planner", True, "fits")])
    panel = BundlePanel(scripted_run(workspace, bundle, grounding="off"), workspace=workspace)
    assert "installed flag is wrong" in panel.skills_html.value
    assert panel.flags == [
        "recommended skill 'sensitivity-analysis-planner' says installed: true, "
        "the workspace says false"
    ]


def test_without_a_workspace_nothing_is_checked() -> None:
    workspace = supercontext_lab.open_workspace(None)
    bundle = envelope(
        recommended_tool_calls=[("launch_rockets", "{}", "x")],
        recommended_skills=[("nope", False, "y")],
    )
    panel = BundlePanel(scripted_run(workspace, bundle, grounding="off"))
    assert "not checked" in panel.tools_html.value
    assert "not checked" in panel.skills_html.value
    assert panel.flags == []


def test_what_the_check_dropped_is_struck_through_with_why() -> None:
    workspace = supercontext_lab.open_workspace(None)
    bundle = envelope(
        summary="- Generic prose about budgets (memory)\nMissing: when the budget is due.",
        recommended_tool_calls=[("launch_rockets", "{}", "x"), ("web_search", "{}", "y")],
        recommended_skills=[("nope", False, "y")],
    )
    panel = BundlePanel(scripted_run(workspace, bundle))
    assert [item.item for item in panel.dropped] == [
        "launch_rockets",
        "nope",
        "Generic prose about budgets (memory)",
        "true",
    ]
    assert '<del class="scl-dropped"><code>launch_rockets</code></del>' in panel.tools_html.value
    assert "not in the orchestrator&#x27;s tool catalogue" in panel.tools_html.value
    assert '<del class="scl-dropped"><code>nope</code></del>' in panel.skills_html.value
    assert '<del class="scl-dropped">Generic prose about budgets (memory)</del>' in (
        panel.summary_html.value
    )
    assert "grounded 0 of 1" in panel.outcome_html.value
    # What the check let through was checked by the run, even without a workspace here.
    assert "in catalogue" in panel.tools_html.value


class _Chips(HTMLParser):
    """Each chip of a summary: its label, its hover text and the text it opens."""

    def __init__(self) -> None:
        super().__init__()
        self.chips: list[dict[str, str]] = []
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        found = dict(attrs)
        if tag == "span" and "scl-chip" in (found.get("class") or "").split():
            self.chips.append({"label": "", "hover": found.get("title") or "", "opens": ""})
            self._in = "label"
        elif tag == "pre" and self.chips:
            self._in = "opens"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("span", "pre"):
            self._in = None

    def handle_data(self, data: str) -> None:
        if self._in is not None:
            self.chips[-1][self._in] += data


class _Shown(HTMLParser):
    """The text a reader sees before opening anything: everything outside ``<pre>``."""

    def __init__(self) -> None:
        super().__init__()
        self.text: list[str] = []
        self._pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._pre += tag == "pre"

    def handle_endtag(self, tag: str) -> None:
        self._pre -= tag == "pre"

    def handle_data(self, data: str) -> None:
        if not self._pre:
            self.text.append(data)


def _shown_text(html: str) -> str:
    parser = _Shown()
    parser.feed(html)
    return "".join(parser.text)


def _chips(html: str) -> dict[str, dict[str, str]]:
    parser = _Chips()
    parser.feed(html)
    return {chip["label"]: chip for chip in parser.chips}


def test_a_cited_note_chip_shows_once_with_its_note_on_hover_and_click() -> None:
    thread = supercontext_lab.Thread(super_context_enabled=True)
    run = thread.run_scout("What did we decide about the dispersal kernel?")
    panel = BundlePanel(run, workspace=thread.workspace)
    html = panel.summary_html.value
    assert '<details class="scl-cited"' in html
    chip = _chips(html)["memory: global/decision-dispersal-kernel"]
    note = run.sources.note(Source("memory", "global/decision-dispersal-kernel"))
    assert chip["hover"] == note.text
    assert chip["opens"] == note.text
    # The fact reads once: the note's first line is not printed after the chip.
    assert "scl-note-title" not in html
    shown = _shown_text(html)
    assert shown.count(note.title[:40]) == run.bundle.summary.count(note.title[:40]) == 1
    assert "grounded" in panel.outcome_html.value


def test_plain_memory_profile_and_integrations_chips_open_what_they_cite() -> None:
    thread = supercontext_lab.Thread(super_context_enabled=True)
    # A request whose bundle cites MEMORY.md plainly, the profile (a facet) and the
    # connected integrations, beside named notes.
    run = thread.run_scout("Email Priya where the references are kept, in my usual writing style")
    chips = _chips(BundlePanel(run, workspace=thread.workspace).summary_html.value)

    memory = chips["memory: MEMORY.md or a note"]
    assert memory["opens"].startswith("A plain (memory) cites MEMORY.md or any memory note")
    assert "MEMORY.md\n# MEMORY.md: curated long-term memory" in memory["opens"]
    assert "- global/person-priya-natarajan: " in memory["opens"]
    assert memory["hover"] == memory["opens"][: len(memory["hover"]) - 2] + " …"

    profile = chips["profile"]
    assert "PROFILE.md\n# Profile: Dr. Maya Lindqvist" in profile["opens"]
    assert "\n\nflavour/communication.md\n" in profile["opens"]

    integrations = chips["integrations"]
    assert "gmail connected University mailbox" in integrations["opens"]
    assert integrations["hover"] == integrations["opens"][: len(integrations["hover"])] or (
        integrations["hover"].endswith(" …")
    )


def test_a_chip_whose_source_the_run_did_not_read_says_so(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    bundle = envelope(summary="- Budget is due (memory: global/never-read)\n- Plain (profile)")
    panel = BundlePanel(scripted_run(workspace, bundle, grounding="off"))
    chips = _chips(panel.summary_html.value)
    assert chips["memory: global/never-read"]["hover"] == NOT_READ
    assert chips["memory: global/never-read"]["opens"] == ""
    # An empty workspace has no PROFILE.md: a plain (profile) has nothing to open either.
    assert chips["profile"]["hover"] == NOT_READ


def test_a_hostile_note_stays_text_in_the_chip_hover_and_opened_text(tmp_path: Path) -> None:
    (tmp_path / "memory" / "global").mkdir(parents=True)
    (tmp_path / "memory" / "global" / "evil.md").write_text(
        f'The grant budget " onmouseover="x {SCRIPT} must be checked by Priya.\n', "utf-8"
    )
    thread = Thread(Workspace(tmp_path), super_context_enabled=True)
    run = thread.run_scout("Help me check the grant budget")
    html = BundlePanel(run, workspace=thread.workspace).summary_html.value
    assert "<script" not in html
    assert '" onmouseover="' not in html
    chip = _chips(html)["memory: global/evil"]
    assert SCRIPT in chip["hover"] and SCRIPT in chip["opens"]


# ------------------------------------------------------------------------------ escaping


def _hostile_workspace(root: Path) -> Workspace:
    (root / "memory" / "global").mkdir(parents=True)
    (root / "memory" / "global" / "evil.md").write_text(
        f"---\ncategory: note\n---\nThe grant budget {SCRIPT} must be checked by Priya.\n",
        encoding="utf-8",
    )
    return Workspace(root)


def test_script_from_memory_stays_text_in_every_html_value(tmp_path: Path) -> None:
    thread = Thread(_hostile_workspace(tmp_path / "ws"), super_context_enabled=True)
    turn = thread.send("Help me check the grant budget")
    assert turn.prepared
    assert SCRIPT in turn.bundle.summary  # type: ignore[union-attr]

    panel = BundlePanel(turn=turn, workspace=thread.workspace)

    values = html_values(panel)
    assert all(SCRIPT not in value and "<script" not in value for value in values)
    assert ESCAPED_SCRIPT in panel.summary_html.value
    assert ESCAPED_SCRIPT in panel.envelope_text.value
    assert ESCAPED_SCRIPT in panel.trace.html.value  # the memory_recall result preview


def test_script_from_model_output_stays_text_in_every_html_value(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path)
    hostile = envelope(
        has_enough_context=False,
        proposed_goal=f"Goal {SCRIPT}",
        summary=f"Fact {SCRIPT} (memory) (web: {SCRIPT}) (transcript: {SCRIPT})",
        recommended_tool_calls=[(f"tool{SCRIPT}", f"args {SCRIPT}", f"why {SCRIPT}")],
        recommended_skills=[(f"skill{SCRIPT}", True, f"why {SCRIPT}")],
    )
    run = scripted_run(
        workspace,
        tool_call_message((f"x{SCRIPT}", {"q": SCRIPT}), content=SCRIPT),
        hostile,
        grounding="mark",
    )
    panel = BundlePanel(run, workspace=workspace, title=f"title {SCRIPT}")

    values = html_values(panel)
    assert all("<script" not in value for value in values)
    for widget in (
        panel.title_html,
        panel.goal_html,
        panel.summary_html,
        panel.tools_html,
        panel.skills_html,
        panel.envelope_text,
        panel.trace.html,
        panel.problems_html,  # the flags name the hostile tool and skill
    ):
        assert ESCAPED_SCRIPT in widget.value


def test_failed_run_shows_the_raw_output_escaped(tmp_path: Path) -> None:
    run = scripted_run(Workspace(tmp_path), f"No bundle today {SCRIPT}")
    panel = BundlePanel(run)
    assert "no valid envelope" in panel.reason_html.value
    assert "Raw scout output" in panel.problems_html.value
    assert ESCAPED_SCRIPT in panel.problems_html.value
    assert all("<script" not in value for value in html_values(panel))


# ------------------------------------------------------------------------------ cold starts


@pytest.mark.parametrize(
    ("enabled", "message", "reason"),
    [
        (False, BUDGET, "super_context_disabled"),
        (True, "thanks", "context_free_greeting"),
        (True, "create a folder named drafts", "simple_local_filesystem_action"),
    ],
)
def test_cold_start_panel_shows_the_reason(enabled: bool, message: str, reason: str) -> None:
    thread = supercontext_lab.Thread(super_context_enabled=enabled)
    turn = thread.send(message)
    assert turn.reason == reason

    panel = BundlePanel(turn=turn, workspace=thread.workspace)

    assert f"cold start: {reason}" in panel.outcome_html.value
    assert "scout skipped" in panel.outcome_html.value
    assert ColdStartReason(reason).explanation in panel.reason_html.value
    assert panel.reason_html.layout.display is None
    assert reason in panel.problems_html.value
    assert panel.tabs.selected_index == TAB_TITLES.index("Problems")
    assert "no bundle" in panel.goal_html.value
    assert panel.badge_html.value == ""


def test_failed_scout_turn_shows_the_reason_and_the_trace(tmp_path: Path) -> None:
    thread = Thread(
        Workspace(tmp_path),
        super_context_enabled=True,
        scout_model=ScriptedModel([tool_call_message(("memory_recall", {"query": "x"})), "nope"]),
    )
    turn = thread.send(BUDGET)
    assert turn.preparation == "failed"

    panel = BundlePanel(turn=turn)

    assert "no valid envelope" in panel.reason_html.value
    assert "memory_recall" in panel.trace.html.value
    assert panel.tabs.selected_index == TAB_TITLES.index("Problems")


def test_a_cold_start_reads_its_code_explanation_and_detail() -> None:
    assert describe_cold_start(ColdStartReason.TIMEOUT, "timeout: 120 s") == (
        "timeout: The scout ran out of time. timeout: 120 s"
    )
    assert describe_cold_start(ColdStartReason.EMPTY_MESSAGE) == (
        "empty_message: The message is empty."
    )
    assert describe_cold_start(None) == "No context was prepared."


def test_each_problem_is_listed_once_and_not_again_after_the_reason(tmp_path: Path) -> None:
    # Two refused calls of one tool make one problem, said once.
    shell = tool_call_message(("shell", {"cmd": "x"}))
    thread = Thread(
        Workspace(tmp_path),
        super_context_enabled=True,
        scout_model=ScriptedModel([shell, shell, envelope(summary="Missing: every note.")]),
    )
    turn = thread.send(BUDGET)
    assert turn.prepared
    assert turn.scout is not None
    assert turn.scout.problems.count("refused tool call: shell") == 2
    panel = BundlePanel(turn=turn)
    assert panel.problems_html.value.count("<li>refused tool call: shell</li>") == 1

    failed = Thread(
        Workspace(tmp_path),
        super_context_enabled=True,
        scout_model=ScriptedModel(["no envelope here"]),
    ).send(BUDGET)
    assert failed.scout is not None
    problem = failed.scout.problems[0]
    assert problem.startswith("no valid envelope")
    # The turn's detail is made of the run's problems: the Problems tab says the code
    # once and each problem once, whether the panel shows the turn or the run alone.
    for panel in (BundlePanel(turn=failed), BundlePanel(failed.scout)):
        assert "cold start: no_envelope" in panel.outcome_html.value
        assert panel.problems_html.value.count(escape(problem)) == 1
        assert panel.problems_html.value.count("no_envelope") == 1
        assert escape(problem) in panel.reason_html.value


def test_a_scout_exception_is_listed_once_beside_its_code(tmp_path: Path) -> None:
    turn = Thread(
        Workspace(tmp_path),
        super_context_enabled=True,
        scout_model=ScriptedModel([]),  # runs out of replies: the scout's model fails
    ).send(BUDGET)
    assert not turn.prepared
    panel = BundlePanel(turn=turn)
    detail = turn.reason_detail
    assert detail
    assert panel.problems_html.value.count(escape(detail)) == 1


# ------------------------------------------------------------------------------ trace


def test_trace_marks_refusals_grace_and_durations(tmp_path: Path) -> None:
    definition = load_agent_definition(edit_agent_toml(default_agent_toml(), {"max_iterations": 1}))
    model = ScriptedModel(
        [tool_call_message(("shell", {"cmd": "rm -rf /"})), envelope(summary="done (memory)")]
    )
    run = run_scout(BUDGET, workspace=Workspace(tmp_path), model=model, definition=definition)
    timeline = TraceTimeline(run.trace)

    text = timeline.html.value
    assert [step.kind for step in run.trace] == ["model", "tool", "model", "check"]
    assert "grounding check" in text
    assert "REFUSED" in text
    assert "grace: final call without tools" in text
    assert "asked for: <code>shell</code>" in text
    assert escape(json.dumps({"cmd": "rm -rf /"}, indent=2)) in text  # whole, indented
    assert text.count('class="scl-bar"') == 4
    assert "width:100.0%" in text  # the longest step fills its bar
    assert "2 model call(s), 1 tool call(s)" in text
    assert "1 refused" in text


def test_a_failed_model_call_has_an_error_badge_a_red_bar_and_its_attempts() -> None:
    # A real HTTP server answering 500 four times: the client tries 4 times (3 retries).
    failures = [ScriptedResponse.error(500, "the server is down")] * 4
    with OpenAITestServer(failures) as server:
        route = parse_model_id("ollama:qwen2.5", base_url=server.base_url)
        model = OpenAICompatibleModel.from_route(route, sleep=lambda _: None)
        workspace = supercontext_lab.open_workspace(None)
        run = run_scout(BUDGET, workspace=workspace, model=model)
        model.close()
    assert len(server.requests) == 4
    panel = BundlePanel(run, workspace=workspace)

    text = panel.trace.html.value
    assert [(step.kind, step.ok, step.attempts) for step in run.trace] == [("model", False, 4)]
    assert "scl-badge-error" in text
    assert "4 attempts" in text
    assert 'class="scl-bar scl-bar-failed"' in text
    assert "background:#c62828" in text
    assert "1 failed model call(s) after 4 attempt(s)" in text
    # The route is named as the user typed it, not as the protocol it speaks.
    assert "model ollama:qwen2.5" in panel.meta_html.value
    assert "openai:" not in panel.meta_html.value
    assert "cold start: model_error" in panel.outcome_html.value
    assert "scout failed" in panel.outcome_html.value
    # The server's error once in Problems, beside the code and its explanation.
    assert run.reason is not None
    assert panel.problems_html.value.count(escape(run.reason)) == 1


def test_a_call_that_succeeded_after_retries_counts_its_attempts() -> None:
    answers = [
        ScriptedResponse.error(503, "busy"),
        ScriptedResponse.reply(envelope(summary="- The 2Dt kernel was chosen (memory)")),
    ]
    with OpenAITestServer(answers) as server:
        route = parse_model_id("ollama:qwen2.5", base_url=server.base_url)
        model = OpenAICompatibleModel.from_route(route, sleep=lambda _: None)
        run = run_scout(BUDGET, workspace=supercontext_lab.open_workspace(None), model=model)
        model.close()
    assert [(step.kind, step.ok, step.attempts) for step in run.trace[:1]] == [("model", True, 2)]
    text = TraceTimeline(run.trace).html.value
    assert "2 attempts" in text
    assert "scl-badge-warn" in text
    assert "scl-bar-failed" not in text
    assert "failed model call" not in text


def test_a_successful_model_call_has_no_error_badge(tmp_path: Path) -> None:
    run = scripted_run(Workspace(tmp_path), envelope(summary="done (memory)"))
    text = TraceTimeline(run.trace).html.value
    assert "scl-bar-failed" not in text
    assert "attempt" not in text
    assert "failed model call" not in text


def test_empty_trace() -> None:
    timeline = TraceTimeline()
    assert "No steps recorded." in timeline.html.value
    assert timeline.children == (timeline.html,)


# ------------------------------------------------------------------------------ html helpers


@pytest.mark.parametrize(
    ("summary", "fragments"),
    [
        (
            "A fact (memory)",
            ['scl-chip-memory" title="source: memory"', ">memory: MEMORY.md or a note</span>"],
        ),
        ("A fact (Profile).", ["scl-chip-profile"]),
        ("(integrations)", ["scl-chip-integrations"]),
        (
            "(transcript: 2026-11-20 aim 2)",
            ["scl-chip-transcript", ">transcript: 2026-11-20 aim 2<"],
        ),
        (
            "(web: https://example.org/a?b=1&c=2)",
            [
                'href="https://example.org/a?b=1&amp;c=2"',
                'rel="noopener noreferrer" target="_blank"',
            ],
        ),
        (
            "(web: https://en.wikipedia.org/wiki/Kernel_(statistics))",
            ["wiki/Kernel_(statistics)</a>"],
        ),
        ("(web: javascript:alert(1))", ["scl-chip-web", "web: javascript:alert(1)</span>"]),
        ('(web: http://x.org/" onmouseover="y)', ["web: http://x.org/&quot; onmouseover=&quot;y"]),
        ("(web: ftp://example.org/file)", ["web: ftp://example.org/file</span>"]),
        ("line one (memory)\nline two", ["white-space:pre-wrap", "\nline two"]),
        (
            "A fact (memory: project-grant/budget-summary)",
            ['scl-chip-memory"', ">memory: project-grant/budget-summary</span>"],
        ),
        ("(Skill: grant-budget-check)", ["scl-chip-skill", ">skill: grant-budget-check<"]),
        ("(memory: a<b>)", [">memory: a&lt;b&gt;</span>"]),
    ],
)
def test_render_summary_html_chips(summary: str, fragments: list[str]) -> None:
    rendered = render_summary_html(summary)
    for fragment in fragments:
        assert fragment in rendered
    if "javascript:" in summary or "ftp:" in summary or '"' in summary:
        assert "<a " not in rendered


@pytest.mark.parametrize(
    "summary", ["(memories)", "(memory", "memory)", "(web:)", "(web:  )", "(profile: x)"]
)
def test_non_attributions_stay_plain_text(summary: str) -> None:
    assert "scl-chip" not in render_summary_html(summary)


@pytest.mark.parametrize(
    ("kind", "css"),
    [
        ("ok", "scl-badge-ok"),
        ("warn", "scl-badge-warn"),
        ("warning", "scl-badge-warn"),
        ("neutral", "scl-badge-neutral"),
    ],
)
def test_badge(kind: str, css: str) -> None:
    rendered = badge("<b>x</b>", kind)
    assert css in rendered
    assert "&lt;b&gt;x&lt;/b&gt;" in rendered


def test_unknown_badge_kind_is_an_error() -> None:
    with pytest.raises(ValueError, match="badge kind 'sparkly' is not known"):
        badge("x", "sparkly")


class _TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)


_PIECES = st.sampled_from(
    [
        "(memory)",
        "(profile)",
        "(integrations)",
        "(transcript: t-1)",
        "(web: https://a.org/x?y=1&z=2)",
        "(web: javascript:alert(1))",
        '(web: https://a.org/" onerror="x)',
        SCRIPT,
        "<img src=x onerror=alert(1)>",
        "&amp;",
        '"',
        "'",
        "\n",
        " ",
    ]
)


@given(st.lists(_PIECES | st.text(max_size=8), max_size=12).map("".join))
def test_summary_html_only_ever_contains_its_own_markup(summary: str) -> None:
    parser = _TagCollector()
    parser.feed(render_summary_html(summary))
    parser.close()
    for tag, attrs in parser.tags:
        assert tag in {"div", "span", "a", "ul", "li"}
        assert not any(name.startswith("on") for name in attrs)
        if tag == "a":
            assert (attrs["href"] or "").startswith(("http://", "https://"))
            assert attrs["rel"] == "noopener noreferrer"
            assert attrs["target"] == "_blank"


def _has_bullet(text: str) -> bool:
    return any(strip_bullet(line) != line for line in text.split("\n"))


def _shows_nothing_hidden(text: str) -> bool:
    # Characters a page would hide are drawn as escapes (tests/reliability); the rest is
    # written as it is.
    return escape(text) == html.escape(text, quote=True)


@given(
    st.text().filter(
        lambda text: "(" not in text and not _has_bullet(text) and _shows_nothing_hidden(text)
    )
)
def test_summary_text_without_attributions_round_trips(summary: str) -> None:
    parser = _TagCollector()
    parser.feed(render_summary_html(summary))
    parser.close()
    assert [tag for tag, _ in parser.tags] == ["div"]
    assert "".join(parser.text) == summary


def test_summary_bullets_become_list_items_without_their_dash() -> None:
    summary = (
        "Context:\n- The <b>2Dt</b> kernel (memory)\n* Section 3.2 (profile)\n\nAfter the list"
    )
    parser = _TagCollector()
    parser.feed(render_summary_html(summary))
    parser.close()
    tags = [tag for tag, _ in parser.tags]
    assert tags.count("li") == 2 and tags.count("ul") == 1
    text = "".join(parser.text)
    assert "- " not in text and "* " not in text
    assert "The <b>2Dt</b> kernel" in text  # escaped, so it reads back as text
    assert text.startswith("Context:") and text.endswith("After the list")


@given(st.lists(st.sampled_from(["- a fact (memory)", "plain line", "  * b", "", "- <i>"])))
def test_bulleted_summaries_keep_every_line_in_order(lines: list[str]) -> None:
    parser = _TagCollector()
    parser.feed(render_summary_html("\n".join(lines)))
    parser.close()
    shown = "".join(parser.text)
    expected = "".join(
        strip_bullet(line).replace("(memory)", "memory: MEMORY.md or a note") for line in lines
    )
    if any(_has_bullet(line) for line in lines):
        assert shown == expected
