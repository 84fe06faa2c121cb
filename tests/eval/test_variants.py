"""Scout variants: names, ``--agent`` options, labels and the picklable spec."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from supercontext_lab.agents import default_agent_toml, edit_agent_toml
from supercontext_lab.errors import AgentDefinitionError
from supercontext_lab.eval.variants import (
    BASELINE,
    Variant,
    baseline,
    check_variant_name,
    split_agent_option,
)
from supercontext_lab.routes import ModelRoute
from supercontext_lab.testing import build_workspace


@pytest.mark.parametrize("name", ["v2", "a", "Qwen2.5-json+grammar_b", "9" * 64])
def test_usable_variant_names(name: str) -> None:
    assert check_variant_name(name) == name


@pytest.mark.parametrize("name", ["", "-v", ".hidden", "a b", "a/b", "é", "x" * 65, "a\n"])
def test_unusable_variant_names_say_what_a_name_is(name: str) -> None:
    with pytest.raises(ValueError, match="must be 1-64 letters, digits"):
        check_variant_name(name)


def test_an_agent_option_names_its_variant(tmp_path: Path) -> None:
    assert split_agent_option("v2=variants/v2/agent.toml") == (
        "v2",
        Path("variants/v2/agent.toml"),
    )
    # Without a name: the agent.toml's folder, else the file's stem.
    assert split_agent_option("variants/terse/agent.toml") == (
        "terse",
        Path("variants/terse/agent.toml"),
    )
    assert split_agent_option("variants/wide.toml") == ("wide", Path("variants/wide.toml"))
    assert split_agent_option(" v3 = ~/a.toml ") == ("v3", Path("~/a.toml").expanduser())


@pytest.mark.parametrize("option", ["v2=", "v2=  ", ""])
def test_an_agent_option_without_a_path_is_refused(option: str) -> None:
    with pytest.raises(ValueError, match=r"names no agent\.toml"):
        split_agent_option(option)


def test_a_variant_from_a_file_and_its_spec_round_trip(tmp_path: Path) -> None:
    root = build_workspace(
        tmp_path / "variants" / "v2",
        {
            "agent.toml": edit_agent_toml(default_agent_toml(), {"max_iterations": 2}),
            "prompt.md": "You are a terse scout.\n",
        },
    )
    route = ModelRoute(kind="openai", base_url="http://127.0.0.1:9/v1", model="qwen2.5")
    variant = Variant.from_path("v2", root / "agent.toml", route=route)
    assert variant.definition.max_iterations == 2
    assert variant.model_label() == "qwen2.5 at http://127.0.0.1:9/v1"
    spec = pickle.loads(pickle.dumps(variant.spec()))
    assert spec.name == "v2"
    assert spec.route == route.model_dump()
    rebuilt = spec.definition()
    assert rebuilt.max_iterations == 2
    assert rebuilt.prompt == "You are a terse scout.\n"


def test_a_missing_agent_toml_is_an_agent_definition_error(tmp_path: Path) -> None:
    with pytest.raises(AgentDefinitionError):
        Variant.from_path("v2", tmp_path / "agent.toml")


def test_the_baseline_runs_on_the_configured_route() -> None:
    variant = baseline()
    assert variant.name == BASELINE
    assert variant.route is None
    assert variant.resolved_route().kind == "offline"
    assert variant.model_label() == "offline"
    local = baseline(ModelRoute(kind="local"))
    assert local.model_label() == "local:smollm2 (extractive)"


def test_a_variant_checks_what_it_is_given() -> None:
    with pytest.raises(ValueError, match="variant name"):
        Variant("bad name", baseline().definition)
    with pytest.raises(TypeError, match="definition must be an AgentDefinition, not str"):
        Variant("v2", "agent.toml")  # type: ignore[arg-type]


def test_design_variants_of_the_baselines_and_the_placement() -> None:
    from supercontext_lab.eval.variants import design_variant

    full, tool, tail = (
        design_variant("full-context"),
        design_variant("tool-only"),
        design_variant("pack", placement="system-tail"),
    )
    assert (full.name, tool.name, tail.name) == ("full-context", "tool-only", "pack-system-tail")
    assert (tail.design, tail.placement, tail.spec().placement) == (
        "pack",
        "system-tail",
        "system-tail",
    )
    assert full.model_label().startswith("full-context") and tool.model_label().startswith(
        "tool-only"
    )
    assert tail.renamed("x").placement == "system-tail"
    with pytest.raises(ValueError, match="placement must be one of"):
        design_variant("pack", placement="middle")


def test_design_variants_cross_designs_with_placements_once_each() -> None:
    from supercontext_lab.eval.variants import design_variants

    names = [v.name for v in design_variants(["pack", "cold", "pack"], None, [])]
    assert names == ["pack", "cold"]
    both = design_variants(["scout", "tool-only", "cold"], None, ["prepend", "system-tail"])
    assert [(v.name, v.placement) for v in both] == [
        ("scout", "prepend"),
        ("scout-system-tail", "system-tail"),
        ("tool-only", "prepend"),
        ("cold", "prepend"),
    ]
    # Only the tail asked for: a design with no block still runs, where it always sat.
    tail = design_variants(["pack", "cold"], None, ["system-tail"])
    assert [v.name for v in tail] == ["pack-system-tail", "cold"]
