"""The live agent.toml editor and the bundle diff, driven without a browser."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import supercontext_lab
from supercontext_lab.agents import (
    AgentDefinition,
    backup_path,
    default_agent_toml,
    default_prompt,
    load_agent_definition,
)
from supercontext_lab.bundle import ContextBundle, parse_context_bundle
from supercontext_lab.errors import AgentDefinitionError
from supercontext_lab.harness import Thread
from supercontext_lab.lab.widgets import AgentEditor, bundle_diff_html, changed_fields
from supercontext_lab.lab.widgets.html import escape
from supercontext_lab.scout import ScoutRun
from supercontext_lab.testing import envelope

KERNEL = "What did we decide about the dispersal kernel?"
DECISION = "the 2Dt kernel is the primary dispersal kernel"


@pytest.fixture
def agent_file(tmp_path: Path) -> Path:
    path = tmp_path / "scout" / "agent.toml"
    path.parent.mkdir()
    path.write_text(default_agent_toml(), encoding="utf-8")
    return path


def comments(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip().startswith("#")]


def tools_part(text: str) -> str:
    return text.split("[tools]", 1)[1]


def loader_message(text: str) -> str:
    with pytest.raises(AgentDefinitionError) as info:
        load_agent_definition(text)
    return str(info.value)


# ------------------------------------------------------------------------------ form → TOML


@pytest.mark.parametrize(
    ("control", "value", "line", "field", "expected"),
    [
        ("temperature", 0.55, "temperature = 0.55", "temperature", 0.55),
        ("max_iterations", 3, "max_iterations = 3", "max_iterations", 3),
        ("max_result_chars", 800, "max_result_chars = 800", "max_result_chars", 800),
        ("iteration_policy", "strict", 'iteration_policy = "strict"', "iteration_policy", "strict"),
        (
            "sandbox_mode",
            "workspace_write",
            'sandbox_mode = "workspace_write"',
            "sandbox_mode",
            "workspace_write",
        ),
        ("agent_tier", "orchestrator", 'agent_tier = "orchestrator"', "agent_tier", "orchestrator"),
        ("prefetch", "always", 'prefetch = "always"', "prefetch", "always"),
        ("grounding", "mark", 'grounding = "mark"', "grounding", "mark"),
        ("model_hint", "agentic", 'hint = "agentic"', "model", {"hint": "agentic"}),
    ],
)
def test_form_change_reaches_the_toml_and_keeps_comments(
    agent_file: Path, control: str, value: Any, line: str, field: str, expected: Any
) -> None:
    editor = AgentEditor(agent_file)
    before = editor.toml_text.value

    getattr(editor, control).value = value

    after = editor.toml_text.value
    assert line in after.splitlines()
    assert comments(after) == comments(before)
    definition = load_agent_definition(after)
    assert definition.model_dump()[field] == expected
    assert "valid" in editor.validation.value
    assert agent_file.read_text("utf-8") == before  # nothing is saved until Save


@pytest.mark.parametrize(
    ("name", "value", "line"),
    [
        ("omit_profile", True, "omit_profile = true"),
        ("omit_identity", False, "omit_identity = false"),
    ],
)
def test_omit_switches_reach_the_toml(agent_file: Path, name: str, value: bool, line: str) -> None:
    editor = AgentEditor(agent_file)
    editor.omit_boxes[name].value = value
    assert line in editor.toml_text.value.splitlines()
    assert comments(editor.toml_text.value) == comments(default_agent_toml())


@pytest.mark.parametrize(
    ("tool", "checked", "present"),
    [
        ("memory_recall", False, False),
        ("web_fetch", False, False),
        ("workspace_read_file", True, True),
    ],
)
def test_tool_boxes_edit_tools_named(
    agent_file: Path, tool: str, checked: bool, present: bool
) -> None:
    editor = AgentEditor(agent_file)
    assert set(editor.tool_boxes) == set(supercontext_lab.agents.READ_ONLY_TOOLS)

    editor.tool_boxes[tool].value = checked

    assert (f'"{tool}"' in tools_part(editor.toml_text.value)) is present
    assert (tool in load_agent_definition(editor.toml_text.value).tools.named) is present
    assert "# Read-only on purpose." in editor.toml_text.value


SHIPPED_TOOLS = load_agent_definition(default_agent_toml()).tools.named


@pytest.mark.parametrize("tool", [SHIPPED_TOOLS[0], SHIPPED_TOOLS[2], SHIPPED_TOOLS[-1]])
def test_unticking_and_reticking_a_tool_gives_back_the_same_definition(
    agent_file: Path, tool: str
) -> None:
    editor = AgentEditor(agent_file)
    original, digest = editor.toml_text.value, editor.current
    assert digest is not None

    editor.tool_boxes[tool].value = False
    assert tool not in load_agent_definition(editor.toml_text.value).tools.named
    editor.tool_boxes[tool].value = True

    assert editor.toml_text.value == original  # the tool is back in its place, layout kept
    assert editor.current is not None
    assert editor.current.definition_hash() == digest.definition_hash()


def test_reticking_puts_a_tool_back_after_the_tools_that_preceded_it(agent_file: Path) -> None:
    editor = AgentEditor(agent_file)
    first, second, third = SHIPPED_TOOLS[:3]
    editor.tool_boxes[second].value = False
    editor.tool_boxes[first].value = False
    editor.tool_boxes[second].value = True  # its predecessor is gone: it goes first

    assert load_agent_definition(editor.toml_text.value).tools.named[:2] == [second, third]
    editor.tool_boxes[first].value = True
    assert load_agent_definition(editor.toml_text.value).tools.named == SHIPPED_TOOLS


def test_empty_model_hint_is_refused_and_the_form_snaps_back(agent_file: Path) -> None:
    editor = AgentEditor(agent_file)
    before = editor.toml_text.value

    editor.model_hint.value = ""

    assert editor.toml_text.value == before
    assert editor.model_hint.value == "burst"
    assert "model.hint" in editor.validation.value
    assert "not applied" in editor.validation.value


# ------------------------------------------------------------------------------ TOML → form


def test_toml_edits_update_the_form(agent_file: Path) -> None:
    editor = AgentEditor(agent_file)
    text = (
        editor.toml_text.value.replace("temperature = 0.3", "temperature = 1.25")
        .replace("max_iterations = 8", "max_iterations = 4")
        .replace('iteration_policy = "extended"', 'iteration_policy = "strict"')
        .replace("omit_memory_md = false", "omit_memory_md = true")
        .replace('  "web_fetch",\n', "")
        .replace('hint = "burst"', 'hint = "local"')
    )

    editor.toml_text.value = text

    assert editor.temperature.value == 1.25
    assert editor.max_iterations.value == 4
    assert editor.iteration_policy.value == "strict"
    assert editor.omit_boxes["omit_memory_md"].value is True
    assert editor.tool_boxes["web_fetch"].value is False
    assert editor.tool_boxes["memory_recall"].value is True
    assert editor.model_hint.value == "local"
    assert editor.toml_text.value == text  # syncing the form did not rewrite the text


# ------------------------------------------------------------------------------ invalid text

INVALID_EDITS = [
    ("syntax", lambda t: t.replace("temperature = 0.3", "temperature = = 0.3")),
    ("shell", lambda t: t.replace("named = [", 'named = [\n  "shell",')),
    ("memory_tree", lambda t: t.replace("named = [", 'named = [\n  "memory_tree",')),
    ("unknown key", lambda t: t.replace("temperature = 0.3", "temperature = 0.3\ncolour = 1")),
    ("range", lambda t: t.replace("temperature = 0.3", "temperature = 3.5")),
    ("subagents", lambda t: t + '\n[subagents]\nnamed = ["x"]\n'),
]


@pytest.mark.parametrize(
    ("label", "edit"), INVALID_EDITS, ids=[label for label, _ in INVALID_EDITS]
)
def test_invalid_toml_shows_the_loader_message_and_is_never_saved(
    agent_file: Path, label: str, edit: Any
) -> None:
    original = agent_file.read_bytes()
    editor = AgentEditor(agent_file)
    applied: list[AgentDefinition] = []
    editor.on_apply(applied.append)
    bad = edit(editor.toml_text.value)

    editor.toml_text.value = bad

    assert escape(loader_message(bad)) in editor.validation.value
    assert editor.error == loader_message(bad)
    assert editor.save_button.disabled
    assert editor.apply_button.disabled
    assert editor.temperature.disabled
    assert all(box.disabled for box in editor.tool_boxes.values())

    editor.save_button.click()  # a click that reaches the handler anyway is refused
    assert "Save refused: the definition is invalid" in editor.status.value
    editor.apply_button.click()
    assert "Apply refused: the definition is invalid" in editor.status.value

    assert agent_file.read_bytes() == original
    assert not backup_path(agent_file).exists()
    assert applied == []
    assert editor.definition is not None
    assert editor.definition.temperature == 0.3

    editor.toml_text.value = default_agent_toml()  # fixing the text re-enables everything
    assert not editor.save_button.disabled
    assert not editor.temperature.disabled


def test_empty_prompt_is_invalid_and_not_saved(agent_file: Path) -> None:
    editor = AgentEditor(agent_file)
    editor.prompt_text.value = "   "
    assert "prompt.md" in editor.validation.value
    editor.save_button.click()
    assert not agent_file.with_name("prompt.md").exists()
    assert not backup_path(agent_file).exists()


# ------------------------------------------------------------------------------ save / revert / apply


def test_valid_save_is_atomic_with_a_backup(agent_file: Path) -> None:
    original = agent_file.read_text("utf-8")
    editor = AgentEditor(agent_file)
    editor.temperature.value = 0.9

    editor.save_button.click()

    assert agent_file.read_text("utf-8") == editor.toml_text.value
    assert "temperature = 0.9" in agent_file.read_text("utf-8")
    assert backup_path(agent_file).read_text("utf-8") == original
    # The prompt the editor showed is saved beside it (new: no backup of its own).
    assert sorted(p.name for p in agent_file.parent.iterdir()) == [
        "agent.toml",
        "agent.toml.bak",
        "prompt.md",
    ]
    assert agent_file.with_name("prompt.md").read_text("utf-8") == default_prompt()
    assert "Saved" in editor.status.value
    assert load_agent_definition(agent_file).temperature == 0.9


def test_prompt_edits_are_saved_beside_the_toml(agent_file: Path) -> None:
    editor = AgentEditor(agent_file)
    editor.prompt_text.value = "You are a careful scout.\n"
    editor.save_button.click()
    assert agent_file.with_name("prompt.md").read_text("utf-8") == "You are a careful scout.\n"
    assert load_agent_definition(agent_file).prompt == "You are a careful scout.\n"


def test_revert_restores_the_file_on_disk(agent_file: Path) -> None:
    editor = AgentEditor(agent_file)
    editor.temperature.value = 1.5
    editor.save_button.click()
    saved = agent_file.read_text("utf-8")
    editor.toml_text.value = saved.replace("max_iterations = 8", "max_iterations = 2")
    editor.prompt_text.value = "changed"
    assert editor.max_iterations.value == 2

    editor.revert_button.click()

    assert editor.toml_text.value == saved
    assert editor.prompt_text.value == default_prompt()
    assert editor.max_iterations.value == 8
    assert editor.temperature.value == 1.5
    assert "Reverted" in editor.status.value


STALE = "changed on disk since you opened it"


def _someone_else_saves(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")


@pytest.mark.parametrize("which", ["agent.toml", "prompt.md"])
def test_save_over_a_file_changed_on_disk_is_refused(agent_file: Path, which: str) -> None:
    editor = AgentEditor(agent_file)
    editor.temperature.value = 0.9
    theirs = agent_file.with_name(which)
    their_text = (
        default_agent_toml().replace("max_iterations = 8", "max_iterations = 3")
        if which == "agent.toml"
        else "Their own prompt.\n"
    )
    _someone_else_saves(theirs, their_text)
    files_before = sorted(p.name for p in agent_file.parent.iterdir())

    editor.save_button.click()

    assert STALE in editor.status.value
    assert "Saved" not in editor.status.value
    assert theirs.read_text("utf-8") == their_text
    assert sorted(p.name for p in agent_file.parent.iterdir()) == files_before  # no .bak


def test_save_over_a_file_created_since_the_editor_opened_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "new" / "agent.toml"
    editor = AgentEditor(path)
    path.parent.mkdir()
    _someone_else_saves(path, default_agent_toml())
    editor.temperature.value = 0.9
    editor.save_button.click()
    assert STALE in editor.status.value
    assert path.read_text("utf-8") == default_agent_toml()


def test_revert_after_a_change_on_disk_loads_it_and_shows_what_changed(agent_file: Path) -> None:
    editor = AgentEditor(agent_file)
    editor.temperature.value = 0.9
    theirs = default_agent_toml().replace("max_iterations = 8", "max_iterations = 3")
    _someone_else_saves(agent_file, theirs)
    editor.save_button.click()
    assert STALE in editor.status.value

    editor.revert_button.click()

    assert editor.toml_text.value == theirs
    assert editor.max_iterations.value == 3
    assert STALE in editor.status.value and "Reverted" in editor.status.value
    changes = editor.disk_changes.value
    assert "<del" in changes and "max_iterations = 8" in changes
    assert "<ins" in changes and "max_iterations = 3" in changes
    assert "temperature = 0.9" not in changes  # the diff is theirs, not the discarded edit
    assert "[tools]" not in changes  # only the lines around the change
    # Reverted, the editor knows the new version: a save goes through and the diff goes.
    editor.temperature.value = 0.7
    editor.save_button.click()
    assert "Saved" in editor.status.value
    assert "temperature = 0.7" in agent_file.read_text("utf-8")
    assert "max_iterations = 3" in agent_file.read_text("utf-8")
    assert editor.disk_changes.value == ""


def test_saving_twice_is_not_taken_for_a_change_by_someone_else(agent_file: Path) -> None:
    editor = AgentEditor(agent_file)
    for value in (0.9, 0.8):
        editor.temperature.value = value
        editor.save_button.click()
        assert "Saved" in editor.status.value
    assert "temperature = 0.8" in agent_file.read_text("utf-8")


def test_revert_without_a_change_on_disk_shows_no_diff(agent_file: Path) -> None:
    editor = AgentEditor(agent_file)
    editor.temperature.value = 0.9
    editor.revert_button.click()
    assert editor.disk_changes.value == ""
    assert STALE not in editor.status.value


def test_revert_leaves_an_invalid_state(agent_file: Path) -> None:
    editor = AgentEditor(agent_file)
    editor.toml_text.value = "not = = toml"
    assert editor.save_button.disabled
    editor.revert_button.click()
    assert editor.toml_text.value == default_agent_toml()
    assert not editor.save_button.disabled
    assert "valid" in editor.validation.value


def test_apply_sets_the_definition_and_calls_back(agent_file: Path) -> None:
    editor = AgentEditor(agent_file)
    seen: list[AgentDefinition] = []
    editor.on_apply(seen.append)
    editor.max_iterations.value = 5
    assert editor.definition is not None and editor.definition.max_iterations == 8

    editor.apply_button.click()

    assert editor.definition is not None and editor.definition.max_iterations == 5
    assert seen == [editor.definition]
    assert editor.definition.definition_hash() in editor.status.value


def test_shipped_definition_is_read_only_until_a_path_is_given(tmp_path: Path) -> None:
    editor = AgentEditor()
    assert editor.toml_text.value == default_agent_toml()
    assert editor.save_path.value == ""
    assert editor.save_button.disabled

    editor.save_button.click()
    assert "type the path of your copy" in editor.status.value

    shipped = Path(supercontext_lab.agents.definition.__file__).parent / "context_scout"
    editor.save_path.value = str(shipped / "agent.toml")
    editor.save_button.click()
    assert "read-only" in editor.status.value
    assert (shipped / "agent.toml").read_text("utf-8") == default_agent_toml()
    assert not backup_path(shipped / "agent.toml").exists()

    copy = tmp_path / "copy" / "agent.toml"
    editor.save_path.value = str(copy)
    editor.temperature.value = 0.4
    editor.save_button.click()
    assert load_agent_definition(copy).temperature == 0.4
    # The copy is whole: agent.toml and the prompt the editor showed, side by side.
    assert copy.with_name("prompt.md").read_text("utf-8") == default_prompt()
    assert f"Saved {copy} and prompt.md." in editor.status.value
    assert editor.source_path == copy


def test_new_path_starts_from_the_shipped_text(tmp_path: Path) -> None:
    target = tmp_path / "new" / "agent.toml"
    editor = AgentEditor(target)
    assert editor.toml_text.value == default_agent_toml()
    assert "does not exist yet" in editor.status.value
    editor.save_button.click()
    assert target.read_text("utf-8") == default_agent_toml()
    assert not backup_path(target).exists()


def test_opening_an_invalid_file_shows_why(agent_file: Path) -> None:
    agent_file.write_text(default_agent_toml().replace("max_iterations = 8", "max_iterations = 0"))
    editor = AgentEditor(agent_file)
    assert editor.definition is None
    assert "max_iterations" in editor.validation.value
    assert editor.save_button.disabled


# ------------------------------------------------------------------------------ run again


def test_run_again_without_memory_recall_loses_the_memory_facts() -> None:
    workspace = supercontext_lab.open_workspace(None)

    def rerun(definition: AgentDefinition) -> ScoutRun:
        return Thread(workspace, definition=definition, super_context_enabled=True).run_scout(
            KERNEL
        )

    baseline = Thread(workspace, super_context_enabled=True).run_scout(KERNEL)
    assert baseline.bundle is not None and DECISION in baseline.bundle.summary
    editor = AgentEditor(rerun=rerun, baseline=baseline, workspace=workspace)

    editor.tool_boxes["memory_recall"].value = False
    editor.rerun_button.click()

    run = editor.last_run
    assert run is not None and run.bundle is not None
    assert "memory_recall" not in {step.tool for step in run.trace if step.kind == "tool"}
    assert DECISION not in run.bundle.summary
    assert run.bundle.summary.count("(memory") < baseline.bundle.summary.count("(memory")
    assert "summary" in changed_fields(baseline.bundle, run.bundle)
    assert 'data-field="summary" data-changed="true"' in editor.diff_html.value
    removed = editor.diff_html.value.split("<del")[1:]
    assert any(escape(DECISION) in part.split("</del>")[0] for part in removed)
    assert editor.before_panel is not None and editor.after_panel is not None
    assert editor.before_panel.run is baseline
    assert editor.after_panel.run is run
    first = editor.comparison
    assert first is not None and first.changed == ["summary"]
    assert editor.comparison_box.children == (first,)
    assert editor.definition is not None  # Run again does not apply
    assert "memory_recall" in editor.definition.tools.named

    editor.temperature.value = 0.5
    editor.rerun_button.click()
    assert editor.before_panel.run is run  # the previous rerun is the new baseline
    # A new comparison; the first one, shown under an earlier notebook cell, still
    # compares the baseline with the run without memory_recall.
    assert editor.comparison is not first
    assert editor.comparison_box.children == (editor.comparison,)
    assert first.before_panel is not None and first.before_panel.run is baseline
    assert first.after_panel.run is run
    assert "Changed: summary" in first.diff_html.value
    assert "identical" in editor.comparison.diff_html.value


def _kernel_editor() -> AgentEditor:
    workspace = supercontext_lab.open_workspace(None)

    def rerun(definition: AgentDefinition) -> ScoutRun:
        return Thread(workspace, definition=definition, super_context_enabled=True).run_scout(
            KERNEL
        )

    baseline = Thread(workspace, super_context_enabled=True).run_scout(KERNEL)
    return AgentEditor(rerun=rerun, baseline=baseline, workspace=workspace)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (
            lambda e: setattr(e.toml_text, "value", e.toml_text.value.replace("0.3", "3.5")),
            "invalid",
        ),
        (lambda e: setattr(e.prompt_text, "value", "   "), "invalid"),
        (lambda e: setattr(e.max_iterations, "value", 3), "Unsaved edits: Apply"),
        (lambda e: setattr(e.prompt_text, "value", "Be brief."), "Unsaved edits: Apply"),
    ],
)
def test_an_edit_after_run_again_replaces_the_run_status(edit: Any, expected: str) -> None:
    editor = _kernel_editor()
    editor.rerun_button.click()
    assert "Ran again with definition" in editor.status.value
    assert "Changed: nothing" in editor.status.value
    comparison = editor.comparison

    edit(editor)

    assert "Ran again" not in editor.status.value
    assert expected in editor.status.value
    assert editor.comparison is comparison  # the last comparison stays, labelled by hash


def test_revert_and_save_path_edits_keep_their_own_status(agent_file: Path) -> None:
    editor = AgentEditor(agent_file)
    editor.toml_text.value = editor.toml_text.value.replace("0.3", "0.4")
    editor.revert_button.click()
    assert "Reverted to" in editor.status.value
    editor.save_button.click()
    saved = editor.status.value
    assert "Saved" in saved
    editor.save_path.value = str(agent_file.parent / "copy.toml")
    assert editor.status.value == saved


def test_save_to_fits_the_editor_width() -> None:
    # "100%" for a labelled text box overflows its container by the label's width.
    assert AgentEditor().save_path.layout.width == "auto"


def test_run_again_is_disabled_without_a_rerun_function() -> None:
    editor = AgentEditor()
    assert editor.rerun_button.disabled
    editor.rerun_button.click()
    assert "needs a rerun function" in editor.status.value


# ------------------------------------------------------------------------------ diff


def bundle(**fields: Any) -> ContextBundle:
    parsed = parse_context_bundle(envelope(**fields))
    assert parsed is not None
    return parsed


BASE = {
    "has_enough_context": True,
    "proposed_goal": "Ship it",
    "summary": "- one (memory)\n- two (profile)",
    "recommended_tool_calls": [("run_workflow", {"workflow": "a"}, "why a")],
    "recommended_skills": [("a", True, "fits")],
}


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        ({}, []),
        ({"has_enough_context": False}, ["has_enough_context"]),
        ({"proposed_goal": None}, ["proposed_goal"]),
        ({"summary": "- one (memory)"}, ["summary"]),
        ({"summary": "- one (memory)\n\n- two (profile)  "}, []),
        (
            {"recommended_tool_calls": [("run_workflow", {"workflow": "b"}, "why a")]},
            ["recommended_tool_calls"],
        ),
        ({"recommended_skills": [("a", False, "fits")]}, ["recommended_skills"]),
        (
            {"proposed_goal": "Other", "recommended_skills": []},
            ["proposed_goal", "recommended_skills"],
        ),
    ],
)
def test_changed_fields(changes: dict[str, Any], expected: list[str]) -> None:
    assert changed_fields(bundle(**BASE), bundle(**{**BASE, **changes})) == expected


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (None, None, []),
        (
            None,
            "b",
            [
                "has_enough_context",
                "proposed_goal",
                "summary",
                "recommended_tool_calls",
                "recommended_skills",
            ],
        ),
        (
            "b",
            None,
            [
                "has_enough_context",
                "proposed_goal",
                "summary",
                "recommended_tool_calls",
                "recommended_skills",
            ],
        ),
    ],
)
def test_changed_fields_with_missing_bundles(old: Any, new: Any, expected: list[str]) -> None:
    present = bundle(**BASE)
    assert changed_fields(present if old else None, present if new else None) == expected


def test_diff_marks_additions_and_removals_escaped() -> None:
    old = bundle(**{**BASE, "summary": "- kept (memory)\n- gone <script>x</script> (memory)"})
    new = bundle(**{**BASE, "summary": "- kept (memory)\n- new & shiny (web: https://a.org)"})

    html = bundle_diff_html(old, new)

    assert "<script" not in html
    assert "<del" in html and "gone &lt;script&gt;x&lt;/script&gt;" in html.split("<del", 1)[1]
    assert "<ins" in html and "new &amp; shiny" in html.split("<ins", 1)[1]
    assert 'data-field="summary" data-changed="true"' in html
    assert 'data-field="proposed_goal" data-changed="false"' in html
    assert "scl-chip-web" in html
    assert "Changed: summary" in html
    # One mark per line, in place of the bullet: never "− -" or "+ -".
    assert "</span> -" not in html
    assert "</span> gone &lt;script" in html and "</span> new &amp; shiny" in html
    # Removed words are dark on a pale tint and not struck through.
    removed_style = html.split("<del", 1)[1].split(">", 1)[0]
    assert "text-decoration:none" in removed_style and "color:#2b1111" in removed_style


@pytest.mark.parametrize(
    ("old", "new", "headline"),
    [
        (None, None, "Neither run produced a bundle."),
        (None, "b", "the earlier run produced no bundle"),
        ("b", None, "the new run produced no bundle"),
        ("b", "b", "The bundles are identical field by field."),
    ],
)
def test_diff_headlines(old: Any, new: Any, headline: str) -> None:
    present = bundle(**BASE)
    assert headline in bundle_diff_html(present if old else None, present if new else None)
