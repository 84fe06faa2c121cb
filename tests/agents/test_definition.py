from __future__ import annotations

from pathlib import Path

import pytest

from supercontext_lab.agents import (
    KNOWN_TOOLS,
    READ_ONLY_TOOLS,
    AgentDefinition,
    default_agent_definition,
    default_agent_toml,
    default_prompt,
    load_agent_definition,
)
from supercontext_lab.errors import AgentDefinitionError, SupercontextError

SCOUT_TOOLS = [
    "memory_recall",
    "memory_flavour",
    "list_workflows",
    "skill_registry_search",
    "skill_registry_browse",
    "web_search_tool",
    "web_fetch",
]


def test_default_definition_matches_the_contract() -> None:
    d = default_agent_definition()
    assert isinstance(d, AgentDefinition)
    assert d.id == "context_scout"
    assert d.display_name == "Context Scout"
    assert d.when_to_use
    assert d.temperature == 0.3
    assert d.max_iterations == 8
    assert d.iteration_policy == "extended"
    assert d.max_result_chars == 5000
    assert d.sandbox_mode == "read_only"
    assert d.agent_tier == "worker"
    assert (d.omit_identity, d.omit_memory_context, d.omit_safety_preamble) == (True,) * 3
    assert (d.omit_profile, d.omit_memory_md) == (False, False)
    assert d.model.hint == "burst"
    assert d.tools.named == SCOUT_TOOLS
    assert "memory_tree" not in d.tools.named
    assert d.subagents is None
    assert d.prompt == default_prompt()
    assert d.source == "<shipped>"


def test_error_is_a_value_error_and_a_supercontext_error() -> None:
    assert issubclass(AgentDefinitionError, ValueError)
    assert issubclass(AgentDefinitionError, SupercontextError)


def _with(extra: str, base: str = 'id = "x"\n') -> str:
    return base + extra


@pytest.mark.parametrize(
    ("text", "needles"),
    [
        ('id = "x"\ntemperature = = 1', ["invalid TOML"]),
        ('id = "x"\nfoo = 1', ["foo", "unknown key"]),
        ('id = "x"\n[model]\nhint = "burst"\nspeed = 2', ["model.speed", "unknown key"]),
        ('id = "x"\n[tools]\nnamed = []\nmode = "rw"', ["tools.mode", "unknown key"]),
        ('id = "x"\ntemperature = "hot"', ["temperature"]),
        ('id = "x"\ntemperature = true', ["temperature", "boolean"]),
        ('id = "x"\ntemperature = 2.5', ["temperature"]),
        ('id = "x"\ntemperature = -0.1', ["temperature"]),
        ('id = "x"\nmax_iterations = 0', ["max_iterations"]),
        ('id = "x"\nmax_iterations = 2.5', ["max_iterations", "whole number"]),
        ('id = "x"\nmax_iterations = "8"', ["max_iterations"]),
        ('id = "x"\nmax_result_chars = 499', ["max_result_chars"]),
        ('id = "x"\niteration_policy = "forever"', ["iteration_policy"]),
        ('id = "x"\nsandbox_mode = "yolo"', ["sandbox_mode"]),
        ('id = "x"\nagent_tier = "boss"', ["agent_tier"]),
        ('id = "x"\nomit_profile = "yes"', ["omit_profile"]),
        ('id = "x"\n[subagents]\nnamed = ["a"]', ["subagents", "worker"]),
        ('id = "x"\n[tools]\nnamed = ["memory_tree"]', ["memory_tree", "read_only"]),
        ('id = "x"\n[tools]\nnamed = ["shell"]', ["shell", "read_only"]),
        ('id = "x"\n[tools]\nnamed = ["file_write"]', ["file_write"]),
        ('id = "x"\n[tools]\nnamed = ["skill_registry_install"]', ["skill_registry_install"]),
        ('id = "x"\n[tools]\nnamed = ["skill_registry_uninstall"]', ["skill_registry_uninstall"]),
        ('id = "x"\n[tools]\nnamed = ["spawn_subagent"]', ["spawn_subagent"]),
        ('id = "x"\n[tools]\nnamed = ["agent_prepare_context"]', ["agent_prepare_context"]),
        ('id = "x"\n[tools]\nnamed = ["teleport"]', ["teleport", "unknown tool"]),
        ('id = "x"\n[tools]\nnamed = ["web_fetch", "web_fetch"]', ["web_fetch", "twice"]),
        ('id = "x"\n[tools]\nnamed = "memory_recall"', ["tools.named"]),
        ('id = "x"\n[tools]\nnamed = [1]', ["tools.named"]),
        ('display_name = "no id"', ["id", "missing"]),
        ('id = ""', ["id"]),
        ('id = "has space"', ["id"]),
        ('id = "x"\nmodel = "burst"', ["model"]),
    ],
)
def test_invalid_definitions_name_the_key(text: str, needles: list[str]) -> None:
    with pytest.raises(AgentDefinitionError) as info:
        load_agent_definition(text)
    message = str(info.value)
    assert "\n" not in message
    for needle in needles:
        assert needle in message


