"""The grounding check of names: recommended tools and skills that exist."""

from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab.bundle import ContextBundle, parse_context_bundle
from supercontext_lab.scout.grounding_names import (
    check_names,
    known_names,
    name_problems,
    steered_by_conversations,
)
from supercontext_lab.scout.sources import RunSources, sources_of
from supercontext_lab.sources.workspace import Workspace
from supercontext_lab.testing import build_workspace, envelope
from supercontext_lab.tools.base import ToolResult


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    files = {
        "skills/figure-polisher/SKILL.md": (
            "---\nname: Figure polisher\ndescription: Polish figures.\n---\nBody.\n"
        ),
        "registry.json": (
            '[{"id": "sensitivity-kit", "name": "Sensitivity kit", "description": "Sobol indices",'
            ' "tags": ["sensitivity"], "category": "analysis"}]'
        ),
        "orchestrator_tools.toml": (
            '[[tool]]\nname = "run_workflow"\ndescription = "Run a skill."\n'
        ),
    }
    return Workspace(build_workspace(tmp_path / "ws", files))


def _bundle(**fields: object) -> ContextBundle:
    bundle = parse_context_bundle(envelope(**fields))  # type: ignore[arg-type]
    assert bundle is not None
    return bundle


def test_known_names_are_the_workspace_s_and_the_skills_the_run_saw(
    workspace: Workspace,
) -> None:
    names = known_names(workspace)
    assert names.tools == {"run_workflow"}
    assert names.installed == {"figure-polisher"}
    assert names.registry == {"sensitivity-kit"}
    seen = RunSources(skills_seen={"remote-kit": False})
    assert known_names(workspace, seen).registry == {"sensitivity-kit", "remote-kit"}


def test_installed_flags_are_set_from_the_workspace(workspace: Workspace) -> None:
    bundle = _bundle(
        summary="- x (memory)",
        recommended_skills=[
            {"skill": "sensitivity-kit", "installed": True, "why": "y"},
            {"skill": "figure-polisher", "installed": True, "why": "y"},
        ],
    )
    dropped, corrected, flags = name_problems(bundle, known_names(workspace))
    assert dropped == []
    assert flags == {0: False, 1: True}
    assert corrected == [
        "skill 'sensitivity-kit': installed set to false from the workspace (the bundle said True)"
    ]


def test_check_names_against_a_workspace(workspace: Workspace) -> None:
    bundle = _bundle(
        summary="- x (memory)",
        recommended_tool_calls=[{"tool": "run_workflow", "args": "{}", "why": "y"}],
        recommended_skills=[
            {"skill": "figure-polisher", "installed": False, "why": "y"},
            {"skill": "ghost", "installed": False, "why": "y"},
        ],
    )
    assert [(d.kind, d.item) for d in check_names(bundle, workspace)] == [("skill", "ghost")]


def _read(*hits: dict[str, str]) -> list[tuple[str, ToolResult]]:
    return [("memory_recall", ToolResult.success({"hits": list(hits)}))]


_CHAT = {
    "namespace": "conversations",
    "key": "c1-2",
    "transcript": "c1",
    "content": "Assistant: run figure-polisher on the shared drawings folder tonight.",
}
_OWN = {
    "namespace": "global",
    "key": "drawings",
    "content": "Run figure-polisher on the shared drawings folder before each review.",
}
_STEERED = {
    "summary": "- x (memory)",
    "recommended_tool_calls": [
        {"tool": "run_workflow", "args": '{"workflow": "figure-polisher"}', "why": "y"}
    ],
    "recommended_skills": [{"skill": "figure-polisher", "installed": True, "why": "y"}],
}


def test_a_skill_only_a_past_conversation_points_at_is_dropped(workspace: Workspace) -> None:
    sources = sources_of(workspace, _read(_CHAT))
    request = "Tidy the figures in the shared drawings folder"
    dropped = steered_by_conversations(_bundle(**_STEERED), workspace, sources, request)
    assert [(item.kind, item.item) for item in dropped] == [
        ("skill", "figure-polisher"),
        ("tool", "run_workflow"),
    ]
    assert all("only a past conversation points at" in item.why for item in dropped)


def test_the_users_own_note_or_the_request_may_point_at_it(workspace: Workspace) -> None:
    bundle = _bundle(**_STEERED)
    own = sources_of(workspace, _read(_CHAT, _OWN))
    assert (
        steered_by_conversations(
            bundle, workspace, own, "Tidy the figures in the shared drawings folder"
        )
        == []
    )
    chat = sources_of(workspace, _read(_CHAT))
    # The request itself asks for it: two of its words name the skill.
    asked = "Polish the figures in the drawings folder"
    assert steered_by_conversations(bundle, workspace, chat, asked) == []


def test_a_conversation_that_does_not_name_the_skill_changes_nothing(
    workspace: Workspace,
) -> None:
    quiet = {**_CHAT, "content": "Assistant: the drawings folder is shared with the team."}
    sources = sources_of(workspace, _read(quiet))
    bundle = _bundle(**_STEERED)
    assert steered_by_conversations(bundle, workspace, sources, "Tidy the drawings") == []
