"""A first turn's pre-flight in each design, under the pre-turn deadline (SPEC §16).

:func:`run_preflight` decides what is prepended to a first message once the gate has let
it through (:mod:`.designs` says what each design is):

* ``scout``: the scout runs (:func:`~supercontext_lab.scout.run_scout`). With a deadline
  it runs in a worker (:mod:`.deadline`) handed the time left as its run's budget, and
  the pack is built beside it in another, cut short to be ready by the deadline
  (:func:`~.pack.build_pack`). When the scout is not done by the deadline (or ran out of
  its time at it), it is abandoned (never waited for, ending by itself at its budget) and
  the pack prepares the turn, if it is ready within :data:`FALLBACK_SLACK_MS` of the
  deadline and found something; else the turn goes on cold, as it does when the
  fallback is ``cold``. What happened, with its figures (the pack's reads done of those
  planned, cut short or not), is a ``"deadline"`` step of the trace, a problem of the
  run and the turn's :attr:`Preflight.note`;
* ``pack``: the pack (:func:`~.pack.run_pack`), no model;
* ``cached``: the cached envelope (:func:`~.cached.serve_cached`), rebuilt first when the
  workspace changed since it was built; it does not read the request;
* ``prefetch``: the last pack the thread's background lookup completed for an earlier
  message (:mod:`.prefetch`), found by the thread before the pre-flight (``earlier``);
  nothing when there is none, and nothing is built or waited for here;
* ``full-context``: every note of the workspace, whole, cut at note boundaries to the
  orchestrator's window (:mod:`.baselines`), no model;
* ``tool-only`` and ``cold``: nothing (``tool-only``'s orchestrator may recall itself).

Whatever goes wrong, the turn goes on cold with the reason; the scout is an
optimisation, never a condition. :attr:`Preflight.elapsed_ms` is the pre-flight's measured
time, and the deadline was met (:attr:`Preflight.deadline_met`) only when the whole of it,
the wait for the scout and the fallback, ended within the deadline.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .._text import one_line
from ..agents.definition import AgentDefinition
from ..bundle import ContextBundle, parse_context_bundle
from ..bundle.lookalikes import neutralise_envelope
from ..errors import SupercontextError
from ..gate import ColdStartReason
from ..models.base import Usage
from ..models.window import DEFAULT_CONTEXT_TOKENS, DEFAULT_REPLY_TOKENS, ContextBudget
from ..scout import ScoutRun, ScoutStatus, TraceStep
from ..scout.records import PREVIEW_CHARS
from ..sources.workspace import Workspace
from .baselines import full_context_envelope
from .cached import CACHED_LABEL, Served, serve_cached
from .deadline import collector_paused, start
from .designs import Design, PreflightSettings
from .fallback import (
    FALLBACK_SLACK_MS,
    abandoned_run,
    deadline_note,
    deadline_step,
    fallback_outcome,
    ran_out,
)
from .pack import Packed, build_pack, run_pack
from .prefetch import Lookup
from .turn import failure_reason

__all__ = ["Preflight", "accepted_envelope", "run_preflight"]

_log = logging.getLogger(__name__)

ScoutCall = Callable[[float | None, Callable[[TraceStep], None] | None], ScoutRun]
"""Runs the scout on the turn's message: ``(timeout_s or None, on_step) -> ScoutRun``."""


@dataclass
class Preflight:
    """What a first turn's pre-flight did (see the module docstring)."""

    design: Design
    """The design asked for."""
    prepared_by: Design | None = None
    """The design whose envelope the turn carries (``None`` when it goes on cold)."""
    run: ScoutRun | None = None
    """The run shown for the turn: the scout's, the pack's, the cached envelope's record,
    or the abandoned scout's (its trace is the deadline step)."""
    envelope: str | None = None
    bundle: ContextBundle | None = None
    reason: ColdStartReason | None = None
    detail: str | None = None
    deadline_ms: float | None = None
    note: str | None = None
    """Why the turn was prepared by another design than the one asked for, or went on
    cold at the deadline."""
    notes: list[str] = field(default_factory=list)
    """Other things worth knowing (the cached envelope was rebuilt)."""
    fallback_cut: bool = False
    """The pack that prepared the turn (or failed to) was cut short at the deadline."""
    elapsed_ms: float = 0.0
    """The whole pre-flight's measured time."""

    @property
    def prepared(self) -> bool:
        return self.envelope is not None

    @property
    def deadline_met(self) -> bool | None:
        """Whether the whole pre-flight ended within the scout's deadline (``None``
        without one): the one place "met" is decided."""
        if self.deadline_ms is None or self.design != "scout":
            return None
        return self.elapsed_ms <= self.deadline_ms

    @property
    def missed_deadline(self) -> bool:
        return self.deadline_met is False


