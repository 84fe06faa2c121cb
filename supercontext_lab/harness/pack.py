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

Under a time limit (:func:`build_pack` with ``timeout_s``, the deadline's fallback) the
pack is cut short at clean points: its reads get the time left less what ranking,
writing and checking need after them (:data:`AFTER_READS_S`), a read not done by then is
abandoned (a ``late`` step) and the facts are taken from the reads that were, MEMORY.md
and PROFILE.md; the workspace is not surveyed for refused files (on 3,000 notes that
alone costs more than a 50 ms deadline). :class:`Packed` says what it made of its time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..agents.definition import AgentDefinition
from ..bundle.render import write_envelope
from ..models.base import estimate_tokens
from ..models.choices import BundleChoices, ChoiceFact
from ..reading.relevance import coverage, request_terms
from ..scout import ScoutRun, TraceStep, run_gathered
from ..sources.workspace import Workspace
from ..tools import ToolRegistry
from .designs import DEFAULT_PACK_TOKENS

__all__ = [
    "AFTER_READS_S",
    "FACT_READS",
    "PACK_LABEL",
    "Packed",
    "build_pack",
    "fit_facts",
    "pack_envelope",
    "run_pack",
]

PACK_LABEL = "pack (no model)"
"""The name a pack run is recorded with, where a scout run names its model."""

FACT_READS = frozenset({"memory_recall", "memory_flavour"})
"""The reads of the gathering round the pack makes: the ones that give facts (the
skill listings would only feed recommendations, which the pack does not make)."""

AFTER_READS_S = 0.03
"""What a pack keeps of its time limit for after its reads (at most half of it): ranking
the facts, writing and checking the envelope take 10-25 ms on a two-core machine."""


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


@dataclass(frozen=True)
class Packed:
    """A pack's run and what it made of its time (see the module docstring)."""

    run: ScoutRun
    reads: tuple[str, ...]
    """The reads its gathering round planned, by tool."""
    late: tuple[str, ...]
    """Those not done within its time: abandoned, nothing of theirs in the envelope."""
    facts: int
    """The facts its envelope carries."""
    surveyed: bool
    """Whether the workspace was surveyed for refused files."""

    @property
    def cut(self) -> bool:
        """Whether it was cut short: a read was abandoned at its time limit."""
        return bool(self.late)

    def describe(self) -> str:
        """``from 1 of 2 reads (memory_recall not done in time), 3 facts``."""
        done = len(self.reads) - len(self.late)
        text = f"from {done} of {len(self.reads)} read{'' if len(self.reads) == 1 else 's'}"
        if self.late:
            text += f" ({', '.join(dict.fromkeys(self.late))} not done in time)"
        return f"{text}, {self.facts} fact{'' if self.facts == 1 else 's'}"


def build_pack(
    message: str,
    *,
    workspace: Workspace,
    definition: AgentDefinition | None = None,
    focus: str | None = None,
    budget: int = DEFAULT_PACK_TOKENS,
    on_step: Callable[[TraceStep], None] | None = None,
    timeout_s: float | None = None,
    registry: ToolRegistry | None = None,
) -> Packed:
    """Prepare ``message`` with the pack, within ``timeout_s`` seconds when given (see
    the module docstring); ``registry`` is the tools it reads with (default: the
    workspace's scout tools)."""
    kept: list[int] = []

    def write(choices: BundleChoices) -> str:
        kept.append(len(fit_facts(choices.facts, budget)))
        return pack_envelope(choices, focus=focus, budget=budget)

    reads_s = None
    if timeout_s is not None:
        reads_s = max(timeout_s - min(timeout_s / 2, AFTER_READS_S), 0.001)
    surveyed = timeout_s is None or workspace.surveyed
    run = run_gathered(
        message,
        workspace=workspace,
        write=write,
        label=PACK_LABEL,
        definition=definition,
        focus=focus,
        registry=registry,
        on_step=on_step,
        reads=FACT_READS,
        reads_timeout_s=reads_s,
        survey=timeout_s is None,
    )
    steps = [step for step in run.trace if step.kind == "tool" and step.prefetched]
    return Packed(
        run=run,
        reads=tuple(step.tool for step in steps),
        late=tuple(step.tool for step in steps if step.late),
        facts=kept[0] if kept else 0,
        surveyed=surveyed,
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
    return build_pack(
        message,
        workspace=workspace,
        definition=definition,
        focus=focus,
        budget=budget,
        registry=registry,
        on_step=on_step,
    ).run