def test_integers_are_accepted_where_a_float_is_expected() -> None:
    assert load_agent_definition('id = "x"\ntemperature = 1').temperature == 1.0


def test_non_read_only_tools_are_allowed_outside_a_read_only_sandbox() -> None:
    d = load_agent_definition(
        'id = "writer"\nsandbox_mode = "workspace_write"\nagent_tier = "orchestrator"\n'
        '[tools]\nnamed = ["file_write", "memory_recall"]\n[subagents]\nnamed = ["context_scout"]'
    )
    assert d.tools.named == ["file_write", "memory_recall"]
    assert d.subagents is not None


def test_display_name_defaults_to_id() -> None:
    assert load_agent_definition('id = "solo"').display_name == "solo"


def test_known_tools_table_is_consistent() -> None:
    assert set(SCOUT_TOOLS) <= READ_ONLY_TOOLS
    for name in (
        "memory_tree",
        "shell",
        "file_write",
        "skill_registry_install",
        "skill_registry_uninstall",
        "spawn_subagent",
        "agent_prepare_context",
    ):
        assert not KNOWN_TOOLS[name].read_only


def test_load_from_path_uses_prompt_beside_it(tmp_path: Path) -> None:
    toml = tmp_path / "agent.toml"
    toml.write_text(default_agent_toml(), encoding="utf-8")
    assert load_agent_definition(toml).prompt == default_prompt()
    (tmp_path / "prompt.md").write_text("# My scout\nEmit the bundle.", encoding="utf-8")
    d = load_agent_definition(toml)
    assert d.prompt.startswith("# My scout")
    assert d.source == str(toml)


def test_errors_from_files_name_the_file(tmp_path: Path) -> None:
    toml = tmp_path / "agent.toml"
    toml.write_text('id = "x"\ntemperature = 9', encoding="utf-8")
    with pytest.raises(AgentDefinitionError, match=r"agent\.toml: temperature"):
        load_agent_definition(toml)
    with pytest.raises(AgentDefinitionError, match="cannot read"):
        load_agent_definition(tmp_path / "missing.toml")


def test_a_path_passed_as_str_gets_a_hint() -> None:
    with pytest.raises(AgentDefinitionError, match=r"pathlib\.Path"):
        load_agent_definition("my_agent.toml")


def test_empty_prompt_is_refused(tmp_path: Path) -> None:
    toml = tmp_path / "agent.toml"
    toml.write_text('id = "x"', encoding="utf-8")
    (tmp_path / "prompt.md").write_text("  \n", encoding="utf-8")
    with pytest.raises(AgentDefinitionError, match="empty"):
        load_agent_definition(toml)


def test_definition_hash_changes_with_prompt_and_fields() -> None:
    d = default_agent_definition()
    assert d.definition_hash() == default_agent_definition().definition_hash()
    assert d.with_prompt("other").definition_hash() != d.definition_hash()
    changed = load_agent_definition(default_agent_toml().replace("0.3", "0.4"))
    assert changed.definition_hash() != d.definition_hash()


def test_prompt_body_describes_the_contract() -> None:
    body = default_prompt()
    for needle in (
        "[context_bundle]",
        "[/context_bundle]",
        "has_enough_context",
        "proposed_goal",
        "summary",
        "recommended_tool_calls",
        "recommended_skills",
        "memory_recall",
        "memory_flavour",
        "list_workflows",
        "skill_registry_search",
        "web_search_tool",
        "dir_name",
        "(memory)",
        "(profile)",
        "(integrations)",
    ):
        assert needle in body, needle
