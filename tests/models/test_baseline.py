"""The no-model baselines: the run's ranking taken as it is, or chance, through the same
extractive path a small model's picks take."""

from __future__ import annotations

import pytest

from supercontext_lab.errors import ConfigError
from supercontext_lab.models.baseline import PickBaseline
from supercontext_lab.models.choices import BundleChoices, ChoiceFact, ChoiceSkill
from supercontext_lab.models.extractive import FACT_PICKS
from supercontext_lab.models.offline import OfflineOrchestratorModel
from supercontext_lab.models.routing import model_for_route
from supercontext_lab.routes import ModelRoute, parse_model_id
from supercontext_lab.scout import run_scout
from supercontext_lab.sources.demo import demo_workspace_path
from supercontext_lab.sources.workspace import Workspace

CHOICES = BundleChoices(
    request="Polish the figures of the kernel fit paper and email them",
    tools=("delegate_gmail", "run_workflow", "memory_recall"),
    skills=(
        ChoiceSkill("figure-polish", True, "Polish journal figures"),
        ChoiceSkill("kernel-fit-report", False, "Report on dispersal kernel fits"),
    ),
    attributions=("memory: global/kernel", "memory"),
    facts=tuple(ChoiceFact(n, f"Kernel fit fact number {n}.", "memory") for n in range(1, 11)),
)


def test_rank_takes_the_first_offered_facts_and_names() -> None:
    assert PickBaseline("rank").picks(CHOICES) == (
        "FACTS: 1, 2, 3, 4, 5, 6\nTOOLS: delegate_gmail\nSKILLS: figure-polish"
    )


def test_random_is_seeded_by_the_request_and_picks_only_what_was_offered() -> None:
    first = PickBaseline("random").picks(CHOICES)
    assert first == PickBaseline("random").picks(CHOICES)
    numbers = [int(n) for n in first.splitlines()[0].removeprefix("FACTS: ").split(", ")]
    assert len(numbers) == FACT_PICKS and numbers == sorted(set(numbers))
    assert set(numbers) <= set(range(1, 11))
    other = {PickBaseline("random", seed=seed).picks(CHOICES) for seed in range(8)}
    assert len(other) > 1, "another seed picks differently"


def test_without_choices_a_baseline_writes_nothing() -> None:
    reply = PickBaseline("rank").complete([])
    assert reply.message.content == ""


def test_an_unknown_baseline_is_refused() -> None:
    with pytest.raises(ValueError, match="rank, random"):
        PickBaseline("best")  # type: ignore[arg-type]


def test_baseline_ids_give_baseline_routes_and_the_offline_orchestrator() -> None:
    route = parse_model_id("baseline:random")
    assert route.kind == "baseline" and route.model == "random"
    assert route.resolved_bundle_format() == "extractive" and route.counts_as_small()
    assert isinstance(model_for_route(route, role="scout"), PickBaseline)
    assert isinstance(model_for_route(route, role="orchestrator"), OfflineOrchestratorModel)
    with pytest.raises(ConfigError, match="names no baseline"):
        parse_model_id("baseline:best")
    with pytest.raises(ConfigError, match="uses no model"):
        parse_model_id("baseline:rank", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ValueError, match="kind 'baseline' needs model"):
        ModelRoute(kind="baseline", model="gpt")


def test_the_rank_baseline_runs_the_scout_after_gathering_and_is_grounded() -> None:
    run = run_scout(
        "When is the grant renewal due?",
        workspace=Workspace(demo_workspace_path()),
        model=PickBaseline("rank"),
    )
    assert run.ok, run.problems
    assert [step.kind for step in run.trace if step.prefetched]
    assert run.bundle is not None and "2026-12-15" in run.bundle.summary
    assert run.grounding is not None and run.grounding.grounded == run.grounding.checked
    assert run.usage.total_tokens == 0
