"""A first turn's preparation as a thread runs it, and what it leaves on the turn.

Once the gate has answered, :func:`prepare_turn` runs the pre-flight in the thread's
design (:mod:`.preflight`) and writes its outcome on the :class:`~.turn.TurnResult`:
the message the orchestrator will see (the validated envelope under ``## Prepared
context (super context)``, then the message), the design that prepared it, or why the
turn goes on cold. With the ``system-tail`` placement the block is kept apart
(:attr:`~.turn.TurnResult.tail_context`) and the message is sent as typed: the
orchestrator's request carries the block as a system message at its tail, and the thread
never stores it. The cached envelope does not read the message, so only the
structural part of the gate holds it back. After the turn, :func:`record_turn_recalls`
counts the memory notes the pre-flight read, from which the cached design picks the
"most recalled" notes.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from ..agents.definition import AgentDefinition
from ..bundle import ContextBundle
from ..errors import SupercontextError
from ..gate import SKIP_REASONS, ColdStartReason
from ..scout import TraceStep
from ..sources.workspace import Workspace
from .cached import record_recalls
from .designs import PreflightSettings
from .prefetch import Lookup
from .preflight import ScoutCall, run_preflight
from .turn import Preparation, TurnResult, build_prepared_block, build_prepared_message

__all__ = ["prepare_turn", "record_turn_recalls"]

_log = logging.getLogger(__name__)


def prepare_turn(
    message: str,
    result: TurnResult,
    *,
    reason: ColdStartReason | None,
    settings: PreflightSettings,
    workspace: Workspace,
    definition: AgentDefinition,
    scout: ScoutCall,
    scout_timeout_s: float | None,
    on_step: Callable[[TraceStep], None] | None,
    earlier: Lookup | None = None,
    full_context_bytes: Callable[[], int] | None = None,
) -> ContextBundle | None:
    """Prepare ``message`` unless the gate's ``reason`` holds it back, recording on
    ``result`` what happened; return the bundle the turn now carries, or ``None`` when
    it goes on cold. ``earlier``: the thread's last prefetched pack (``prefetch``);
    ``full_context_bytes``: the room the orchestrator's window leaves for
    ``full-context``'s notes, asked only for that design (it may build the model)."""
    result.design, result.deadline_ms = settings.design, settings.deadline_ms
    result.placement = settings.placement
    if reason is not None and not (settings.design == "cached" and reason in SKIP_REASONS):
        # The cached envelope does not read the message, so only the structural gate
        # applies to it.
        result.preparation, result.reason = Preparation.SKIPPED, reason
        return None
    done = run_preflight(
        message,
        settings=settings,
        workspace=workspace,
        definition=definition,
        scout=scout,
        scout_timeout_s=scout_timeout_s,
        on_step=on_step,
        earlier=earlier,
        full_context_bytes=(
            full_context_bytes()
            if full_context_bytes is not None and settings.design == "full-context"
            else None
        ),
    )
    result.scout, result.notes = done.run, [*result.notes, *done.notes]
    result.deadline_missed, result.preflight_note = done.missed_deadline, done.note
    result.preflight_ms, result.fallback_cut = done.elapsed_ms, done.fallback_cut
    if done.envelope is None or done.bundle is None:
        reason = done.reason or ColdStartReason.NO_ENVELOPE
        if reason.skipped:
            # Nothing ran; the detail says why (prefetch: a first turn, an expired pack).
            result.preparation, result.reason = Preparation.SKIPPED, reason
            result.reason_detail = done.detail
        else:
            result.cold(reason, done.detail)
        return None
    envelope, bundle = done.envelope, done.bundle
    result.preparation, result.prepared_by = Preparation.PREPARED, done.prepared_by
    result.envelope, result.bundle = envelope, bundle
    design = done.prepared_by or "scout"
    if settings.placement == "system-tail":
        result.tail_context = build_prepared_block(envelope, design=design)
    else:
        result.sent_message = build_prepared_message(envelope, message, design=design)
    return bundle


def record_turn_recalls(workspace: Workspace, result: TurnResult) -> None:
    """Count the memory notes the turn's pre-flight read (for the cached design's
    ranking); a workspace that cannot be written is not an error of the turn."""
    run = result.scout
    if run is None or run.sources is None:
        return
    notes = [source.ref for source in run.sources.named if source.kind == "memory" and source.ref]
    try:
        record_recalls(workspace, notes)
    except (OSError, SupercontextError) as exc:
        _log.info("Recall counts not saved in %s: %s", workspace.root, exc)