def accepted_envelope(run: ScoutRun) -> tuple[str, ContextBundle] | None:
    """The run's envelope as the orchestrator may see it, and its bundle; ``None`` when
    the run yielded none.

    The envelope is neutralised (:func:`~supercontext_lab.bundle.lookalikes.neutralise_envelope`)
    whatever wrote it: a model writing the envelope itself (the text route) may have
    copied a look-alike tag, heading or separator from what it read. When that changes
    the envelope, the bundle is read again from what is sent.
    """
    if run.envelope is None or run.bundle is None:
        return None
    envelope = neutralise_envelope(run.envelope)
    if envelope == run.envelope:
        return envelope, run.bundle
    bundle = parse_context_bundle(envelope)
    return (envelope, bundle) if bundle is not None else None


def _cached_run(
    envelope: str,
    bundle: ContextBundle | None,
    took_ms: float,
    definition: AgentDefinition,
    served: Served,
) -> ScoutRun:
    """The record of a cached preparation: its trace is the check of what is sent (and why
    it was built for this turn), as a scout's check step is."""
    report = served.grounding
    found = [] if served.rebuilt_because is None else [_rebuilt_note(served.rebuilt_because)]
    problems = [found[0]] if served.foreign else []
    if report is not None:
        found.append(report.badge)
        found.extend(line.removeprefix("grounding: ") for line in report.problems())
        problems.extend(report.problems())
    step = TraceStep(
        kind="check",
        iteration=0,
        started_ms=0.0,
        duration_ms=report.elapsed_ms if report is not None else 0.0,
        ok=report is None or not report.emptied,
        result_preview=one_line("; ".join(found), PREVIEW_CHARS),
    )
    return ScoutRun(
        status=ScoutStatus.COMPLETED,
        reason=None,
        output=envelope,
        envelope=envelope if bundle is not None else None,
        bundle=bundle,
        problems=problems,
        trace=[step],
        usage=Usage(),
        model_calls=0,
        elapsed_ms=took_ms,
        model_name=CACHED_LABEL,
        definition_hash=definition.definition_hash(),
        grounding=report,
    )


def _serve_prefetched(result: Preflight, earlier: Lookup | None) -> None:
    """Prepare the turn with the thread's last completed pack, or record why none."""
    run = earlier.served() if earlier is not None else None
    if earlier is None or earlier.prefetched is None or run is None:
        result.reason = ColdStartReason.NO_EARLIER_LOOKUP
        result.detail = (earlier.why_none if earlier is not None else None) or (
            "no earlier turn of this thread was looked up"
        )
        return
    _take(result, run, "prefetch")
    if result.envelope is not None:
        result.notes.append(
            "prefetch: the pack of an earlier lookup, built in the background from the "
            f"message of turn {earlier.prefetched.turn + 1}"
        )


def _rebuilt_note(why: str) -> str:
    return f"the cached envelope was built for this turn: {why}"


def _serve_cached(
    result: Preflight,
    workspace: Workspace,
    settings: PreflightSettings,
    definition: AgentDefinition,
    started: float,
) -> None:
    """Prepare the turn with the cached envelope, sealed, current and grounded."""
    served = serve_cached(workspace, budget=settings.cached_tokens, mode=definition.grounding)
    bundle = parse_context_bundle(served.envelope)
    took = (time.perf_counter() - started) * 1000.0
    if served.rebuilt_because is not None:
        result.notes.append(_rebuilt_note(served.rebuilt_because))
    sources = served.cached.sources
    # An envelope the check emptied is no preparation: the turn goes on cold, ungrounded.
    emptied = served.grounding is not None and served.grounding.emptied
    usable = bundle if sources and not emptied else None
    run = _cached_run(served.envelope, usable, took, definition, served)
    if not sources:
        result.run = run
        result.reason = ColdStartReason.NO_CACHED_ENVELOPE
        result.detail = "no profile, MEMORY.md or memory note to quote"
    else:
        _take(result, run, "cached")


