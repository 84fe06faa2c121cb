"""From the model's last reply to what the orchestrator may see: the envelope extracted,
fitted to ``max_result_chars``, parsed, and put through the grounding check (SPEC §13).

Every problem on the way is recorded, never raised: a reply without a usable envelope, an
envelope fitted down, what the check dropped. The check is a step of the trace.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .._text import one_line
from ..agents.definition import AgentDefinition
from ..bundle import (
    ContextBundle,
    bundle_rejection_reason,
    extract_context_bundle,
    fit_bundle,
    parse_context_bundle,
)
from ..sources.workspace import Workspace
from .grounding import GroundingReport, check_bundle
from .records import PREVIEW_CHARS, TraceStep
from .sources import RunSources

__all__ = ["Settled", "settle_output"]


@dataclass
class Settled:
    """What a run's output came to: the envelope and bundle the orchestrator may see
    (both ``None`` when there is none, or the check emptied it), the check's report, the
    bundle as the model wrote it when the check changed it, and the problems found."""

    envelope: str | None = None
    bundle: ContextBundle | None = None
    grounding: GroundingReport | None = None
    unchecked: ContextBundle | None = None
    problems: list[str] = field(default_factory=list)


def settle_output(
    output: str,
    *,
    definition: AgentDefinition,
    workspace: Workspace,
    sources: RunSources,
    request: str,
    iteration: int,
    now_ms: Callable[[], float],
    record: Callable[[TraceStep], None],
) -> Settled:
    """Settle ``output`` (the model's final text) for the request ``request``.

    ``iteration`` numbers the check's trace step, ``now_ms`` is the run's clock and
    ``record`` adds the step to the run's trace.
    """
    settled = Settled()
    envelope = _fitted_envelope(output, definition.max_result_chars, settled.problems)
    bundle = parse_context_bundle(envelope) if envelope is not None else None
    if bundle is None:
        return settled
    started = now_ms()
    report = check_bundle(
        bundle, workspace=workspace, sources=sources, mode=definition.grounding, request=request
    )
    settled.grounding = report
    settled.problems.extend(report.problems())
    found = [report.badge, *(line.removeprefix("grounding: ") for line in report.problems())]
    record(
        TraceStep(
            kind="check",
            iteration=iteration,
            started_ms=started,
            duration_ms=now_ms() - started,
            ok=not report.emptied,
            result_preview=one_line("; ".join(found), PREVIEW_CHARS),
        )
    )
    if report.emptied:
        settled.unchecked = bundle
        return settled
    if not report.changed:
        settled.envelope, settled.bundle = bundle.envelope, bundle
        return settled
    envelope = fit_bundle(report.envelope, definition.max_result_chars)
    checked = parse_context_bundle(envelope)
    if checked is not None:
        settled.envelope, settled.bundle, settled.unchecked = envelope, checked, bundle
    return settled


def _fitted_envelope(output: str, limit: int, problems: list[str]) -> str | None:
    extracted = extract_context_bundle(output)
    if extracted is None:
        rejection = bundle_rejection_reason(output) or "no usable envelope"
        problems.append(f"no valid envelope: {rejection}")
        return None
    envelope = fit_bundle(extracted, limit)
    if envelope != extracted:
        problems.append(
            f"bundle fitted from {len(extracted)} to {len(envelope)} characters "
            f"(max_result_chars = {limit})"
        )
    return envelope
