"""The ``pack`` design: the gathering round, ranked and fitted to a token budget, no model.

The harness runs the scout's first gathering round itself (the reads the offline scout
plans for the request, as ``prefetch`` does before a model's first call, less the skill
listings, which only feed recommendations: :data:`FACT_READS`), takes the facts
it found in the order the run ranked them for the request
(:meth:`~supercontext_lab.scout.RunSources.facts`), and keeps them, best first, while
they fit the budget: a fact that would not fit is left out whole, never cut, and a
shorter one further down may still fit. The envelope is written by the one envelope
writer: each fact cited with its source, ``has_enough_context`` by the relevance rule
(:func:`~supercontext_lab.reading.relevance.coverage`, with the ``Missing:`` line when it is
false), no goal (the pack does not read the request's intent) and no recommendations (it
is retrieval only). The grounding check then reads it as it reads a scout's.
"""

from __future__ import annotations

from collections.abc import Callable

from ..agents.definition import AgentDefinition
from ..bundle.render import write_envelope
from ..models.base import estimate_tokens
from ..models.choices import BundleChoices, ChoiceFact
from ..reading.relevance import coverage, request_terms
from ..scout import ScoutRun, TraceStep, run_gathered
from ..sources.workspace import Workspace
from ..tools import ToolRegistry
from .designs import DEFAULT_PACK_TOKENS

__all__ = ["FACT_READS", "PACK_LABEL", "fit_facts", "pack_envelope", "run_pack"]

PACK_LABEL = "pack (no model)"
"""The name a pack run is recorded with, where a scout run names its model."""

FACT_READS = frozenset({"memory_recall", "memory_flavour"})
"""The reads of the gathering round the pack makes: the ones that give facts (the
skill listings would only feed recommendations, which the pack does not make)."""


def fit_facts(facts: tuple[ChoiceFact, ...] | list[ChoiceFact], budget: int) -> list[ChoiceFact]:
    """The facts, in their order, that fit ``budget`` tokens as cited summary bullets
    (:func:`~supercontext_lab.models.base.estimate_tokens`); one that would overflow it is
    skipped whole and the next is tried."""
    kept: list[ChoiceFact] = []
    used = 0
    for fact in facts:
        cost = estimate_tokens(f"- {fact.cited}\n")
        if used + cost <= budget:
            kept.append(fact)
            used += cost
    return kept


def pack_envelope(
    choices: BundleChoices, *, focus: str | None = None, budget: int = DEFAULT_PACK_TOKENS
) -> str:
    """The pack's envelope for what a gathering round found (see the module docstring)."""
    facts = fit_facts(choices.facts, budget)
    covered = coverage(request_terms(choices.request, focus or ""), [fact.cited for fact in facts])
    summary = [f"- {fact.cited}" for fact in facts]
    missing = covered.missing_line()
    if missing and not (facts and covered.enough):
        # Also when nothing was found: the orchestrator learns what was looked for.
        summary.append(f"Missing: {missing}.")
    return write_envelope(
        has_enough_context=bool(facts) and covered.enough,
        proposed_goal=None,
        summary="\n".join(summary),
    )


def run_pack(
    message: str,
    *,
    workspace: Workspace,
    definition: AgentDefinition | None = None,
    focus: str | None = None,
    budget: int = DEFAULT_PACK_TOKENS,
    on_step: Callable[[TraceStep], None] | None = None,
    registry: ToolRegistry | None = None,
) -> ScoutRun:
    """Prepare ``message`` with the pack: a :class:`ScoutRun` with no model call.
    ``registry`` is the tools it reads with (default: the workspace's scout tools)."""
    return run_gathered(
        message,
        workspace=workspace,
        write=lambda choices: pack_envelope(choices, focus=focus, budget=budget),
        label=PACK_LABEL,
        definition=definition,
        focus=focus,
        registry=registry,
        on_step=on_step,
        reads=FACT_READS,
    )