def _serve_full_context(result: Preflight, workspace: Workspace, room_bytes: int | None) -> None:
    """Prepare the turn with every note that fits ``room_bytes`` (default, where no
    orchestrator is known: half of a request to a model of
    :data:`~supercontext_lab.models.window.DEFAULT_CONTEXT_TOKENS`, the rest left to the
    conversation)."""
    if room_bytes is None:
        budget = ContextBudget(DEFAULT_CONTEXT_TOKENS, DEFAULT_REPLY_TOKENS, declared=False)
        room_bytes = budget.prompt_bytes // 2
    full = full_context_envelope(workspace, room_bytes)
    if not full.sent:
        result.reason = ColdStartReason.NO_ENVELOPE
        result.detail = (
            "no note fits the orchestrator's window"
            if full.left_out
            else "no profile, MEMORY.md or memory note to send"
        )
        return
    envelope = neutralise_envelope(full.envelope)
    bundle = parse_context_bundle(envelope)
    if bundle is None:
        result.reason, result.detail = ColdStartReason.NO_ENVELOPE, "the envelope did not parse"
        return
    result.envelope, result.bundle, result.prepared_by = envelope, bundle, "full-context"
    result.notes.append(
        f"full-context: {len(full.sent)} notes sent"
        + (f", {len(full.left_out)} left out to fit the window" if full.left_out else "")
    )


class _Gate:
    """Passes trace steps on until the deadline passes: an abandoned scout's later steps
    never reach the caller."""

    def __init__(self, on_step: Callable[[TraceStep], None] | None) -> None:
        self.on_step = on_step
        self.open = True

    def __call__(self, step: TraceStep) -> None:
        if self.open and self.on_step is not None:
            self.on_step(step)


def _guarded_scout(
    scout: ScoutCall,
    timeout_s: float | None,
    on_step: Callable[[TraceStep], None] | None,
    result: Preflight,
) -> ScoutRun | None:
    """The scout's run, or ``None`` with the cold reason recorded in ``result``."""
    try:
        return scout(timeout_s, on_step)
    except (SupercontextError, OSError, ValueError) as exc:
        # SupercontextError covers a broken model route (ConfigError) as well as model
        # and workspace failures.
        result.reason, result.detail = ColdStartReason.SCOUT_ERROR, str(exc)
    except Exception as exc:
        # An unexpected error (a third-party ChatModel's own exception, a bug) must not
        # break the user's turn either (SPEC §7.6); its traceback is logged.
        _log.warning("The context scout failed unexpectedly; the turn goes on cold.", exc_info=True)
        result.reason, result.detail = ColdStartReason.SCOUT_ERROR, f"{type(exc).__name__}: {exc}"
    return None


def _take(result: Preflight, run: ScoutRun, design: Design) -> None:
    """Use ``run``'s envelope for the turn, or record why it has none."""
    result.run = run
    accepted = accepted_envelope(run)
    if accepted is None:
        result.reason = failure_reason(run)
        result.detail = "; ".join(run.problems) or None
        return
    result.envelope, result.bundle = accepted
    result.prepared_by = design


def _scout_with_deadline(
    message: str,
    result: Preflight,
    *,
    started: float,
    settings: PreflightSettings,
    deadline_ms: float,
    workspace: Workspace,
    definition: AgentDefinition,
    scout: ScoutCall,
    scout_timeout_s: float | None,
    on_step: Callable[[TraceStep], None] | None,
    focus: str | None,
) -> None:
    gate = _Gate(on_step)
    # The worker records a failure in a record of its own: once abandoned, nothing it
    # does reaches the turn.
    scratch = Preflight(design="scout")

    def work(left: float) -> ScoutRun | None:
        budget = left if scout_timeout_s is None else min(left, scout_timeout_s)
        return _guarded_scout(scout, budget, gate, scratch)

    def pack(left: float) -> Packed:
        # Cut short to be ready by the deadline itself; the slack is for handing it over.
        return build_pack(
            message,
            workspace=workspace,
            definition=definition,
            focus=focus,
            budget=settings.pack_tokens,
            timeout_s=max(left - FALLBACK_SLACK_MS / 1000.0, 0.001),
        )

    pending = start(work, deadline_ms, name="scout", since=started)
    # The fallback is built while the scout runs, in a worker of its own: it is ready
    # by the deadline, and never waited for past the slack. Its steps are not shown
    # unless it is used.
    packing = (
        start(pack, deadline_ms + FALLBACK_SLACK_MS, name="pack", since=started)
        if settings.fallback == "pack"
        else None
    )
    outcome = pending.wait()
    if not outcome.missed and not ran_out(outcome.value, scout_timeout_s, deadline_ms):
        if packing is not None:
            packing.abandon()  # ends by itself, cut short at the deadline
        if outcome.value is not None:
            _take(result, outcome.value, "scout")
        else:
            result.reason, result.detail = scratch.reason, scratch.detail
        return
    gate.open = False
    pack_outcome = packing.wait() if packing is not None else None
    if pack_outcome is not None and pack_outcome.error is not None:
        raise pack_outcome.error  # a broken workspace: a cold start with its reason
    packed = pack_outcome.value if pack_outcome is not None else None
    if packing is None:
        said, used = "the turn went on cold", False
    else:
        said, used = fallback_outcome(packed)
    text = deadline_note(deadline_ms, said)
    step = deadline_step(deadline_ms, text, (time.perf_counter() - started) * 1000.0)
    if on_step is not None:
        on_step(step)
    result.note, result.fallback_cut = text, packed is not None and packed.cut
    if packed is None or not used:
        result.run = abandoned_run(step, definition)
        result.reason, result.detail = ColdStartReason.DEADLINE_MISSED, text
        return
    packed.run.trace.insert(0, step)
    packed.run.problems.insert(0, text)
    _take(result, packed.run, "pack")


def run_preflight(
    message: str,
    *,
    settings: PreflightSettings,
    workspace: Workspace,
    definition: AgentDefinition,
    scout: ScoutCall,
    scout_timeout_s: float | None = None,
    on_step: Callable[[TraceStep], None] | None = None,
    focus: str | None = None,
    earlier: Lookup | None = None,
    full_context_bytes: int | None = None,
) -> Preflight:
    """Prepare ``message`` in ``settings.design`` (see the module docstring); the gate
    has already let the turn through. ``focus`` (the explicit path's) counts as request
    for the pack; the ``scout`` callable applies its own. ``earlier`` is what the
    thread's prefetch cache holds for the ``prefetch`` design (``None``: nothing, as on
    the explicit path, which has no thread). ``full_context_bytes`` is the room the
    orchestrator's window leaves for ``full-context``'s notes."""
    started = time.perf_counter()
    design = settings.design
    result = Preflight(design=design, deadline_ms=settings.deadline_ms)
    try:
        if design == "cold":
            result.reason = ColdStartReason.DESIGN_COLD
        elif design == "tool-only":
            result.reason = ColdStartReason.DESIGN_TOOL_ONLY
        elif design == "full-context":
            _serve_full_context(result, workspace, full_context_bytes)
        elif design == "prefetch":
            _serve_prefetched(result, earlier)
        elif design == "cached":
            _serve_cached(result, workspace, settings, definition, started)
        elif design == "pack":
            _take(
                result,
                run_pack(
                    message,
                    workspace=workspace,
                    definition=definition,
                    focus=focus,
                    budget=settings.pack_tokens,
                    on_step=on_step,
                ),
                "pack",
            )
        elif settings.deadline_ms is None:
            scouted = _guarded_scout(scout, scout_timeout_s, on_step, result)
            if scouted is not None:
                _take(result, scouted, "scout")
        else:
            with collector_paused():
                _scout_with_deadline(
                    message,
                    result,
                    started=started,
                    settings=settings,
                    deadline_ms=settings.deadline_ms,
                    workspace=workspace,
                    definition=definition,
                    scout=scout,
                    scout_timeout_s=scout_timeout_s,
                    on_step=on_step,
                    focus=focus,
                )
    except (SupercontextError, OSError, ValueError) as exc:
        # The pack and the cached envelope read the workspace: a broken one is a cold
        # start, as a broken scout is.
        result.reason, result.detail = ColdStartReason.SCOUT_ERROR, str(exc)
    result.elapsed_ms = (time.perf_counter() - started) * 1000.0
    return result
